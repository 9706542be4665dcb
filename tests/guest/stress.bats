#!/usr/bin/env bats
# Kernel stress, bounded in time (issue 7). Helper: shstk_churn
# (tests/guest/helpers/shstk_churn.c). Each case runs for CETCTL_STRESS_SECS
# seconds (default 6), then checks that the churn left nothing behind; the
# suite ends by checking that the kernel log has no new WARN/BUG/oops, that
# MemFree is back to its level before the suite (after dropping caches), and
# that no process has more `ss` (shadow-stack) VMAs than before.
# Without CET hardware (QEMU) the map_shadow_stack EOPNOTSUPP churn, the
# thread and fork churn (with the x86_Thread_features lines) still run; the
# hardware cases skip with "no shadow-stack hardware (cpuinfo lacks user_shstk)".

load lib/common

SECS=${CETCTL_STRESS_SECS:-6}

# Whole-system numbers, before and after: MemFree + Shmem (KiB) once the page
# cache and slab caches are dropped, and the `ss` VMAs of every process.
memfree_settled() {
	sync
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
	sleep 1
	# Shmem counts back in: bats keeps every test's output in /tmp (tmpfs)
	# until the run ends, and those pages are no kernel leak. So do the free
	# pages the per-CPU lists hold (/proc/zoneinfo "count:", 4 KiB pages):
	# free, yet not in MemFree, and the churn leaves them filled.
	local pcp
	pcp=$(awk '$1 == "count:" { n += $2 } END { print n * 4 }' /proc/zoneinfo 2>/dev/null)
	awk -v pcp="${pcp:-0}" '/^MemFree:/ { f = $2 } /^Shmem:/ { s = $2 } END { print f + s + pcp }' /proc/meminfo
}
ss_vmas_all() {
	cat /proc/[0-9]*/smaps 2>/dev/null | grep -c '^VmFlags:.* ss' || true
}

setup_file() {
	export STRESS_STATE=$BATS_FILE_TMPDIR/state
	{
		# a marker in the kernel log: the check at the end reads what follows it
		if in_guest; then
			echo "cetctl-stress: suite begins $$" >/dev/kmsg
			echo "kmsg_marker=$$"
		fi
		echo "ss_vmas=$(ss_vmas_all)"
		# dropping caches is for the guest's kernel only, never the host's
		if in_guest; then echo "memfree=$(memfree_settled)"; fi
	} >"$STRESS_STATE"
	# the whole picture, for the message when memory does not come back
	if in_guest; then
		cp /proc/meminfo "$BATS_FILE_TMPDIR/meminfo.before"
		ps -eo pid=,rss=,comm= >"$BATS_FILE_TMPDIR/ps.before" 2>/dev/null || true
	fi
}

# state KEY: a number recorded by setup_file; fails when there is none
state() {
	local v
	v=$(sed -n "s/^$1=//p" "$STRESS_STATE" 2>/dev/null)
	[[ $v =~ ^[0-9]+$ ]] || { fail "no baseline '$1' recorded before the suite (state: $(cat "$STRESS_STATE" 2>&1))"; return 1; }
	echo "$v"
}

# churn CASE [ARGS...]: run_helper with a time limit (a hang is a failure)
churn() {
	local bin=$HELPERS/shstk_churn t=()
	[[ -x $bin ]] || { fail "helper $bin is missing (build tests/guest/helpers)"; return 1; }
	command -v timeout >/dev/null && t=(timeout -k 5 $((SECS * 4 + 60)))
	run "${t[@]}" "$bin" "$@"
	printf '%s\n' "$output"
	case $status in
	0) return 0 ;;
	77) local why; why=$(grep -m1 '^SKIP: ' <<<"$output"); skip "${why#SKIP: }" ;;
	124) fail "shstk_churn $* did not finish in time"; return 1 ;;
	*) fail "shstk_churn $* exited with status $status"; return 1 ;;
	esac
}

@test "stress: map_shadow_stack churn without hardware: every call EOPNOTSUPP, no ss VMA" {
	require_no_shstk_hw
	churn map-nohw "$SECS" 4
}

@test "stress: map_shadow_stack/munmap churn from 8 threads: tokens right, ss VMAs back" {
	require_shstk
	churn map "$SECS" 8
}

@test "stress: thread churn (own shadow stacks, disable/enable, signals; status lines)" {
	require_kernel_support
	churn threads "$SECS" 16
}

@test "stress: fork churn from a task on a shadow stack (children inherit it, exit 0)" {
	require_kernel_support
	churn fork "$SECS"
}

@test "stress: signals on a shadow stack: 200 us timer, alternate stack, SSP unchanged" {
	require_shstk
	churn signals "$SECS"
}

@test "stress: threads, forks and mappings at the same time" {
	require_kernel_support
	local bin=$HELPERS/shstk_churn map=map-nohw rc=0 c
	[[ -x $bin ]] || fail "helper $bin is missing"
	have_shstk_hw && map=map
	"$bin" "$map" "$SECS" 4 >"$BATS_TEST_TMPDIR/map" 2>&1 & local p1=$!
	"$bin" threads "$SECS" 8 >"$BATS_TEST_TMPDIR/threads" 2>&1 & local p2=$!
	"$bin" fork "$SECS" >"$BATS_TEST_TMPDIR/fork" 2>&1 & local p3=$!
	for c in "$p1:map" "$p2:threads" "$p3:fork"; do
		wait "${c%%:*}" || { rc=1; echo "== ${c#*:} failed:"; cat "$BATS_TEST_TMPDIR/${c#*:}"; }
	done
	grep -h 'info\|RESULT' "$BATS_TEST_TMPDIR"/{map,threads,fork}
	[[ $rc == 0 ]]
}

@test "stress: no shadow-stack VMA left behind (all processes)" {
	require_kernel_support
	local before after
	before=$(state ss_vmas) || return 1
	after=$(ss_vmas_all)
	echo "# ss VMAs: $before before the suite, $after now" >&3
	[[ $after -le $before ]]
}

# The slack covers what the churn leaves cached, not leaked: slab pages of
# task, pid and VMA caches and per-CPU page lists (measured 8.5 MiB in the
# QEMU guest after the suite, which failed an 8 MiB slack once). Settled
# numbers also wander: rounds of the mixed churn in one boot left
# MemFree+Shmem between 25 MiB under and 14 MiB over its start, with no
# trend (mainline 6.12: 18 under to 2 over), and one CI run measured 39 MiB
# under once. So the check settles up to five times: a leak does not come
# back, memory on its way back does.
@test "stress: MemFree back to its level before the suite (32 MiB slack)" {
	# (MemFree+Shmem+the per-CPU free lists, memfree_settled)
	require_kernel_support
	in_guest || skip "on the host other processes move MemFree"
	local before after try
	before=$(state memfree) || return 1
	# A leak stays; memory on its way back (tasks still being reaped, RCU
	# and per-CPU lists) does not: settle up to five times before judging.
	for try in 1 2 3 4 5; do
		after=$(memfree_settled)
		[[ $after -ge $((before - 32768)) ]] && break
	done
	echo "# MemFree+Shmem: $before KiB before, $after KiB after (settled $try time(s))" >&3
	if [[ $after -lt $((before - 32768)) ]]; then
		# what moved by more than 1 MiB, and the processes that were not there before
		echo "# meminfo fields that moved (KiB, before -> after):"
		awk 'NR == FNR { b[$1] = $2; next } ($1 in b) && ($2 - b[$1] > 1024 || b[$1] - $2 > 1024) {
			printf "#   %s %d -> %d\n", $1, b[$1], $2 }' "$BATS_FILE_TMPDIR/meminfo.before" /proc/meminfo
		echo "# processes now that were not there before (pid rss comm):"
		ps -eo pid=,rss=,comm= 2>/dev/null |
			awk 'NR == FNR { seen[$1] = 1; next } !($1 in seen) { print "#   " $0 }' \
				"$BATS_FILE_TMPDIR/ps.before" - | head -n 20
		fail "MemFree+Shmem: $before KiB before the suite, $after KiB after ($(( (before - after) / 1024 )) MiB gone)"
	fi
}

@test "stress: no WARN, BUG, oops or control-protection line in the kernel log since the suite began" {
	in_guest || skip "on the host the kernel log is not the kernel under test's"
	local mark bad
	mark=$(state kmsg_marker) || return 1
	run dmesg
	[[ $status == 0 ]] || fail "dmesg failed"
	grep -q "cetctl-stress: suite begins $mark" <<<"$output" ||
		fail "the marker written before the suite is not in the kernel log any more (log wrapped?)"
	echo "# kernel log: $(sed -n "/cetctl-stress: suite begins $mark/,\$p" <<<"$output" | wc -l) lines since the suite began" >&3
	bad=$(sed -n "/cetctl-stress: suite begins $mark/,\$p" <<<"$output" |
		grep -E 'WARNING: CPU|WARNING: at |BUG: |kernel BUG at|Oops|Kernel panic|general protection fault|list_(add|del) corruption|UBSAN:|bad page state|Bad rss-counter|control protection|segfault' || true)
	[[ -z $bad ]] || fail "kernel log since the stress suite began:" "$bad"
}
