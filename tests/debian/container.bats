#!/usr/bin/env bats
# A container's entrypoint (issue 20, case 3): cetctl run as PID 1 of a new pid
# namespace, started by a systemd unit, with a program that forks a worker and waits
# for it. The program's wait() must reap its own worker (not cetctl's tracer, which
# an init would otherwise hand it), and the worker's status must reach systemd.
# In QEMU (no CET) `run --trace-only` drives the same start-up; in Bochs `--shstk`.
load lib

UNIT=/run/systemd/system/cetctl-container-test.service
FW=/run/cetctl-container-fw.pl

setup_file() {
	# forks a worker that exits 3, waits for any child, exits with the worker's
	# status; a wait() that reaps something else exits 9 and says what
	cat > "$FW" <<'PL'
my $w = fork // die "fork: $!\n";
if (!$w) { select(undef, undef, undef, 0.2); exit 3 }
my $r = wait;
if ($r != $w) { print STDERR "wait() reaped $r, not the worker $w\n"; exit 9 }
exit($? >> 8);
PL
}

teardown_file() {
	systemctl stop cetctl-container-test.service 2>/dev/null || true
	rm -f "$UNIT" "$FW"
	systemctl daemon-reload
}

# container_unit PREFIX...: the oneshot unit running PREFIX perl $FW in a pid namespace
container_unit() {
	printf '[Service]\nType=oneshot\nExecStart=/usr/bin/unshare -pf --mount-proc %s /usr/bin/perl %s\n' \
		"$*" "$FW" > "$UNIT"
	systemctl daemon-reload
	systemctl reset-failed cetctl-container-test.service 2>/dev/null || true
}

@test "container: the entrypoint alone (no cetctl) exits with its worker's 3" {
	container_unit ""
	run systemctl start cetctl-container-test.service
	echo "status=$(prop cetctl-container-test.service ExecMainStatus)"
	[ "$(prop cetctl-container-test.service ExecMainStatus)" = 3 ]
}

@test "container: cetctl run as PID 1 of the pid namespace, the worker's 3 reaches systemd" {
	local mode=--trace-only
	has_cet && mode=--shstk
	container_unit "/usr/bin/cetctl run $mode --"
	run systemctl start cetctl-container-test.service
	journalctl -b -u cetctl-container-test.service --no-pager | tail -n 5
	echo "status=$(prop cetctl-container-test.service ExecMainStatus)"
	[ "$(prop cetctl-container-test.service ExecMainStatus)" = 3 ]
	! journalctl -b -u cetctl-container-test.service --no-pager | grep -q 'reaped'
}
