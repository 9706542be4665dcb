#!/bin/bash
# vm/build-matrix.sh [STEP...] — build kernel-series/ in the configurations users build.
# Not in CI (it takes hours of CPU on two cores); run it before a release, in the
# background, and put its summary in the cover letter.
#
# Steps (default: all, in this order):
#   configs  the series applied, built whole (vmlinux) for x86_64 tinyconfig, allnoconfig
#            and defconfig, each with CONFIG_X86_USER_SHADOW_STACK on and off, and i386
#            defconfig (the option needs X86_64: there it must stay off by itself)
#   debian   Debian's own amd64 config (package linux-config-6.1) with the option on:
#            arch/x86, mm, fs, kernel and ipc built (not the drivers)
#   w1       W=1 warnings of every .c file the series changes, plus a fixed set of
#            files that include the headers it changes, on the pristine tree and on
#            the series (vm/kernel.config); a warning the pristine tree does not have
#            (compared without line numbers) is a failure
#   cross    the files the series changes in other architectures (SEGV_CPERR's
#            static_asserts of the signal code): compiled for arm, arm64 and sparc64
#            defconfig with Debian's cross compilers (installed by this step when absent);
#            and mm/nommu.o, which no x86 config builds, for arm stm32_defconfig (!MMU)
# Patch by patch, the full build after each patch is vm/check-series.sh's job
# (vm/check-series.sh --from 21 --to 38, i.e. to the end of the series).
#
# One line per build: STEP NAME: ok|FAILED (seconds, warnings); logs and the summary
# in the work dir. Exit status 0 when every build passed and w1 found no new warning.
# Work dir: ${CETCTL_CACHE:-~/.cache/cetctl}/build-matrix (src = git tree with tags
# base and series, out/NAME = build directories).
# Env: CETCTL_CACHE, CETCTL_JOBS (default: nproc), CC (default "ccache gcc"),
# CETCTL_MATRIX_ONLY (names of the builds to run, default all; e.g. i386-defconfig).
set -uo pipefail

die() { echo "build-matrix: ERROR: $*" >&2; exit 1; }
say() { echo "build-matrix: $*" >&2; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${CETCTL_CACHE:-$HOME/.cache/cetctl}
WORK=$CACHE/build-matrix
SRC=$WORK/src
OUT=$WORK/out
LOGS=$WORK/logs
JOBS=${CETCTL_JOBS:-$(nproc)}
CCMD=${CC:-ccache gcc}
TARBALL=/usr/src/linux-source-6.1.tar.xz
DEBCONFIG=/usr/src/linux-config-6.1/config.amd64_none_amd64.xz
FRAG=$REPO/vm/kernel.config
# objects that include the mm and x86 headers the series changes
SENTINELS="mm/memory.o mm/mmap.o mm/huge_memory.o mm/gup.o arch/x86/kernel/process.o
  arch/x86/kernel/signal.o arch/x86/mm/fault.o kernel/fork.o fs/binfmt_elf.o fs/proc/array.o"

steps=()
for a in "$@"; do
  case $a in
    configs|debian|w1|cross) steps+=("$a") ;;
    -h|--help) sed -n '2,/^set -u/{ /^#/p }' "$0"; exit 0 ;;
    *) die "unknown step '$a' (configs, debian, w1, cross)" ;;
  esac
done
((${#steps[@]})) || steps=(configs debian w1 cross)

[[ -f $TARBALL ]] || die "$TARBALL missing (bash vm/install-deps.sh)"
[[ -f $REPO/kernel-series/series ]] || die "no kernel-series/series"
mkdir -p "$WORK" "$OUT" "$LOGS"
summary=$LOGS/summary.txt
: > "$summary"

G() { git -C "$SRC" -c user.name=cetctl-matrix -c user.email=cetctl-matrix@localhost "$@"; }

# The tree: the tarball as tag base, the series on top as tag series.
if ! G rev-parse -q --verify refs/tags/base >/dev/null 2>&1; then
  say "extracting $TARBALL"
  rm -rf "$SRC" "$WORK/tmp"; mkdir -p "$WORK/tmp"
  tar -C "$WORK/tmp" -xf "$TARBALL" || die "extracting $TARBALL failed"
  mv "$WORK/tmp/linux-source-6.1" "$SRC" && rmdir "$WORK/tmp"
  G init -q
  G add -f -A >/dev/null    # Debian's top-level .gitignore ignores everything
  G commit -qm base
  G tag base
fi
want=$(cat "$REPO/kernel-series/series" "$REPO"/kernel-series/0*.patch | sha256sum | cut -c1-16)
if [[ $(cat "$WORK/series-hash" 2>/dev/null) != "$want" ]]; then
  say "applying kernel-series"
  G am --abort >/dev/null 2>&1 || true
  G reset -q --hard base && G clean -fdq
  while read -r p; do
    [[ $p && $p != \#* ]] || continue
    G am -q --whitespace=nowarn "$REPO/kernel-series/$p" >/dev/null 2>&1 ||
      die "kernel-series/$p does not apply"
  done < "$REPO/kernel-series/series"
  G tag -f series >/dev/null
  echo "$want" > "$WORK/series-hash"
fi

failed=0
record() {  # record STEP NAME STATUS SECONDS WARNINGS
  printf '%-8s %-34s %-6s %5s s  %s warnings\n' "$1" "$2" "$3" "$4" "$5" | tee -a "$summary" >&2
  [[ $3 == ok ]] || failed=1
}

checkout() {  # checkout TAG: the source tree at TAG (make sees only the files that change)
  [[ $(G rev-parse HEAD) == $(G rev-parse "$1^{commit}") ]] || G checkout -q "$1"
}

# build NAME ARCH CONFIG-STEPS TARGETS...: a configuration built in out/NAME.
# CONFIG-STEPS: a make config target, then KEY=y|n settings separated by spaces.
build() {
  local name=$1 arch=$2 cfg=$3 o=$OUT/$1 log=$LOGS/$1.log t0=$SECONDS st=ok w kv
  # CETCTL_MATRIX_ONLY="NAME...": only these builds (to finish a matrix run)
  [[ -z ${CETCTL_MATRIX_ONLY:-} || " $CETCTL_MATRIX_ONLY " == *" $name "* ]] || return 0
  shift 3
  local -a kvs
  read -r -a kvs <<<"$cfg"
  mkdir -p "$o"
  {
    if [[ ${kvs[0]} == debian ]]; then
      xz -dc "$DEBCONFIG" > "$o/.config"
      # Debian signs modules with its own key, which we do not have
      "$SRC/scripts/config" --file "$o/.config" --set-str SYSTEM_TRUSTED_KEYS "" \
        --set-str MODULE_SIG_KEY "certs/signing_key.pem" --disable MODULE_SIG_ALL \
        --disable DEBUG_INFO_BTF
      make -C "$SRC" O="$o" ARCH="$arch" CC="$CCMD" olddefconfig
    else
      make -C "$SRC" O="$o" ARCH="$arch" CC="$CCMD" "${kvs[0]}"
    fi
    for kv in "${kvs[@]:1}"; do
      case $kv in
        *=y) "$SRC/scripts/config" --file "$o/.config" --enable "${kv%=y}" ;;
        *=n) "$SRC/scripts/config" --file "$o/.config" --disable "${kv%=n}" ;;
      esac
    done
    make -C "$SRC" O="$o" ARCH="$arch" CC="$CCMD" olddefconfig
  } > "$log" 2>&1 || st=FAILED
  # the option must come out as asked (it depends on X86_64 and the toolchain)
  for kv in "${kvs[@]:1}"; do
    case $kv in
      X86_USER_SHADOW_STACK=y) grep -qx 'CONFIG_X86_USER_SHADOW_STACK=y' "$o/.config" || {
          echo "CONFIG_X86_USER_SHADOW_STACK did not stay on" >> "$log"; st=FAILED; } ;;
      X86_USER_SHADOW_STACK=n) ! grep -qx 'CONFIG_X86_USER_SHADOW_STACK=y' "$o/.config" || {
          echo "CONFIG_X86_USER_SHADOW_STACK did not go off" >> "$log"; st=FAILED; } ;;
    esac
  done
  if [[ $st == ok ]]; then
    nice make -C "$SRC" O="$o" ARCH="$arch" CC="$CCMD" -j"$JOBS" "$@" >> "$log" 2>&1 || st=FAILED
  fi
  w=$(grep -c 'warning:' "$log")
  record "${step:-}" "$name" "$st" $((SECONDS - t0)) "$w"
}

for step in "${steps[@]}"; do
  case $step in
    configs)
      checkout series
      for base in tinyconfig allnoconfig defconfig; do
        for on in y n; do
          build "x86_64-$base-shstk-$on" x86_64 "$base X86_USER_SHADOW_STACK=$on" vmlinux
        done
      done
      # i386: the option depends on X86_64; asking for it must leave it off
      build i386-defconfig i386 "defconfig X86_USER_SHADOW_STACK=n" vmlinux
      ;;
    debian)
      [[ -f $DEBCONFIG ]] || die "$DEBCONFIG missing (apt-get install linux-config-6.1)"
      checkout series
      build debian-amd64-shstk-y x86_64 "debian X86_USER_SHADOW_STACK=y" \
        arch/x86/ mm/ fs/ kernel/ ipc/
      ;;
    w1)
      # the objects: every .c file the series changes, and the sentinels
      # (other architectures' files need their cross compiler: listed, not built)
      mapfile -t files < <(G diff --name-only base series -- '*.c' | grep -v '^tools/' |
                           grep -v -E '^arch/([^x]|x[^8])' | sed 's/\.c$/.o/')
      mapfile -t other < <(G diff --name-only base series -- 'arch/*.c' |
                           grep -E '^arch/([^x]|x[^8])')
      ((${#other[@]} == 0)) ||
        say "w1: left to the cross step (another architecture): ${other[*]}"
      # shellcheck disable=SC2086  # SENTINELS is a list of words
      objs=$(printf '%s\n' "${files[@]}" $SENTINELS | sort -u)
      for tag in base series; do
        checkout "$tag"
        o=$OUT/w1-$tag log=$LOGS/w1-$tag.log t0=$SECONDS st=ok
        mkdir -p "$o"
        {
          make -C "$SRC" O="$o" CC="$CCMD" KCONFIG_ALLCONFIG="$FRAG" allnoconfig &&
            make -C "$SRC" O="$o" CC="$CCMD" -j"$JOBS" prepare
        } > "$log" 2>&1 || st=FAILED
        present=()
        for f in $objs; do [[ -f $SRC/${f%.o}.c ]] && present+=("$f"); done
        # one make per object: an object this config does not build (XEN_PV, !MMU) is
        # an error only where the pristine tree builds it; the others are built by the
        # debian (XEN_PV) and cross (nommu) steps
        for f in "${present[@]}"; do
          touch "$SRC/${f%.o}.c"
          nice make -C "$SRC" O="$o" CC="$CCMD" W=1 -j"$JOBS" "$f" >> "$log" 2>&1 ||
            echo "build-matrix: $f did not build" >> "$log"
        done
        grep 'did not build' "$log" | sort > "$LOGS/w1-$tag.unbuilt"
        if [[ $tag == series ]]; then
          ! comm -13 "$LOGS/w1-base.unbuilt" "$LOGS/w1-series.unbuilt" | grep . >&2 || st=FAILED
          mapfile -t both < <(comm -12 "$LOGS/w1-base.unbuilt" "$LOGS/w1-series.unbuilt" |
                              awk '{ print $2 }')
          ((${#both[@]} == 0)) || say "w1: not in this config, on either tree: ${both[*]}"
        fi
        # warnings without line and column (kernel-doc gives a line only), sorted:
        # comparable across the two trees
        grep 'warning:' "$log" | sed -E 's|^.*/'"${SRC##*/}"'/||; s/:[0-9]+(:[0-9]+)?:/:/' |
          sort -u > "$LOGS/w1-$tag.warnings"
        record w1 "W=1 on $tag (${#present[@]} objects)" "$st" $((SECONDS - t0)) \
          "$(wc -l < "$LOGS/w1-$tag.warnings")"
      done
      checkout series
      comm -13 "$LOGS/w1-base.warnings" "$LOGS/w1-series.warnings" > "$LOGS/w1-new.warnings"
      n=$(wc -l < "$LOGS/w1-new.warnings")
      if ((n)); then
        record w1 "new W=1 warnings" FAILED 0 "$n"
        sed 's/^/  /' "$LOGS/w1-new.warnings" >&2
      else
        record w1 "new W=1 warnings" ok 0 0
      fi
      ;;
    cross)
      checkout series
      # ARCH:COMPILER:CONFIG[:OBJECTS] (default: what the series changes in arch/ARCH)
      for spec in arm:arm-linux-gnueabihf:defconfig arm64:aarch64-linux-gnu:defconfig \
          sparc64:sparc64-linux-gnu:defconfig arm:arm-linux-gnueabihf:stm32_defconfig:mm/nommu.o; do
        IFS=: read -r arch cross cfg only <<<"$spec"
        dir=$arch
        [[ $arch == sparc64 ]] && dir=sparc
        if [[ $only ]]; then
          read -r -a objs <<<"$only"
        else
          mapfile -t objs < <(G diff --name-only base series -- "arch/$dir/*.c" | sed 's/\.c$/.o/')
        fi
        ((${#objs[@]})) || continue
        o=$OUT/cross-$arch-$cfg log=$LOGS/cross-$arch-$cfg.log t0=$SECONDS st=ok
        mkdir -p "$o"
        {
          command -v "$cross-gcc" ||
            DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "gcc-$cross"
          make -C "$SRC" O="$o" ARCH="$arch" CROSS_COMPILE="$cross-" CC="ccache $cross-gcc" "$cfg" &&
            nice make -C "$SRC" O="$o" ARCH="$arch" CROSS_COMPILE="$cross-" CC="ccache $cross-gcc" \
              -j"$JOBS" prepare &&
            nice make -C "$SRC" O="$o" ARCH="$arch" CROSS_COMPILE="$cross-" CC="ccache $cross-gcc" \
              -j"$JOBS" "${objs[@]}"
        } > "$log" 2>&1 || st=FAILED
        for f in "${objs[@]}"; do
          [[ -f $o/$f ]] || { echo "build-matrix: $f not built" >> "$log"; st=FAILED; }
        done
        record cross "$arch $cfg: ${objs[*]##*/}" "$st" $((SECONDS - t0)) \
          "$(grep -c 'warning:' "$log")"
      done
      ;;
  esac
done

say "summary in $summary"
exit "$failed"
