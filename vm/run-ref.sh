#!/bin/bash
# vm/run-ref.sh [qemu|bochs] [runner options...] — the mainline reference run, NOT in CI.
#
# Builds Debian's linux-source-6.12 (mainline shadow stacks, merged in 6.6; our ABI is
# mainline-compatible) with the same vm/kernel.config — and for bochs the same
# vm/bochs/cet-bochs27-quirks.patch — packs the same initramfs, and runs the same suites
# (default tier: bochs, where the CET tests run for real). Every difference between our
# kernel's results and these is a difference between the series and mainline.
#   vm/run-ref.sh bochs --suites bochs-quirks      # any vm/run-*.sh option passes through
# Summary label: qemu-ref / bochs-ref; logs build/vm/<label>-console.log. The guest gets
# cetctl.ref=1 on its command line (tests/guest/smoke.bats then expects a 6.12 kernel).
# Needs the package linux-source-6.12 (apt-get install linux-source-6.12).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tier=${1:-bochs}
case $tier in qemu|bochs) shift || true ;; -*) tier=bochs ;; *) echo "usage: vm/run-ref.sh [qemu|bochs] [options]" >&2; exit 1 ;; esac
if [[ $tier == bochs ]]; then
  K=$("$REPO/vm/build-kernel.sh" --ref --bochs | tail -n1)
else
  K=$("$REPO/vm/build-kernel.sh" --ref | tail -n1)
fi
I=$("$REPO/vm/mkinitramfs.sh" "$REPO/build" | tail -n1)
# 6.12 WARNs once at boot under Bochs 2.7 about its legacy CPUID topology leaves
# (topology_common.c parse_legacy): an emulator property, not a shadow-stack finding.
exec "$REPO/vm/run-$tier.sh" "$K" "$I" --label "$tier-ref" --log "$REPO/build/vm/$tier-ref-console.log" \
  --append cetctl.ref=1 --allow 'topology_common\.c:[0-9]+ parse_legacy' "$@"
