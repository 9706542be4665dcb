#!/bin/bash
# vm/check-series.sh — check kernel-series/ patch by patch.
#
#   vm/check-series.sh [--no-build | --quick] [--from N] [--to M] [--config FRAGMENT]
#
# For each patch listed in kernel-series/series, in order, on a clean copy of the
# linux-source-6.1 tree: apply it with `git am`, build bzImage incrementally (ccache,
# out of tree) with the config fragment (default vm/kernel.config, applied as
# `make KCONFIG_ALLCONFIG=<fragment> allnoconfig`), and run
# `scripts/checkpatch.pl --strict --no-tree` on the patch file. Prints one table row
# per patch (applies / builds / compiler warnings / checkpatch errors / warnings) and
# a summary; the full logs stay in the work directory. A patch whose build warns
# fails the check: each patch must build on its own, and cleanly (an unused static
# function that only a later patch calls is the usual case).
#
#   --no-build    only apply and checkpatch (fast)
#   --quick       instead of bzImage, compile only the .c files the patch changes plus,
#                 when it changes headers, a fixed set of sentinel objects that include
#                 the mm/x86 headers the series touches (much faster, less complete)
#   --from N      build only from patch N on (earlier ones are applied and checkpatched);
#                 useful to resume
#   --to M        stop after patch M (with --from: build one stretch of the series)
#   --config F    another config fragment (e.g. one with CONFIG_X86_USER_SHADOW_STACK=n)
#
# Exit status: 0 when every patch applies and builds without a compiler warning and
# checkpatch reports no errors, 1 otherwise. This takes long (header changes rebuild
# most of the kernel): run it in the background. It is not part of CI.
# Work dir: ${CETCTL_CACHE:-/root/.cache/cetctl}/check-series/ (src = git tree, out = build).
# Env: CETCTL_CACHE, CETCTL_JOBS (default 2), CC (default "ccache gcc").
set -uo pipefail

die() { echo "check-series: ERROR: $*" >&2; exit 1; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${CETCTL_CACHE:-/root/.cache/cetctl}
WORK=$CACHE/check-series
SRC=$WORK/src
OUT=$WORK/out
LOGS=$WORK/logs
SERIES_DIR=$REPO/kernel-series
FRAG=$REPO/vm/kernel.config
JOBS=${CETCTL_JOBS:-2}
CCMD=${CC:-ccache gcc}
TARBALL=/usr/src/linux-source-6.1.tar.xz
build=1
from=1
to=
quick=0
SENTINELS="mm/memory.o mm/mmap.o mm/huge_memory.o arch/x86/kernel/process.o
  arch/x86/kernel/signal.o arch/x86/mm/fault.o kernel/fork.o fs/binfmt_elf.o"

while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) build=0 ;;
    --quick) quick=1 ;;
    --from) shift; from=${1:?--from needs a number} ;;
    --to) shift; to=${1:?--to needs a number} ;;
    --config) shift; FRAG=$(realpath "${1:?--config needs a file}") ;;
    -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
    *) die "unknown argument '$1'" ;;
  esac
  shift
done

[ -f "$SERIES_DIR/series" ] || die "no $SERIES_DIR/series (run vm/export-series.sh)"
[ -f "$TARBALL" ] || die "$TARBALL missing (apt-get install linux-source-6.1)"
[ -f "$FRAG" ] || die "config fragment $FRAG missing"
mkdir -p "$WORK" "$LOGS"

# A clean tree: the tarball committed as `base`; reset to it when it exists.
if [ ! -d "$SRC/.git" ]; then
  echo "check-series: extracting $TARBALL" >&2
  rm -rf "$SRC" "$WORK/tmp"
  mkdir -p "$WORK/tmp"
  tar -C "$WORK/tmp" -xf "$TARBALL" || die "extracting $TARBALL failed"
  mv "$WORK/tmp"/linux-source-6.1 "$SRC" && rmdir "$WORK/tmp"
  git -C "$SRC" init -q
  # Debian's tarball .gitignore ignores everything at the top level: add with -f.
  git -C "$SRC" add -f -A >/dev/null
  git -C "$SRC" -c user.name=check -c user.email=check@localhost commit -qm base
  git -C "$SRC" tag base
fi
git -C "$SRC" am --abort >/dev/null 2>&1
git -C "$SRC" checkout -q --detach base || die "cannot check out base"
git -C "$SRC" reset -q --hard base
git -C "$SRC" clean -q -fdx

if [ "$build" = 1 ]; then
  mkdir -p "$OUT"
  make -s -C "$SRC" O="$OUT" KCONFIG_ALLCONFIG="$FRAG" allnoconfig > "$LOGS/config.log" 2>&1 ||
    die "allnoconfig failed, see $LOGS/config.log"
fi

# Is the object of this source file part of the configured build? (quick mode: do not
# compile files of other architectures or disabled options, e.g. mm/nommu.c)
obj_configured() {
  local o=$1 dir base line cfg
  case "$o" in arch/x86/*) ;; arch/*) return 1 ;; esac
  dir=$(dirname "$o") base=$(basename "$o")
  [ -f "$SRC/$dir/Makefile" ] || return 1
  while read -r line; do
    case "$line" in
      obj-y*|lib-y*|core-y*) return 0 ;;
    esac
    cfg=$(echo "$line" | sed -n 's/.*-\$(\(CONFIG_[A-Za-z0-9_]*\)).*/\1/p')
    [ -n "$cfg" ] && grep -q "^$cfg=y" "$OUT/.config" && return 0
  done < <(grep -E "(^|[[:space:]])${base//./\\.}([[:space:]]|$)" "$SRC/$dir/Makefile")
  return 1
}

printf '%-4s %-66s %-7s %-7s %4s %4s %4s %6s\n' "#" "patch" "applies" "builds" "ccw" "err" "warn" "time"
fail=0 n=0 total_err=0 total_warn=0 total_ccw=0
while read -r p; do
  [ -n "$p" ] || continue
  n=$((n + 1))
  f=$SERIES_DIR/$p
  applies=yes builds=- ccw=- err=- warn=- t=-
  if ! git -C "$SRC" -c user.name=check -c user.email=check@localhost am -q --keep-cr "$f" \
       > "$LOGS/$n-am.log" 2>&1; then
    applies=no fail=1
    git -C "$SRC" am --abort >/dev/null 2>&1
  fi
  if [ "$applies" = yes ]; then
    "$SRC/scripts/checkpatch.pl" --strict --no-tree --no-color "$f" > "$LOGS/$n-checkpatch.log" 2>&1
    err=$(sed -n 's/^total: \([0-9]*\) errors, \([0-9]*\) warnings.*/\1/p' "$LOGS/$n-checkpatch.log")
    warn=$(sed -n 's/^total: \([0-9]*\) errors, \([0-9]*\) warnings.*/\2/p' "$LOGS/$n-checkpatch.log")
    err=${err:-?} warn=${warn:-?}
    [ "$err" = 0 ] || fail=1
    [ "$err" = "?" ] || total_err=$((total_err + err))
    [ "$warn" = "?" ] || total_warn=$((total_warn + warn))
    if [ "$build" = 1 ] && [ "$n" -ge "$from" ]; then
      start=$(date +%s)
      targets=bzImage
      # The fragment again each time: options added by the series get their value
      make -C "$SRC" O="$OUT" KCONFIG_ALLCONFIG="$FRAG" allnoconfig > "$LOGS/$n-config.log" 2>&1
      if [ "$quick" = 1 ]; then
        changed=$(git -C "$SRC" diff --name-only HEAD~1 HEAD)
        targets=$(echo "$changed" | sed -n 's/\.c$/.o/p' | grep -v '^tools/' |
                  while read -r o; do
                    [ -f "$SRC/${o%.o}.c" ] && obj_configured "$o" && echo "$o"
                  done)
        if echo "$changed" | grep -q '\.h$\|Kconfig\|\.tbl$'; then
          targets="$targets $SENTINELS"
        fi
        targets=$(echo $targets)
        [ -n "$targets" ] || targets=prepare
      fi
      if make -C "$SRC" O="$OUT" CC="$CCMD" -j"$JOBS" $targets > "$LOGS/$n-build.log" 2>&1; then
        builds=yes
        [ "$quick" = 0 ] || builds=quick
      else
        builds=no fail=1
      fi
      # compiler, assembler, linker and modpost warnings (Kconfig's go to N-config.log)
      ccw=$(grep -c -E 'warning:|^WARNING:' "$LOGS/$n-build.log")
      total_ccw=$((total_ccw + ccw))
      [ "$ccw" = 0 ] || fail=1
      t=$(( $(date +%s) - start ))s
    fi
  fi
  printf '%-4s %-66s %-7s %-7s %4s %4s %4s %6s\n' "$n" "${p:0:66}" "$applies" "$builds" "$ccw" "$err" "$warn" "$t"
  [ "$applies" = yes ] || break
  [ -z "$to" ] || [ "$n" -lt "$to" ] || break
done < "$SERIES_DIR/series"

echo "check-series: $n patches checked; compiler warnings: $total_ccw; checkpatch total: $total_err errors, $total_warn warnings; logs in $LOGS"
[ "$fail" = 0 ] && echo "check-series: PASS" || echo "check-series: FAIL"
exit "$fail"
