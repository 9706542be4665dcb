#!/usr/bin/env bats
# Host tests of vm/debian-image.sh's arguments: the Debian 12 image (a kernel .deb),
# the Debian 13 one (--suite trixie DIR) and the world root (--world) are each
# accepted, the combinations that make no sense are refused, and --dry-run names the
# cache layers each would use without building anything (in a cache of the test's own).
# Run: bats vm/selftest/debian-image.bats

bats_require_minimum_version 1.5.0   # run --separate-stderr

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
DI=$TOP/vm/debian-image.sh

setup() {
	export CETCTL_CACHE=$BATS_TEST_TMPDIR/cache
	H='[0-9a-f]{16}'
}

# needs TOOL...: skip unless the script's tools are here (a dry run still checks them)
needs() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null || skip "$t not installed (vm/install-deps.sh installs it)"
	done
	git -C "$TOP" rev-parse --git-dir >/dev/null 2>&1 ||
		skip "not a git checkout: the cetctl .deb layer's key is made of the tracked files"
}

# fake_kdir DIR: the files vm/build-kernel.sh --debian13 leaves in its directory
fake_kdir() {
	mkdir -p "$1"
	for f in bzImage config System.map; do echo "fake $f" >"$1/$f"; done
	echo 6.12.0-fake >"$1/release"
}

# dry ARGS...: a dry run; its stdout's last line in $img, its stderr in $err
dry() {
	run --separate-stderr bash "$DI" --dry-run "$@"
	# shellcheck disable=SC2154  # stderr: set by bats' run --separate-stderr
	err=$stderr
	echo "status $status; stdout: $output; stderr: $err"
	[ "$status" -eq 0 ]
	img=${lines[${#lines[@]} - 1]}
}

@test "debian-image: --help names --suite, --world and --dry-run and exits 0" {
	run bash "$DI" --help
	[ "$status" -eq 0 ]
	[[ $output == *"--suite bookworm|trixie"* ]]
	[[ $output == *"--world"* ]]
	[[ $output == *"--dry-run"* ]]
}

@test "debian-image: the arguments that make no image are usage errors (exit 1)" {
	local a
	for a in "" "--suite" "--suite sid x.deb" "--suite trixie --world" "--world extra" \
		"--bogus" "a.deb b.deb"; do
		# shellcheck disable=SC2086  # each case is a word list on purpose
		run bash "$DI" $a
		echo "args '$a': status $status: $output"
		[ "$status" -eq 1 ]
		[[ $output == *"debian-image: ERROR: "* ]]
	done
	run bash "$DI" --suite trixie --world
	[[ $output == *"--world is a Debian 12 (bookworm) root"* ]]
	run bash "$DI" --suite trixie "$BATS_TEST_TMPDIR/nokernel"
	[ "$status" -eq 1 ]
	[[ $output == *"not a kernel directory of vm/build-kernel.sh --debian13"* ]]
}

@test "debian-image: --dry-run --world names the world root's layers and builds none" {
	needs mmdebstrap
	dry --world
	[[ $img =~ ^$CETCTL_CACHE/debian/world-$H$ ]]
	[[ $err =~ "dry run: base layer $CETCTL_CACHE/debian/base-"$H\ "(to build)" ]]
	[[ $err == *"dry run: cetctl-deb layer $CETCTL_CACHE/debian/cetctl-deb-"* ]]
	# nothing built, no lock taken, the checkout's archive removed
	run ls -A "$CETCTL_CACHE/debian"
	[ "$output" = "" ]
}

@test "debian-image: --dry-run --suite trixie takes a kernel directory and names trixie's layers" {
	needs mmdebstrap
	fake_kdir "$BATS_TEST_TMPDIR/k13"
	dry --suite trixie "$BATS_TEST_TMPDIR/k13"
	[[ $img =~ ^$CETCTL_CACHE/debian/image-trixie-$H$ ]]
	[[ $err =~ "base layer $CETCTL_CACHE/debian/base-trixie-"$H ]]
}

@test "debian-image: bookworm, trixie and world have base roots of their own" {
	needs mmdebstrap
	echo "not really a .deb" >"$BATS_TEST_TMPDIR/linux-image.deb"
	dry "$BATS_TEST_TMPDIR/linux-image.deb"
	[[ $img =~ ^$CETCTL_CACHE/debian/image-$H$ ]]
	b12=$(grep -o 'base layer [^ ]*' <<<"$err")
	dry --world
	bw=$(grep -o 'base layer [^ ]*' <<<"$err")
	fake_kdir "$BATS_TEST_TMPDIR/k13"
	dry --suite trixie "$BATS_TEST_TMPDIR/k13"
	b13=$(grep -o 'base layer [^ ]*' <<<"$err")
	echo "bookworm: $b12; world: $bw; trixie: $b13"
	[ -n "$b12" ] && [ -n "$bw" ] && [ -n "$b13" ]
	[ "$b12" != "$bw" ] && [ "$b12" != "$b13" ] && [ "$bw" != "$b13" ]
}
