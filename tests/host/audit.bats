#!/usr/bin/env bats
# cetctl audit: recorded trees (tests/host/fixtures/proc) and the live system,
# including a scan of 1,000+ processes of which some exit during the scan.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
	export CETCTL="${CETCTL:-$BATS_TEST_DIRNAME/../../build/cetctl}"
	export FIX="$BATS_TEST_DIRNAME/fixtures/proc"
}

setup() {
	[ -x "$CETCTL" ] || skip "cetctl not built at $CETCTL"
}

jqs() {	# jqs TEXT [jq args] FILTER: jq -e on TEXT, which must hold JSON
	# (jq 1.6 exits 0 on empty input, so an empty output would pass)
	local in=$1; shift
	[[ $in == *[\{\[]* ]] || { echo "no JSON in: '$in'"; return 1; }
	printf '%s\n' "$in" | jq -e "$@"
}


role() {
	awk -v r="$2" '$1 == r { print $2 }' "$FIX/$1/roles"
}

cet() {
	local tree=$1 rc=0; shift
	# the "reading TREE instead of /proc" note is proc-root.bats' business
	"$CETCTL" --proc-root "$FIX/$tree" "$@" 2>"$BATS_FILE_TMPDIR/cet.err" || rc=$?
	grep -v ' instead of /proc (' "$BATS_FILE_TMPDIR/cet.err" >&2
	return $rc
}

@test "audit: one row per user process; kernel threads, zombies, vanished left out" {
	run cet cet-emulated audit -J
	[ "$status" -eq 0 ]
	want=$(for r in single threads zparent wrss unlocked unknown offlocked; do role cet-emulated $r; done | sort -n | jq -s -c .)
	[ "$(echo "$output" | jq -c '[.processes[].pid]')" = "$want" ]
}

@test "audit: columns say enabled, locked, wrss, differing threads and the verdict" {
	run cet cet-emulated audit -J -o PID,SHSTK,WRSS,SHSTK-LOCKED,WRSS-LOCKED,THREADS,DIFFER,SS-VMAS,VERDICT
	[ "$status" -eq 0 ]
	row() {
		local r
		r=$(echo "$output" | jq -c --argjson p "$(role cet-emulated "$1")" '.processes[] | select(.pid == $p)')
		[ -n "$r" ] || { echo "no row for $1" >&2; echo '"missing"'; return 1; }
		echo "$r"
	}
	row single | jq -e '.shstk and ."shstk-locked" and (.wrss | not) and (."ss-vmas" | type == "array" and length == 1) and .verdict == "enabled and locked"'
	row wrss | jq -e '.wrss and ."wrss-locked"'
	row threads | jq -e '.threads == 3 and .differ == 1 and (.verdict | startswith("mixed"))'
	row unlocked | jq -e '.shstk and (."shstk-locked" | not)'
	# smaps is read only where a feature is on
	row offlocked | jq -e '."ss-vmas" == null and (.shstk | not)'
}

# SS-VMAS is one member with one shape in status and audit (issue 13)
@test "audit -J: SS-VMAS is status's array of {start,end,size,rss}: null unread, [] none" {
	# a process with a feature on but no ss mapping (smaps read, nothing found)
	local tree=$BATS_TEST_TMPDIR/tree p
	cp -a "$FIX/cet-emulated" "$tree"
	sed -i 's/^\(VmFlags:.*\) ss /\1 /' "$tree/$(role cet-emulated unlocked)/smaps"
	run --separate-stderr "$CETCTL" --proc-root "$tree" audit -J -o PID,SHSTK,SS-VMAS,SS-SIZE
	[ "$status" -eq 0 ]
	jqs "$output" --argjson p "$(role cet-emulated unlocked)" \
		'.processes[] | select(.pid == $p) | ."ss-vmas" == [] and ."ss-size" == 0 and .shstk'
	jqs "$output" --argjson p "$(role cet-emulated offlocked)" \
		'.processes[] | select(.pid == $p) | ."ss-vmas" == null and ."ss-size" == null'
	# every process whose smaps audit read (status reads it whatever the
	# features): the same array status gives, sizes adding up to SS-SIZE
	for p in $(jq -r '.processes[].pid' <<<"$output"); do
		a=$(jq -c --argjson p "$p" '.processes[] | select(.pid == $p) | ."ss-vmas"' <<<"$output")
		[ "$a" != null ] || continue
		s=$("$CETCTL" --proc-root "$tree" status -J -o PID,SS-VMAS "$p" 2>/dev/null |
			jq -c '.processes[0]."ss-vmas"')
		[ "$a" = "$s" ] || { echo "pid $p: audit $a, status $s"; return 1; }
		jqs "$output" --argjson p "$p" '.processes[] | select(.pid == $p) |
			(."ss-vmas" | type) as $t | if $t == "null" then ."ss-size" == null
			else ([."ss-vmas"[].size] | add // 0) == ."ss-size" end'
	done
	# one with mappings, so the comparison above compared something
	jqs "$output" --argjson p "$(role cet-emulated threads)" \
		'.processes[] | select(.pid == $p) | ."ss-vmas" | length == 2 and
		 all(.start | test("^0x[0-9a-f]+$")) and all(.size > 0)'
	# the table keeps the count
	run --separate-stderr "$CETCTL" --proc-root "$tree" audit -n --raw -o PID,SS-VMAS \
		--pid "$(role cet-emulated threads),$(role cet-emulated unlocked),$(role cet-emulated offlocked)"
	[ "$status" -eq 0 ]
	[ "$output" = "$(role cet-emulated threads) 2
$(role cet-emulated unlocked) 0
$(role cet-emulated offlocked) " ]
}

@test "audit: --require shstk,locked lists the offenders and exits 1" {
	run cet cet-emulated audit -J --require shstk,locked
	[ "$status" -eq 1 ]
	[[ "$output" == *"4 of 7 processes do not meet --require shstk,locked"* ]]
	json=$(echo "$output" | sed -n '/^{/,/^}/p')
	want=$(for r in threads zparent unlocked offlocked; do role cet-emulated $r; done | sort -n | jq -s -c .)
	[ "$(echo "$json" | jq -c '[.processes[].pid]')" = "$want" ]
}

@test "audit: --require shstk: every thread must have it (mixed offends), unlocked passes" {
	run cet cet-emulated audit -o PID -n --require shstk
	[ "$status" -eq 1 ]
	offenders=$(echo "$output" | grep -v 'do not meet' | tr -d ' ' | sort -n | tr '\n' ' ')
	want=$(for r in threads zparent offlocked; do role cet-emulated $r; done | sort -n | tr '\n' ' ')
	[ "$offenders" = "$want" ]
}

@test "audit: --require met exits 0 with an empty list" {
	run cet cet-emulated audit -J --pid "$(role cet-emulated single),$(role cet-emulated wrss)" --require shstk,locked
	[ "$status" -eq 0 ]
	jqs "$output" '.processes | length == 0'
}

@test "audit: --pid, --comm and --user filter" {
	run cet cet-emulated audit -o PID -n --pid "$(role cet-emulated wrss)"
	[ "$status" -eq 0 ]
	[ "$(echo $output)" = "$(role cet-emulated wrss)" ]
	run cet cet-emulated audit -o COMM -n --comm python3
	[ "$status" -eq 0 ]
	[ "$(echo $output)" = "python3" ]
	run cet cet-emulated audit -J --user root
	jqs "$output" '.processes | length == 7'
	run cet cet-emulated audit -J --user nobody
	[ "$status" -eq 0 ]
	jqs "$output" '.processes | length == 0'
}

@test "audit: --pid naming a missing process warns and exits 1, the rest is shown" {
	run cet cet-emulated audit -o PID -n --pid "999999,$(role cet-emulated single)"
	[ "$status" -eq 1 ]
	[[ "$output" == *"999999: no such process"* ]]
	[[ "$output" == *"$(role cet-emulated single)"* ]]
}

@test "audit: --prometheus writes valid textfile metrics atomically" {
	prom="$BATS_TEST_TMPDIR/cet.prom"
	run cet cet-emulated audit --require shstk,locked --prometheus "$prom" -o PID
	[ "$status" -eq 1 ]
	[ -f "$prom" ]
	# no temporary file left behind
	[ "$(ls -A "$BATS_TEST_TMPDIR")" = "cet.prom" ]
	grep -qx 'cetctl_audit_processes_checked 7' "$prom"
	grep -qx 'cetctl_audit_shstk_processes{state="enabled_locked"} 3' "$prom"
	grep -qx 'cetctl_audit_shstk_processes{state="enabled_unlocked"} 1' "$prom"
	grep -qx 'cetctl_audit_shstk_processes{state="mixed"} 1' "$prom"
	grep -qx 'cetctl_audit_shstk_processes{state="disabled"} 2' "$prom"
	grep -qx 'cetctl_audit_wrss_processes 1' "$prom"
	grep -qx 'cetctl_audit_kernel_support 1' "$prom"
	grep -qx 'cetctl_audit_skipped_processes{reason="kernel_thread"} 1' "$prom"
	grep -qx 'cetctl_audit_skipped_processes{reason="zombie"} 1' "$prom"
	grep -qx 'cetctl_audit_skipped_processes{reason="vanished"} 1' "$prom"
	grep -qx 'cetctl_audit_offending_processes{require="shstk,locked"} 4' "$prom"
	# exposition format: every sample line is NAME{labels} VALUE, every
	# metric has HELP and TYPE
	bad=$(grep -v '^#' "$prom" | grep -Ev '^[a-z_]+(\{[a-z_]+="[^"]*"\})? [0-9.e+-]+$' || true)
	[ -z "$bad" ]
	for m in $(grep -v '^#' "$prom" | sed 's/[{ ].*//' | sort -u); do
		grep -q "^# HELP $m " "$prom"
		grep -q "^# TYPE $m gauge" "$prom"
	done
}

@test "audit: --prometheus file is mode 0644 whatever the umask (node_exporter must read it)" {
	prom="$BATS_TEST_TMPDIR/cet.prom"
	run bash -c 'umask 077 && exec "$@"' _ "$CETCTL" --proc-root "$FIX/cet-emulated" audit -o PID -n --prometheus "$prom"
	[ "$status" -eq 0 ]
	[ "$(stat -c %a "$prom")" = 644 ]
	# an existing file of another mode is replaced, not rewritten in place
	chmod 600 "$prom"
	ino=$(stat -c %i "$prom")
	run bash -c 'umask 077 && exec "$@"' _ "$CETCTL" --proc-root "$FIX/cet-emulated" audit -o PID -n --prometheus "$prom"
	[ "$status" -eq 0 ]
	[ "$(stat -c %a "$prom")" = 644 ]
	[ "$(stat -c %i "$prom")" != "$ino" ]
}

@test "audit: --prometheus - writes the metrics to stdout instead of the table, no file named -" {
	mkdir "$BATS_TEST_TMPDIR/cwd" && cd "$BATS_TEST_TMPDIR/cwd"
	run --separate-stderr cet cet-emulated audit --prometheus -
	[ "$status" -eq 0 ]
	[ ! -e "$BATS_TEST_TMPDIR/cwd/-" ]
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/cwd")" ]
	# only the exposition format on stdout: no table rows
	grep -qx 'cetctl_audit_processes_checked 7' <<<"$output"
	bad=$(grep -v '^#' <<<"$output" | grep -Ev '^cetctl_[a-z_]+(\{.*\})? [0-9.e+-]+$' || true)
	[ -z "$bad" ]
}

@test "audit: --prometheus - reports a write error (stdout on /dev/full)" {
	[ -w /dev/full ] || skip "no /dev/full"
	run bash -c '"$@" > /dev/full' _ "$CETCTL" --proc-root "$FIX/cet-emulated" audit --prometheus -
	[ "$status" -eq 1 ]
	[[ "$output" == *"standard output"* ]]
}

@test "audit: --prometheus DIR writes DIR/cetctl-audit.prom" {
	run cet cet-emulated audit -o PID -n --prometheus "$BATS_TEST_TMPDIR"
	[ "$status" -eq 0 ]
	[ "$(ls -A "$BATS_TEST_TMPDIR")" = "cetctl-audit.prom" ]
	grep -qx 'cetctl_audit_processes_checked 7' "$BATS_TEST_TMPDIR/cetctl-audit.prom"
}

@test "audit: --label k=v is added to every sample, values escaped per the exposition format" {
	prom="$BATS_TEST_TMPDIR/cet.prom"
	val=$'a\\b "q"\nz'
	run cet cet-emulated audit -o PID -n --require shstk --prometheus "$prom" \
		--label job_name=nightly --label "_Odd9=$val" --label empty=
	[ "$status" -eq 1 ]
	want='{job_name="nightly",_Odd9="a\\b \"q\"\nz",empty=""'
	grep -qxF "cetctl_audit_processes_checked$want} 7" "$prom"
	grep -qxF "cetctl_audit_shstk_processes$want,state=\"mixed\"} 1" "$prom"
	grep -qxF "cetctl_audit_offending_processes$want,require=\"shstk\"} 3" "$prom"
	# every sample carries them; the file stays one line per sample
	samples=$(grep -vc '^#' "$prom")
	[ "$(grep -cF "$want" "$prom")" -eq "$samples" ]
	[ "$(grep -c '^cetctl_' "$prom")" -eq "$samples" ]
}

@test "audit: --label rejects invalid and reserved names, duplicates and a missing '='" {
	for bad in 9x=1 a-b=1 'a b=1' =v novalue __name__=x state=x reason=x require=x; do
		run "$CETCTL" audit --label "$bad" --prometheus -
		[ "$status" -eq 1 ] || { echo "accepted: $bad"; false; }
		[[ "$output" == *"--label"* ]]
	done
	run "$CETCTL" audit --label a=1 --label a=2 --prometheus -
	[ "$status" -eq 1 ]
	run "$CETCTL" audit --label a=1
	[ "$status" -eq 1 ]
	[[ "$output" == *"--prometheus"* ]]
}

@test "audit: --label values that are not UTF-8 are refused (node_exporter would drop the file)" {
	local prom=$BATS_TEST_TMPDIR/cet.prom bad
	for bad in $'\xff' $'a\xc3' $'\xc0\xaf' $'\xed\xa0\x80' $'\xf4\x90\x80\x80' $'ok\xe2\x82'; do
		run --separate-stderr "$CETCTL" --proc-root "$FIX/cet-emulated" audit -o PID -n \
			--label "v=$bad" --prometheus "$prom"
		[ "$status" -eq 1 ] || { echo "accepted: $(printf %q "$bad")"; false; }
		# shellcheck disable=SC2154  # stderr: set by bats' run --separate-stderr
		[[ $stderr == "cetctl: audit: --label v: the value is not valid UTF-8"* ]] || { echo "$stderr"; false; }
		[ ! -e "$prom" ]
	done
	# valid UTF-8, up to 4-byte sequences, is kept as it is
	run --separate-stderr "$CETCTL" --proc-root "$FIX/cet-emulated" audit -o PID -n \
		--label $'v=h\xc3\xa9\xe2\x82\xac\xf0\x9f\x90\xa7' --prometheus "$prom"
	[ "$status" -eq 0 ]
	grep -qF $'cetctl_audit_processes_checked{v="h\xc3\xa9\xe2\x82\xac\xf0\x9f\x90\xa7"} 7' "$prom"
}

@test "audit: --prometheus refuses a file node_exporter would never read (not *.prom), says why" {
	mkdir "$BATS_TEST_TMPDIR/cwd" && cd "$BATS_TEST_TMPDIR/cwd"
	for p in metrics nodir/metrics metrics.txt; do
		run --separate-stderr "$CETCTL" --proc-root "$FIX/cet-emulated" audit -o PID -n --prometheus "$p"
		[ "$status" -eq 1 ] || { echo "$p: exit $status"; false; }
		[[ $stderr == *"cetctl: audit: --prometheus $p: "*".prom"* ]] || { echo "$stderr"; false; }
		# refused before the scan: no table, no file
		[ -z "$output" ]
		[ -z "$(ls -A)" ]
	done
	# an existing directory still gets DIR/cetctl-audit.prom, a *.prom file is written
	mkdir d
	run "$CETCTL" --proc-root "$FIX/cet-emulated" audit -o PID -n --prometheus d
	[ "$status" -eq 0 ]
	[ -f d/cetctl-audit.prom ]
	run "$CETCTL" --proc-root "$FIX/cet-emulated" audit -o PID -n --prometheus x.prom
	[ "$status" -eq 0 ]
	[ -f x.prom ]
	# a directory that does not exist is named as such
	run --separate-stderr "$CETCTL" --proc-root "$FIX/cet-emulated" audit -o PID -n --prometheus nodir/
	[ "$status" -eq 1 ]
	[[ $stderr == *"nodir/"*"No such file or directory"* ]] || { echo "$stderr"; false; }
}

@test "audit: metrics show a check that checked nothing (count 0) and whether shadow stacks are supported" {
	run --separate-stderr cet cet-emulated audit --comm no-such-command --prometheus -
	grep -qx 'cetctl_audit_processes_checked 0' <<<"$output"
	grep -qx 'cetctl_audit_shstk_supported 1' <<<"$output"
	run --separate-stderr cet host-nocet audit --prometheus -
	grep -qx 'cetctl_audit_shstk_supported 0' <<<"$output"
	n=$(sed -n 's/^cetctl_audit_processes_checked \([0-9]\+\)$/\1/p' <<<"$output")
	[ "$n" -gt 0 ]
}

@test "audit: metric names follow the Prometheus conventions" {
	run --separate-stderr cet cet-emulated audit --require shstk --prometheus -
	[ "$(grep -c '^cetctl_audit_' <<<"$output")" -ge 10 ]
	for m in $(grep -v '^#' <<<"$output" | sed 's/[{ ].*//' | sort -u); do
		[[ $m =~ ^cetctl_audit_[a-z_]+$ ]] || { echo "name: $m"; false; }
		type=$(sed -n "s/^# TYPE $m //p" <<<"$output")
		[ "$type" = gauge ] || { echo "$m: type '$type'"; false; }
		# _total is for counters only; a gauge of things ends in the plural unit
		[[ $m != *_total ]]
		[[ $m =~ _(processes|seconds|checked|support|supported)$ ]] || { echo "unit: $m"; false; }
		help=$(sed -n "s/^# HELP $m //p" <<<"$output")
		[ -n "$help" ] || { echo "$m: no HELP"; false; }
	done
}

@test "audit: --prometheus into a missing directory fails with exit 1, output still printed" {
	run cet cet-emulated audit -o PID -n --prometheus "$BATS_TEST_TMPDIR/nodir/x.prom"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot write"* ]]
	[[ "$output" == *"$(role cet-emulated single)"* ]]
}

@test "audit: usage errors exit 1" {
	run "$CETCTL" audit --require bogus
	[ "$status" -eq 1 ]
	[[ "$output" == *"unknown feature"* ]]
	run "$CETCTL" audit --require locked
	[ "$status" -eq 1 ]
	run "$CETCTL" audit --pid abc
	[ "$status" -eq 1 ]
	run "$CETCTL" audit --user no-such-user-xyz
	[ "$status" -eq 1 ]
	run "$CETCTL" audit 1234
	[ "$status" -eq 1 ]
	[[ "$output" == *"Try 'cetctl audit --help'"* ]]
	run "$CETCTL" audit --list-columns
	[ "$status" -eq 0 ]
	[[ "$output" == *VERDICT* ]]
}

@test "audit (live): JSON is valid and contains this shell" {
	run --separate-stderr "$CETCTL" audit -J
	[ "$status" -eq 0 ]
	jqs "$output" --argjson p "$$" 'any(.processes[]; .pid == $p)'
	# no kernel threads among the rows
	kt=$(grep -l '^Kthread:.1' /proc/[0-9]*/status 2>/dev/null | head -1 | cut -d/ -f3)
	if [ -n "$kt" ]; then
		jqs "$output" --argjson p "$kt" 'all(.processes[]; .pid != $p)'
	fi
}

@test "audit (live): 1,000+ processes, some exiting during the scan: valid JSON, sane exit" {
	n=1000
	pids=()
	denied=$(denied_exe_count)
	for _ in $(seq $n); do
		sleep 120 & pids+=($!)
	done
	# churn: processes that start and exit while cetctl scans
	( for r in $(seq 40); do
		for _ in $(seq 25); do sleep 0.0$((RANDOM % 9)) & done
		wait
	  done ) & churn=$!
	# some of the long sleepers die during the scan too
	( sleep 0.05; kill "${pids[@]:0:100}" 2>/dev/null ) & killer=$!

	start=$(date +%s.%N)
	rc=0
	"$CETCTL" audit -J > "$BATS_TEST_TMPDIR/audit.json" 2> "$BATS_TEST_TMPDIR/audit.err" || rc=$?
	end=$(date +%s.%N)
	rc_req=0
	"$CETCTL" audit -J --require shstk > "$BATS_TEST_TMPDIR/req.json" 2>/dev/null || rc_req=$?

	wait "$killer" || true
	kill "$churn" 2>/dev/null || true
	wait "$churn" 2>/dev/null || true
	kill "${pids[@]}" 2>/dev/null || true
	wait "${pids[@]}" 2>/dev/null || true

	echo "exit $rc, $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }') s" >&3
	[ "$rc" -eq 0 ]
	[ -s "$BATS_TEST_TMPDIR/audit.json" ]
	jq -e . "$BATS_TEST_TMPDIR/audit.json" >/dev/null
	rows=$(jq '[.processes[] | select(.comm == "sleep")] | length' "$BATS_TEST_TMPDIR/audit.json")
	echo "sleep rows: $rows" >&3
	[ "$rows" -ge 900 ]
	drop_known_partial "$BATS_TEST_TMPDIR/audit.err" "$denied"
	[ ! -s "$BATS_TEST_TMPDIR/audit.err" ] || { cat "$BATS_TEST_TMPDIR/audit.err"; false; }
	[ -s "$BATS_TEST_TMPDIR/req.json" ]
	jq -e . "$BATS_TEST_TMPDIR/req.json" >/dev/null
	if grep -q '^x86_Thread_features:' /proc/self/status; then
		[ "$rc_req" -eq 0 ] || [ "$rc_req" -eq 1 ]
	else
		# no kernel support: every row offends, and the policy cannot be
		# met at all: exit 2, not 1
		[ "$rc_req" -eq 2 ]
		[ "$(jq '.processes | length' "$BATS_TEST_TMPDIR/req.json")" -ge 900 ]
	fi
}

# --- policies fail closed (exit 3: nothing or not everything checked,
# exit 2: the kernel has no shadow stacks); see EXIT STATUS in cetctl-audit(1)

@test "audit: --require with a filter matching nothing exits 3, says so" {
	run cet cet-emulated audit --require shstk,locked --comm sshd,nginx
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"no process was checked"* ]]
}

@test "audit: --require with an empty selection (--user nobody) exits 3" {
	run cet cet-emulated audit -J --require shstk --user nobody
	[ "$status" -eq 3 ]
	run cet cet-emulated audit -J --user nobody
	# without a policy an empty list is just an answer
	[ "$status" -eq 0 ]
}

@test "audit: --pid naming a kernel thread: warned, exit 3 with --require, 1 without" {
	kt=$(role cet-emulated kthread)
	run cet cet-emulated audit --require shstk --pid "$kt"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"$kt: kernel thread, not checked"* ]]
	# one good process besides does not make it pass
	run cet cet-emulated audit --require shstk --pid "$kt,$(role cet-emulated single)"
	[ "$status" -eq 3 ]
	run cet cet-emulated audit -o PID -n --pid "$kt"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$kt: kernel thread, not checked"* ]]
	run cet cet-emulated audit --require shstk --pid "$(role cet-emulated zombie)"
	[ "$status" -eq 3 ]
	[[ "$output" == *"zombie, not checked"* ]]
}

@test "audit: --require with a --pid that does not exist exits 3" {
	run cet cet-emulated audit --require shstk --pid "999999,$(role cet-emulated single)"
	[ "$status" -eq 3 ]
	[[ "$output" == *"999999: no such process"* ]]
}

@test "audit: --require on a kernel without shadow stacks exits 2, even with nothing selected" {
	run cet host-nocet audit --require shstk
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"the kernel has no shadow-stack support"* ]]
	run cet host-nocet audit --require shstk,locked --comm sshd,nginx
	[ "$status" -eq 2 ]
	# a plain listing is still fine there
	run cet host-nocet audit -o PID -n
	[ "$status" -eq 0 ]
}

@test "audit (live): --comm longer than 15 characters warns and matches the executable name" {
	cp /usr/bin/perl "$BATS_TEST_TMPDIR/a-very-long-program-name"
	# the process renames its comm: only its executable's name matches
	"$BATS_TEST_TMPDIR/a-very-long-program-name" -e '$0 = "renamed"; sleep 60' &
	p=$!
	for _ in $(seq 50); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = renamed ] && break
		sleep 0.1
	done
	run "$CETCTL" audit -o PID -n --comm a-very-long-program-name,bash
	kill "$p"; wait "$p" 2>/dev/null || true
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"longer than 15 characters"* ]]
	echo "$output" | grep -qx " *$p"
}

# unit_tree ROOT CGROUP-OF-4003: the recorded tree with cgroup files for five
# processes (ssh.service, a session scope, nginx.service on cgroup v1, a
# container's init.scope, and 4003's as given)
unit_tree() {
	cp -a "$FIX/cet-emulated" "$1"
	printf '0::/system.slice/ssh.service\n' >"$1/3114/cgroup"
	printf '0::/user.slice/user-0.slice/session-3.scope\n' >"$1/4002/cgroup"
	# cgroup v1 (hybrid): the unified line is "/", name=systemd has the path
	printf '9:name=systemd:/system.slice/nginx.service\n1:cpu:/\n0::/\n' >"$1/3116/cgroup"
	printf '0::/system.slice/docker-1234.scope/init.scope\n' >"$1/4005/cgroup"
	printf '0::%s\n' "$2" >"$1/4003/cgroup"
}

@test "audit: UNIT names the systemd unit from the cgroup, so services without shadow stacks can be listed" {
	local root=$BATS_TEST_TMPDIR/proc
	unit_tree "$root" /system.slice
	run --separate-stderr "$CETCTL" --proc-root "$root" audit -J -o PID,UNIT
	echo "$output"
	[ "$status" -eq 0 ]
	u() { jq -r --argjson p "$1" '.processes[] | select(.pid == $p) | .unit' <<<"$output"; }
	[ "$(u 3114)" = ssh.service ]
	[ "$(u 4002)" = session-3.scope ]
	[ "$(u 3116)" = nginx.service ]
	[ "$(u 4005)" = init.scope ]
	[ "$(u 4003)" = system.slice ]
	[ "$(u 3115)" = null ]
	# the question a sysadmin asks: which services run without a locked shadow stack
	run --separate-stderr "$CETCTL" --proc-root "$root" audit -n --raw -o UNIT,PID --require shstk,locked
	[ "$status" -eq 1 ]
	grep -qx 'nginx.service 3116' <<<"$output"
	! grep -q '^ssh.service ' <<<"$output" || false
}

@test "audit: --unit selects by systemd unit: a bare name means NAME.service, patterns as systemctl takes them" {
	local root=$BATS_TEST_TMPDIR/proc
	unit_tree "$root" /system.slice/sshd-keygen.service
	run --separate-stderr "$CETCTL" --proc-root "$root" audit -n --raw -o PID,UNIT --unit ssh,nginx.service
	echo "$output"; echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '3114 ssh.service\n3116 nginx.service')" ]
	run --separate-stderr "$CETCTL" --proc-root "$root" audit -n --raw -o PID --unit '*.scope'
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '4002\n4005')" ]
	run --separate-stderr "$CETCTL" --proc-root "$root" audit -n --raw -o PID --unit 'ssh*'
	[ "$output" = "$(printf '3114\n4003')" ]
	# the policy over the selection only; a selection that matches nothing fails closed
	run --separate-stderr "$CETCTL" --proc-root "$root" audit -n --raw -o PID,UNIT --unit nginx --require shstk
	echo "$output"; echo "$stderr"
	[ "$status" -eq 1 ]
	[ "$output" = "3116 nginx.service" ]
	run --separate-stderr "$CETCTL" --proc-root "$root" audit --unit no-such --require shstk
	echo "$stderr"
	[ "$status" -eq 3 ]
	run --separate-stderr "$CETCTL" --proc-root "$root" audit --unit ''
	[ "$status" -eq 1 ]
	[[ $stderr == "cetctl: audit: --unit: "* ]]
}
