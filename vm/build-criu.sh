#!/bin/bash
# vm/build-criu.sh — build CRIU 4.2 and a subset of its zdtm tests for the guest.
#
#   vm/build-criu.sh [--tarball FILE]
#
# Source: the upstream release tarball criu-4.2.tar.xz, by default the one next to the
# repository (../shared/criu/criu-4.2.tar.xz), or --tarball / $CETCTL_CRIU_TARBALL. Its
# SHA-256 is checked against the one below, so a different file is refused.
# Applies vm/bochs/criu-bochs27-cpuid.diff (test-only: an emulator bug, a no-op on real
# CPUs). Builds `make criu` (x86 shadow-stack support: criu/arch/x86/shstk.c) and, with
# SHSTK_ENABLE=1 (-mshstk, linked -z shstk: marked for shadow stacks), the zdtm tests
# listed in ZDTM_TESTS. The build dependencies are Debian 12 packages (vm/install-deps.sh).
#
# Output (the LAST line of stdout): a directory with
#   criu                 the criu binary (dynamic; vm/mkinitramfs.sh --criu copies its libraries)
#   zdtm/<test>          the zdtm test programs, zdtm/tests (their names, one per line)
#   VERSION              `criu --version` of the build host
# Cached in ${CETCTL_CACHE:-/root/.cache/cetctl}/criu/<key>/ (key: tarball, this script,
# compiler version); "cached" when it exists. Nothing depends on the cache.
# Env: CETCTL_CACHE, CETCTL_JOBS (default: nproc), CC (default: "ccache gcc" if ccache).
set -euo pipefail

die() { echo "build-criu: ERROR: $*" >&2; exit 1; }
say() { echo "build-criu: $*" >&2; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${CETCTL_CACHE:-/root/.cache/cetctl}
SHA256=64aa16bb9998e3210c0ecdfbba4e7db7282a08b54ed3400b929df3a9b6ebbb85
# env00: environment; sigpending, sigaltstack: signal state and a handler on an
# alternate stack; pthread00, pthread01: threads (per-thread shadow stacks);
# zombie00: forked children; fpu00: FPU/xsave state (CET state is part of xsave);
# maps00: many kinds of mappings next to the shadow stacks; sleeping00: the baseline.
ZDTM_TESTS="env00 sleeping00 sigpending sigaltstack pthread00 pthread01 zombie00 fpu00 maps00"
tarball=${CETCTL_CRIU_TARBALL:-}

while [ $# -gt 0 ]; do
  case "$1" in
    --tarball) shift; tarball=${1:?--tarball needs a file} ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (usage: vm/build-criu.sh [--tarball FILE])" ;;
  esac
  shift
done
if [[ -z $tarball ]]; then
  for t in "$REPO/../shared/criu/criu-4.2.tar.xz" /work/shared/criu/criu-4.2.tar.xz; do
    [[ -f $t ]] && { tarball=$t; break; }
  done
fi
[[ -n $tarball && -f $tarball ]] ||
  die "criu-4.2.tar.xz not found (looked for ../shared/criu/criu-4.2.tar.xz next to the repository; give --tarball FILE)"
got=$(sha256sum "$tarball" | cut -d' ' -f1)
[[ $got == "$SHA256" ]] || die "$tarball: SHA-256 $got, expected $SHA256 (the CRIU 4.2 release)"

for t in make gcc pkg-config protoc protoc-c; do
  command -v $t >/dev/null || die "'$t' missing: run vm/install-deps.sh"
done
for p in libprotobuf-c libnl-3.0 libnl-route-3.0 gnutls; do
  pkg-config --exists $p || die "pkg-config cannot find $p: run vm/install-deps.sh"
done
[[ -f /usr/include/libnet.h ]] || die "libnet.h missing (package libnet1-dev): run vm/install-deps.sh"

# test-only: Bochs 2.7's CPUID(0xD) bug would stop every dump (see the file's header)
QUIRK=$REPO/vm/bochs/criu-bochs27-cpuid.diff
[[ -f $QUIRK ]] || die "$QUIRK missing"
key=$( { echo "$SHA256"; cat "$0" "$QUIRK"; gcc --version | head -n1; } | sha256sum | cut -c1-16)
out=$CACHE/criu/$key
if [[ -x $out/criu && -f $out/zdtm/tests ]]; then
  say "cached: $out"
  echo "$out"
  exit 0
fi

jobs=${CETCTL_JOBS:-$(nproc)}
cc=${CC:-gcc}
[[ -z ${CC:-} ]] && command -v ccache >/dev/null && cc="ccache gcc"
work=$CACHE/criu/$key.work
rm -rf "$work" "$out"
mkdir -p "$work"
say "extracting $(basename "$tarball") into $work"
tar -xf "$tarball" -C "$work"
src=$(echo "$work"/criu-*)
[[ -f $src/Makefile ]] || die "no Makefile in the extracted tarball ($src)"
log=$work/build.log
t0=$SECONDS
say "applying vm/bochs/$(basename "$QUIRK") (test-only, Bochs 2.7 CPUID leaf 0xD)"
patch -d "$src" -p1 --no-backup-if-mismatch <"$QUIRK" >"$log" 2>&1 ||
  { cat "$log" >&2; die "$(basename "$QUIRK") does not apply to $(basename "$src")"; }
say "building criu (make -j$jobs criu, CC='$cc', log $log)"
make -C "$src" -j"$jobs" CC="$cc" criu >>"$log" 2>&1 ||
  { tail -n 30 "$log" >&2; die "criu build failed (see $log)"; }
say "building the zdtm library and tests with SHSTK_ENABLE=1: $ZDTM_TESTS"
{ make -C "$src/test/zdtm/lib" -j"$jobs" CC="$cc" SHSTK_ENABLE=1 &&
  make -C "$src/test/zdtm/static" -j"$jobs" CC="$cc" SHSTK_ENABLE=1 $ZDTM_TESTS; } >>"$log" 2>&1 ||
  { tail -n 30 "$log" >&2; die "zdtm build failed (see $log)"; }

stage=$CACHE/criu/$key.stage
rm -rf "$stage"
mkdir -p "$stage/zdtm"
install -m 0755 "$src/criu/criu" "$stage/criu"
for t in $ZDTM_TESTS; do
  install -m 0755 "$src/test/zdtm/static/$t" "$stage/zdtm/$t"
  echo "$t" >>"$stage/zdtm/tests"
done
"$stage/criu" --version >"$stage/VERSION" 2>&1 || true
cp "$log" "$stage/build.log"
mv "$stage" "$out"
rm -rf "$work"
say "built in $((SECONDS - t0)) s: $out ($(head -n1 "$out/VERSION"))"
echo "$out"
