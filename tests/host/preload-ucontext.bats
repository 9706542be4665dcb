#!/usr/bin/env bats
# libcetctl-preload.so's ucontext functions on the host, where no shadow stack is
# active (RDSSP reads 0): they must be interposed and be an exact pass-through to
# glibc's, for every use the guest suite makes of them under a real shadow stack
# (tests/guest/preload-ucontext.bats, Bochs tier, where the shadow-stack path runs).
# The faked-SSP build (CETCTL_PRELOAD_FAKE_SSP) keeps ucontext a pass-through while
# setjmp/longjmp take their shadow-stack path: longjmps between contexts then go
# through the landing pad.

setup_file() {
	export UC=$BATS_FILE_TMPDIR/uc_shstk FAKE=$BATS_FILE_TMPDIR/fake-ssp.so
	gcc -O2 -fcf-protection=full -pthread -o "$UC" \
		"$BATS_TEST_DIRNAME/../guest/helpers/uc_shstk.c"
	gcc -O2 -shared -fPIC -fcf-protection=full -DCETCTL_PRELOAD_FAKE_SSP \
		-I"$BATS_TEST_DIRNAME/../../src/lib" -o "$FAKE" "$BATS_TEST_DIRNAME"/../../src/preload/*.c -ldl
}

setup() {
	CETCTL=${CETCTL:-$BATS_TEST_DIRNAME/../../build/cetctl}
	BUILD=${CETCTL_BUILD:-$(dirname "$CETCTL")}
	LIB=$BUILD/libcetctl-preload.so
	[ -f "$LIB" ] || { echo "preload library not built: $LIB"; return 1; }
}

# every mode of the helper, with library $1 (empty: none); prints what it saw
every_mode() {
	local lib=$1 m
	while read -r m; do
		# shellcheck disable=SC2086  # the mode's words
		run env LD_PRELOAD="$lib" "$UC" $m
		echo "[$lib] $m: status $status: $output"
		[ "$status" -eq 0 ] || return 1
		case $m in
		pingpong*) [ "$output" = "pingpong: ok rounds=1000 trace=abababab ssp=zero ss=0/0" ] ;;
		link) [ "$output" = "link: ok args=8 chain=2 ssp=zero ss=0" ] ;;
		nested) [ "$output" = "nested: ok ssp=zero ss=0" ] ;;
		longjmp) [ "$output" = "longjmp: ok out-of-context=1 coroutines=3x50 ssp=zero ss=0" ] ;;
		signal) [ "$output" = "signal: ok swaps-in-handler=5 ssp=zero" ] ;;
		migrate) [ "$output" = "migrate: ok ss=0" ] ;;
		churn*) [[ "$output" == "churn: ok 100000 "*" contexts, most ss VMAs=0, at the end=0" ]] ;;
		esac || return 1
	done <<'EOF'
pingpong 1000
link
nested
longjmp
signal
migrate
churn 100000 finish
churn 100000 unstarted
churn 100000 unmapped
EOF
}

@test "preload: exports makecontext, getcontext, setcontext, swapcontext (and munmap)" {
	# munmap: while contexts exist, unmapping a context's stack gives its
	# shadow stack up (tests/guest/preload-ucontext.bats)
	local syms s
	syms=$(nm -D --defined-only "$LIB" | awk '{print $3}')
	for s in makecontext getcontext setcontext swapcontext munmap; do
		grep -qx "$s" <<<"$syms" || { echo "missing $s"; return 1; }
	done
}

@test "preload: a ucontext program's calls bind to the library" {
	run env LD_BIND_NOW=1 LD_DEBUG=bindings LD_PRELOAD="$LIB" "$UC" link
	local s
	for s in makecontext getcontext setcontext swapcontext munmap; do
		[[ "$output" == *"to $LIB [0]: normal symbol \`$s'"* ]] || { echo "$s not bound to the library"; return 1; }
	done
}

@test "preload: the ucontext program is right on its own (the reference)" {
	every_mode ""
}

@test "preload: ucontext is a pass-through without a shadow stack (ping-pong, uc_link, nested, longjmp, 100,000 contexts)" {
	every_mode "$LIB"
}

@test "preload: the same with the faked-SSP build (longjmps between contexts through the landing pad)" {
	every_mode "$FAKE"
}

@test "preload: makecontext forwards every argument, past the sixth too, and uc_link" {
	# link: eight arguments, the last two on the new stack, and a uc_link chain of
	# two made contexts; a wrong pass-through (registers clobbered before the tail
	# jump) shows as a wrong value
	run env LD_PRELOAD="$LIB" "$UC" link
	[ "$status" -eq 0 ] && [ "$output" = "link: ok args=8 chain=2 ssp=zero ss=0" ]
}

@test "preload: no shadow stack, so no shadow stack to map: enomem runs the context" {
	# the guest's enomem case fails for want of a shadow stack; without one the
	# library must not try (and the program sees glibc's behaviour)
	run env LD_PRELOAD="$LIB" "$UC" enomem
	[ "$status" -eq 3 ]
	[[ "$output" == *"enomem: the context ran"* ]]
	[[ "$output" != *libcetctl-preload* ]]
}
