#!/bin/bash
# vm/run-debian.sh IMAGE_DIR [options] — boot the Debian guest of the debian tier or of the
# debian13 tier (IMAGE_DIR from vm/debian-image.sh) and judge its tests (run by systemd in
# the guest: vm/debian-guest/run-tests). The guest powers itself off through systemd.
#
#   QEMU (default): TCG, -smp 1, the image as a virtio disk (root=/dev/vda, snapshot=on:
#                   the cached image is never written), booting IMAGE_DIR/vmlinuz, the
#                   kernel the linux-image .deb installed in the image's /boot
#   --bochs KERNEL  Bochs 2.7 (tigerlake: emulated CET) instead: KERNEL is the Bochs
#                   variant (vm/build-kernel.sh --bochs: same series and config plus the
#                   Bochs workarounds, run-bochs.sh's command line), from an isolinux CD;
#                   a copy of the image as an ATA disk (root=/dev/sda). Tier debian-bochs.
#                   A Debian 13 image (vm/debian-image.sh --suite trixie) boots its own
#                   IMAGE_DIR/vmlinuz, which carries the Bochs workaround already
#                   (vm/build-kernel.sh --debian13), with --tier debian13
#   --megs N        guest RAM in MiB (default 1024 in QEMU, 768 in Bochs)
#   --log FILE  --timeout SECS  --filter RE  --suites a,b  --append ARGS  --tier NAME
#   --label NAME  --allow ERE  --no-parse    as vm/run-qemu.sh (vm/lib.sh)
# Default timeout: 900 s in QEMU (env CETCTL_DEBIAN_TIMEOUT), 3600 s in Bochs
# (CETCTL_DEBIAN_BOCHS_TIMEOUT). The console log keeps every line; serial.ts in the run
# directory (the log's name with .d) has wall-clock offsets. Exit status: vm/parse-results.sh's
# (0 = all passed), 3 if the emulator could not be started.
set -euo pipefail

die() { echo "run-debian: ERROR: $*" >&2; exit 3; }
say() { echo "run-debian: $*" >&2; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$REPO/vm/lib.sh"
log=$REPO/build/vm/debian-console.log
# shellcheck disable=SC2034  # tier: read by vm/lib.sh
tier=debian bochs_kernel='' megs='' tmo=''
pos=()
while (($#)); do
  runner_option "$@"
  if ((RUNNER_SHIFT)); then shift "$RUNNER_SHIFT"; continue; fi
  case $1 in
    --bochs) (($# >= 2)) || die "--bochs needs the Bochs kernel"
             bochs_kernel=$(readlink -f "$2"); tier=debian-bochs; shift 2 ;;
    --megs) (($# >= 2)) && [[ $2 =~ ^[1-9][0-9]*$ ]] || die "--megs needs a number of MiB"
            megs=$2; shift 2 ;;
    -h|--help) sed -n '2,/^[^#]/{ /^#/p }' "$0"; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) pos+=("$1"); shift ;;
  esac
done
((${#pos[@]} == 1)) || die "usage: vm/run-debian.sh IMAGE_DIR [--bochs KERNEL] [--log FILE] [--timeout S] ..."
img=$(readlink -f "${pos[0]}")
# (the world image, vm/debian-image.sh --world, has no kernel of its own: Bochs only)
[[ -s $img/root.img && -s $img/cylinders ]] || die "$img is not an image of vm/debian-image.sh"
[[ -n $bochs_kernel || -s $img/vmlinuz ]] || die "$img has no kernel (a --world image): boot it with --bochs KERNEL"
log=$(realpath -m "$log")
run=${log%.log}.d
rm -rf "$run"; mkdir -p "$run" "$(dirname "$log")"
# systemd's status lines stay off the console: it carries the test protocol
common="panic=-1 loglevel=5 printk.time=1 systemd.show_status=0 rw rootfstype=ext4"
t0=$(date +%s.%N)

if [[ -z $bochs_kernel ]]; then
  tmo=${tmo:-${CETCTL_DEBIAN_TIMEOUT:-900}}
  QEMU=$(command -v qemu-system-x86_64) || die "qemu-system-x86_64 missing — run vm/install-deps.sh"
  cmdline="console=ttyS0,115200 root=/dev/vda $common $(runner_guest_cmdline)"
  say "booting $img (kernel $(cat "$img/release")) in QEMU (tcg, -smp 1, timeout ${tmo}s), log $log"
  set +e
  timeout -k 10 "$tmo" "$QEMU" -accel tcg -cpu max -smp 1 -m "${megs:-1024}" -nodefaults -no-reboot \
    -display none -monitor none -serial stdio \
    -kernel "$img/vmlinuz" -append "$cmdline" \
    -drive "file=$img/root.img,if=virtio,format=raw,snapshot=on" </dev/null 2>&1 |
    tee "$log" | tr -d '\r' |
    grep --line-buffered -E '^(ok |not ok |1\.\.|systemd: |CETCTL-(GUEST|SUITE|ERROR))|Kernel panic|WARNING: CPU|BUG: |Oops'
  st=("${PIPESTATUS[@]}")
  set -e
  secs=$(echo "$(date +%s.%N) - $t0" | bc)
  [[ ${st[0]} == 124 || ${st[0]} == 137 ]] && say "TIMEOUT: QEMU killed after ${tmo}s"
  how="QEMU exited rc=${st[0]}"
else
  tmo=${tmo:-${CETCTL_DEBIAN_BOCHS_TIMEOUT:-3600}}
  [[ -f $bochs_kernel ]] || die "Bochs kernel $bochs_kernel not found"
  for t in bochs xorriso setsid; do command -v $t >/dev/null || die "'$t' missing — run vm/install-deps.sh"; done
  ISOLINUX=/usr/lib/ISOLINUX/isolinux.bin LDLINUX=/usr/lib/syslinux/modules/bios/ldlinux.c32
  [[ -f $ISOLINUX && -f $LDLINUX ]] || die "isolinux/syslinux-common missing — run vm/install-deps.sh"
  IPS=${CETCTL_BOCHS_IPS:-50000000}
  # run-bochs.sh's command line (vm/bochs/README.md says why each is needed)
  cmdline="console=ttyS0,115200 root=/dev/sda $common mitigations=off tsc_early_khz=$((IPS / 1000))"
  cmdline+=" nopku clearcpuid=avx,fsrm cet_bochs_cpuid cet_xinuse_quirk $(runner_guest_cmdline)"
  mkdir -p "$run/iso/isolinux"
  cp "$bochs_kernel" "$run/iso/vmlinuz"
  cp "$ISOLINUX" "$LDLINUX" "$run/iso/isolinux/"
  printf 'DEFAULT linux\nPROMPT 0\nTIMEOUT 0\nLABEL linux\n  KERNEL /vmlinuz\n  APPEND %s\n' "$cmdline" \
    > "$run/iso/isolinux/isolinux.cfg"
  timeout 300 xorriso -as mkisofs -quiet -o "$run/boot.iso" -b isolinux/isolinux.bin \
    -c isolinux/boot.cat -no-emul-boot -boot-load-size 4 -boot-info-table "$run/iso" \
    >"$run/xorriso.log" 2>&1 || { cat "$run/xorriso.log" >&2; die "building the ISO failed"; }
  # the guest writes to its disk: a sparse copy, the cached image stays as it is
  cp --sparse=always "$img/root.img" "$run/root.img"
  cyl=$(cat "$img/cylinders")
  sed -e "s|@MEGS@|${megs:-768}|" -e "s|@ISO@|$run/boot.iso|" -e "s|@SERIAL@|$run/serial.out|" \
      -e "s|@LOG@|$run/bochs.log|" -e "s|@IPS@|$IPS|" -e "s|@CPUS@|1|" "$REPO/vm/bochs/bochsrc.in" > "$run/bochsrc"
  echo "ata0-slave: type=disk, path=$run/root.img, mode=flat, cylinders=$cyl, heads=16, spt=63" >> "$run/bochsrc"
  cp "$REPO/vm/bochs/dbg.rc" "$run/dbg.rc"
  : > "$run/serial.out"
  say "booting $img in Bochs (tigerlake, ${megs:-768} MB, kernel $(basename "$bochs_kernel"), timeout ${tmo}s), run dir $run"
  (cd "$run" && exec setsid bochs -q -f bochsrc -rc dbg.rc </dev/null >"$run/bochs.stdout" 2>&1) &
  bpid=$!
  t0us=${EPOCHREALTIME/./}
  stamp() {
    local l now
    while IFS= read -r l; do
      now=${EPOCHREALTIME/./}; now=$(( (now - t0us) / 10000 ))
      l=${l%$'\r'}
      printf '%4d.%02d %s\n' $((now / 100)) $((now % 100)) "$l" >> "$run/serial.ts"
      case $l in
        'ok '*|'not ok '*|1..*|'systemd: '*|CETCTL-GUEST*|CETCTL-SUITE*|CETCTL-ERROR*|*'Kernel panic'*|*'WARNING: CPU'*|*'BUG: '*|*Oops*)
          printf '%4d.%02d %s\n' $((now / 100)) $((now % 100)) "$l" >&2 ;;
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
    # after the marker systemd powers the guest off; Bochs' ACPI power-off ends
    # Bochs (its panic action is fatal); if not within 120 s, stop it ourselves
    if [[ -n $done_at ]] && (( $(date +%s) - done_at > 120 )); then why=marker; break; fi
    if (( $(date +%s) >= deadline )); then why=timeout; break; fi
    sleep 0.5
  done
  if kill -0 "$bpid" 2>/dev/null; then
    kill -TERM -- "-$bpid" 2>/dev/null || kill -TERM "$bpid" 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$bpid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL -- "-$bpid" 2>/dev/null || kill -KILL "$bpid" 2>/dev/null || true
  fi
  wait "$bpid" 2>/dev/null || true
  sleep 0.7
  kill "$tailpid" 2>/dev/null || true
  wait "$tailpid" 2>/dev/null || true
  secs=$(echo "$(date +%s.%N) - $t0" | bc)
  cp "$run/serial.out" "$log"
  rm -f "$run/root.img"
  [[ $why == timeout ]] && say "TIMEOUT: Bochs killed after ${tmo}s"
  how="Bochs: $why"
fi

if grep -qa 'CETCTL-GUEST-DONE' "$log"; then
  say "guest finished in $(printf '%.1f' "$secs") s wall ($how)"
  grep -a '^systemd: ' "$log" | tr -d '\r' | sed 's/^/    /' >&2 || true
  if grep -qa 'reboot: Power down' "$log"; then say "the guest powered itself off"
  else say "WARNING: no 'reboot: Power down' after the final marker"; fi
else
  say "guest did NOT reach CETCTL-GUEST-DONE ($how, $(printf '%.1f' "$secs") s); last lines:"
  tail -n 15 "$log" | sed 's/^/    /' >&2
fi
runner_verdict "$log"
