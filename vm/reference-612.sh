#!/bin/bash
# vm/reference-612.sh [--build-only] [--qemu-only] [--bochs-only] [--suites a,b] [--filter RE]
#                     [--megs N]   (Bochs guest RAM, default 512 or $REF612_BOCHS_MEGS)
#
# Reference run (NOT part of CI): build Debian's linux-source-6.12 (mainline user shadow
# stacks, the ABI our series copies) with the same config fragment (vm/kernel.config) plus
# the Bochs 2.7 workaround written for mainline, then run the kernel conformance suites
# (tests/guest/conformance-*.bats) on it in QEMU (no CET: the no-hardware cases) and in
# Bochs (emulated CET: everything). Every difference between our series and mainline
# shows up as a failing test here or in the normal tiers.
#
# Inputs
#   /usr/src/linux-source-6.12.tar.xz          package linux-source-6.12 (apt-get install)
#   $REF612_QUIRKS                              the mainline Bochs workaround diff, default
#                                               /work/shared/bochs-cet/cet-bochs27-quirks.diff
#   vm/kernel.config                            the same fragment as our kernel
# Cache: ${CETCTL_CACHE:-/root/.cache/cetctl}/ref612/
#   linux/                     extracted tree with the workaround applied (once)
#   <key>/bzImage              key = sha256(package version, fragment, workaround)
#   run/                       a scratch copy of vm/ so the harness scripts keep their own
#                              run directories (build/vm/...) apart from the main tree's
# Boot parameters added: shstk_legacy_elf=allow (mainline has no seed 011 policy, so the
# ELF-policy test is told to expect "allowed"). userfaultfd: the suite expects "refused"
# on >= 6.12 (mainline refuses UFFDIO_REGISTER on shadow stacks).
# Exit: 0 when every tier run passed, 1 otherwise.
set -euo pipefail

die() { echo "reference-612: ERROR: $*" >&2; exit 1; }
say() { echo "reference-612: $*" >&2; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${CETCTL_CACHE:-/root/.cache/cetctl}
R=$CACHE/ref612
TARBALL=/usr/src/linux-source-6.12.tar.xz
QUIRKS=${REF612_QUIRKS:-/work/shared/bochs-cet/cet-bochs27-quirks.diff}
FRAG=$REPO/vm/kernel.config
JOBS=${CETCTL_JOBS:-2}
suites=conformance-prctl,conformance-mem,conformance-flow,conformance-elf,conformance-zz-kernel-log
filter= do_qemu=1 do_bochs=1 megs=${REF612_BOCHS_MEGS:-512}
while (($#)); do
	case $1 in
	--build-only) do_qemu=0 do_bochs=0; shift ;;
	--qemu-only) do_bochs=0; shift ;;
	--bochs-only) do_qemu=0; shift ;;
	--suites) suites=$2; shift 2 ;;
	--filter) filter=$2; shift 2 ;;
	--megs) megs=$2; shift 2 ;;
	-h|--help) sed -n '2,27p' "$0"; exit 0 ;;
	*) die "unknown argument $1" ;;
	esac
done

for t in make gcc ccache flex bison bc xz sha256sum patch; do
	command -v "$t" >/dev/null || die "'$t' missing — run vm/install-deps.sh"
done
pkgver=$(dpkg-query -W -f='${db:Status-Status} ${Version}' linux-source-6.12 2>/dev/null || true)
[[ $pkgver == installed\ * ]] || die "linux-source-6.12 is not installed (apt-get install linux-source-6.12)"
pkgver=${pkgver#installed }
[[ -f $TARBALL ]] || die "$TARBALL missing"
[[ -f $QUIRKS ]] || die "Bochs workaround for mainline not found: $QUIRKS (set REF612_QUIRKS)"
say "linux-source-6.12 $pkgver, workaround $QUIRKS"

key=$({ echo "ref612 recipe 1"; echo "$pkgver"; sha256sum <"$FRAG"; sha256sum <"$QUIRKS"; } | sha256sum | cut -c1-16)
out=$R/$key/bzImage
mkdir -p "$R/$key"
if [[ -s $out ]]; then
	say "cached kernel: $out"
else
	tree=$R/linux
	stamp=$R/linux.$(sha256sum <"$QUIRKS" | cut -c1-16).applied
	if [[ ! -f $stamp ]]; then
		say "extracting $TARBALL into $tree and applying the workaround"
		rm -rf "$tree" "$R"/linux.*.applied "$R/.x"
		mkdir -p "$R/.x"
		tar -xJf "$TARBALL" -C "$R/.x"
		mv "$R/.x/linux-source-6.12" "$tree"
		rmdir "$R/.x"
		patch -d "$tree" -p1 --forward <"$QUIRKS" >"$R/patch.log" 2>&1 ||
			{ cat "$R/patch.log" >&2; die "workaround does not apply"; }
		touch "$stamp"
	fi
	log=$R/$key/build.log
	export KBUILD_BUILD_USER=cetctl KBUILD_BUILD_HOST=cetctl-build KBUILD_BUILD_TIMESTAMP="@0"
	M() { make -C "$tree" -j"$JOBS" CC="ccache gcc" LOCALVERSION= "$@" >>"$log" 2>&1; }
	: >"$log"
	say "configuring (allnoconfig + vm/kernel.config)"
	M KCONFIG_ALLCONFIG="$FRAG" allnoconfig || die "configure failed (log $log)"
	grep -qx 'CONFIG_X86_USER_SHADOW_STACK=y' "$tree/.config" || die "X86_USER_SHADOW_STACK not enabled"
	say "building bzImage (-j$JOBS, log $log)"
	t0=$(date +%s)
	M bzImage || { grep -E 'error' "$log" | tail -n 20 >&2; die "build failed (log $log)"; }
	say "build took $(($(date +%s) - t0)) s"
	cp "$tree/arch/x86/boot/bzImage" "$out.tmp"
	cp "$tree/.config" "$R/$key/config"
	mv "$out.tmp" "$out"
fi
((do_qemu || do_bochs)) || { echo "$out"; exit 0; }

# Scratch copy of vm/ so the runners use $R/run/build/vm/... as their run directories.
W=$R/run
rm -rf "$W/vm"
mkdir -p "$W/build"
cp -a "$REPO/vm" "$W/vm"
ln -sfn "$REPO/tests" "$W/tests"
[[ -d $REPO/build/tests/guest-helpers ]] || die "build the helpers first: cmake --build build"
initrd=$("$W/vm/mkinitramfs.sh" "$REPO/build" | tail -n 1)
say "initramfs $initrd"

args=(--suites "$suites" --append "shstk_legacy_elf=allow")
[[ -n $filter ]] && args+=(--filter "$filter")
rc=0
if ((do_qemu)); then
	say "QEMU (no CET): the no-hardware cases"
	"$W/vm/run-qemu.sh" "$out" "$initrd" --tier ref612-qemu --log "$R/qemu-console.log" "${args[@]}" || rc=1
fi
if ((do_bochs)); then
	say "Bochs (emulated CET): everything"
	"$W/vm/run-bochs.sh" "$out" "$initrd" --megs "$megs" --log "$R/bochs-console.log" "${args[@]}" || rc=1
fi
say "logs: $R/qemu-console.log $R/bochs-console.log"
exit $rc
