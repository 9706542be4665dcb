#!/usr/bin/env bats
# The world corpus's subset (tests/world, SUBSET=1 there) in the default guest tiers:
# real Debian programs from the host's packages (vm/mkinitramfs.sh copies them), each
# workload run under `cetctl run --shstk` by tests/world/run-corpus, and plainly only
# when that failed (--plain-on-failure: the CI budget; the world tier runs both), which
# prints its records (CETCTL-WORLD-*) on the console for vm/world.py.
#  Bochs (emulated CET): one test per program; it fails when the outcome is "fails"
#    without cetctl naming the cause (no preload diagnosis, no verdict), unless the
#    program is in KNOWN below; a workload that fails plainly is a skip with the reason.
#  QEMU (no CET): skipped ("no shadow-stack hardware"): the plain runs alone would
#    repeat what the Bochs tier does, at the QEMU tier's cost.
# The whole corpus, on a Debian root, is the opt-in world tier (tests/run-all.sh world).

load lib/common

WORLD=${CETCTL_WORLD:-/usr/libexec/cetctl/world}

# Programs whose "fails without diagnosis" is known on this branch, and why; each is
# a skip that says so. A listed program that no longer fails undiagnosed fails the
# test, so the list only shrinks (remove its line).
# Empty since issue 31's ucontext work landed: openssl's ASYNC jobs and qemu-img's
# coroutines (makecontext/swapcontext) failed before it, with nothing on stderr.
declare -gA KNOWN=()

setup_file() {
	# the faults the --shstk runs provoke are the outcome judged here, not kernel bugs
	expect_kernel_log 'control protection|segfault|traps: .*invalid opcode'
}

setup() {
	[[ -x $WORLD/run-corpus ]] || WORLD=$BATS_TEST_DIRNAME/../world
	[[ -x $WORLD/run-corpus ]] || fail "no tests/world/run-corpus in the image"
	export WORLD_VERSIONS=$WORLD/versions WORLD_TMP=${BATS_TEST_TMPDIR:-/tmp}
	export CETCTL=${CETCTL:-$(command -v cetctl || echo cetctl)}
}

# corpus_run MODES NAME: run the corpus for NAME, its records to the console (fd 3),
# and set o_outcome o_diag o_detail from its CETCTL-WORLD-OUTCOME record.
corpus_run() {
	local modes=$1 name=$2 out l
	out=$BATS_TEST_TMPDIR/$name.records
	"$WORLD/run-corpus" --modes "$modes" --plain-on-failure "$name" >"$out" 2>&1
	grep '^CETCTL-WORLD-' "$out" >&3 || true
	l=$(grep -m1 $'^CETCTL-WORLD-OUTCOME\t' "$out") || { cat "$out"; fail "run-corpus gave no outcome for $name"; return 1; }
	IFS=$'\t' read -r _ _ o_outcome o_diag o_detail <<<"$l"
	echo "$name: $o_outcome (diagnosed: $o_diag): $o_detail"
}

corpus_check() {
	local name=$1
	require_shstk || return 1
	corpus_run plain,shstk "$name" || return 1
	if [[ -n ${KNOWN[$name]:-} ]]; then
		[[ $o_outcome == fails && $o_diag == no ]] && skip "known: ${KNOWN[$name]}"
		fail "$name is in KNOWN (${KNOWN[$name]}) but its outcome is now $o_outcome: remove it from KNOWN"
		return 1
	fi
	case $o_outcome in
	works | refused) return 0 ;;
	fails)
		[[ $o_diag == yes ]] && return 0
		fail "$name fails under --shstk and cetctl did not name the cause: $o_detail"
		return 1 ;;
	plain-fails) skip "plain run fails (not a shadow-stack matter): $o_detail" ;;
	missing) fail "$name is not in the image: $o_detail"; return 1 ;;
	*) fail "unexpected outcome $o_outcome"; return 1 ;;
	esac
}

@test "corpus: bash" { corpus_check bash; }
@test "corpus: dash" { corpus_check dash; }
@test "corpus: sort" { corpus_check sort; }
@test "corpus: sed" { corpus_check sed; }
@test "corpus: gawk" { corpus_check gawk; }
@test "corpus: grep" { corpus_check grep; }
@test "corpus: grep -P (PCRE2 JIT)" { corpus_check grep-P; }
@test "corpus: perl" { corpus_check perl; }
@test "corpus: lua5.4 coroutines" { corpus_check lua-coroutine; }
@test "corpus: tclsh8.6 coroutines" { corpus_check tcl-coroutine; }
@test "corpus: gzip" { corpus_check gzip; }
@test "corpus: xz" { corpus_check xz; }
@test "corpus: zstd" { corpus_check zstd; }
@test "corpus: bzip2" { corpus_check bzip2; }
@test "corpus: openssl dgst and enc" { corpus_check openssl; }
@test "corpus: openssl speed -async_jobs (ucontext)" { corpus_check openssl-async; }
@test "corpus: sqlite3" { corpus_check sqlite3; }
@test "corpus: qemu-img (coroutines)" { corpus_check qemu-img; }

@test "corpus: every program of the subset has its test here" {
	local n want=()
	mapfile -t want < <("$WORLD/run-corpus" --list --subset)
	for n in "${want[@]}"; do
		grep -q "corpus_check $n;" "$BATS_TEST_FILENAME" || fail "no test for $n in corpus.bats"
	done
}
