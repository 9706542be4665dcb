#!/bin/bash
# vm/run-ref.sh [qemu|bochs|all] [runner options...] — the mainline reference run, NOT in CI.
#
# Builds Debian's linux-source-6.12 (mainline shadow stacks, merged in 6.6; our ABI is
# mainline-compatible) with vm/build-kernel.sh --ref: the same vm/kernel.config and, for
# Bochs, the same vm/bochs/cet-bochs27-quirks.patch (it applies to 6.12 with offsets). Packs
# the same initramfs and runs the same suites; every difference between our kernel's
# results and these is a difference between the series and mainline.
#
#   qemu    no CET: the no-hardware cases
#   bochs   emulated CET: everything (default)
#   all     both, one after the other; exit 1 when either failed
#
# Suites: the conformance suites unless --suites is given. Any other vm/run-*.sh option
# passes through (--filter, --append, --timeout, --megs for Bochs...):
#   vm/run-ref.sh all
#   vm/run-ref.sh bochs --suites bochs-quirks
# Summary label: qemu-ref / bochs-ref; logs build/vm/<label>-console.log. The guest gets
# cetctl.ref=1 on its command line: tests/guest/smoke.bats then expects a 6.12 kernel and
# the ELF-policy test expects mainline's behaviour (no legacy-ELF policy: legacy ELF allowed).
#   vm/run-ref.sh bochs --criu   the CRIU suite (tests/guest/criu.bats) on its own image
#   vm/run-ref.sh bochs --fixes --suites conformance-hazards   the same 6.12 with our fixes
#                                for mainline (kernel-series/mainline/) applied: label
#                                <tier>-ref-fixes (vm/build-kernel.sh --ref --fixes)
# Needs the package linux-source-6.12 (apt-get install linux-source-6.12) and a build of
# the guest helpers (cmake --build build).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tier=bochs
case ${1:-} in
  qemu|bochs|all) tier=$1; shift ;;
  -h|--help) sed -n '2,/^[^#]/{ /^#/p }' "$0"; exit 0 ;;
  ""|-*) ;;
  *) echo "usage: vm/run-ref.sh [qemu|bochs|all] [runner options...]" >&2; exit 1 ;;
esac
args=() criu=0 fixes=()
for a in "$@"; do
  case $a in --criu) criu=1 ;; --fixes) fixes=(--fixes) ;; *) args+=("$a") ;; esac
done
ref=ref${fixes:+-fixes}
has_suites=0
for a in "${args[@]}"; do [[ $a == --suites ]] && has_suites=1; done
((has_suites || criu)) ||
  args+=(--suites "conformance-prctl,conformance-mem,conformance-flow,conformance-elf,conformance-zz-kernel-log")

if ((criu)); then
  # the CRIU suite on its own boot, as tests/run-all.sh bochs runs it on ours (mainline
  # has no legacy-ELF policy, so shstk_legacy_elf= is simply ignored there)
  C=$("$REPO/vm/build-criu.sh" | tail -n1)
  I=$("$REPO/vm/mkinitramfs.sh" --criu "$C" "$REPO/build" | tail -n1)
  ((has_suites)) || args+=(--suites criu)
  args+=(--append "cetctl.criu=1 shstk_legacy_elf=allow" --megs 512)
else
  I=$("$REPO/vm/mkinitramfs.sh" "$REPO/build" | tail -n1)
fi
rc=0
for t in qemu bochs; do
  [[ $tier == all || $tier == "$t" ]] || continue
  if [[ $t == bochs ]]; then
    K=$("$REPO/vm/build-kernel.sh" --ref "${fixes[@]}" --bochs | tail -n1)
  else
    K=$("$REPO/vm/build-kernel.sh" --ref "${fixes[@]}" | tail -n1)
  fi
  # 6.12 WARNs once at boot under Bochs 2.7 about its legacy CPUID topology leaves
  # (topology_common.c parse_legacy): an emulator property, not a shadow-stack finding.
  "$REPO/vm/run-$t.sh" "$K" "$I" --label "$t-$ref" --log "$REPO/build/vm/$t-$ref-console.log" \
    --append cetctl.ref=1 --allow 'topology_common\.c:[0-9]+ parse_legacy' "${args[@]}" || rc=1
done
exit $rc
