#!/bin/bash
# vm/parse-results.sh LOG TIER [--allow ERE]... — verdict for one guest console log.
# Prints "TIER: N passed, N failed, N skipped" last; exit 0 only when nothing failed
# (no "not ok", final marker present, no unexpected WARN/BUG/Oops/control protection/
# segfault kernel line). Details, including the CETCTL-EXPECT protocol: vm/parse-results.py
set -euo pipefail
exec python3 "$(dirname "${BASH_SOURCE[0]}")/parse-results.py" "$@"
