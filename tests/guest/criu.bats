#!/usr/bin/env bats
# Checkpoint/restore of shadow-stack processes with CRIU 4.2 (issue 15), Bochs tier
# (emulated CET), on a boot of its own: tests/run-all.sh bochs boots the image made with
# `vm/mkinitramfs.sh --criu` (criu and the zdtm tests of vm/build-criu.sh) with
#   cetctl.criu=1 shstk_legacy_elf=allow
# Every other boot skips this suite. shstk_legacy_elf=allow: the zdtm tests are built
# with SHSTK_ENABLE=1, i.e. marked for shadow stacks, and the series' default legacy-ELF
# policy ("x86/shstk: Block the shadow stack interface for legacy ELF binaries",
# X86_USER_SHADOW_STACK_ALLOW_BROKEN unset) refuses the shadow-stack interface to marked
# executables.
#
# How CRIU is run: as it is, without a shadow stack of its own (Debian 12's glibc 2.36
# cannot give it one). It does not need one to restore: the restore trampoline
# (criu/arch/x86/shstk.c, arch_shstk_trampoline) enables the shadow stack in the forked
# task whenever the image says the task had one and the CPU has CET
# (task_needs_shstk()); criu's own shadow stack (kdat.has_shstk) only decides whether it
# must switch one OFF for tasks that had none.
#
# What CRIU 4.2 does not carry (tested as such, named in the closing note):
#   - WRSS: the restorer enables WRSS to write the shadow stacks back and
#     shstk_finalize() (criu/arch/x86/include/asm/shstk.h) then disables it for every
#     task: a task that ran with WRSS runs without it after restore.
#   - the lock mask: the image has no field for it (images/core-x86.proto,
#     user_x86_cet_entry: cet, ssp); shstk_finalize() locks SHSTK only, so a task locked
#     "shstk wrss" (cetctl run's default) is locked "shstk" after restore.
#   - one extra shadow-stack mapping per restored non-main thread: the restorer clones
#     each thread (criu/pie/restorer.c:2181, RUN_CLONE_RESTORE_FN), the kernel gives the
#     clone a shadow stack as it must for CLONE_VM with shadow stacks on (mainline does
#     the same), and the restorer switches to the restored one and never unmaps it.

load lib/common

setup() {
	grep -qw cetctl.criu=1 /proc/cmdline ||
		skip "runs on its own Bochs boot (cetctl.criu=1, tests/run-all.sh bochs)"
	CETCTL=${CETCTL:-$(command -v cetctl || true)}
	CRIU=$(command -v criu || true)
	W=$(mktemp -d /tmp/criu.XXXXXX)
	# criu's kernel-feature probes bind a TCP socket to 127.0.0.1: loopback must be up
	# (the guest's /init configures no network; up, lo gets 127.0.0.1 from the kernel)
	busybox ip link set lo up || fail "cannot bring the loopback interface up"
	bg=()
	# Bochs is slow: a dump or restore takes tens of guest seconds
	TMO=${CRIU_TIMEOUT:-300}
}

teardown() {
	stop_bg
	# a restored task is not our child: kill it by its pid file
	local p
	for p in "$W"/*.pid; do
		[[ -f $p ]] && kill -9 "$(cat "$p")" 2>/dev/null
	done
	true
}

need_criu() {
	require_shstk || return 1
	[[ -x $CRIU ]] || { fail "criu is not in the image (vm/mkinitramfs.sh --criu)"; return 1; }
	[[ -x $CETCTL ]] || { fail "no cetctl in the image"; return 1; }
}

# wait_for CMD...: poll CMD until it succeeds or TMO guest seconds have passed
wait_for() {
	local i
	for ((i = 0; i < TMO * 5; i++)); do
		"$@" && return 0
		sleep 0.2
	done
	fail "timed out after ${TMO}s waiting for: $*"
}

gone() { [[ ! -d /proc/$1 ]] || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

# cetctl status of PID, one line per row: TID (or "process" on the process line),
# enabled features, locked features, SSP (read through ptrace); words inside a cell
# joined with "+"
# (raw output: cells separated by one space, spaces inside a cell escaped as \x20)
thread_state() {
	"$CETCTL" status -n --raw -o TID,FEATURES,LOCKED,SSP "$1" |
		sed 's/\\x20/+/g' | awk -F'[ ]' '{ print ($1 == "" ? "process" : $1), $2, $3, $4 }'
}

# criu_dump PID NAME / criu_restore NAME: images and logs in $W/NAME
criu_dump() {
	mkdir -p "$W/$2"
	if ! timeout "$TMO" "$CRIU" dump -t "$1" -D "$W/$2" -o dump.log -v4; then
		grep -E 'Error|Warn' "$W/$2/dump.log" | tail -n 20
		fail "criu dump -t $1 failed (log above)"
		return 1
	fi
	echo "# dump: $(grep -c . "$W/$2/dump.log") log lines, $(du -sk "$W/$2" | cut -f1) KiB of images"
}

criu_restore() {
	if ! timeout "$TMO" "$CRIU" restore -D "$W/$1" -d -o restore.log -v4 --pidfile "$W/$1.restored"; then
		grep -E 'Error|Warn' "$W/$1/restore.log" | tail -n 20
		fail "criu restore -D $W/$1 failed (log above)"
		return 1
	fi
	cp "$W/$1.restored" "$W/$1.pid"
}

@test "criu: criu check passes on this kernel" {
	need_criu || return 1
	"$CRIU" --version
	run "$CRIU" check
	printf '%s\n' "$output"
	[[ $status -eq 0 && $output == *"Looks good"* ]] || fail "criu check failed"
	# --all (experimental features too): shown for the record, what fails is named in
	# the closing note of issue 15
	"$CRIU" check --all 2>&1 | sed 's/^/# check --all: /' >&3 || true
}

# dump_restore MODE: shstk_criu under cetctl run MODE, checkpointed and restored
dump_restore() {
	local mode=$1 pid pre post
	need_criu || return 1
	expect_fault_lines
	"$CETCTL" run -q "$mode" -- "$HELPERS/shstk_criu" serve "$W" >"$W/log" 2>&1 &
	pid=$!
	bg+=("$pid")
	wait_for test -e "$W/ready" || { cat "$W/log"; return 1; }
	pre=$(thread_state "$pid")
	printf '# before: %s\n' "$pre"
	local -a rows
	mapfile -t rows <<<"$pre"
	[[ ${#rows[@]} -eq 4 ]] ||
		{ fail "expected the process and 3 threads in cetctl status, got ${#rows[@]} rows"; return 1; }
	criu_dump "$pid" img || return 1
	wait "$pid" 2>/dev/null || true   # the dump killed it; free its pid
	bg=()
	gone "$pid" || { fail "the dumped process $pid is still running"; return 1; }
	criu_restore img || return 1
	[[ $(cat "$W/img.pid") == "$pid" ]] || { fail "restored as pid $(cat "$W/img.pid"), not $pid"; return 1; }
	post=$(thread_state "$pid")
	printf '# after:  %s\n' "$post"
	kill -USR1 "$pid"
	wait_for grep -q '^RESULT:' "$W/log" || { cat "$W/log"; return 1; }
	cat "$W/log"
	grep -q '^RESULT: all checks passed' "$W/log" || { fail "shstk_criu reported failures"; return 1; }

	# what cetctl sees: the same threads, shadow stack enabled and locked in each,
	# each SSP where it was; WRSS and the WRSS lock as CRIU 4.2 leaves them (see the
	# top of this file)
	local want
	want=$(awk '$4 ~ /^0x/ { print $1, "shstk", "shstk", $4 }' <<<"$pre")
	mapfile -t rows <<<"$want"
	[[ ${#rows[@]} -eq 4 ]] || { fail "cetctl status could not read every SSP before the dump"; return 1; }
	[[ $post == "$want" ]] || { fail "after restore: '$post', expected '$want'"; return 1; }
}

@test "criu: a shadow-stack process (cetctl run --shstk) is dumped and restored exactly" {
	dump_restore --shstk
	# before: enabled shstk, locked shstk wrss (cetctl run's default)
	grep -q '^  info T0 features pre=shstk post=shstk$' "$W/log"
	grep -q '^  info T0 locked pre=shstk wrss post=shstk$' "$W/log"
}

@test "criu: a process with WRSS on (cetctl run --wrss) is restored with WRSS off (CRIU 4.2)" {
	dump_restore --wrss
	grep -q '^  info T0 features pre=shstk wrss post=shstk$' "$W/log"
	grep -q '^  info T1 features pre=shstk wrss post=shstk$' "$W/log"
}

# zdtm TEST [ARGS...]: a zdtm test (SHSTK_ENABLE=1 build) started with cetctl run --shstk,
# dumped and restored once by hand as zdtm.py does for the host flavour, then told to
# check itself (SIGTERM) and judged by its .out file.
zdtm() {
	local t=$1 pid st
	shift
	need_criu || return 1
	local bin=/opt/zdtm/$t
	[[ -x $bin ]] || { fail "zdtm test $t is not in the image"; return 1; }
	cd "$W" || return 1
	"$CETCTL" run -q --shstk -- "$bin" --pidfile="$W/$t.pid" --outfile="$W/$t.out" "$@" ||
		{ cat "$W/$t.out" 2>/dev/null; fail "$t did not start"; return 1; }
	pid=$(cat "$W/$t.pid")
	st=$(thread_state "$pid")
	printf '# %s before: %s\n' "$t" "$st"
	awk '{ if ($2 !~ /^shstk/) bad = 1 } END { exit bad }' <<<"$st" ||
		{ fail "$t runs without a shadow stack"; return 1; }
	criu_dump "$pid" "$t.img" || return 1
	wait_for gone "$pid" || return 1
	criu_restore "$t.img" || return 1
	st=$(thread_state "$pid")
	printf '# %s after:  %s\n' "$t" "$st"
	awk '{ if ($2 !~ /^shstk/ || $3 !~ /^shstk/) bad = 1 } END { exit bad }' <<<"$st" ||
		{ fail "$t lost its shadow stack or its lock in the restore"; return 1; }
	kill -TERM "$pid"
	wait_for gone "$pid" || return 1
	cat "$W/$t.out"
	grep -q PASS "$W/$t.out" || { fail "zdtm $t did not pass after restore"; return 1; }
}

@test "criu zdtm: env00" { zdtm env00 --envname=ENV_00_TEST; }
@test "criu zdtm: sleeping00" { zdtm sleeping00; }
@test "criu zdtm: sigpending" { zdtm sigpending; }
@test "criu zdtm: sigaltstack" { zdtm sigaltstack; }
@test "criu zdtm: pthread00" { zdtm pthread00; }
@test "criu zdtm: pthread01" { zdtm pthread01; }
@test "criu zdtm: zombie00" { zdtm zombie00; }
@test "criu zdtm: fpu00" { zdtm fpu00; }
@test "criu zdtm: maps00" { zdtm maps00 --filename="$W/maps00.test"; }
