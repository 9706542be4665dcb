#!/usr/bin/env bats
# cetctl map on the host. The host kernel/CPU cannot map shadow stacks, so:
#  - the real failure path is checked (exit 2, the errno in words);
#  - the output paths are checked against a stand-in: an LD_PRELOAD shim whose
#    syscall() answers map_shadow_stack (453) with an ordinary anonymous mapping
#    and mainline's argument checks. Such a mapping is not "ss" in smaps, so
#    cetctl must also say that and fail; real shadow stacks are the guest's job.

bats_require_minimum_version 1.5.0

setup_file() {
	export SHIM=$BATS_FILE_TMPDIR/fake-map-shadow-stack.so
	cat > "$BATS_FILE_TMPDIR/shim.c" <<'EOF'
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <sys/mman.h>
/* map_shadow_stack(addr, size, flags) with mainline's checks, as plain memory. */
long syscall(long nr, ...)
{
	unsigned long a, s, f;
	va_list ap;
	void *p;

	va_start(ap, nr);
	a = va_arg(ap, unsigned long);
	s = va_arg(ap, unsigned long);
	f = va_arg(ap, unsigned long);
	va_end(ap);
	if (nr != 453) { errno = ENOSYS; return -1; }
	if (f & ~1UL) { errno = EINVAL; return -1; }
	if ((f & 1) && s < 8) { errno = ENOSPC; return -1; }
	if (a && a < (1UL << 32)) { errno = ERANGE; return -1; }
	p = mmap((void *)a, (s + 4095) & ~4095UL, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | (a ? MAP_FIXED_NOREPLACE : 0), -1, 0);
	if (p == MAP_FAILED)
		return -1;
	if (f & 1)
		*(unsigned long *)((char *)p + s - 8) = ((unsigned long)p + s) | 1;
	return (long)p;
}
EOF
	gcc -shared -fPIC -o "$SHIM" "$BATS_FILE_TMPDIR/shim.c"
}

setup() {
	if [ -f "$BATS_TEST_DIRNAME/helpers.bash" ]; then
		load helpers
	fi
	CETCTL=${CETCTL:-$BATS_TEST_DIRNAME/../../build/cetctl}
	[ -x "$CETCTL" ] || { echo "no cetctl binary at $CETCTL (build first)"; return 1; }
}

host_can_map() {
	grep -qw user_shstk /proc/cpuinfo && grep -q '^x86_Thread_features:' /proc/self/status
}

fake() { LD_PRELOAD=$SHIM "$@"; }

# The stand-in is an LD_PRELOAD shim; ASan builds refuse to run with a library
# preloaded ahead of their runtime.
need_shim() {
	if ldd "$CETCTL" 2>/dev/null | grep -q libasan; then
		skip "ASan build: the LD_PRELOAD stand-in kernel cannot be used"
	fi
}

@test "map: --help lists every option and exits 0" {
	run "$CETCTL" map --help
	[ "$status" -eq 0 ]
	for o in --size --addr --token --hold --pivot --json --help; do
		[[ "$output" == *"$o"* ]] || { echo "missing $o"; return 1; }
	done
}

@test "map: every long option is in the man page and the completions" {
	local top=$BATS_TEST_DIRNAME/../..
	for o in size addr token hold pivot json; do
		grep -qF -- "${o//-/\\-}" "$top/man/cetctl-map.1" || { echo "man: $o"; return 1; }
		grep -E '^\s*map\)' "$top/completions/cetctl.bash" | grep -q -- "--$o" || { echo "bash: $o"; return 1; }
		grep -q -- "--$o" "$top/completions/_cetctl" || { echo "zsh: $o"; return 1; }
		grep 'subcommand_from map' "$top/completions/cetctl.fish" | grep -q -- "-l $o" || { echo "fish: $o"; return 1; }
	done
}

@test "map: bad arguments are usage errors (1)" {
	run "$CETCTL" map --size 0
	[ "$status" -eq 1 ]
	[[ "$output" == *"invalid size"* ]]
	run "$CETCTL" map --size 12Q
	[ "$status" -eq 1 ]
	# strtoull skips leading blanks and accepts a sign: a negative number
	# behind a blank must not wrap around to a huge size
	local s
	for s in ' -1' '	-1' ' +-1' '+1' ' 4096'; do
		run "$CETCTL" map --size "$s"
		[ "$status" -eq 1 ] || { echo "'$s': $status $output"; return 1; }
		[[ "$output" == *"invalid size"* ]]
	done
	run "$CETCTL" map --addr nowhere
	[ "$status" -eq 1 ]
	[[ "$output" == *"invalid address"* ]]
	run "$CETCTL" map --hold -3
	[ "$status" -eq 1 ]
	run "$CETCTL" map extra
	[ "$status" -eq 1 ]
	[[ "$output" == *"unexpected argument"* ]]
}

@test "map: on this host it fails with 2 and the errno in words" {
	host_can_map && skip "this host has user shadow stacks"
	run -2 "$CETCTL" map
	[[ "$output" == *"map_shadow_stack(0, 4096, 0) failed: the kernel or CPU has no shadow-stack support ("* ]]
	[[ "$output" == *"(ENOSYS)"* || "$output" == *"(EOPNOTSUPP)"* ]]
	run -2 "$CETCTL" map --pivot --size 64K
	[[ "$output" == *"65536, SHADOW_STACK_SET_TOKEN"* ]]
}

@test "map: output shows address, size, token and the smaps entry (stand-in kernel)" {
	need_shim
	run -1 fake "$CETCTL" map --token --size 8K
	[[ "$output" =~ address:\ +0x[0-9a-f]+ ]]
	local addr=${BASH_REMATCH[0]##* }
	[[ "$output" =~ size:\ +8192 ]]
	local tok
	tok=$(printf '0x%x' $((addr + 8192 - 8)))
	[[ "$output" == *"token at:     $tok"* ]]
	[[ "$output" == *"token value:  $(printf '0x%x' $(((addr + 8192) | 1)))"* ]]
	[[ "$output" == *"token valid:  yes"* ]]
	[[ "$output" == *"${addr#0x}-"* ]]	# the smaps header line of the mapping
	[[ "$output" == *"VmFlags:"* ]]
	# plain memory is not a shadow stack: cetctl must notice
	[[ "$output" == *"ss VMA:       no"* ]]
	[[ "$output" == *"is not marked 'ss' in smaps"* ]]
}

@test "map: -J gives one JSON object with the same facts" {
	need_shim
	run -1 --separate-stderr fake "$CETCTL" map -J --token
	echo "$output" | jq -e '.address | test("^0x[0-9a-f]+$")'
	echo "$output" | jq -e '.size == 4096 and .token_valid == true and .shadow_stack_vma == false'
	echo "$output" | jq -e '(.smaps | length) > 3 and (.smaps[0] | test("^[0-9a-f]+-[0-9a-f]+ "))'
	echo "$output" | jq -e '.token_address != null'
	# the global -J works the same
	run -1 --separate-stderr fake "$CETCTL" -J map
	echo "$output" | jq -e '.token_address == null'
}

@test "map: kernel errnos are reported in words (stand-in kernel, mainline checks)" {
	need_shim
	run -1 fake "$CETCTL" map --addr 0x1000
	[[ "$output" == *"below 4 GiB"*"(ERANGE)"* ]]
	run -1 fake "$CETCTL" map --token --size 4
	[[ "$output" == *"no room for the restore token"*"(ENOSPC)"* ]]
	# a fixed address above 4 GiB is passed through and used
	run -1 fake "$CETCTL" map --addr 0x7e0000000000 --size 4K
	[[ "$output" =~ address:\ +0x7e0000000000 ]]
}

@test "map: --hold keeps the process (and the mapping) for the given time" {
	need_shim
	local start=$SECONDS
	run -1 --separate-stderr fake "$CETCTL" map -J --hold 2
	[ $((SECONDS - start)) -ge 2 ]
	echo "$output" | jq -e '.pid > 1'
	LD_PRELOAD=$SHIM "$CETCTL" map --hold 30 > "$BATS_TEST_TMPDIR/out" 2> "$BATS_TEST_TMPDIR/err" &
	local pid=$!
	sleep 0.5
	grep -q "holding the mapping for 30 s (pid $pid)" "$BATS_TEST_TMPDIR/err"
	local addr
	addr=$(awk '/^address:/ {print $2}' "$BATS_TEST_TMPDIR/out")
	grep -q "^${addr#0x}-" "/proc/$pid/maps"
	kill "$pid"
	wait "$pid" || true
}

@test "map: --pivot fails cleanly when shadow stacks cannot be enabled (stand-in kernel)" {
	need_shim
	host_can_map && skip "this host has user shadow stacks"
	# the mapping succeeds (stand-in), then the pivot routine's own
	# ARCH_SHSTK_ENABLE fails: it must return through its epilogue, not crash
	run -1 fake "$CETCTL" map --pivot
	[[ "$output" == *"pivot: enabling shadow stacks in cetctl failed: the kernel refused"*"(EINVAL)"* ]]
	run -1 --separate-stderr fake "$CETCTL" map -J --pivot
	echo "$output" | jq -e '.pivot == null and .token_valid == true'
}
