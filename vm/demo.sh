#!/usr/bin/env bash
# vm/demo.sh [--qemu-only] — the main job: build everything, boot our kernel and run
# cetctl inside it.
#
#   bash vm/demo.sh              a short QEMU boot (no CET in QEMU's CPU: cetctl says so
#                                and refuses to launch), then the Bochs guest (emulated
#                                CET): a Debian program run with its shadow stack enabled
#                                and locked, a ROP stopped with SEGV_CPERR, status and
#                                audit of protected and unprotected processes, map --pivot,
#                                elf --deps. Fresh machine ~10 min (mostly the kernel
#                                build), cached ~1.5 min.
#   bash vm/demo.sh --qemu-only  only the QEMU guest, with the longer no-CET listing
#   --bochs                      accepted for compatibility: Bochs is the default now
#
# Steps: vm/install-deps.sh; vm/build-kernel.sh (linux-source-6.1 + kernel-series/,
# cached) with the cmake build of cetctl alongside, then its --bochs variant;
# vm/mkinitramfs.sh --demo (a small image); boots with cetctl.demo=MODE, which makes the
# guest's /init run vm/guest-demo.sh instead of the test suites. The guest's output is
# printed here and checked by vm/demo-check.py: the exit status is 1 when a guest does not
# show what the demo claims (transcripts and console logs in build/artifacts/demo-*).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${CETCTL_BUILD:-$top/build}
bochs=1 qemu_only=0 bochs_opt=0
for a in "$@"; do
	case "$a" in
	--qemu-only) qemu_only=1; bochs=0 ;;
	--bochs) bochs_opt=1 ;;
	-h|--help) sed -n '2,/^[^#]/{ /^#/p }' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "demo: unknown option '$a' (try --help)" >&2; exit 1 ;;
	esac
done
if ((qemu_only && bochs_opt)); then
	echo "demo: --qemu-only and --bochs exclude each other" >&2
	exit 1
fi

t0=$SECONDS
elapsed() { printf '%d:%02d' $(((SECONDS - t0) / 60)) $(((SECONDS - t0) % 60)); }
step() { printf '\n==> [%s] %s\n' "$(elapsed)" "$*" >&2; }
tmp=$(mktemp -d)
bg_pid=
# a step in the background has its own process group: stop it with the demo
trap '[[ -z $bg_pid ]] || kill -- "-$bg_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# bg_start CMD...: start CMD in its own process group (stdout to $tmp/out, stderr to the
# terminal and $tmp/err); bg_wait LABEL HINT: wait for it, every 20 s printing the time
# spent so far and what HINT (a function) says; its exit status
bg_start() {
	bg_t0=$SECONDS
	setsid "$@" >"$tmp/out" 2> >(tee "$tmp/err" >&2) &
	bg_pid=$!
}
bg_wait() {
	local label=$1 hint=$2 next=20
	while kill -0 "$bg_pid" 2>/dev/null; do
		sleep 0.5
		if ((SECONDS - bg_t0 >= next)); then
			printf '    ... %s: %d s%s\n' "$label" $((SECONDS - bg_t0)) "$("$hint")" >&2
			next=$((next + 20))
		fi
	done
	wait "$bg_pid" || { local rc=$?; bg_pid=; return "$rc"; }
	bg_pid=
}
with_progress() { # LABEL HINT CMD...
	local label=$1 hint=$2
	shift 2
	bg_start "$@"
	bg_wait "$label" "$hint"
}
# last line of a file as a progress hint (": ..."), cut to fit a terminal line
last_line() {
	[[ -s $1 ]] || return 0
	local l
	l=$(tail -n 1 "$1" | tr -d '\r' | tr -s ' \t' ' ' | sed 's/^ //')
	[[ -z $l ]] || printf ': %.60s' "$l"
}
kernel_hint() { # the make log build-kernel.sh names on stderr
	local log
	log=$(sed -n "s/.*CC='ccache gcc', log \(.*\))$/\1/p" "$tmp/err" 2>/dev/null | tail -n 1)
	[[ -n $log ]] && last_line "$log"
	return 0
}
guest_hint() { last_line "$console"; }

step "Installing dependencies"
bash vm/install-deps.sh >&2
step "Building the kernel (linux-source-6.1 + kernel-series/; ~10 min the first time, cached after), and cetctl meanwhile"
# the kernel's one-time tarball extraction and git import use one core: cetctl builds then
bg_start bash vm/build-kernel.sh
if ! { cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
       cmake --build "$build" -j"$(nproc)"; } >"$tmp/cmake.log" 2>&1; then
	tail -n 40 "$tmp/cmake.log" >&2
	echo "demo: building cetctl failed" >&2
	kill -- "-$bg_pid" 2>/dev/null
	exit 1
fi
echo "demo: cetctl built in $((SECONDS - bg_t0)) s: $build/cetctl" >&2
bg_wait "kernel build" kernel_hint
kernel=$(tail -n 1 "$tmp/out")
if ((bochs)); then
	step "Building its Bochs variant (+ vm/bochs/ workaround, incremental)"
	with_progress "Bochs kernel build" kernel_hint bash vm/build-kernel.sh --bochs
	kbochs=$(tail -n 1 "$tmp/out")
fi
step "Building the guest image (vm/mkinitramfs.sh --demo)"
initrd=$(bash vm/mkinitramfs.sh --demo "$build" | tail -n 1)
art=$build/artifacts
mkdir -p "$art"

rc=0
mode=brief
# show_and_judge TIER LOG: print the guest's demo transcript, saved as
# $art/demo-TIER.txt, and check its claims (vm/demo-check.py show); non-zero when the
# transcript is missing or a claim fails
show_and_judge() {
	python3 vm/demo-check.py show "$1" "$2" "$art/demo-$1.txt"
}

((qemu_only)) && mode=full
step "Booting our kernel in QEMU (no CET in its CPU model)"
log=$art/demo-qemu.log
console=$log   # run-qemu.sh writes the console log as it goes
with_progress "QEMU guest" guest_hint bash vm/run-qemu.sh "$kernel" "$initrd" --no-parse \
	--log "$log" --timeout 300 --append "cetctl.demo=$mode" || true
show_and_judge qemu "$log" || rc=1

if ((bochs)); then
	step "Booting it in Bochs (tigerlake: emulated CET; about a minute)"
	log=$art/demo-bochs.log
	console=${log%.log}.d/serial.out
	with_progress "Bochs guest" guest_hint bash vm/run-bochs.sh "$kbochs" "$initrd" --no-parse \
		--log "$log" --timeout 600 --append "cetctl.demo=full" || true
	show_and_judge bochs "$log" || rc=1
fi
step "Done (exit $rc)"
exit "$rc"
