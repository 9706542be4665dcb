# shellcheck shell=bash
# tests/world/corpus.bash — the world corpus: real Debian programs, each with a small
# workload that checks its own result. Sourced by tests/world/run-corpus, which runs
# every workload twice, plainly and under `cetctl run --shstk`, and judges the pair.
#
# A workload is a function w_NAME (NAME with - as _) run in a fresh directory $W. It
# starts the programs under test through `x` (or `daemon` for servers), which puts the
# launcher in front ($LAUNCH: empty, or cetctl run --shstk --) and records the first
# program that failed; the harness's own steps (making inputs, computing the expected
# value, comparing) run plainly: bash built-ins and a few tools (cmp, stat, sha256sum,
# ssh-keygen) that are not the subject of that workload. The expected value
# is computed here, never copied from a run. Return 0 when the result is right; on a
# wrong result `check` says what differed on stderr. A program's stderr is never thrown
# away: it is where the diagnosis of a fault (or cetctl's verdict) appears.
#
# The table: `corpus NAME PROGRAM SUBSET "WORKLOAD"`, SUBSET=1 for the programs that
# also run in the default Bochs tier's initramfs (tests/guest/corpus.bats).

CORPUS_NAMES=()
declare -A CORPUS_PROG CORPUS_SUBSET CORPUS_WHAT

corpus() {
	CORPUS_NAMES+=("$1")
	# shellcheck disable=SC2034  # read by run-corpus, which sources this file
	CORPUS_PROG[$1]=$2 CORPUS_SUBSET[$1]=$3 CORPUS_WHAT[$1]=$4
}

# ---- helpers for workloads ---------------------------------------------------

# x PROG ARGS...: run PROG under the launcher; the first program that fails is
# recorded in $W/.failed as "STATUS PROG" (the harness reports its status).
x() {
	local st=0
	"${LAUNCH[@]}" "$@" || st=$?
	((st == 0)) || [[ -s $W/.failed ]] || echo "$st $1" >"$W/.failed"
	return "$st"
}

# xok STATUS PROG ARGS...: like x, for a program whose expected status is STATUS
# (diff exits 1 when the files differ).
xok() {
	local want=$1 st=0
	shift
	"${LAUNCH[@]}" "$@" || st=$?
	((st == want)) && return 0
	[[ -s $W/.failed ]] || echo "$st $1" >"$W/.failed"
	((st != 0)) || st=1
	return "$st"
}

# check WHAT EXPECTED ACTUAL: equal, or say what differed (shortened) on stderr.
check() {
	[[ $2 == "$3" ]] && return 0
	printf 'check failed: %s: expected "%.60s" got "%.60s"\n' "$1" "$2" "$3" >&2
	return 1
}

# same WHAT FILE1 FILE2: byte-identical files.
same() {
	cmp -s -- "$2" "$3" && return 0
	printf 'check failed: %s: %s and %s differ\n' "$1" "${2##*/}" "${3##*/}" >&2
	return 1
}

# The port of this workload's server: distinct per program and per mode, so that a
# socket still in TIME_WAIT from the other run never matters.
port() {
	local m=0
	[[ $MODE == shstk ]] && m=5
	echo $((WORLD_PORT_BASE + CORPUS_INDEX * 10 + m))
}

# daemon NAME PROG ARGS...: start a server in the foreground of a background job
# under the launcher; its pid in $W/NAME.pid, its output in $W/NAME.out, which
# run-corpus adds to the run's stderr when the workload ends (a server that failed
# is diagnosed there). helper NAME PROG ARGS...: the same without the launcher, for
# the harness's own servers.
daemon() {
	local name=$1
	shift
	"${LAUNCH[@]}" "$@" </dev/null >>"$W/$name.out" 2>&1 &
	echo $! >"$W/$name.pid"
}
helper() {
	local name=$1
	shift
	"$@" </dev/null >>"$W/$name.out" 2>&1 &
	echo $! >"$W/$name.pid"
}

# wait_ready NAME WHAT TEST...: until TEST succeeds (the server is ready), or the server
# NAME exited (its status recorded as the failure), or WORLD_WAIT seconds passed.
wait_ready() {
	local name=$1 what=$2 pid st i
	shift 2
	pid=$(cat "$W/$name.pid")
	for ((i = 0; i < WORLD_WAIT * 5; i++)); do
		"$@" 2>/dev/null && return 0
		if ! kill -0 "$pid" 2>/dev/null; then
			st=0
			wait "$pid" || st=$?
			[[ -s $W/.failed ]] || echo "$st $name" >"$W/.failed"
			echo "harness: $name exited with status $st before it $what" >&2
			return 1
		fi
		sleep 0.2
	done
	echo "harness: $name had not $what within ${WORLD_WAIT} s" >&2
	return 1
}
connects() { (exec 9<>"/dev/tcp/127.0.0.1/$1"); }

# wait_port NAME PORT: until 127.0.0.1:PORT accepts (bash's /dev/tcp).
wait_port() { wait_ready "$1" "listened on $2" connects "$2"; }

# wait_output NAME ERE: until the server's output has a line matching ERE (a server
# that accepts one connection only must not be probed by wait_port).
wait_output() { wait_ready "$1" "printed /$2/" grep -qE -- "$2" "$W/$1.out"; }

# stop NAME [STATUS]: SIGTERM a server and require a clean exit: status 0, or STATUS
# (a Go program without a SIGTERM handler ends with 143, as the signal's default).
stop() {
	local name=$1 pid st=0 i
	pid=$(cat "$W/$name.pid" 2>/dev/null) || return 0
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < WORLD_WAIT * 5; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" || st=$?
	rm -f "$W/$name.pid"
	((st == 0 || st == ${2:-0})) && return 0
	[[ -s $W/.failed ]] || echo "$st $name" >"$W/.failed"
	echo "harness: $name did not stop cleanly (status $st)" >&2
	return 1
}

# waited NAME: wait for a server that ends by itself; its status.
waited() {
	local pid st=0
	pid=$(cat "$W/$1.pid") || return 1
	wait "$pid" || st=$?
	rm -f "$W/$1.pid"
	((st == 0)) || [[ -s $W/.failed ]] || echo "$st $1" >"$W/.failed"
	return "$st"
}

# http_get PORT PATH: the body of an HTTP/1.0 GET on 127.0.0.1:PORT, by bash alone.
http_get() {
	local line body=0
	exec 9<>"/dev/tcp/127.0.0.1/$1" || return 1
	printf 'GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n' "$2" >&9
	while IFS= read -r line <&9 || [[ -n $line ]]; do
		if ((body)); then printf '%s\n' "$line"; elif [[ $line == $'\r' || -z $line ]]; then body=1; fi
	done
	exec 9<&-
}

# text_file FILE LINES: deterministic text (words and numbers), the compressors' input.
text_file() {
	local i
	for ((i = 1; i <= $2; i++)); do
		printf 'line %d: the quick brown fox %d jumps over %d lazy dogs\n' "$i" $((i * 7919 % 1000)) $((i % 13))
	done >"$1"
}

# ---- shells --------------------------------------------------------------------

corpus bash bash 1 "recursive functions (return is a longjmp in bash) with and without subshells: fib(7), 12!"
w_bash() {
	local a=0 b=1 t i f=1 out
	for ((i = 0; i < 7; i++)); do t=$((a + b)); a=$b; b=$t; done
	for ((i = 2; i <= 12; i++)); do f=$((f * i)); done
	out=$(x bash -c 'fib() { if (($1 < 2)); then echo "$1"; return 0; fi
		echo $(( $(fib $(($1 - 1))) + $(fib $(($1 - 2))) )); return 0; }
		fact() { if (($1 <= 1)); then r=1; return 0; fi; fact $(($1 - 1)); r=$((r * $1)); return 0; }
		fact 12; echo "$(fib 7) $r"') || return
	check "fib(7) 12!" "$a $f" "$out"
}

corpus dash dash 1 "error paths (exceptions are longjmps in dash): failing 'command cd', return, arithmetic"
w_dash() {
	local out
	out=$(x dash -c 'f() { return 5; }; f; r=$?; command cd /nonexistent-world 2>/dev/null || r=$((r * 10));
		for i in 1 2 3; do ( exit $i ) || r=$((r + $?)); done; echo "$r"') || return
	check "status sum" "$((5 * 10 + 1 + 2 + 3))" "$out"
}

# ---- coreutils and text tools --------------------------------------------------

corpus sort sort 1 "3000 numbers, sort -n with 2 threads and a 64 KiB buffer (temporary files)"
w_sort() {
	local i v prev=-1 n=0 sum=0 want=0 out
	RANDOM=31
	for ((i = 0; i < 3000; i++)); do v=$RANDOM; want=$((want + v)); echo "$v"; done >in
	x sort -n --parallel=2 -S 64K -T "$W" in >out || return
	while read -r v; do
		((v >= prev)) || { echo "check failed: sort: $v after $prev" >&2; return 1; }
		prev=$v n=$((n + 1)) sum=$((sum + v))
	done <out
	check "count" 3000 "$n" && check "sum" "$want" "$sum"
}

corpus sed sed 1 "sed -E back-references over 500 lines"
w_sed() {
	local i want=''
	for ((i = 1; i <= 500; i++)); do echo "key$i=$((i * 3))"; want+="$((i * 3)):key$i"$'\n'; done >in
	x sed -E 's/^([a-z]+[0-9]+)=([0-9]+)$/\2:\1/' in >out || return
	check "rewritten lines" "$want" "$(<out)"$'\n'
}

corpus gawk gawk 1 "associative sums per key over 1000 lines"
w_gawk() {
	local i k want=''
	local -A sums=()
	for ((i = 1; i <= 1000; i++)); do k=k$((i % 7)); sums[$k]=$((${sums[$k]:-0} + i)); echo "$k $i"; done >in
	for ((i = 0; i < 7; i++)); do want+="k$i ${sums[k$i]}"$'\n'; done
	x gawk '{ s[$1] += $2 } END { for (i = 0; i < 7; i++) print "k" i, s["k" i] }' in >out || return
	check "sums" "$want" "$(<out)"$'\n'
}

corpus grep grep 1 "grep -c -E over 2000 lines"
w_grep() {
	local i n=0 line out
	for ((i = 1; i <= 2000; i++)); do
		line="id=$i;name=n$((i % 17))"
		[[ $line =~ name=n1[0-9]$ ]] && n=$((n + 1))
		echo "$line"
	done >in
	out=$(xok 0 grep -c -E 'name=n1[0-9]$' in) || return
	check "matches" "$n" "$out"
}

corpus grep-P grep 1 "grep -P (PCRE2, JIT-compiled) with look-around over 2000 lines"
w_grep_P() {
	local i want=''
	for ((i = 1; i <= 2000; i++)); do
		echo "id=$i;v=$((i % 5))"
		((i % 5 == 3)) && want+="$i"$'\n'
	done >in
	x grep -oP '(?<=^id=)\d+(?=;v=3$)' in >out || return
	check "ids" "$want" "$(<out)"$'\n'
}

corpus diff diff 0 "diff -u of two 400-line files: exit 1 and the changed lines"
w_diff() {
	local i want=0 got
	for ((i = 1; i <= 400; i++)); do echo "l$i"; done >a
	for ((i = 1; i <= 400; i++)); do if ((i % 50 == 0)); then echo "changed$i"; want=$((want + 1)); else echo "l$i"; fi; done >b
	xok 1 diff -u a b >out || return
	got=0
	while IFS= read -r l; do [[ $l == +changed* ]] && got=$((got + 1)); done <out
	check "changed lines" "$want" "$got"
}

corpus find find 0 "find -type f -name over a tree of 120 files"
w_find() {
	local d i want=0 got=0
	for d in a b c d; do mkdir -p "t/$d/sub"; for ((i = 0; i < 15; i++)); do
		: >"t/$d/f$i.txt"; : >"t/$d/sub/g$i.dat"; want=$((want + 1)); done; done
	x find t -type f -name '*.txt' >out || return
	while read -r _; do got=$((got + 1)); done <out
	check "files" "$want" "$got"
}

corpus tar tar 0 "tar czf (gzip child) of a tree, list and extract it back"
w_tar() {
	local d i n=0
	for d in a b; do mkdir -p "src/$d"; for ((i = 0; i < 20; i++)); do
		echo "$d $i $((i * i))" >"src/$d/f$i"; n=$((n + 1)); done; done
	x tar -czf t.tgz src || return
	x tar -tzf t.tgz >list || return
	mkdir dst && x tar -xzf t.tgz -C dst || return
	local files=0
	while read -r l; do [[ $l == */ ]] || files=$((files + 1)); done <list
	check "members" "$n" "$files" && same "src/b/f19" src/b/f19 dst/src/b/f19
}

corpus sha256sum sha256sum 0 "sha256sum of the FIPS 180-2 vector 'abc' and -c of its own list"
w_sha256sum() {
	local out
	printf abc >abc
	out=$(x sha256sum abc) || return
	# FIPS 180-2, appendix B.1: SHA-256("abc")
	check "digest" "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  abc" "$out" || return
	text_file data 200
	x sha256sum abc data >sums && x sha256sum -c --quiet sums
}

# ---- interpreters ---------------------------------------------------------------

corpus perl perl 1 "eval/die (longjmp in perl) 200 times, sort and sprintf"
w_perl() {
	local i n=0 out
	for ((i = 1; i <= 200; i++)); do ((i % 3 == 0)) || n=$((n + i)); done
	out=$(x perl -e 'my $n = 0; for my $i (1 .. 200) { eval { die "x\n" if $i % 3 == 0; $n += $i; 1 } }
		my @s = sort { $b <=> $a } (3, 1, 2); printf "%d %s\n", $n, join(",", @s);') || return
	check "sum" "$n 3,2,1" "$out"
}

corpus python3-threads python3 0 "8 threads adding under a lock, a ThreadPoolExecutor map"
w_python3_threads() {
	local i s=0 out
	for ((i = 0; i < 1000; i++)); do s=$((s + i * i)); done
	out=$(x python3 -c '
import threading, concurrent.futures
total = 0
lock = threading.Lock()
def work(k):
    global total
    for i in range(k, 1000, 8):
        with lock:
            total += i * i
ts = [threading.Thread(target=work, args=(k,)) for k in range(8)]
for t in ts: t.start()
for t in ts: t.join()
with concurrent.futures.ThreadPoolExecutor(4) as ex:
    sq = sum(ex.map(lambda i: i * i, range(1000)))
print(total, sq)') || return
	check "sums" "$s $s" "$out"
}

corpus python3-asyncio python3 0 "asyncio.gather of 50 coroutines with sleeps and a queue"
w_python3_asyncio() {
	local i s=0 out
	for ((i = 0; i < 50; i++)); do s=$((s + i * 3)); done
	out=$(x python3 -c '
import asyncio
async def one(q, i):
    await asyncio.sleep(0.001 * (i % 5))
    await q.put(i * 3)
async def main():
    q = asyncio.Queue()
    await asyncio.gather(*(one(q, i) for i in range(50)))
    s = 0
    while not q.empty():
        s += await q.get()
    print(s)
asyncio.run(main())') || return
	check "sum" "$s" "$out"
}

corpus python3-multiprocessing python3 0 "multiprocessing.Pool(2).map over 200 numbers (fork)"
w_python3_multiprocessing() {
	local i s=0 out
	for ((i = 0; i < 200; i++)); do s=$((s + i * i * i)); done
	out=$(x python3 -c '
import multiprocessing as mp
def cube(i):
    return i * i * i
if __name__ == "__main__":
    mp.set_start_method("fork")
    with mp.Pool(2) as p:
        print(sum(p.map(cube, range(200))))') || return
	check "sum" "$s" "$out"
}

corpus ruby-fiber ruby 0 "Fiber.yield/resume 100 times, raise/rescue (longjmp in ruby)"
w_ruby_fiber() {
	local out
	out=$(x ruby -e 'f = Fiber.new { x = 0; loop { x += 1; Fiber.yield x } }
		s = 0; 100.times { s += f.resume }
		r = 0; 10.times { |i| begin; raise "e" if i.odd?; rescue; r += 1; end }
		puts "#{s} #{r}"') || return
	check "fiber sum, rescues" "$((100 * 101 / 2)) 5" "$out"
}

corpus php-fiber php 0 "PHP 8.2 Fiber suspend/resume 100 times, exceptions"
w_php_fiber() {
	local out
	out=$(x php -n -r '$f = new Fiber(function (int $x): int { $s = 0; while ($x > 0) { $s += $x; $x = Fiber::suspend($s); } return $s; });
		$v = $f->start(1); for ($i = 2; $i <= 100; $i++) { $v = $f->resume($i); } $f->resume(0);
		$c = 0; for ($i = 0; $i < 10; $i++) { try { if ($i % 2) throw new Exception("e"); } catch (Exception $e) { $c++; } }
		echo $f->getReturn(), " ", $c, "\n";') || return
	check "fiber sum, catches" "$((100 * 101 / 2)) 5" "$out"
}

corpus lua-coroutine lua5.4 1 "coroutine.wrap generator, 100 yields, pcall(error) (longjmp in lua)"
w_lua_coroutine() {
	local out
	out=$(x lua5.4 -e 'local co = coroutine.wrap(function() for i = 1, 100 do coroutine.yield(i) end end)
		local s = 0 for i = 1, 100 do s = s + co() end
		local c = 0 for i = 1, 10 do if not pcall(function() if i % 2 == 0 then error("e") end end) then c = c + 1 end end
		print(s, c)') || return
	check "sum, errors" "$((100 * 101 / 2))"$'\t'"5" "$out"
}

corpus tcl-coroutine tclsh8.6 1 "Tcl 8.6 coroutine generator, 100 yields, catch"
w_tcl_coroutine() {
	local out
	out=$(printf '%s\n' 'proc gen {} { yield; for {set i 1} {$i <= 100} {incr i} { yield $i } }' \
		'coroutine g gen' 'set s 0' 'for {set i 0} {$i < 100} {incr i} { incr s [g] }' \
		'set c 0' 'for {set i 0} {$i < 10} {incr i} { if {[catch {if {$i % 2} {error e}}]} { incr c } }' \
		'puts "$s $c"' | x tclsh8.6) || return
	check "sum, catches" "$((100 * 101 / 2)) 5" "$out"
}

corpus node-worker node 0 "worker_threads: 2 workers sum ranges, results by message"
w_node_worker() {
	local i s=0 out
	for ((i = 0; i < 20000; i++)); do s=$((s + i)); done
	out=$(x node -e '
const { Worker } = require("worker_threads");
const src = "const { parentPort, workerData } = require(\"worker_threads\");" +
  "let s = 0; for (let i = workerData[0]; i < workerData[1]; i++) s += i; parentPort.postMessage(s);";
const run = (r) => new Promise((ok, bad) => { const w = new Worker(src, { eval: true, workerData: r });
  w.on("message", ok); w.on("error", bad); });
Promise.all([run([0, 10000]), run([10000, 20000])]).then((v) => console.log(v[0] + v[1]));') || return
	check "sum" "$s" "$out"
}

# ---- compressors ----------------------------------------------------------------

# roundtrip PROG COMPRESS_ARGS: compress a text file and decompress it with PROG -d.
roundtrip() {
	local p=$1
	shift
	text_file data 4000
	x "$p" "$@" -c data >data.z || return
	x "$p" -d -c data.z >back || return
	[[ $(stat -c %s data.z) -lt $(stat -c %s data) ]] || { echo "check failed: $p did not compress" >&2; return 1; }
	same "round trip" data back
}
corpus gzip gzip 1 "gzip -9 and back, 4000 lines"
w_gzip() { roundtrip gzip -9; }
corpus xz xz 1 "xz -T2 (threads) and back, 4000 lines"
w_xz() { roundtrip xz -T2; }
corpus zstd zstd 1 "zstd -T2 -q (threads) and back, 4000 lines"
w_zstd() { roundtrip zstd -q -T2; }
corpus bzip2 bzip2 1 "bzip2 and back, 4000 lines"
w_bzip2() { roundtrip bzip2; }

# ---- openssl --------------------------------------------------------------------

corpus openssl openssl 1 "dgst -sha256 against sha256sum, enc -aes-256-cbc -pbkdf2 and back"
w_openssl() {
	local out want
	text_file data 500
	read -r want _ < <(sha256sum data)
	out=$(x openssl dgst -sha256 -r data) || return
	check "digest" "$want *data" "$out" || return
	x openssl enc -aes-256-cbc -pbkdf2 -pass pass:world -in data -out data.enc || return
	x openssl enc -d -aes-256-cbc -pbkdf2 -pass pass:world -in data.enc -out back || return
	same "decrypted" data back
}

corpus openssl-tls openssl 0 "s_server -rev and s_client on loopback, TLS 1.3, EC key"
w_openssl_tls() {
	local p msg=world$RANDOM$RANDOM rev='' i out
	p=$(port)
	for ((i = ${#msg} - 1; i >= 0; i--)); do rev+=${msg:i:1}; done
	x openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
		-keyout key.pem -out cert.pem -days 1 || return
	daemon s_server openssl s_server -accept "127.0.0.1:$p" -cert cert.pem -key key.pem -naccept 1 -rev
	wait_output s_server '^ACCEPT' || return
	out=$(printf '%s\nCLOSE\n' "$msg" | x openssl s_client -connect "127.0.0.1:$p" -quiet -ign_eof) || return
	waited s_server || return
	check "reversed line" "$rev" "${out%%$'\n'*}"
}

corpus openssl-async openssl 1 "speed -async_jobs 1 (ASYNC jobs: makecontext/swapcontext), sha256, 1 s"
w_openssl_async() {
	local l ok=0
	x openssl speed -seconds 1 -bytes 1024 -async_jobs 1 -evp sha256 >out || return
	while read -r l; do [[ $l =~ ^sha256\ +[0-9.]+k$ ]] && ok=1; done <out
	check "a sha256 throughput line" 1 "$ok"
}

# ---- tools with their own formats ------------------------------------------------

corpus git git 0 "init, two commits, log, rev-list --count, cat-file"
w_git() {
	local out
	export GIT_CONFIG_NOSYSTEM=1 HOME=$W
	x git init -q repo || return
	x git -C repo config user.email w@example.org && x git -C repo config user.name world || return
	echo one >repo/a && x git -C repo add a && x git -C repo commit -q -m first || return
	echo two >repo/b && x git -C repo add b && x git -C repo commit -q -m second || return
	out=$(x git -C repo log --format=%s) || return
	check "log" $'second\nfirst' "$out" || return
	out=$(x git -C repo rev-list --count HEAD) || return
	check "commits" 2 "$out" || return
	out=$(x git -C repo cat-file -p HEAD:b) || return
	check "blob" two "$out"
}

corpus sqlite3 sqlite3 1 "recursive CTE into a table, an index, sum and count"
w_sqlite3() {
	local i s=0 out
	for ((i = 1; i <= 500; i++)); do ((i % 2)) && s=$((s + i * 2)); done
	out=$(x sqlite3 db.sqlite 'create table t(x integer);
		with recursive c(i) as (select 1 union all select i + 1 from c where i < 500) insert into t select i * 2 from c;
		create index tx on t(x); select sum(x), count(*) from t where x % 4 = 2;') || return
	check "sum|count" "$s|250" "$out"
}

corpus curl curl 0 "GET of a 100 KB file from a local python3 http.server"
w_curl() {
	local p
	p=$(port)
	mkdir www && text_file www/f.txt 2000
	helper http python3 -m http.server --bind 127.0.0.1 --directory www "$p"
	wait_port http "$p" || return
	x curl -sSf -o got "http://127.0.0.1:$p/f.txt" || return
	kill "$(cat http.pid)"
	wait "$(cat http.pid)" 2>/dev/null
	rm -f http.pid
	same "downloaded" www/f.txt got
}

corpus qemu-img qemu-img 1 "raw to qcow2 and back (coroutines: ucontext), check, info"
w_qemu_img() {
	local out
	text_file raw.img 1500
	truncate -s 1M raw.img
	x qemu-img convert -f raw -O qcow2 raw.img a.qcow2 || return
	x qemu-img check -q a.qcow2 || return
	out=$(x qemu-img info --output=json a.qcow2) || return
	[[ $out == *'"virtual-size": 1048576'* ]] || { echo "check failed: qemu-img info: no virtual-size 1048576" >&2; return 1; }
	x qemu-img convert -f qcow2 -O raw a.qcow2 back.img || return
	same "round trip" raw.img back.img
}

corpus node-exporter prometheus-node-exporter 0 "Go: serve /metrics once (uname collector), nodename as uname -n"
w_node_exporter() {
	local p body want
	p=$(port)
	want=$(</proc/sys/kernel/hostname)
	daemon ne prometheus-node-exporter --web.listen-address="127.0.0.1:$p" \
		--collector.disable-defaults --collector.uname
	wait_port ne "$p" || return
	body=$(http_get "$p" /metrics)
	stop ne 143 || return
	[[ $body == *"nodename=\"$want\""* ]] || { echo "check failed: /metrics lacks node_uname_info nodename=\"$want\"" >&2; return 1; }
}

# ---- daemons (started in the foreground, stopped by SIGTERM or their own command) ----

corpus nginx nginx 0 "master + 1 worker, GET of a generated file, SIGTERM"
w_nginx() {
	local p body
	p=$(port)
	mkdir www && text_file www/f.txt 300
	printf '%s\n' 'daemon off; master_process on; worker_processes 1; user root;' \
		"pid $W/nginx.pidfile; error_log stderr;" 'events { worker_connections 64; }' \
		"http { access_log off; client_body_temp_path $W/cb; proxy_temp_path $W/pt; fastcgi_temp_path $W/ft;" \
		"uwsgi_temp_path $W/ut; scgi_temp_path $W/st; server { listen 127.0.0.1:$p; root $W/www; } }" >nginx.conf
	daemon nginx nginx -c "$W/nginx.conf" -p "$W" -e stderr
	wait_port nginx "$p" || return
	body=$(http_get "$p" /f.txt)
	stop nginx || return
	check "body" "$(<www/f.txt)" "$body"
}

corpus redis redis-server 0 "redis-server + redis-cli: 50 INCRBY, RPUSH/LRANGE, SHUTDOWN NOSAVE"
w_redis() {
	local p i s=0 out
	p=$(port)
	daemon redis redis-server --port "$p" --bind 127.0.0.1 --save '' --appendonly no --daemonize no --dir "$W" --logfile ''
	wait_port redis "$p" || return
	for ((i = 1; i <= 50; i++)); do echo "INCRBY k $i"; s=$((s + i)); done >cmds
	printf 'RPUSH l a b c\nLRANGE l 0 -1\nGET k\n' >>cmds
	out=$(x redis-cli -p "$p" <cmds) || return
	# its status is not the point: the server's, after SHUTDOWN, is
	"${LAUNCH[@]}" redis-cli -p "$p" shutdown nosave >/dev/null
	waited redis || return
	check "replies" "$s" "${out##*$'\n'}" || return
	[[ $out == *$'a\nb\nc\n'* ]] || { echo "check failed: LRANGE did not give a b c" >&2; return 1; }
}

corpus memcached memcached 0 "set/get/incr over the text protocol (2 threads), SIGTERM"
w_memcached() {
	local p out l
	p=$(port)
	daemon memcached memcached -l 127.0.0.1 -p "$p" -U 0 -u root -t 2
	wait_port memcached "$p" || return
	exec 9<>"/dev/tcp/127.0.0.1/$p" || return
	printf 'set k 0 0 5\r\nhello\r\nget k\r\nset n 0 0 2\r\n40\r\nincr n 2\r\nquit\r\n' >&9
	out=''
	while IFS= read -r l <&9; do out+=${l%$'\r'}' '; done
	exec 9<&-
	stop memcached || return
	check "replies" "STORED VALUE k 0 5 hello END STORED 42 " "$out"
}

corpus sshd sshd 0 "key-based login of root on loopback, a remote command, SIGTERM"
w_sshd() {
	local p out
	p=$(port)
	mkdir -p /run/sshd
	ssh-keygen -q -t ed25519 -N '' -f hostkey && ssh-keygen -q -t ed25519 -N '' -f userkey || return
	printf '%s\n' "Port $p" 'ListenAddress 127.0.0.1' "HostKey $W/hostkey" "AuthorizedKeysFile $W/userkey.pub" \
		'PermitRootLogin prohibit-password' 'StrictModes no' 'UsePAM no' "PidFile $W/sshd.pidfile" \
		'PasswordAuthentication no' 'KbdInteractiveAuthentication no' >sshd_config
	daemon sshd /usr/sbin/sshd -D -e -f "$W/sshd_config"
	wait_port sshd "$p" || return
	out=$(x ssh -F none -i userkey -o StrictHostKeyChecking=no -o UserKnownHostsFile="$W/known" \
		-o BatchMode=yes -o LogLevel=ERROR -p "$p" root@127.0.0.1 'echo $((6 * 7)) $(cat /proc/sys/kernel/hostname)') || return
	stop sshd || return
	check "remote output" "42 $(</proc/sys/kernel/hostname)" "$out"
}

corpus lighttpd lighttpd 0 "GET of a generated file, SIGTERM"
w_lighttpd() {
	local p body
	p=$(port)
	mkdir www && text_file www/f.txt 300
	printf '%s\n' "server.document-root = \"$W/www\"" "server.port = $p" 'server.bind = "127.0.0.1"' \
		"server.pid-file = \"$W/lighttpd.pidfile\"" >lighttpd.conf
	daemon lighttpd lighttpd -D -f "$W/lighttpd.conf"
	wait_port lighttpd "$p" || return
	body=$(http_get "$p" /f.txt)
	stop lighttpd || return
	check "body" "$(<www/f.txt)" "$body"
}
