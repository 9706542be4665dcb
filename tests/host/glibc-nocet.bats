#!/usr/bin/env bats
# A glibc recent enough to manage shadow stacks (>= 2.39) but built without CET
# support, as Debian 13's glibc 2.41 is: it never enables them, so cetctl must not
# count on it. Stood in for here by this host's glibc (unmarked, as Debian's are)
# with gnu_get_libc_version() saying 2.41 (a preloaded shim in cetctl itself).
load helpers

setup_file() {
	require_cetctl
	export SHIM=$BATS_FILE_TMPDIR/libc-version-241.so
	printf 'const char *gnu_get_libc_version(void) { return "2.41"; }\n' > "$BATS_FILE_TMPDIR/v.c"
	cc -shared -fPIC -o "$SHIM" "$BATS_FILE_TMPDIR/v.c"
	libc=$(ldd "$CETCTL" | awk '$1 == "libc.so.6" { print $3 }')
	export LIBC=$libc
	# an ASan-built cetctl: its runtime must come first in the library list
	ASANLIB=$(ldd "$CETCTL" | awk '$1 ~ /^libasan\.so/ { print $3 }')
	export ASANLIB PRELOAD_SHIM=${ASANLIB:+$ASANLIB:}$SHIM
}

setup() {
	require_cetctl
	# the stand-in holds only where the real C library is unmarked
	marked=$("$CETCTL" elf -n --raw -o SHSTK "$LIBC" 2>/dev/null)
	[ "$marked" = no ] || skip "this host's $LIBC is marked SHSTK (a glibc built with CET)"
}

value() {	# value NAME: the VALUE of row NAME of `cetctl info -J` in $output
	jq -r --arg n "$1" '.info[] | select(.name == $n) | .value' <<<"$output"
}

detail() {	# detail NAME: its DETAIL
	jq -r --arg n "$1" '.info[] | select(.name == $n) | .detail' <<<"$output"
}

@test "info: glibc 2.41 built without CET cannot enable shadow stacks itself" {
	run env LD_PRELOAD="$PRELOAD_SHIM" "$CETCTL" info -J
	echo "$output"
	[ "$(value glibc)" = 2.41 ]
	[ "$(value glibc-can-enable)" = no ]
	[[ $(detail glibc-can-enable) == "this glibc was built without CET"* ]]
	# the real version on the same host: the older reason
	run "$CETCTL" info -J
	[[ $(detail glibc-can-enable) == "glibc < 2.39 "* ]]
}

@test "run --method=glibc: refused for glibc 2.41 built without CET, and says why" {
	run env LD_PRELOAD="$PRELOAD_SHIM" "$CETCTL" run -q --shstk --method=glibc -- true
	echo "$output"
	[ "$status" -eq 125 ]
	[[ $output == *"--method=glibc needs a glibc >= 2.39 built with CET"* ]]
	[[ $output == *"this is glibc 2.41, built without CET"* ]]
}

@test "run: with glibc 2.41 built without CET the program gets the preload library" {
	require_trusted_preload
	# an ASan-built cetctl needs libasan first in LD_PRELOAD, and the program
	# inherits that list: with our library put first, ASan refuses to start it
	[[ -z $ASANLIB ]] || skip "ASan build: the program would inherit libasan in LD_PRELOAD behind ours"
	# --trace-only takes the ptrace path, which loads the preload library unless
	# cetctl believes glibc keeps longjmp consistent itself; the program's own
	# maps say (the library takes itself out of LD_PRELOAD at once)
	maps='while read -r l; do case $l in *libcetctl-preload.so) echo preloaded; break ;; esac; done < /proc/$$/maps'
	run env LD_PRELOAD="$PRELOAD_SHIM" "$CETCTL" run --trace-only -- sh -c "$maps"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = preloaded ]
}
