#!/bin/bash
# vm/bochs/demo-noquirks.sh [KERNEL INITRD] — opt-in, NOT in CI: show that the Bochs 2.7
# bugs the workaround hides are real. Boots the Bochs test kernel with only
# cet_bochs_cpuid (XSAVES on), without cet_xinuse_quirk and with AVX enabled
# (vm/run-bochs.sh --no-quirks), runs tests/guest/bochs-quirks.bats and expects its
# state-preservation tests to FAIL there:
#   avx_check      YMM corrupted across context switches (XSAVES layout bug)
#   shstk_stress   U_CET/PL3_SSP lost across context switches (inverted XINUSE for CET_U;
#                  needs a kernel with the series' CET_U xfeature, else it skips)
# Exit 0 when at least one of them failed or hung the guest (bug observable), 1 when all
# passed or skipped (nothing demonstrated): vm/bochs/noquirks-check.py reads the console
# log and says which. Other exit codes: harness errors. Defaults: builds the kernel and image.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if (($# == 2)); then
  K=$1 I=$2
else
  K=$("$REPO/vm/build-kernel.sh" --bochs | tail -n1)
  I=$("$REPO/vm/mkinitramfs.sh" "$REPO/build" | tail -n1)
fi
log=$REPO/build/vm/bochs-noquirks-console.log
"$REPO/vm/run-bochs.sh" "$K" "$I" --no-quirks --suites bochs-quirks --log "$log" --no-parse \
  --timeout "${CETCTL_DEMO_TIMEOUT:-1200}" || true
"$REPO/vm/parse-results.sh" "$log" bochs-noquirks || true
echo
exec python3 "$REPO/vm/bochs/noquirks-check.py" "$log"
