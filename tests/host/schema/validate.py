#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""validate.py SCHEMA [FILE]: validate one cetctl -J document (FILE or stdin,
decoded as strict UTF-8) against SCHEMA with python3-jsonschema; print every
error and exit 1 when there is one. Duplicate keys are errors too."""
import json
import sys

import jsonschema


def no_dups(pairs):
    keys = [k for k, _ in pairs]
    dups = {k for k in keys if keys.count(k) > 1}
    if dups:
        raise ValueError("duplicate keys: %s" % ", ".join(sorted(dups)))
    return dict(pairs)


schema = json.load(open(sys.argv[1]))
raw = open(sys.argv[2], 'rb').read() if len(sys.argv) > 2 else sys.stdin.buffer.read()
doc = json.loads(raw.decode('utf-8', 'strict'), object_pairs_hook=no_dups)
cls = jsonschema.validators.validator_for(schema)
cls.check_schema(schema)
errors = sorted(cls(schema).iter_errors(doc), key=lambda e: list(e.path))
for e in errors:
    print("%s: %s" % ("/".join(str(p) for p in e.path) or "(top)", e.message))
sys.exit(1 if errors else 0)
