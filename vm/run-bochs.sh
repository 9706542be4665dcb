#!/bin/bash
# vm/run-bochs.sh KERNEL INITRD [options] — boot the test guest in Bochs 2.7 (tigerlake:
# emulated CET), run the suites, judge the result.
#
#   KERNEL            normally the output of `vm/build-kernel.sh --bochs` (bzImage-bochs)
#   --log FILE        console log (default: <repo>/build/vm/bochs-console.log); the run
#                     directory (bochsrc, boot.iso, bochs.log, serial.ts = console with wall
#                     clock offsets) is the log's name with .d instead of .log
#   --timeout SECS    kill Bochs after SECS wall seconds (default 2400, env CETCTL_BOCHS_TIMEOUT)
#   --filter REGEX    only tests whose name matches (bats --filter; no spaces)
#   --suites a,b      only tests/guest/a.bats, b.bats
#   --append "ARGS"   extra kernel command line (repeatable)
#   --no-quirks       opt-in demonstration that the Bochs bugs are observable (not for CI,
#                     tests are expected to fail; see vm/bochs/demo-noquirks.sh): boots with
#                     `nopku clearcpuid=fsrm cet_bochs_cpuid` — XSAVES stays on (without
#                     cet_bochs_cpuid 6.1 falls back to FXSAVE and nothing is observable),
#                     but no cet_xinuse_quirk and AVX enabled. Tier name bochs-noquirks.
#   --tier NAME       value of cetctl.tier= and of the summary prefix (default bochs)
#   --label NAME      summary prefix only (default: the tier), e.g. bochs-ref
#   --megs N          guest RAM (default: 256, more for a large initramfs)
#   --cpus N          emulated CPUs (default 1, env CETCTL_BOCHS_CPUS; Debian's bochs is
#                     built with SMP: `cpu: count=N`, slower; N > 1 adds idle=poll, see
#                     vm/bochs/README.md)
#   --allow ERE       passed to parse-results.sh: excuse matching kernel lines (repeatable)
#   --no-parse        only boot and save the log (exit 0 when the final marker was seen)
# Kernel command line: console=ttyS0,115200 nopku clearcpuid=avx,fsrm cet_bochs_cpuid
# cet_xinuse_quirk (see vm/bochs/README.md for why each is needed).
# Exit status: vm/parse-results.sh's (0 = all passed); 3 if Bochs could not be started.
set -euo pipefail

die() { echo "run-bochs: ERROR: $*" >&2; exit 3; }
say() { echo "run-bochs: $*" >&2; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$REPO/vm/lib.sh"
log=$REPO/build/vm/bochs-console.log
tmo=${CETCTL_BOCHS_TIMEOUT:-2400}
tier=bochs quirks=1 megs=
cpus=${CETCTL_BOCHS_CPUS:-1}
pos=()
while (($#)); do
  runner_option "$@"
  if ((RUNNER_SHIFT)); then shift "$RUNNER_SHIFT"; continue; fi
  case $1 in
    --no-quirks) quirks=0; tier=bochs-noquirks; shift ;;
    --megs) (($# >= 2)) && [[ $2 =~ ^[1-9][0-9]*$ ]] || die "--megs needs a number of MiB"
            megs=$2; shift 2 ;;
    --cpus) (($# >= 2)) && [[ $2 =~ ^[1-4]$ ]] || die "--cpus needs 1..4 (CONFIG_NR_CPUS=4)"
            cpus=$2; shift 2 ;;
    -h|--help) sed -n '2,/^[^#]/{ /^#/p }' "$0"; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) pos+=("$1"); shift ;;
  esac
done
((${#pos[@]} == 2)) || die "usage: vm/run-bochs.sh KERNEL INITRD [--log FILE] [--timeout S] [--no-quirks] ..."
kernel=$(readlink -f "${pos[0]}") initrd=$(readlink -f "${pos[1]}")
[[ -f $kernel ]] || die "kernel ${pos[0]} not found"
[[ -f $initrd ]] || die "initramfs ${pos[1]} not found"
for t in bochs xorriso setsid; do command -v $t >/dev/null || die "'$t' missing — run vm/install-deps.sh"; done
ISOLINUX=/usr/lib/ISOLINUX/isolinux.bin LDLINUX=/usr/lib/syslinux/modules/bios/ldlinux.c32
[[ -f $ISOLINUX && -f $LDLINUX ]] || die "isolinux/syslinux-common missing — run vm/install-deps.sh"

if [[ -z $megs ]]; then   # the initramfs is unpacked into RAM: ~3x its gzip size + headroom
  isz=$(( $(stat -c %s "$initrd") / 1048576 ))
  megs=$(( isz * 8 + 128 )); ((megs >= 256)) || megs=256; ((megs <= 2048)) || megs=2048
fi

label=${label:-$tier}
log=$(realpath -m "$log")
run=${log%.log}.d     # run directory next to the log: concurrent runs with other logs never clash
rm -rf "$run"; mkdir -p "$run/iso/isolinux" "$(dirname "$log")"

IPS=${CETCTL_BOCHS_IPS:-50000000}
# Bochs' TSC advances at the emulated `ips` rate, but CPUID(0x15) of the tigerlake model
# claims 2.4 GHz: without tsc_early_khz the guest clock runs ~50x slower than emulated
# time, and the guest-side timeouts (suites, `timeout` in tests) would never fire.
cmdline="console=ttyS0,115200 panic=-1 loglevel=5 printk.time=1 mitigations=off tsc_early_khz=$((IPS / 1000))"
if ((quirks)); then
  cmdline+=" nopku clearcpuid=avx,fsrm cet_bochs_cpuid cet_xinuse_quirk"
else
  cmdline+=" nopku clearcpuid=fsrm cet_bochs_cpuid"
fi
# SMP: with HLT in the idle loop the 2-CPU guest stalled at random points (no output, Bochs
# busy); with idle=poll it ran through (vm/bochs/README.md, SMP)
((cpus > 1)) && cmdline+=" idle=poll"
cmdline+=" cetctl.timeout=${CETCTL_BOCHS_SUITE_TIMEOUT:-1800} $(runner_guest_cmdline)"

# isolinux ISO: Bochs has no -kernel option
cp "$kernel" "$run/iso/vmlinuz"
cp "$initrd" "$run/iso/initrd.gz"
cp "$ISOLINUX" "$LDLINUX" "$run/iso/isolinux/"
cat > "$run/iso/isolinux/isolinux.cfg" <<EOF
DEFAULT linux
PROMPT 0
TIMEOUT 0
LABEL linux
  KERNEL /vmlinuz
  APPEND initrd=/initrd.gz $cmdline
EOF
timeout 300 xorriso -as mkisofs -quiet -o "$run/boot.iso" -b isolinux/isolinux.bin \
  -c isolinux/boot.cat -no-emul-boot -boot-load-size 4 -boot-info-table "$run/iso" \
  >"$run/xorriso.log" 2>&1 || { cat "$run/xorriso.log" >&2; die "building the ISO failed"; }

sed -e "s|@MEGS@|$megs|" -e "s|@ISO@|$run/boot.iso|" -e "s|@SERIAL@|$run/serial.out|" \
    -e "s|@LOG@|$run/bochs.log|" -e "s|@IPS@|$IPS|" -e "s|@CPUS@|$cpus|" \
    "$REPO/vm/bochs/bochsrc.in" > "$run/bochsrc"
cp "$REPO/vm/bochs/dbg.rc" "$run/dbg.rc"
: > "$run/serial.out"

say "booting $(basename "$kernel") + $(basename "$initrd") in Bochs (tigerlake, ${cpus} CPU, ${megs} MB, quirks=$quirks, timeout ${tmo}s)"
say "run dir $run"
t0=$(date +%s.%N)
cd "$run"
setsid bochs -q -f bochsrc -rc dbg.rc </dev/null >"$run/bochs.stdout" 2>&1 &
bpid=$!
# live view of the TAP lines and markers; serial.ts = console with wall-clock offsets
t0us=${EPOCHREALTIME/./}
stamp() {
  local l now
  while IFS= read -r l; do
    now=${EPOCHREALTIME/./}; now=$(( (now - t0us) / 10000 ))
    l=${l%$'\r'}
    printf '%4d.%02d %s\n' $((now / 100)) $((now % 100)) "$l" >> "$run/serial.ts"
    case $l in
      'ok '*|'not ok '*|1..*|CETCTL-GUEST*|CETCTL-SUITE*|CETCTL-ERROR*|*'Kernel panic'*|*'WARNING: CPU'*|*'BUG: '*|*Oops*)
        printf '%4d.%02d %s\n' $((now / 100)) $((now % 100)) "$l" ;;
    esac
  done
}
tail -n +1 -F "$run/serial.out" 2>/dev/null > >(stamp) &
tailpid=$!

why=timeout done_at=
deadline=$(( $(date +%s) + tmo ))
while :; do
  if ! kill -0 "$bpid" 2>/dev/null; then why=exited; break; fi
  if [[ -z $done_at ]] && grep -qa -e 'CETCTL-GUEST-DONE' -e 'Kernel panic' "$run/serial.out"; then
    done_at=$(date +%s)
  fi
  # after the marker the guest powers off; give it 20 s, then stop Bochs ourselves
  if [[ -n $done_at ]] && (( $(date +%s) - done_at > 20 )); then why=marker; break; fi
  if (( $(date +%s) >= deadline )); then why=timeout; break; fi
  sleep 0.5
done
if kill -0 "$bpid" 2>/dev/null; then
  kill -TERM -- "-$bpid" 2>/dev/null || true
  for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$bpid" 2>/dev/null || break; sleep 0.5; done
  kill -KILL -- "-$bpid" 2>/dev/null || true
fi
wait "$bpid" 2>/dev/null || true
sleep 0.7
kill "$tailpid" 2>/dev/null || true
wait "$tailpid" 2>/dev/null || true
secs=$(echo "$(date +%s.%N) - $t0" | bc)
cp "$run/serial.out" "$log"

[[ $why == timeout ]] && say "TIMEOUT: Bochs killed after ${tmo}s"
if grep -qa 'CETCTL-GUEST-DONE' "$log"; then
  say "guest finished: $(printf '%.1f' "$secs") s wall from Bochs start to exit ($why)"
else
  say "guest did NOT reach CETCTL-GUEST-DONE ($why, $(printf '%.1f' "$secs") s); last console lines:"
  tail -n 15 "$log" | sed 's/^/    /' >&2
  grep -a -E 'PANIC|FATAL|>>PANIC' "$run/bochs.log" 2>/dev/null | tail -n 5 | sed 's/^/    bochs.log: /' >&2 || true
fi
cd "$REPO"
runner_verdict "$log"
