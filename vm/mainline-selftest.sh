#!/bin/bash
# vm/mainline-selftest.sh [BUILD_DIR] — build mainline's shadow-stack selftest, unmodified.
#
# Extracts tools/testing/selftests/x86/test_shadow_stack.c from Debian's
# linux-source-6.12 package (/usr/src/linux-source-6.12.tar.xz: mainline 6.12 plus
# stable fixes) and compiles it as the x86 selftest Makefile does (64-bit, -O2
# -pthread, both CAN_BUILD_* defines), static so that the guest needs no libraries:
#
#   BUILD_DIR/tests/guest-helpers/test_shadow_stack_612
#
# tests/guest/mainline-selftest.bats runs it in the guest tiers. The extracted source
# is cached under ${CETCTL_CACHE:-/root/.cache/cetctl}/mainline-selftest/<pkgver>/.
# The LAST line of stdout is the binary's path. Needs the linux-source-6.12 package
# (vm/install-deps.sh installs it).
set -euo pipefail

die() { echo "mainline-selftest: ERROR: $*" >&2; exit 1; }
say() { echo "mainline-selftest: $*" >&2; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case "${1:-}" in -h|--help) sed -n '2,15p' "$0"; exit 0 ;; esac
BUILD=${1:-$REPO/build}
CACHE=${CETCTL_CACHE:-/root/.cache/cetctl}
PKG=linux-source-6.12
TARBALL=/usr/src/$PKG.tar.xz
MEMBER=$PKG/tools/testing/selftests/x86/test_shadow_stack.c

pkgver=$(dpkg-query -W -f='${db:Status-Status} ${Version}' $PKG 2>/dev/null || true)
[[ $pkgver == installed\ * ]] || die "package $PKG is not installed (run vm/install-deps.sh)"
pkgver=${pkgver#installed }
[[ -f $TARBALL ]] || die "$TARBALL missing although $PKG $pkgver is installed"

src_dir=$CACHE/mainline-selftest/$pkgver
src=$src_dir/test_shadow_stack.c
if [[ ! -s $src ]]; then
  say "extracting $MEMBER from $TARBALL ($pkgver)"
  mkdir -p "$src_dir"
  tmp=$(mktemp -d "$src_dir/.x.XXXXXX")
  tar -xJf "$TARBALL" -C "$tmp" "$MEMBER" || die "cannot extract $MEMBER"
  mv "$tmp/$MEMBER" "$src"
  rm -rf "$tmp"
fi

out_dir=$BUILD/tests/guest-helpers
out=$out_dir/test_shadow_stack_612
mkdir -p "$out_dir"
if [[ ! -x $out || $src -nt $out || $0 -nt $out ]]; then
  say "compiling $src"
  gcc -static -O2 -g -std=gnu99 -pthread -Wall -DCAN_BUILD_32 -DCAN_BUILD_64 \
      -o "$out.tmp" "$src" -lrt -ldl || die "compiling mainline's test_shadow_stack.c failed"
  mv "$out.tmp" "$out"
fi
echo "$out"
