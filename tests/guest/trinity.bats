#!/usr/bin/env bats
# Adversarial (issue 11): trinity (Debian's package, 2023.01) throws random system calls
# at the kernel under test for a bounded time, QEMU tier (no CET in the CPU: it judges
# the whole series' code paths that do not need the hardware, and the 6.1 code around
# them). It runs as nobody (setpriv, no capabilities), so it can neither reboot, load
# modules, kexec nor signal anything of root's, and reboot/kexec/module/swap/acct calls are
# excluded besides. The test passes if trinity ran for the whole time (or its -N count)
# and stopped only because of the bound; the run's kernel-log check
# (vm/parse-results.py) then fails it on any WARN/BUG/Oops/panic/lockup line.
#
# Bounds (environment; in the guest, pass them on the kernel command line: a word
# KEY=VALUE without a dot becomes /init's environment):
#   TRINITY_SECS      seconds (default 180)
#   TRINITY_CHILDREN  trinity -C (default 4)
#   TRINITY_SEED      trinity -s (default: trinity picks one and prints it)
#
# Soak, outside CI (the same test, longer; the per-suite timeout must cover it):
#   cmake -S . -B build && cmake --build build -j2
#   initrd=$(bash vm/mkinitramfs.sh build | tail -1)
#   kernel=$(bash vm/build-kernel.sh | tail -1)          # our series, QEMU variant
#   bash vm/run-qemu.sh "$kernel" "$initrd" --suites trinity --timeout 2400 \
#        --append "TRINITY_SECS=1800 cetctl.timeout=2200" --log /tmp/trinity-soak.log
# The verdict line of run-qemu.sh (from the kernel log check) is the result.
#
# Declared kernel noise: trinity's children that die of an unhandled fault print
# "segfault at" / "traps: NAME[PID] ..." lines, and a few of its calls make the kernel
# complain about deprecated or misused interfaces in words that the log check does not
# count anyway. Never declared: WARN, BUG, Oops, general protection faults of the kernel
# itself (those have no "traps: NAME[PID]" prefix), lockups, hung tasks.

load lib/common

@test "trinity: random system calls as nobody for a bounded time, kernel log clean" {
	in_guest || skip "trinity fuzzes the running kernel: only in the guest tiers"
	[[ ${CETCTL_TIER:-} == qemu || -n ${TRINITY_ANY_TIER:-} ]] ||
		skip "trinity runs in the QEMU tier (tier ${CETCTL_TIER:-unknown}: Bochs is ~50x slower; there shstk_fuzz fuzzes the shadow-stack paths)"
	command -v trinity >/dev/null || fail "trinity is not in the guest image (vm/mkinitramfs.sh)"
	local secs=${TRINITY_SECS:-180} kids=${TRINITY_CHILDREN:-4} dir t0 t1
	expect_kernel_log 'segfault at|traps: [^ []+\[[0-9]+\] '
	dir=$(mktemp -d /tmp/trinity.XXXXXX)
	chmod 0777 "$dir"
	local args=(-q -l off -C "$kids" -N 100000000
		-x reboot -x kexec_load -x kexec_file_load -x init_module -x finit_module
		-x delete_module -x swapon -x swapoff -x acct)
	[[ -n ${TRINITY_SEED:-} ]] && args+=(-s "$TRINITY_SEED")
	t0=$(cut -d' ' -f1 /proc/uptime)
	# timeout signals its whole process group (trinity and its children) at the end;
	# fds above 2 (bats' own) are closed so that trinity cannot write into the TAP stream
	run bash -c 'cd "$1" || exit 99
		for fd in /proc/self/fd/*; do fd=${fd##*/}; ((fd > 2)) && eval "exec $fd>&-"; done
		echo 1000 >/proc/self/oom_score_adj
		exec timeout -s INT -k 20 "$2" prlimit --nproc=512 setpriv --reuid=65534 --regid=65534 \
			--clear-groups --inh-caps=-all --bounding-set=-all -- trinity "${@:3}"' \
		_ "$dir" "$secs" "${args[@]}"
	t1=$(cut -d' ' -f1 /proc/uptime)
	printf '%s\n' "$output" | tail -n 40
	local took
	took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", b - a }')
	echo "trinity: status $status after $took s (bound ${secs} s)"
	# stragglers of nobody's would run on into the next suite
	sleep 1
	pkill -KILL -u 65534 2>/dev/null || true
	rm -rf "$dir" 2>/dev/null || true
	[[ $status != 99 ]] || fail "cannot enter $dir"
	# 124: the time bound ended it (the intended end); 0: it finished its -N count
	[[ $status == 124 || $status == 0 ]] || fail "trinity ended with status $status before the bound"
	grep -qi 'tainted' <<<"$output" && fail "trinity reports that the kernel became tainted"
	((took >= secs - 2 || status == 0)) || fail "trinity stopped after $took s, before the ${secs} s bound"
}
