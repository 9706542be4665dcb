#!/usr/bin/env bats
# cetctl run's exit status, row by row as cetctl-run(1) states it (issue 32,
# defect 6): every row of the man page's EXIT STATUS list has a case here
# that produces it, and every case's row is in the man page.

load helpers

setup() {
	require_faults
}

MAN=$BATS_TEST_DIRNAME/../../man/cetctl-run.1

# The tags of the EXIT STATUS list (the line after each .TP), as written.
man_rows() {
	sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$MAN" | awk 'p { print; p = 0 } /^\.TP/ { p = 1 }'
}

# How "$@" ended, seen by its parent, and how many lines it wrote to
# stderr: "exit N lines L" or "signal N lines L"; its stderr in TMP/err.
ended() {
	timeout -s KILL 60 perl -e 'system { $ARGV[0] } @ARGV; my $s = $?;
		printf(($s & 127) ? "signal %d" : "exit %d", ($s & 127) ? $s & 127 : $s >> 8)' -- \
		"$@" 2>"$TMP/err"
	echo " lines $(wc -l < "$TMP/err")"
}

# The cases: the man page's row, the verdict wanted ("exit N lines L"),
# the stderr pattern wanted (a glob; "" none), the command.
CASES=(
	'.I N'						'exit 0 lines 0'	''	'run --trace-only true'
	'.I N'						'exit 42 lines 0'	''	'run --trace-only sh -c "exit 42"'
	'.I N'						'exit 125 lines 0'	''	'run --trace-only sh -c "exit 125"'
	'.I N'						'exit 255 lines 0'	''	'run sh -c "exit 255"'
	'.B 125'					'exit 125 lines 2'	'*Try*'	'run --no-such-option true'
	'.B 125'					'exit 125 lines 1'	'*not started'	'run --shstk --method=ptrace true'
	'.B 125'					'exit 125 lines 1'	'*start-up code ran*its entry point did not*'	'glibc run -q --shstk --method=glibc /bin/true'
	'.B 125'					'exit 125 lines 1'	'*pid namespace*'	'nofork run --trace-only true'
	'.B 126'					'exit 126 lines 1'	'*'	'run /etc/hostname'
	'.B 127'					'exit 127 lines 1'	'*not found*'	'run cetctl-no-such-program'
	'.RI "killed by signal " N " (a shell shows 128+" N )'	'signal 15 lines 0'	''	'run --trace-only sh -c "kill -TERM \$\$"'
	'.RI "killed by signal " N " (a shell shows 128+" N )'	'signal 15 lines 0'	''	'subreaper run --trace-only sh -c "kill -TERM \$\$"'
	'.B killed by SIGKILL (a shell shows 137)'	'signal 9 lines 0'	''	'run --trace-only sh -c "kill -KILL \$\$"'
	'.B killed by SIGKILL (a shell shows 137)'	'signal 9 lines 0'	''	'fault=exec-event:kill run --trace-only true'
	'.RI 128+ N " as PID 1"'			'exit 143 lines 0'	''	'pid1 run --trace-only sh -c "kill -TERM \$\$"'
	'.RI 128+ N " as PID 1"'			'exit 137 lines 0'	''	'pid1 run --trace-only sh -c "kill -KILL \$\$"'
)

# One case's command line, as words: the prefix words say how cetctl
# runs (glibc: pretending glibc >= 2.39; nofork: under unshare -p without
# --fork; subreaper; pid1: as PID 1 of a pid namespace; fault=F).
case_argv() {
	local -a w
	eval "w=($1)"
	case ${w[0]} in
	glibc)		argv=(env CETCTL_FAULT_GLIBC=1 "$FAULTS" "${w[@]:1}") ;;
	# (LeakSanitizer's check at exit hangs in that namespace: an ASan
	# build's artifact, not cetctl's; off for this case)
	nofork)		argv=(env ASAN_OPTIONS=detect_leaks=0 unshare -p "$CETCTL" "${w[@]:1}") ;;
	subreaper)	argv=(perl "$HOST_TESTS/tools/sigexec.pl" --subreaper -- "$CETCTL" "${w[@]:1}") ;;
	pid1)		argv=(unshare -pf --mount-proc "$CETCTL" "${w[@]:1}") ;;
	fault=*)	argv=(env "CETCTL_FAULT=${w[0]#fault=}" "$FAULTS" "${w[@]:1}") ;;
	*)		argv=("$CETCTL" "${w[@]}") ;;
	esac
}

@test "run exit status: every row of the man page is tested, every case is a row" {
	local row i found
	mapfile -t rows < <(man_rows)
	[ "${#rows[@]}" -ge 6 ] || { echo "man page rows: ${rows[*]}"; return 1; }
	for row in "${rows[@]}"; do
		found=0
		for (( i = 0; i < ${#CASES[@]}; i += 4 )); do
			[ "${CASES[i]}" = "$row" ] && found=1
		done
		[ "$found" -eq 1 ] || { echo "no case for the man page's row: $row"; return 1; }
	done
	for (( i = 0; i < ${#CASES[@]}; i += 4 )); do
		printf '%s\n' "${rows[@]}" | grep -qxF -- "${CASES[i]}" ||
			{ echo "the man page has no row: ${CASES[i]}"; return 1; }
	done
}

@test "run exit status: each case ends as its row says" {
	local i got argv
	for (( i = 0; i < ${#CASES[@]}; i += 4 )); do
		case_argv "${CASES[i + 3]}"
		case ${CASES[i + 3]} in
		nofork*|pid1*) unshare -pf true 2>/dev/null || { echo "skipped: ${CASES[i + 3]}"; continue; } ;;
		*--shstk*--method=ptrace*)
			grep -qw user_shstk /proc/cpuinfo && { echo "skipped (CET here): ${CASES[i + 3]}"; continue; } ;;
		esac
		got=$(ended "${argv[@]}")
		echo "${CASES[i]} | ${CASES[i + 3]}: $got: $(cat "$TMP/err")"
		[ "$got" = "${CASES[i + 1]}" ] || { echo "  wanted: ${CASES[i + 1]}"; return 1; }
		# shellcheck disable=SC2053  # a glob, on purpose
		[[ -z ${CASES[i + 2]} || $(cat "$TMP/err") == ${CASES[i + 2]} ]] ||
			{ echo "  stderr wanted: ${CASES[i + 2]}"; return 1; }
	done
}
