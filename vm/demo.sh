#!/usr/bin/env bash
# vm/demo.sh [--bochs] — the main job: build everything and run cetctl inside a
# guest booting our kernel.
#
#   bash vm/demo.sh           QEMU guest (no CET in the CPU model: shows what the
#                             kernel and cetctl report without hardware), ~10 min cold
#   bash vm/demo.sh --bochs   also the Bochs guest (emulated CET: shadow stacks enabled,
#                             locked, a ROP stopped, a test shadow stack mapped and pivoted to)
#
# Steps: vm/install-deps.sh; cmake build of cetctl; vm/build-kernel.sh (linux-source-6.1 +
# kernel-series/, cached); vm/mkinitramfs.sh; boot with cetctl.demo=1, which makes the
# guest's /init run vm/guest-demo.sh instead of the test suites. The guest's output is
# printed here; full console logs are kept in build/artifacts/demo-*.log.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${CETCTL_BUILD:-$top/build}
bochs=0
for a in "$@"; do
	case "$a" in
	--bochs) bochs=1 ;;
	-h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "demo: unknown option '$a' (try --help)" >&2; exit 1 ;;
	esac
done

step() { printf '\n==> %s\n' "$*" >&2; }

step "Installing dependencies"
bash vm/install-deps.sh >&2
step "Building cetctl"
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" >&2
step "Building the kernel (linux-source-6.1 + kernel-series/)"
kernel=$(bash vm/build-kernel.sh | tail -n1)
step "Building the guest image"
initrd=$(bash vm/mkinitramfs.sh "$build" | tail -n1)
mkdir -p "$build/artifacts"

# show_demo LOG: the guest's demo output, or the reason there is none
show_demo() {
	if grep -q CETCTL-DEMO-END "$1"; then
		sed -n '/CETCTL-DEMO-BEGIN/,/CETCTL-DEMO-END/p' "$1" |
			grep -v -e '^CETCTL-DEMO-' -e '^\[ *[0-9.]*\] ' | tr -d '\r'
	else
		echo "demo: the guest did not finish the demo; console log: $1" >&2
		return 1
	fi
}

rc=0
step "Booting our kernel in QEMU"
log=$build/artifacts/demo-qemu.log
bash vm/run-qemu.sh "$kernel" "$initrd" --no-parse --log "$log" --append "cetctl.demo=1" >/dev/null 2>&1 || true
show_demo "$log" || rc=1

if [ "$bochs" = 1 ]; then
	step "Building the Bochs variant and booting it (emulated CET, about a minute)"
	kb=$(bash vm/build-kernel.sh --bochs | tail -n1)
	log=$build/artifacts/demo-bochs.log
	bash vm/run-bochs.sh "$kb" "$initrd" --no-parse --log "$log" --append "cetctl.demo=1" >/dev/null 2>&1 || true
	show_demo "$log" || rc=1
fi
exit "$rc"
