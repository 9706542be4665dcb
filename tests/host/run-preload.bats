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
	load helpers
	CETCTL_BUILD=$BUILD require_trusted_preload
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
		/* offsets 80..103 are where the library would record the SSP */
		for (i = 80; i < 104; i++)
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

@test "preload: a longjmp nested inside siglongjmp lands right (each record named by its longjmp, faked SSP)" {
	# A handler runs inside glibc's siglongjmp (the mask it restores unblocks
	# a pending signal) and does its own setjmp/longjmp. With one landing
	# record per thread, the outer longjmp found the inner one's record and
	# jumped into a dead frame (issue 12, defect 6).
	local fake=$BATS_TEST_TMPDIR/fake-ssp.so
	gcc -O2 -shared -fPIC -fcf-protection=full -DCETCTL_PRELOAD_FAKE_SSP \
		-o "$fake" "$BATS_TEST_DIRNAME/../../src/preload/preload.c" -ldl
	gcc -O2 -o "$BATS_TEST_TMPDIR/nest" "$BATS_TEST_DIRNAME/tools/preload-nest.c"
	run "$BATS_TEST_TMPDIR/nest"
	[ "$output" = "outer landed: rounds=3 inner=3" ]
	run env LD_PRELOAD="$fake" "$BATS_TEST_TMPDIR/nest"
	[ "$status" -eq 0 ]
	[ "$output" = "outer landed: rounds=3 inner=3" ]
}

@test "preload: escaped longjmps leave no record a later longjmp could land on (faked SSP)" {
	# Issue 31 (2a): a siglongjmp whose handler jumps elsewhere never lands,
	# and its landing record stayed. After 31 such escapes the record stack
	# was full, a nested longjmp overwrote the outer one's record, and the
	# outer longjmp landed at the other setjmp call of the same frame.
	local fake=$BATS_TEST_TMPDIR/fake-ssp.so n
	gcc -O2 -shared -fPIC -fcf-protection=full -DCETCTL_PRELOAD_FAKE_SSP \
		-I"$BATS_TEST_DIRNAME/../../src/lib" -o "$fake" "$BATS_TEST_DIRNAME"/../../src/preload/*.c -ldl
	gcc -O2 -o "$BATS_TEST_TMPDIR/escape" "$BATS_TEST_DIRNAME/tools/preload-escape.c"
	for n in 1 31 32 100 1000; do
		run "$BATS_TEST_TMPDIR/escape" "$n"
		[ "$output" = "escapes=$n landed_at=1 inner=1 same_sp=1" ] || { echo "plain: $output"; return 1; }
		run env LD_PRELOAD="$fake" "$BATS_TEST_TMPDIR/escape" "$n"
		[ "$status" -eq 0 ] && [ "$output" = "escapes=$n landed_at=1 inner=1 same_sp=1" ] ||
			{ echo "with the library, $n escapes: status $status: $output"; return 1; }
	done
}

@test "preload: not passed on to the program's descendants; other LD_PRELOAD entries stay" {
	# exec resets the shadow stack: descendants have nothing to gain, and a
	# 32-bit, ASan or set-user-ID child only trips over it (defect 6)
	run env LD_PRELOAD="$LIB" sh -c 'echo "[$LD_PRELOAD]"; grep -c libcetctl-preload /proc/$$/maps'
	[ "${lines[0]}" = "[]" ]
	[ "${lines[1]}" -ge 1 ]		# the program itself has it
	run env LD_PRELOAD="/nonexistent-cetctl.so $LIB:/nonexistent-cetctl2.so" \
		sh -c 'echo "[$LD_PRELOAD]"' 2>/dev/null
	[ "${lines[-1]}" = "[/nonexistent-cetctl.so:/nonexistent-cetctl2.so]" ]
}

@test "preload: an AddressSanitizer program is started without it" {
	echo 'int main(void) { return 3; }' > "$BATS_TEST_TMPDIR/asan.c"
	gcc -fsanitize=address -o "$BATS_TEST_TMPDIR/asan" "$BATS_TEST_TMPDIR/asan.c" 2>/dev/null ||
		skip "gcc cannot build ASan programs here"
	# before: the library came first and ASan refused to start
	CETCTL_PRELOAD=$LIB run "$CETCTL" run --trace-only "$BATS_TEST_TMPDIR/asan"
	[ "$status" -eq 3 ] || { echo "$output"; return 1; }
	[[ "$output" != *"ASan runtime does not come first"* ]]
}

# A directory tree under the (root-owned) build directory, for trust tests.
trust_dir() {
	TD=$(realpath "$(mktemp -d "$BUILD/preload-trust.XXXXXX")")
	chmod 755 "$TD"
}

teardown() {
	[ -z "${TD:-}" ] || rm -rf "$TD"
}

@test "preload: loaded only from a root-owned path nobody else can write" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to make files of another user"
	[ "$(stat -c %u "$BUILD")" -eq 0 ] || skip "the build directory is not root's"
	local probe='grep -q libcetctl-preload /proc/$$/maps && echo 1 || echo 0'
	trust_dir
	# root's own copy in root's own directory: used
	cp "$LIB" "$TD/libcetctl-preload.so"
	CETCTL_PRELOAD=$TD/libcetctl-preload.so run "$CETCTL" run --trace-only sh -c "$probe"
	[ "$status" -eq 0 ]
	[ "$output" = 1 ]
	# a copy another user owns: refused, said, not loaded (defect 5: root
	# loaded a library writable by nobody)
	cp "$LIB" "$TD/nobodys.so"
	chown 65534 "$TD/nobodys.so"
	CETCTL_PRELOAD=$TD/nobodys.so run "$CETCTL" run --trace-only sh -c "$probe"
	[ "${lines[-1]}" = 0 ] || { echo "$output"; return 1; }
	[[ "$output" == *"not using libcetctl-preload.so: $TD/nobodys.so is owned by uid 65534, not root"* ]]
	# group-writable, and a directory above writable by everyone: refused
	cp "$LIB" "$TD/groupw.so"
	chmod 664 "$TD/groupw.so"
	CETCTL_PRELOAD=$TD/groupw.so run "$CETCTL" run --trace-only sh -c "$probe"
	[ "${lines[-1]}" = 0 ]
	[[ "$output" == *"writable by its group"* ]]
	mkdir -m 777 "$TD/open"
	cp "$LIB" "$TD/open/lib.so"
	CETCTL_PRELOAD=$TD/open/lib.so run "$CETCTL" run --trace-only sh -c "$probe"
	[ "${lines[-1]}" = 0 ]
	[[ "$output" == *"$TD/open is writable by everyone"* ]]
	# a symbolic link is judged by where it leads
	ln -s "$TD/nobodys.so" "$TD/link.so"
	CETCTL_PRELOAD=$TD/link.so run "$CETCTL" run --trace-only sh -c "$probe"
	[ "${lines[-1]}" = 0 ]
}

@test "preload: a 32-bit or set-user-ID descendant starts without loader complaints" {
	local d out
	# issue 12, defect 6: inherited by every descendant, the library made
	# the loader of a 32-bit child print "wrong ELF class" and that of a
	# set-user-ID child refuse a preload outside the trusted directories
	gcc -m32 -o "$BATS_TEST_TMPDIR/exit7_32" -x c - <<<'int main(void) { return 7; }' 2>/dev/null ||
		skip "no 32-bit toolchain (gcc-multilib)"
	"$BATS_TEST_TMPDIR/exit7_32" || [ $? -eq 7 ] || skip "this kernel does not run 32-bit programs"
	run "$CETCTL" run --trace-only sh -c '"$0"; echo "rc=$?"' "$BATS_TEST_TMPDIR/exit7_32"
	[ "$status" -eq 0 ] && [ "$output" = "rc=7" ] || { echo "32-bit: $output"; return 1; }
	[ "$(id -u)" -eq 0 ] || skip "needs root for a set-user-ID file of another user (32-bit case passed)"
	d=$(mktemp -d /run/cetctl-preload-suid.XXXXXX)
	chmod 755 "$d"
	cp /bin/true "$d/suid"
	chown 65534 "$d/suid"
	chmod 4755 "$d/suid"
	run "$CETCTL" run --trace-only sh -c '"$0"; echo "rc=$?"' "$d/suid"
	out=$output
	rm -rf "$d"
	[ "$status" -eq 0 ] && [ "$out" = "rc=0" ] || { echo "set-user-ID: $out"; return 1; }
}

# A library whose constructor, wherever it is loaded, appends "evil PID" to
# the file $1 (any user may write it): the attacker's.
build_evil() {
	cat > "$BATS_TEST_TMPDIR/evil.c" <<EOC
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void evil(void)
{
	char line[64];
	int fd = open("$1", O_WRONLY | O_CREAT | O_APPEND, 0666);
	int n = snprintf(line, sizeof(line), "evil %d\n", (int)getpid());

	if (fd >= 0 && write(fd, line, (size_t)n) < 0)
		_exit(99);
}
EOC
	gcc -shared -fPIC -o "$2" "$BATS_TEST_TMPDIR/evil.c"
}

@test "preload: a path the loader would split or expand is refused, never misread (issue 32, 1)" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to make files of another user"
	[ "$(stat -c %u "$BUILD")" -eq 0 ] || skip "the build directory is not root's"
	local probe='grep -q libcetctl-preload /proc/$$/maps && echo 1 || echo 0' evil d
	trust_dir
	# cetctl installed (relocatable: the library next to the binary) under
	# a directory with a space; run by root from a directory where another
	# user wrote tools/libcetctl-preload.so. ld.so splits LD_PRELOAD at
	# spaces and colons: "$TD/cet" and "tools/libcetctl-preload.so", the
	# second relative to the working directory.
	mkdir -p "$TD/cet tools" "$BATS_TEST_TMPDIR/evil/tools"
	cp "$CETCTL" "$LIB" "$TD/cet tools/"
	evil=$BATS_TEST_TMPDIR/evil/log
	build_evil "$evil" "$BATS_TEST_TMPDIR/evil/tools/libcetctl-preload.so"
	chown -R 65534 "$BATS_TEST_TMPDIR/evil"
	chmod 0777 "$BATS_TEST_TMPDIR/evil"
	cd "$BATS_TEST_TMPDIR/evil"
	run "$TD/cet tools/cetctl" run --trace-only -- sh -c "$probe"
	[ ! -e "$evil" ] || { echo "another user's library ran in root's program: $(cat "$evil")"; return 1; }
	[ "$status" -eq 0 ] && [ "${lines[-1]}" = 0 ] || { echo "$output"; return 1; }
	[[ "$output" == *"not using libcetctl-preload.so: $TD/cet tools/libcetctl-preload.so: "*"space"* ]] ||
		{ echo "$output"; return 1; }
	# the same for CETCTL_PRELOAD, and for a colon, a tab, or a '$' the
	# loader would expand ($ORIGIN, $LIB, $PLATFORM)
	for d in "cet tools" "a:b" "$(printf 'a\tb')" 'a$ORIGIN' 'b$LIB'; do
		mkdir -p "$TD/$d"
		cp "$LIB" "$TD/$d/lib.so"
		CETCTL_PRELOAD="$TD/$d/lib.so" run "$CETCTL" run --trace-only -- sh -c "$probe"
		[ "$status" -eq 0 ] && [ "${lines[-1]}" = 0 ] || { echo "[$d] $output"; return 1; }
		[[ "$output" == *"not using libcetctl-preload.so: "*"LD_PRELOAD"* ]] || { echo "[$d] $output"; return 1; }
	done
	[ ! -e "$evil" ]
}

# An AddressSanitizer program exiting 3, in $BATS_TEST_TMPDIR/asan.
build_asan() {
	echo 'int main(void) { return 3; }' > "$BATS_TEST_TMPDIR/asan.c"
	gcc -fsanitize=address -o "$BATS_TEST_TMPDIR/asan" "$BATS_TEST_TMPDIR/asan.c" 2>/dev/null ||
		skip "gcc cannot build ASan programs here"
}

@test "preload: not added for a static program, which never loads it; its ASan child starts (issue 31, b)" {
	build_asan
	# a static program that prints its LD_PRELOAD, then execs its arguments
	cat > "$BATS_TEST_TMPDIR/senv.c" <<'EOC'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	const char *p = getenv("LD_PRELOAD");

	printf("[%s]\n", p ? p : "");
	fflush(stdout);
	if (argc > 1)
		execv(argv[1], argv + 1);
	return 0;
}
EOC
	gcc -static -O2 -o "$BATS_TEST_TMPDIR/senv" "$BATS_TEST_TMPDIR/senv.c" 2>/dev/null ||
		skip "gcc cannot link static programs here (no libc.a)"
	CETCTL_PRELOAD=$LIB run "$CETCTL" run --trace-only "$BATS_TEST_TMPDIR/senv" "$BATS_TEST_TMPDIR/asan"
	[ "${lines[0]}" = "[]" ] || { echo "static program got LD_PRELOAD: $output"; return 1; }
	[ "$status" -eq 3 ] || { echo "ASan child: $status: $output"; return 1; }
	# the caller's own LD_PRELOAD is the program's, unchanged
	LD_PRELOAD=/nonexistent-cetctl.so CETCTL_PRELOAD=$LIB run "$CETCTL" run --trace-only \
		"$BATS_TEST_TMPDIR/senv" 2>/dev/null
	[ "${lines[-1]}" = "[/nonexistent-cetctl.so]" ] || { echo "$output"; return 1; }
	# (the warnings are the plan's: tests/host/unit/test-run-plan.c)
	# a dynamic program still gets it (and takes it out itself)
	CETCTL_PRELOAD=$LIB run "$CETCTL" run --trace-only sh -c 'grep -c libcetctl-preload /proc/$$/maps'
	[ "${lines[-1]}" -ge 1 ] || { echo "$output"; return 1; }
}

@test "preload: a caller's sanitizer runtime in LD_PRELOAD stays first, ours is not added (issue 31, c)" {
	local asan
	asan=$(realpath -e "$(gcc -print-file-name=libasan.so)" 2>/dev/null) || skip "no libasan here"
	# ASan refuses to start unless its runtime comes first among the loaded objects
	run --separate-stderr env LD_PRELOAD="$asan" ASAN_OPTIONS=detect_leaks=0 CETCTL_PRELOAD="$LIB" \
		"$CETCTL" run --trace-only sh -c 'echo "[$LD_PRELOAD]"; grep -c libcetctl-preload /proc/$$/maps; :'
	# shellcheck disable=SC2154  # stderr: set by bats' run --separate-stderr
	[ "$status" -eq 0 ] || { echo "$status: $output $stderr"; return 1; }
	[ "${lines[0]}" = "[$asan]" ] && [ "${lines[1]}" = 0 ] || { echo "$output $stderr"; return 1; }
	# behind another entry (split at a space) too: the list is left as it is
	run --separate-stderr env LD_PRELOAD="/nonexistent-cetctl.so $asan" ASAN_OPTIONS=detect_leaks=0 \
		CETCTL_PRELOAD="$LIB" "$CETCTL" run --trace-only sh -c 'echo "[$LD_PRELOAD]"'
	[ "${lines[-1]}" = "[/nonexistent-cetctl.so $asan]" ] || { echo "$output $stderr"; return 1; }
}
