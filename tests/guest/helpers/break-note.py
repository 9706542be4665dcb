#!/usr/bin/env python3
"""break-note.py IN OUT — copy a static x86-64 ELF program and make its
GNU_PROPERTY_X86_FEATURE_1_AND property malformed (pr_datasz 5 instead of 4).

The note stays walkable (the next property is still found at the 8-byte aligned
offset), but the property itself is not one the kernel or glibc's loader accepts:
the result must run, counted as unmarked (issue 11: the series made such an exec
fail with ENOEXEC)."""
import os
import struct
import sys

PT_GNU_PROPERTY = 0x6474e553
FEATURE_1_AND = 0xc0000002


def main():
    src, dst = sys.argv[1], sys.argv[2]
    data = bytearray(open(src, 'rb').read())
    assert data[:4] == b'\x7fELF' and data[4] == 2, 'not an ELF64 file'
    phoff, = struct.unpack_from('<Q', data, 0x20)
    phentsize, phnum = struct.unpack_from('<HH', data, 0x36)
    for i in range(phnum):
        p = phoff + i * phentsize
        ptype, = struct.unpack_from('<I', data, p)
        if ptype != PT_GNU_PROPERTY:
            continue
        off, = struct.unpack_from('<Q', data, p + 8)
        namesz, descsz, ntype = struct.unpack_from('<III', data, off)
        desc = off + 12 + ((namesz + 3) & ~3)
        o = 0
        while o + 8 <= descsz:
            prt, prsz = struct.unpack_from('<II', data, desc + o)
            if prt == FEATURE_1_AND:
                struct.pack_into('<I', data, desc + o + 4, 5)
                with open(dst, 'wb') as f:
                    f.write(data)
                os.chmod(dst, 0o755)
                return
            o += 8 + ((prsz + 7) & ~7)
    sys.exit(f'{src}: no FEATURE_1_AND property in PT_GNU_PROPERTY')


if __name__ == '__main__':
    main()
