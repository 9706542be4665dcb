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

accel=${CETCTL_QEMU_ACCEL:-}
if [[ -z $accel ]]; then
  accel=tcg
  if [[ -r /dev/kvm && -w /dev/kvm ]] &&
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

say "booting $(basename "$kernel") + $(basename "$initrd") ($accel, timeout ${tmo}s), log $log"
t0=$(date +%s.%N)
set +e
timeout -k 10 "$tmo" "$QEMU" "${accel_args[@]}" -m 1024 -smp 2 -nodefaults -no-reboot \
  -display none -monitor none -serial stdio \
  -kernel "$kernel" -initrd "$initrd" -append "$cmdline" </dev/null 2>&1 |
  tee "$log" | tr -d '\r' |
  grep --line-buffered -E '^(ok |not ok |1\.\.|#|CETCTL-(GUEST|SUITE|ERROR))|Kernel panic|WARNING: CPU|BUG: |Oops'
st=("${PIPESTATUS[@]}")
set -e
secs=$(echo "$(date +%s.%N) - $t0" | bc)
qrc=${st[0]}
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
