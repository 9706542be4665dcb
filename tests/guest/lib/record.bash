# shellcheck shell=bash
# Record /proc for the host tests, over the console (the only way out of the
# guest): "# REC-FILE path base64" / "# REC-LINK path target" / "# REC-ROLE
# role pid" lines on the TAP stream (fd 3), which
# tests/host/fixtures/extract-guest-recording.sh turns back into a tree for
# `cetctl --proc-root`. The same files as tests/host/fixtures/record-proc.sh.

emit() {	# emit RELPATH FILE
	local data
	data=$(base64 -w0 < "$2" 2>/dev/null) || return 0
	echo "# REC-FILE $1 $data" >&3
}

# record_pid ROLE PID. Of the environment only GLIBC_TUNABLES is kept (the
# rest is nobody's business): an empty environ means the process had none.
record_pid() {
	local role=$1 pid=$2 f t tid env=$BATS_TEST_TMPDIR/environ.$2
	for f in status stat comm maps smaps; do emit "$pid/$f" "/proc/$pid/$f"; done
	if grep -z '^GLIBC_TUNABLES=' "/proc/$pid/environ" >"$env" 2>/dev/null || [[ -r /proc/$pid/environ ]]; then
		emit "$pid/environ" "$env"
	fi
	t=$(readlink "/proc/$pid/exe" 2>/dev/null) && echo "# REC-LINK $pid/exe $t" >&3
	for t in "/proc/$pid"/task/*; do
		tid=${t##*/}
		emit "$pid/task/$tid/status" "$t/status"
		emit "$pid/task/$tid/stat" "$t/stat"
	done
	echo "# REC-ROLE $role $pid" >&3
}
