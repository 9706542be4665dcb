#!/usr/bin/env bats
# The compatibility verdict on Debian 13's own programs: before the start, `cetctl elf
# --compat` and `cetctl run --shstk` say whether a program will survive a forced shadow
# stack, naming the object and the reason. A Go program (trixie's node_exporter) is
# refused before it starts; a longjmp user is safe with the preload library.
bats_require_minimum_version 1.5.0
load lib

setup() {
	has_cet || skip "no CET in this CPU"
}

GO=/usr/bin/prometheus-node-exporter

@test "elf --compat: node_exporter incompatible (Go), dash forced-safe" {
	[ -x $GO ] || fail "$GO not in the image (package prometheus-node-exporter)"
	run cetctl elf --compat -o FILE,COMPAT $GO /usr/bin/dash
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q "^$GO  *incompatible: Go runtime: it switches goroutine stacks itself (self: note Go/4)" <<<"$output"
	grep -q '^/usr/bin/dash  *forced-safe' <<<"$output"
	# JSON: the class, the object and what matched
	run cetctl elf --compat --json $GO
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"\"compat\": {\"verdict\": \"incompatible\", \"object\": \"$GO\", \"match\": \"note Go/4\""* ]]
}

@test "run --shstk refuses node_exporter before it starts, naming the Go runtime" {
	run --separate-stderr cetctl run --shstk -q $GO --version
	# shellcheck disable=SC2154  # stderr: set by bats' run --separate-stderr
	echo "$status: $output | $stderr"
	[ "$status" -eq 125 ]
	[ -z "$output" ]
	[[ $stderr == *"refusing to run $GO: incompatible: Go runtime"* ]]
	[[ $stderr == *"--force-incompatible"* ]]
	# plainly it runs
	run $GO --version
	[ "$status" -eq 0 ]
}

@test "run --shstk --force-incompatible: node_exporter dies, and the preload library's diagnosis says why" {
	# Go installs its own SIGSEGV handler (through libc's sigaction in a cgo
	# program): the library's diagnosis comes first, then Go's own report
	run --separate-stderr cetctl run --shstk --force-incompatible $GO --version
	# shellcheck disable=SC2154  # stderr: set by bats' run --separate-stderr
	echo "$status: $output | $stderr"
	[ "$status" -ne 0 ]
	[[ $stderr == *"warning: $GO: incompatible: Go runtime"*"running it all the same (--force-incompatible)"* ]]
	[[ $stderr == *"libcetctl-preload: control-protection fault (SIGSEGV, SEGV_CPERR) in process"* ]]
}
