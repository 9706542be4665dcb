#!/bin/bash
# vm/clean-room.sh [options] [STEP...] — prove the set-up on a clean Debian 12 machine.
#
# Builds a Debian 12 minbase root with mmdebstrap (from the apt sources this
# machine uses), clones this checkout (its HEAD) into the root's /tmp — a
# world-writable place, as a newcomer's clone under /tmp or /var/tmp would be —
# and runs the steps there as root in a chroot, with nothing of this machine's
# installed packages or caches:
#
#   deps    bash vm/install-deps.sh                  (every package every tier needs)
#   host    bash tests/run-all.sh host asan          (no test may skip for the checkout's place)
#   build   the build steps of every guest tier: our kernel and its Bochs variant,
#           unpatched 6.1 (kselftest baseline), the guest images, the 6.1 selftests,
#           mainline's selftest, CRIU 4.2 and its image, the Debian tier's parts when present
#   demo    bash vm/demo.sh                          (the README's first command, whole)
#   test    bash tests/run-all.sh                    (the README's second command, whole)
# Default: deps host build. Each step's wall time is printed and kept in
# <root>/clean-room-times.txt; a step that fails stops the run (exit 1).
#
#   --root DIR   where to build the root (default /var/tmp/cetctl-clean-room); an existing
#                root from an earlier run is removed first unless --reuse is given
#   --reuse      keep an existing root (to add steps to one already set up)
#   --keep       do not remove the root at the end (the default removes it when all passed)
# Needs root, mmdebstrap and about 15 GB free (the kernel trees).
set -euo pipefail

die() { echo "clean-room: ERROR: $*" >&2; exit 1; }
say() { echo "clean-room: $*" >&2; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
root=/var/tmp/cetctl-clean-room reuse=0 keep=0
steps=()
while (($#)); do
  case $1 in
    --root) (($# >= 2)) || die "--root needs a directory"; root=$2; shift 2 ;;
    --reuse) reuse=1; shift ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    deps|host|build|demo|test) steps+=("$1"); shift ;;
    *) die "unknown argument '$1' (try --help)" ;;
  esac
done
((${#steps[@]})) || steps=(deps host build)
[[ $(id -u) -eq 0 ]] || die "needs root (mmdebstrap, chroot)"
command -v mmdebstrap >/dev/null || die "mmdebstrap not found: run vm/install-deps.sh"
[[ $root == /* && $root != / ]] || die "--root must be an absolute path other than /"

mounted=()
cleanup() {
  local m i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    m=${mounted[i]}
    umount -l "$m" 2>/dev/null || true
  done
}
trap cleanup EXIT

if [[ -e $root ]] && ((!reuse)); then
  say "removing the earlier root $root"
  for m in $(awk -v r="$root/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r); do
    umount -l "$m" || true
  done
  rm -rf --one-file-system "$root"
fi

if [[ ! -x $root/bin/bash ]]; then
  say "building a Debian 12 minbase root in $root (mmdebstrap, this machine's apt sources)"
  t0=$SECONDS
  # the sources as apt here has them, one-line format (mmdebstrap reads them on stdin)
  apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' 'Created-By: Packages' \
    2>/dev/null | awk 'NF == 3 { print "deb " $1 " " $2 " " $3 }' | sort -u > "$root.sources" || true
  [[ -s $root.sources ]] || die "could not read this machine's apt sources (run apt-get update)"
  mmdebstrap --variant=minbase --include=ca-certificates \
    --aptopt='Acquire::Check-Valid-Until "false"' --aptopt='Acquire::Check-Date "false"' \
    bookworm "$root" - < "$root.sources" || die "mmdebstrap failed"
  rm -f "$root.sources"
  say "root built in $((SECONDS - t0)) s"
fi

# What a fresh machine has that a minbase root lacks: a root that is a mount
# point (unshare -m needs one: the hidepid test makes a mount namespace) and
# the kernel's file systems.
mount --bind "$root" "$root"
mounted+=("$root")
for m in proc sys dev dev/pts; do
  mkdir -p "$root/$m"
  case $m in
    proc) mount -t proc proc "$root/proc" ;;
    sys) mount -t sysfs sys "$root/sys" ;;
    dev) mount --bind /dev "$root/dev" ;;
    dev/pts) mount -t devpts -o newinstance,ptmxmode=0666 devpts "$root/dev/pts" ;;
  esac
  mounted+=("$root/$m")
done
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

# The checkout: this repository's HEAD, cloned as a newcomer would, into /tmp.
if [[ ! -d $root/tmp/cetctl/.git ]]; then
  git clone -q --no-local "$REPO" "$root/tmp/cetctl" || die "git clone failed"
fi
say "checkout: $(git -C "$root/tmp/cetctl" log --oneline -1) in $root/tmp/cetctl"

# The CRIU 4.2 release tarball is not in the repository: the machines that run CI
# have it beside the checkout (../shared/criu/, where vm/build-criu.sh looks), and
# so does the root, at the same place relative to its checkout. Without it the
# CRIU tier cannot build (vm/build-criu.sh says so) and tests/run-all.sh fails.
for t in "$REPO/../shared/criu/criu-4.2.tar.xz" /work/shared/criu/criu-4.2.tar.xz; do
  if [[ -f $t ]]; then
    mkdir -p "$root/tmp/shared/criu"
    cp "$t" "$root/tmp/shared/criu/criu-4.2.tar.xz"
    say "CRIU 4.2 tarball: $t, copied to /tmp/shared/criu/ in the root"
    break
  fi
done
[[ -f $root/tmp/shared/criu/criu-4.2.tar.xz ]] ||
  say "WARNING: no CRIU 4.2 tarball beside this checkout: the CRIU tier will fail"

# in_root CMD: run CMD with bash -c in the root, in the checkout, as a login root would
in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin CI="${CI:-}" \
    /bin/bash -c "cd /tmp/cetctl && $1"
}

# The build steps of every guest tier, as tests/run-all.sh runs them.
BUILD_STEPS='set -e
b=/var/lib/cetctl-test/build-cr
cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build "$b" -j"$(nproc)" >/dev/null
bash vm/build-kernel.sh >/dev/null
bash vm/build-kernel.sh --bochs >/dev/null
bash vm/build-kernel.sh --base >/dev/null
bash vm/mainline-selftest.sh "$b" >/dev/null
bash vm/mkinitramfs.sh "$b" >/dev/null
k=$(bash vm/kselftests.sh "$b" | tail -n1)
bash vm/mkinitramfs.sh --kselftest "$k" "$b" >/dev/null
c=$(bash vm/build-criu.sh | tail -n1)
bash vm/mkinitramfs.sh --criu "$c" "$b" >/dev/null
if [ -f vm/debian-image.sh ]; then bash vm/debian-image.sh >/dev/null; fi
echo "every build step of every tier passed"'

times=$root/clean-room-times.txt
rc=0
for s in "${steps[@]}"; do
  case $s in
    deps) cmd='bash vm/install-deps.sh' ;;
    host) cmd='bash tests/run-all.sh host asan' ;;
    build) cmd=$BUILD_STEPS ;;
    demo) cmd='bash vm/demo.sh' ;;
    test) cmd='bash tests/run-all.sh' ;;
  esac
  say "step $s: starting ($(date -u +%T) UTC)"
  t0=$SECONDS
  if in_root "$cmd" 2>&1 | tee "$root/clean-room-$s.log"; then st=0; else st=1; fi
  printf '%-6s %5d s  exit %d\n' "$s" $((SECONDS - t0)) "$st" | tee -a "$times" >&2
  if ((st != 0)); then
    rc=1
    say "step $s FAILED (log $root/clean-room-$s.log)"
    break
  fi
done

if ((rc == 0)) && [[ " ${steps[*]} " == *" host "* ]]; then
  # the point of the host step: nothing skipped because of the checkout's place
  if grep -E '^ok .* # skip .*(move the checkout|writable by group or others)' \
       "$root/clean-room-host.log"; then
    say "tests skipped because of where the checkout lies (above)"
    rc=1
  fi
fi
cat "$times" >&2
if ((rc == 0 && !keep)); then
  cleanup; mounted=()
  rm -rf --one-file-system "$root"
  say "all steps passed; root removed"
else
  say "root kept in $root"
fi
exit "$rc"
