#!/bin/bash
# vm/mkinitramfs.sh [--kselftest DIR | --demo] [--criu DIR] [--glibc-cet DIR] [BUILD_DIR] — build the guest
# initramfs (gzip'd newc cpio).
#
#   BUILD_DIR  the cetctl CMake build dir (default: <repo>/build). Whatever exists is
#              copied: cetctl, libcetctl-preload.so, tests/guest-helpers/*.
#
# The LAST line of stdout is the absolute path of the initramfs. Progress → stderr.
# Contents: host Debian binaries (bash, bats, coreutils, grep, sed, gawk, findutils,
# util-linux bits, procps, dash, perl-base, busybox-static as fallback applets, trinity and
# stress-ng for the adversarial suites, qemu-img for the preload's ucontext suite) with
# their shared libraries and loader (found with ldd), vm/guest-init as /init, and
#   /usr/bin/cetctl                         (if built)
#   /usr/libexec/cetctl/cetctl-faults       (if built; not with --demo)
#   /usr/lib/cetctl/libcetctl-preload.so    (if built)
#   /usr/libexec/cetctl/helpers/*           (build/tests/guest-helpers/*, on PATH in the guest)
#   /usr/libexec/cetctl/fixtures/           (build/tests/guest-fixtures: the ELF fixtures, elf-oracle.bats)
#   /tests/*.bats, /tests/lib/              (tests/guest/)
#   /usr/bin/cetctl-expect                  (vm/guest-expect: declare expected kernel lines)
#   /usr/libexec/cetctl/world/              (tests/world: the corpus runner; its subset's
#                                            programs in /usr/bin, tests/guest/corpus.bats)
# With --kselftest DIR (vm/kselftests.sh's output): DIR as /opt/kselftest, and
# vm/guest-kselftest.sh as /usr/libexec/cetctl/kselftest.sh.
# With --criu DIR (vm/build-criu.sh's output): criu as /usr/bin/criu (with its libraries)
# and the zdtm tests as /opt/zdtm/ (tests/guest/criu.bats).
# With --glibc-cet DIR (vm/build-glibc-cet.sh's output): that glibc's shared
# objects as /opt/glibc-cet/lib (stripped), and the why-off programs linked
# against it (tests/host/fixtures/build-why.sh) as /usr/libexec/cetctl/why/
# (tests/guest/glibc-cet.bats). Opt-in: the glibc build is long.
# With --demo: a small image for vm/demo.sh only (no suites, bats, perl, fixtures, stress
# tools; busybox applets plus bash, grep, cat, sleep and dmesg from Debian, cetctl, its
# preload library and the helpers the demo runs): Bochs unpacks it in seconds instead
# of the half minute the full image takes.
# Reproducible: files sorted, mtimes fixed to 0, owner root, gzip -n.
# Cached by content in ${CETCTL_CACHE:-/root/.cache/cetctl}/initramfs/<sha>.cpio.gz
# ("cached" when the same content was built before).
set -euo pipefail

die() { echo "mkinitramfs: ERROR: $*" >&2; exit 1; }
say() { echo "mkinitramfs: $*" >&2; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case "${1:-}" in -h|--help) sed -n '2,30p' "$0"; exit 0 ;; esac
KSFT='' CRIU='' GLIBC_CET='' DEMO=0
while [[ ${1:-} == --* ]]; do
  case $1 in
    --kselftest)
      [[ $# -ge 2 && -d $2 ]] || die "--kselftest needs the directory vm/kselftests.sh built"
      KSFT=$(realpath "$2"); shift ;;
    --criu)
      [[ $# -ge 2 && -x $2/criu ]] || die "--criu needs the directory vm/build-criu.sh built"
      CRIU=$(realpath "$2"); shift ;;
    --glibc-cet)
      [[ $# -ge 2 && -x $2/root/opt/glibc-cet/lib/ld-linux-x86-64.so.2 ]] ||
        die "--glibc-cet needs the directory vm/build-glibc-cet.sh built"
      GLIBC_CET=$(realpath "$2"); shift ;;
    --demo) DEMO=1 ;;
    *) die "unknown option '$1' (usage: vm/mkinitramfs.sh [--kselftest DIR | --demo] [--criu DIR] [--glibc-cet DIR] [BUILD_DIR])" ;;
  esac
  shift
done
[[ -n $KSFT && $DEMO == 1 ]] && die "--kselftest and --demo do not go together"
BUILD=${1:-$REPO/build}
[[ $# -le 1 ]] || die "usage: vm/mkinitramfs.sh [--kselftest DIR | --demo] [--criu DIR] [--glibc-cet DIR] [BUILD_DIR]"
CACHE=${CETCTL_CACHE:-/root/.cache/cetctl}
OUTDIR=$CACHE/initramfs
mkdir -p "$OUTDIR"
for t in cpio gzip ldd sha256sum; do command -v $t >/dev/null || die "'$t' missing — run vm/install-deps.sh"; done
[[ -x /bin/busybox ]] || die "/bin/busybox missing (package busybox-static) — run vm/install-deps.sh"
command -v bats >/dev/null || die "bats missing — run vm/install-deps.sh"

ST=$(mktemp -d "$OUTDIR/stage.XXXXXX")
trap 'rm -rf "$ST"' EXIT

# merged-/usr layout
mkdir -p "$ST"/{usr/bin,usr/lib,usr/lib64,usr/libexec,proc,sys,dev,tmp,run,root,etc,tests,var/tmp}
ln -s usr/bin "$ST/bin"; ln -s usr/bin "$ST/sbin"; ln -s bin "$ST/usr/sbin"
ln -s usr/lib "$ST/lib"; ln -s usr/lib64 "$ST/lib64"

declare -A PUT=()
# copy a file (resolving symlinks) to the same path inside the stage
put_path() { # src [dest-path-in-image]
  local src=$1 dst=${2:-$1}
  [[ -n ${PUT[$dst]:-} ]] && return 0
  PUT[$dst]=1
  mkdir -p "$ST$(dirname "$dst")"
  cp -L "$src" "$ST$dst"
}
# the shared libraries (and loader) an ELF file needs, at their ldd path
put_libs() { # elf
  local l
  # lines: "libx.so => /path (0x..)" or "/lib64/ld-linux-x86-64.so.2 (0x..)"
  while read -r l; do
    [[ -n $l ]] && put_path "$l"
  done < <(ldd "$1" 2>/dev/null | sed -n -e 's/.*=> \(\/[^ ]*\) .*/\1/p' -e 's/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p')
}
# a program by name (or absolute path) into /usr/bin
put_bin() { # name [dest-name]
  local p
  p=$(command -v "$1" 2>/dev/null) || { say "note: '$1' not on this host, skipped"; return 0; }
  [[ $p == /* ]] || return 0   # shell builtin
  put_path "$p" "/usr/bin/${2:-$(basename "$1")}"
  chmod 0755 "$ST/usr/bin/${2:-$(basename "$1")}"
  put_libs "$p"
}

say "copying host programs"
# busybox first: applets as fallbacks; the real programs below overwrite the links
cp /bin/busybox "$ST/usr/bin/busybox"
for a in $(/bin/busybox --list); do
  [[ $a == busybox ]] || ln -sf busybox "$ST/usr/bin/$a"
done
put_bin bash; put_bin dash; ln -sf dash "$ST/usr/bin/sh"
if ((DEMO)); then
  # the Debian programs the demo launches and shows (the rest are busybox applets)
  for b in grep cat sleep dmesg; do rm -f "$ST/usr/bin/$b"; put_bin "$b"; done
else
  # coreutils (all of them)
  while read -r f; do
    case $f in */bin/*|*/sbin/*) [[ -f $f && -x $f ]] && { rm -f "$ST/usr/bin/$(basename "$f")"; put_bin "$f"; } ;; esac
  done < <(dpkg -L coreutils findutils grep sed procps 2>/dev/null | sort -u)
  for b in gawk mawk awk perl mount umount dmesg setsid flock taskset nsenter unshare \
           findmnt lsblk getopt kill mountpoint prlimit script timeout gzip cpio env xargs \
           strace readelf setpriv trinity stress-ng qemu-img; do
    [[ -f $ST/usr/bin/$b && ! -L $ST/usr/bin/$b ]] && continue   # already copied
    rm -f "$ST/usr/bin/$b"; put_bin "$b"
    [[ -e $ST/usr/bin/$b ]] || { [[ -n $(/bin/busybox --list | grep -x "$b") ]] && ln -sf busybox "$ST/usr/bin/$b"; } || true
  done
  [[ -e $ST/usr/bin/awk ]] || ln -sf gawk "$ST/usr/bin/awk"

  # perl-base modules (perl -e needs strict/warnings etc.)
  if [[ -x $ST/usr/bin/perl ]]; then
    for d in /usr/lib/x86_64-linux-gnu/perl-base /usr/share/perl5; do
      [[ -d $d ]] && { mkdir -p "$ST$d"; cp -a "$d/." "$ST$d/"; } || true
    done
    # perl-base's @INC includes versioned dirs that are symlinks into perl-base
    for d in /usr/lib/x86_64-linux-gnu/perl/5.* /usr/lib/x86_64-linux-gnu/perl5/5.*; do
      [[ -L $d ]] && { mkdir -p "$ST$(dirname "$d")"; cp -a "$d" "$ST$d"; } || true
    done
  fi

  # the world corpus's subset (tests/world, tests/guest/corpus.bats): the programs
  # the corpus marks SUBSET=1, from this host's Debian packages, with what they read
  # at run time (Tcl's library, OpenSSL's configuration) and their package versions
  say "copying the world corpus's subset (tests/world)"
  mkdir -p "$ST/usr/libexec/cetctl/world"
  install -m 0644 "$REPO/tests/world/corpus.bash" "$ST/usr/libexec/cetctl/world/"
  install -m 0755 "$REPO/tests/world/run-corpus" "$ST/usr/libexec/cetctl/world/"
  : > "$ST/usr/libexec/cetctl/world/versions"
  while read -r prog; do
    [[ -f $ST/usr/bin/$prog && ! -L $ST/usr/bin/$prog ]] || { rm -f "$ST/usr/bin/$prog"; put_bin "$prog"; }
    p=$(command -v "$prog" 2>/dev/null) || continue
    p=$(readlink -f "$p")   # merged /usr: dpkg may know it by its /bin name
    pkg=$(dpkg-query -S "$p" 2>/dev/null || dpkg-query -S "${p#/usr}" 2>/dev/null) || pkg=
    pkg=${pkg%%:*}
    [[ -n $pkg ]] && printf '%s\t%s %s\n' "$prog" "$pkg" "$(dpkg-query -W -f='${Version}' "$pkg")" \
      >> "$ST/usr/libexec/cetctl/world/versions"
  done < <(bash "$REPO/tests/world/run-corpus" --list --subset --programs)
  # Tcl's start-up scripts (init.tcl and its neighbours, not the encodings and
  # modules: 3 MB), OpenSSL's configuration (not the CA bundles)
  for f in /usr/share/tcltk/tcl8.6/*.tcl /usr/share/tcltk/tcl8.6/tclIndex /usr/lib/ssl/openssl.cnf; do
    [[ -f $f ]] && put_path "$f"
  done

  # bats: /usr/bin/bats is a wrapper that finds /usr/lib/bats-core and /usr/libexec/bats-core
  say "copying bats"
  put_path "$(readlink -f "$(command -v bats)")" /usr/bin/bats
  chmod 0755 "$ST/usr/bin/bats"
  for d in /usr/lib/bats-core /usr/libexec/bats-core /usr/lib/bats; do
    [[ -d $d ]] && { mkdir -p "$ST$d"; cp -a "$d/." "$ST$d/"; } || true
  done
  [[ -d $ST/usr/libexec/bats-core ]] || die "bats libexec dir not found on the host"

fi

# minimal /etc
printf 'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' > "$ST/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$ST/etc/group"
printf 'cetguest\n' > "$ST/etc/hostname"
: > "$ST/etc/fstab"

# the guest /init
install -m 0755 "$REPO/vm/guest-init" "$ST/init"
install -m 0755 "$REPO/vm/guest-expect" "$ST/usr/bin/cetctl-expect"
mkdir -p "$ST/usr/libexec/cetctl"
install -m 0755 "$REPO/vm/guest-demo.sh" "$ST/usr/libexec/cetctl/demo.sh"

# cetctl and its test helpers
say "copying cetctl artifacts from $BUILD"
if [[ -x $BUILD/cetctl ]]; then
  put_path "$BUILD/cetctl" /usr/bin/cetctl; chmod 0755 "$ST/usr/bin/cetctl"; put_libs "$BUILD/cetctl"
else
  say "note: $BUILD/cetctl not built — image has no cetctl"
fi
# the test build with the start-up's fault points (cetctl-run.bats disturbs a
# real --shstk start-up with it); never on PATH
if [[ -x $BUILD/cetctl-faults ]] && ! ((DEMO)); then
  put_path "$BUILD/cetctl-faults" /usr/libexec/cetctl/cetctl-faults
  chmod 0755 "$ST/usr/libexec/cetctl/cetctl-faults"; put_libs "$BUILD/cetctl-faults"
fi
for so in "$BUILD"/libcetctl-preload.so "$BUILD"/src/preload/libcetctl-preload.so; do
  if [[ -f $so ]]; then put_path "$so" /usr/lib/cetctl/libcetctl-preload.so; put_libs "$so"; break; fi
done
if [[ -d $BUILD/tests/guest-helpers ]]; then
  mkdir -p "$ST/usr/libexec/cetctl/helpers"
  for h in "$BUILD"/tests/guest-helpers/*; do
    [[ -f $h ]] || continue
    case $h in *.o|*.cmake|*/Makefile|*/CMakeFiles) continue ;; esac
    if ((DEMO)); then   # only what vm/guest-demo.sh runs
      case ${h##*/} in run_probe|shstk_elf_marked|shstk_elf_plain) ;; *) continue ;; esac
    fi
    cp -L "$h" "$ST/usr/libexec/cetctl/helpers/"
    [[ -x $h ]] && put_libs "$h"
  done
fi

if [[ -n $KSFT ]]; then
  say "copying the kernel selftests from $KSFT"
  mkdir -p "$ST/opt/kselftest"
  cp -a "$KSFT/." "$ST/opt/kselftest/"
  rm -f "$ST/opt/kselftest/build.log" "$ST/opt/kselftest/.built"
  install -m 0755 "$REPO/vm/guest-kselftest.sh" "$ST/usr/libexec/cetctl/kselftest.sh"
fi

if [[ -n $CRIU ]]; then
  say "copying CRIU and the zdtm tests from $CRIU"
  put_path "$CRIU/criu" /usr/bin/criu
  chmod 0755 "$ST/usr/bin/criu"
  put_libs "$CRIU/criu"
  mkdir -p "$ST/opt/zdtm"
  cp -a "$CRIU/zdtm/." "$ST/opt/zdtm/"
  for t in "$CRIU"/zdtm/*; do [[ -x $t ]] && put_libs "$t"; done
  cp "$CRIU/VERSION" "$ST/opt/zdtm/CRIU-VERSION"
fi

if [[ -n $GLIBC_CET ]]; then
  say "copying the CET glibc from $GLIBC_CET and building the why-off programs against it"
  mkdir -p "$ST/opt/glibc-cet/lib" "$ST/usr/libexec/cetctl/why"
  # the run-time objects only (no static archives, headers or locales)
  find "$GLIBC_CET/root/opt/glibc-cet/lib" -maxdepth 1 -name '*.so*' \( -type f -o -type l \) \
    -exec cp -a {} "$ST/opt/glibc-cet/lib/" \;
  find "$ST/opt/glibc-cet/lib" -type f -exec strip --strip-debug {} \;
  why=$(mktemp -d "$OUTDIR/why.XXXXXX")
  bash "$REPO/tests/host/fixtures/build-why.sh" "$why" "$GLIBC_CET/root" ||
    { rm -rf "$why"; die "building the why-off programs against $GLIBC_CET failed"; }
  cp -a "$why/." "$ST/usr/libexec/cetctl/why/"
  rm -rf "$why"
fi

# the host tier's ELF fixtures, built for this path (tests/guest/elf-oracle.bats)
if ((!DEMO)) && [[ -d $BUILD/tests/guest-fixtures ]]; then
  mkdir -p "$ST/usr/libexec/cetctl"
  cp -a "$BUILD/tests/guest-fixtures" "$ST/usr/libexec/cetctl/fixtures"
fi

# the suites
nb=0
((DEMO)) || for f in "$REPO"/tests/guest/*.bats; do
  [[ -f $f ]] || continue
  cp "$f" "$ST/tests/"; nb=$((nb + 1))
done
if ((!DEMO)); then
  [[ -d $REPO/tests/guest/lib ]] && cp -a "$REPO/tests/guest/lib" "$ST/tests/lib"
  [[ -d $REPO/tests/guest/fixtures ]] && cp -a "$REPO/tests/guest/fixtures" "$ST/tests/fixtures"
  ((nb > 0)) || say "WARNING: no tests/guest/*.bats found"
fi

# reproducible archive
say "packing ($nb suites)"
find "$ST" -exec touch -h -d @0 {} +
chmod 0755 "$ST"
key=$(cd "$ST" && find . -print0 | LC_ALL=C sort -z |
      xargs -0 stat -c '%n %f %s' | sha256sum | cut -c1-8)$(cd "$ST" &&
      find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
out=$OUTDIR/initramfs-$key.cpio.gz
if [[ -s $out ]]; then
  say "cached: $out"
  echo "$out"; exit 0
fi
(cd "$ST" && find . ! -path . -print0 | LC_ALL=C sort -z |
   cpio --null -o -H newc --owner=0:0 --reproducible --quiet) | gzip -n -6 > "$out.tmp"
mv "$out.tmp" "$out"
say "built $out ($(du -h "$out" | cut -f1), $(find "$ST" | wc -l) entries)"
echo "$out"
