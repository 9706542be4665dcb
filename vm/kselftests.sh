#!/bin/bash
# vm/kselftests.sh [BUILD_DIR] — build the 6.1 tree's own x86 and vm selftests.
#
# Sources: tools/testing/selftests/{x86,vm} of the pristine linux-source-6.1 tree
# (the baseline tree of vm/build-kernel.sh --base, or a checkout of its tag base;
# the uapi headers are that tree's). Built static (the guest has few libraries), with the
# selftests' own Makefiles, into
#
#   BUILD_DIR/tests/kselftest/x86/*_32 *_64
#   BUILD_DIR/tests/kselftest/vm/*  plus run_vmtests.sh and the scripts it calls
#
# vm/mkinitramfs.sh --kselftest DIR puts them into the image (/opt/kselftest), and
# vm/guest-kselftest.sh runs them there (tests/run-all.sh kselftest). Cached: the
# output is rebuilt only when the tree or this script changed. The LAST line of
# stdout is the output directory.
set -euo pipefail

die() { echo "kselftests: ERROR: $*" >&2; exit 1; }
say() { echo "kselftests: $*" >&2; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case "${1:-}" in -h|--help) sed -n '2,16p' "$0"; exit 0 ;; esac
BUILD=$(realpath -m "${1:-$REPO/build}")
CACHE=${CETCTL_CACHE:-/root/.cache/cetctl}
pkgver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) || die "linux-source-6.1 not installed"
# the pristine sources: the baseline build's tree, or else a checkout of tag
# base of the series tree (vm/build-kernel.sh made both; no kernel build needed)
tree=$CACHE/ktree/$pkgver-base/linux
if [[ ! -f $tree/Makefile ]]; then
  series_tree=$CACHE/ktree/$pkgver/linux
  tree=$CACHE/ktree/$pkgver-selftests/linux
  if [[ ! -f $tree/Makefile ]]; then
    git -C "$series_tree" rev-parse -q --verify refs/tags/base >/dev/null ||
      die "no kernel tree in $CACHE/ktree (run vm/build-kernel.sh first)"
    say "checking out the pristine tree (tag base of $series_tree) into $tree"
    rm -rf "$(dirname "$tree")"; mkdir -p "$(dirname "$tree")"
    git -C "$series_tree" worktree prune
    git -C "$series_tree" worktree add -f --detach "$tree" base >/dev/null 2>&1 ||
      die "git worktree add failed"
  fi
fi
[[ -d $tree/tools/testing/selftests/vm ]] || die "no selftests in $tree"
out=$BUILD/tests/kselftest
stamp=$out/.built
want=$(sha256sum "$0" | cut -c1-16)-$(git -C "$tree" rev-parse HEAD)
if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
  say "up to date: $out"
  echo "$out"
  exit 0
fi

rm -rf "$out"
mkdir -p "$out/x86" "$out/vm" "$out/hdr"
log=$out/build.log
say "installing uapi headers of $tree"
make -C "$tree" -s headers_install INSTALL_HDR_PATH="$out/hdr" >"$log" 2>&1 ||
  { tail -20 "$log" >&2; die "headers_install failed (log $log)"; }

# KSFT_KHDR/KHDR_INCLUDES: our headers; CC with -static: every binary static
mk() { # dir
  make -C "$tree/tools/testing/selftests/$1" OUTPUT="$out/$1" \
    KHDR_INCLUDES="-isystem $out/hdr/include" CC="gcc -static" -j"$(nproc)" -k >>"$log" 2>&1 || true
}
say "building x86 selftests"
mk x86
say "building vm selftests"
mk vm
cp "$tree/tools/testing/selftests/vm/"*.sh "$out/vm/"
n86=$(find "$out/x86" -maxdepth 1 -type f -perm -u+x | wc -l)
nvm=$(find "$out/vm" -maxdepth 1 -type f -perm -u+x ! -name '*.sh' | wc -l)
say "built $n86 x86 and $nvm vm programs (log $log)"
((n86 > 20 && nvm > 15)) || { grep -E 'error|Error' "$log" | tail -20 >&2; die "too few selftests built"; }
rm -rf "$out/hdr"
echo "$want" > "$stamp"
echo "$out"
