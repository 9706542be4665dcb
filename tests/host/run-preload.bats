#!/usr/bin/env bats
# libcetctl-preload.so on the host, where no shadow stack is active: it must
# interpose the setjmp/longjmp family and be an exact pass-through (RDSSP
# reads 0). Its shadow-stack work is checked in the Bochs tier
# (tests/guest/cetctl-run.bats).

setup_file() {
	local src=$BATS_TEST_DIRNAME/../guest/helpers/run_longjmp.c
	export LJ_FORT=$BATS_FILE_TMPDIR/run_longjmp LJ_PLAIN=$BATS_FILE_TMPDIR/run_longjmp_plain
	gcc -O2 -D_FORTIFY_SOURCE=2 -fcf-protection=full -o "$LJ_FORT" "$src"
	gcc -O2 -U_FORTIFY_SOURCE -fcf-protection=full -o "$LJ_PLAIN" "$src"
}

setup() {
	CETCTL=${CETCTL:-$BATS_TEST_DIRNAME/../../build/cetctl}
	BUILD=${CETCTL_BUILD:-$(dirname "$CETCTL")}
	LIB=$BUILD/libcetctl-preload.so
	[ -f "$LIB" ] || { echo "preload library not built: $LIB"; return 1; }
}

@test "preload: built next to cetctl, exports the whole setjmp/longjmp family" {
	local syms
	syms=$(nm -D --defined-only "$LIB" | awk '{print $3}')
	for s in setjmp _setjmp sigsetjmp __sigsetjmp longjmp _longjmp siglongjmp __longjmp_chk; do
		grep -qx "$s" <<<"$syms" || { echo "missing $s"; return 1; }
	done
}

@test "preload: marked IBT and SHSTK (its code is shadow-stack clean)" {
	run readelf -n "$LIB"
	[[ "$output" == *"x86 feature: IBT, SHSTK"* ]]
}

@test "preload: every flavour still jumps correctly without a shadow stack" {
	local b
	for b in "$LJ_FORT" "$LJ_PLAIN"; do
		run env LD_PRELOAD="$LIB" "$b" 3
		[ "$status" -eq 0 ] || { echo "$b: $output"; return 1; }
		[ "$(grep -c '^ok .* ssp=zero$' <<<"$output")" -eq 15 ]
		[[ "$output" == *"all returned"* ]]
	done
}

@test "preload: the program's calls bind to the library (fortified and plain)" {
	run env LD_DEBUG=bindings LD_PRELOAD="$LIB" "$LJ_FORT"
	[[ "$output" == *"to $LIB [0]: normal symbol \`_setjmp'"* ]]
	[[ "$output" == *"to $LIB [0]: normal symbol \`__sigsetjmp'"* ]]
	[[ "$output" == *"to $LIB [0]: normal symbol \`__longjmp_chk'"* ]]
	run env LD_DEBUG=bindings LD_PRELOAD="$LIB" "$LJ_PLAIN"
	[[ "$output" == *"to $LIB [0]: normal symbol \`longjmp'"* ]]
	[[ "$output" == *"to $LIB [0]: normal symbol \`siglongjmp'"* || "$output" == *"to $LIB [0]: normal symbol \`longjmp'"* ]]
}

@test "preload: leaves jmp_buf bytes alone when no shadow stack is active" {
	# A buffer pre-filled with a pattern: only glibc's own fields may change.
	cat > "$BATS_TEST_TMPDIR/buf.c" <<'EOF'
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
static jmp_buf jb;
int main(void)
{
	unsigned char *b = (unsigned char *)jb;
	size_t i;
	memset(jb, 0xa5, sizeof(jb));
	if (setjmp(jb) == 0) {
		/* offsets 80..95 are where the library would record the SSP */
		for (i = 80; i < 96; i++)
			if (b[i] != 0xa5) { printf("touched %zu\n", i); return 1; }
		longjmp(jb, 1);
	}
	printf("untouched\n");
	return 0;
}
EOF
	gcc -O2 -o "$BATS_TEST_TMPDIR/buf" "$BATS_TEST_TMPDIR/buf.c"
	run env LD_PRELOAD="$LIB" "$BATS_TEST_TMPDIR/buf"
	[ "$status" -eq 0 ]
	[ "$output" = untouched ]
}

@test "preload: harmless for ordinary programs (shell, perl eval/die, dash error path)" {
	run env LD_PRELOAD="$LIB" perl -e 'eval { die "x\n" }; print "ok\n"'
	[ "$output" = ok ]
	if command -v dash >/dev/null; then
		run env LD_PRELOAD="$LIB" dash -c 'nosuchcommand-cetctl 2>/dev/null; echo after'
		[ "$output" = after ]
	fi
}

@test "preload: its constructor makes no failing dlsym() (the loader would longjmp internally)" {
	# Under a shadow stack with glibc < 2.39 a failing dlsym faults inside ld.so
	# (its error path longjmps, unseen by the library); measured on emulated CET
	# with "sigsetjmp", which glibc does not export. ld.so's debug output names
	# every failed lookup.
	run env LD_DEBUG=symbols LD_PRELOAD="$LIB" /bin/true
	[ "$status" -eq 0 ]
	[[ "$output" == *"symbol=__sigsetjmp;"* ]]	# the lookups are really logged
	if grep -i 'symbol lookup error\|undefined symbol' <<<"$output"; then
		return 1
	fi
}

@test "preload: the shadow-stack path (buffer copy, landing pad) works, with a faked SSP" {
	# Built with CETCTL_PRELOAD_FAKE_SSP, RDSSP reads a constant and INCSSP is a
	# no-op: every longjmp takes the path it takes under a real shadow stack --
	# glibc jumps to the landing pad through a pointer-mangled copy of the buffer,
	# and the pad continues at the caller's resume address.
	local fake=$BATS_TEST_TMPDIR/fake-ssp.so
	gcc -O2 -shared -fPIC -fcf-protection=full -DCETCTL_PRELOAD_FAKE_SSP \
		-o "$fake" "$BATS_TEST_DIRNAME/../../src/preload/preload.c" -ldl
	local b
	for b in "$LJ_FORT" "$LJ_PLAIN"; do
		run env LD_PRELOAD="$fake" "$b" 4
		[ "$status" -eq 0 ] || { echo "$b: $output"; return 1; }
		[ "$(grep -c '^ok .* ssp=zero$' <<<"$output")" -eq 20 ]
	done
	# the path is really taken: setjmp stamps the buffer
	cat > "$BATS_TEST_TMPDIR/stamp.c" <<'EOF2'
#include <setjmp.h>
#include <stdio.h>
static jmp_buf jb;
int main(void)
{
	volatile int n = 0;
	if (setjmp(jb) < 3) {
		n++;
		longjmp(jb, n + 1);
	}
	printf("stamp=%lx n=%d\n", ((unsigned long *)jb)[10], n);
	return 0;
}
EOF2
	gcc -O2 -o "$BATS_TEST_TMPDIR/stamp" "$BATS_TEST_TMPDIR/stamp.c"
	run env LD_PRELOAD="$fake" "$BATS_TEST_TMPDIR/stamp"
	[ "$output" = "stamp=7ff0000ff000 n=2" ]
	run env LD_PRELOAD="$fake" perl -e 'for (1..3) { eval { die "x\n" } } print "ok\n"'
	[ "$output" = ok ]
	run env LD_PRELOAD="$fake" dash -c 'cd /nonexistent-cetctl 2>/dev/null; echo after'
	[ "$output" = after ]
}
