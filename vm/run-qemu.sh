#!/bin/bash
# vm/run-qemu.sh KERNEL INITRD [options] — boot the test guest in QEMU, run the suites,
# judge the result.
#
#   --log FILE        console log (default: <repo>/build/vm/qemu-console.log)
#   --timeout SECS    kill QEMU after SECS wall seconds (default 1200, env CETCTL_QEMU_TIMEOUT)
#   --filter REGEX    only tests whose name matches (bats --filter; no spaces)
#   --suites a,b      only tests/guest/a.bats, b.bats
#   --append "ARGS"   extra kernel command line (repeatable)
#   --tier NAME       value of cetctl.tier= and of the summary prefix (default qemu)
#   --label NAME      summary prefix only (default: the tier), e.g. qemu-ref
#   --allow ERE       passed to parse-results.sh: excuse matching kernel lines (repeatable)
#   --no-parse        only boot and save the log (exit 0 when the final marker was seen)
# Accelerator: KVM with -cpu host when /dev/kvm works (probed), else TCG with -cpu max.
# Force one with CETCTL_QEMU_ACCEL=kvm|tcg.
# Prints the TAP lines and markers live, then runs vm/parse-results.sh LOG TIER;
# the exit status is parse-results' (0 = all passed), or 3 if QEMU could not start.
set -euo pipefail

die() { echo "run-qemu: ERROR: $*" >&2; exit 3; }
say() { echo "run-qemu: $*" >&2; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$REPO/vm/lib.sh"
log=$REPO/build/vm/qemu-console.log
tmo=${CETCTL_QEMU_TIMEOUT:-1200}
tier=qemu
pos=()
while (($#)); do
  runner_option "$@"
  if ((RUNNER_SHIFT)); then shift "$RUNNER_SHIFT"; continue; fi
  case $1 in
    -h|--help) sed -n '2,/^[^#]/{ /^#/p }' "$0"; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) pos+=("$1"); shift ;;
  esac
done
((${#pos[@]} == 2)) || die "usage: vm/run-qemu.sh KERNEL INITRD [--log FILE] [--timeout S] [--filter RE] [--suites a,b]"
kernel=${pos[0]} initrd=${pos[1]}
[[ -f $kernel ]] || die "kernel $kernel not found"
[[ -f $initrd ]] || die "initramfs $initrd not found"
QEMU=$(command -v qemu-system-x86_64) || die "qemu-system-x86_64 missing — run vm/install-deps.sh"
mkdir -p "$(dirname "$log")"

# A KVM that failed to run a guest (see boot() below) is not tried again until the
# host reboots: its boot id is kept in the cache (never needed: without it KVM is
# just tried once more).
kvm_mark=${CETCTL_CACHE:-/root/.cache/cetctl}/qemu-kvm-failed
boot_id=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo unknown)
accel=${CETCTL_QEMU_ACCEL:-}
if [[ -z $accel ]]; then
  accel=tcg
  if [[ -r /dev/kvm && -w /dev/kvm ]] && [[ $(cat "$kvm_mark" 2>/dev/null) != "$boot_id" ]] &&
     (echo quit | timeout 20 "$QEMU" -accel kvm -cpu host -nodefaults -display none \
                   -monitor stdio -S) >/dev/null 2>&1; then
    accel=kvm
  fi
fi
case $accel in
  kvm) accel_args=(-accel kvm -cpu host) ;;
  tcg) accel_args=(-accel tcg -cpu max) ;;
  *) die "CETCTL_QEMU_ACCEL must be kvm or tcg" ;;
esac

cmdline="console=ttyS0,115200 panic=-1 loglevel=5 printk.time=1 $(runner_guest_cmdline)"

# boot: one run of the guest into $log, the interesting lines on stdout; qemu's status
# in qrc. KVM can be there and still fail: a nested hypervisor whose instruction
# emulator lacks an instruction the guest kernel uses (seen: "KVM internal error.
# Suberror: 1 ... emulation failure" at a lock cmpxchg16b, after which QEMU pauses
# the guest until the timeout kills it). A probe that runs no guest code cannot see
# that, so the log is watched: on that error the boot is stopped at once and
# kvm_failed is set, for the caller to boot again with TCG.
boot() {
  local pl
  kvm_failed=0
  rm -f "$log.rc"
  ( set +e
    timeout -k 10 "$tmo" "$QEMU" "${accel_args[@]}" -m 1024 -smp 2 -nodefaults -no-reboot \
      -display none -monitor none -serial stdio \
      -kernel "$kernel" -initrd "$initrd" -append "$cmdline" </dev/null 2>&1 |
      tee "$log" | tr -d '\r' |
      grep --line-buffered -E '^(ok |not ok |1\.\.|#|CETCTL-(GUEST|SUITE|ERROR))|Kernel panic|WARNING: CPU|BUG: |Oops'
    echo "${PIPESTATUS[0]}" >"$log.rc" ) &
  pl=$!
  while kill -0 "$pl" 2>/dev/null; do
    if [[ $accel == kvm ]] && grep -qa 'KVM internal error' "$log" 2>/dev/null; then
      kvm_failed=1
      pkill -TERM -P "$pl" -x timeout || true
      break
    fi
    sleep 1
  done
  wait "$pl" || true
  qrc=$(cat "$log.rc" 2>/dev/null || echo 1)
  rm -f "$log.rc"
}

say "booting $(basename "$kernel") + $(basename "$initrd") ($accel, timeout ${tmo}s), log $log"
t0=$(date +%s.%N)
boot
if ((kvm_failed)); then
  say "KVM could not run the guest ($(grep -a -m1 -A9 'KVM internal error' "$log" | grep -a -m1 -E 'emulation failure|Suberror' || echo 'KVM internal error')); booting again with TCG"
  { mkdir -p "$(dirname "$kvm_mark")" && echo "$boot_id" >"$kvm_mark"; } 2>/dev/null || true
  accel=tcg accel_args=(-accel tcg -cpu max)
  t0=$(date +%s.%N)
  boot
fi
secs=$(echo "$(date +%s.%N) - $t0" | bc)
if [[ $qrc == 124 || $qrc == 137 ]]; then
  say "TIMEOUT: QEMU killed after ${tmo}s"
fi
if grep -q 'CETCTL-GUEST-DONE' "$log"; then
  say "guest finished in $(printf '%.1f' "$secs") s (boot to done, wall)"
else
  say "guest did NOT reach CETCTL-GUEST-DONE (qemu rc=$qrc, $(printf '%.1f' "$secs") s); last lines:"
  tail -n 15 "$log" | sed 's/^/    /' >&2
fi
runner_verdict "$log"
