#!/usr/bin/env bash
# kmem-trace (tools/trace/): import of the kernel's perf script text with
# exact counts (checked against an awk model of the same lines), replays of
# the result on kmem's SLUB and glibc, compare with its table and plot,
# every bad input (one line on stderr, a non-zero status, no crash), and a
# record -> replay round trip of a small program (same ops, the same live
# bytes after every op) with threads and a fork.
#
# Data: tests/data/kernel-{slab,page}-sample.perf.txt, cut from a Linux 6.18
# capture (bench/data/kernel-traces/ has the longer cuts).
# Environment (set by ctest): KMEM_BINARY_DIR, KMEM_SOURCE_DIR, KMEM_SANITIZE.
# Under a sanitizer, what preloads a library (record, the peers, kmem's
# malloc) is skipped: the rest runs.
set -u

SRC=${KMEM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
BIN=${KMEM_BINARY_DIR:-$SRC/build}
K=$BIN/bin/kmem-trace
DATA=$SRC/tests/data
if [ ! -x "$K" ]; then
	echo "skipped: $K not built"
	exit 77
fi
preload=1
[ -n "${KMEM_SANITIZE:-}" ] && preload=0

T=$(mktemp -d "${TMPDIR:-/tmp}/kmem-trace-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
passed=0
failed=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

# ---- import: the counts of an awk model of the same lines -------------------
# The model: an address (a pfn for pages) is live from its allocation to its
# free; a free of an address not live is of a block from before the capture;
# an allocation of a live address frees it first (its free had no event).
model() {
	awk '
	function val(k,   i) { for (i = 6; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
	function alloc(key, bytes, kind) {
		if (key in live) { implicit++; livebytes -= live[key]; frees[lkind[key]]++; nlive-- }
		live[key] = bytes; lkind[key] = kind; livebytes += bytes; nlive++
		if (livebytes > peak) peak = livebytes
		allocs[kind]++
	}
	function release(key) {
		if (!(key in live)) { unknown++; return }
		livebytes -= live[key]; frees[lkind[key]]++; nlive--; delete live[key]; delete lkind[key]
	}
	{ ev = $5; sub(/:$/, "", ev) }
	ev == "kmem:kmalloc" { alloc(val("ptr"), val("bytes_req"), "kmalloc") }
	ev == "kmem:kmem_cache_alloc" { alloc(val("ptr"), val("bytes_req"), "cache") }
	ev == "kmem:kfree" || ev == "kmem:kmem_cache_free" { p = val("ptr"); if (p == "(nil)") nulls++; else release(p) }
	ev == "kmem:mm_page_alloc" { alloc("pfn" val("pfn"), 4096 * 2 ^ val("order"), "page") }
	ev == "kmem:mm_page_free" { release("pfn" val("pfn")) }
	END {
		ops = 0
		for (k in allocs) ops += allocs[k]
		for (k in frees) ops += frees[k]
		printf "ops=%d unknown=%d implicit=%d nulls=%d live_blocks=%d live_bytes=%d peak=%d\n",
		       ops, unknown, implicit, nulls, nlive, livebytes, peak
	}' "$1"
}

for kind in slab page; do
	in=$DATA/kernel-$kind-sample.perf.txt
	tr=$T/$kind.trace
	if ! "$K" import-perf "$in" -o "$tr" >"$T/import.$kind" 2>&1; then
		fail "import-perf $kind sample: $(head -n 2 "$T/import.$kind")"
		continue
	fi
	"$K" info "$tr" >"$T/info.$kind" 2>&1
	want=$(model "$in")
	got=$(awk '
		/ operations,/ { for (i = 1; i <= NF; i++) if ($(i + 1) == "operations,") ops = $i }
		/live bytes at the peak/ { peak = $6; sub(/,/, "", peak); bytes = $10; blocks = $12 }
		/frees of blocks from before/ { u = $8; sub(/;/, "", u); im = $15; sub(/;/, "", im) }
		/frees of NULL/ { n = $5 }
		END { printf "ops=%d unknown=%d implicit=%d nulls=%d live_blocks=%d live_bytes=%d peak=%d\n",
		      ops, u, im, nl, blocks, bytes, peak }' nl="$(awk '/frees of NULL/ { print $5 }' "$T/import.$kind")" "$T/info.$kind")
	if [ "$got" = "$want" ]; then
		ok "import-perf $kind sample: $got"
	else
		fail "import-perf $kind sample: got $got, the model says $want"
		sed 's/^/    /' "$T/info.$kind"
	fi
	# The event counts import-perf reports are the lines' own.
	for ev in kmalloc kfree kmem_cache_alloc kmem_cache_free mm_page_alloc mm_page_free; do
		n=$(grep -c " kmem:$ev: " "$in")
		g=$(awk -v e="$ev" '$1 == e { print $2 }' "$T/import.$kind")
		if [ "$n" != 0 ] && [ "$g" != "$n" ]; then
			fail "import-perf $kind sample: $ev $g, the file has $n"
		fi
	done

	# Replays: every op, and the live bytes the model ends with.
	lkb=$(( $(sed 's/.*live_bytes=\([0-9]*\).*/\1/' <<<"$want") >> 10 ))
	mops=$(sed 's/ops=\([0-9]*\).*/\1/' <<<"$want")
	for a in slub glibc; do
		out=$("$K" replay "$tr" --on "$a" 2>"$T/err") || { fail "replay $kind on $a: $(head -n 1 "$T/err")"; continue; }
		res=$(grep '^RESULT' <<<"$out")
		if grep -q " ops=$mops " <<<"$res" && grep -q " live_end_kb=$lkb " <<<"$res"; then
			ok "replay $kind sample on $a: $mops ops, $lkb KiB live at the end"
		else
			fail "replay $kind sample on $a: want ops=$mops live_end_kb=$lkb: $res"
		fi
	done
done

# kmem's pages on a kernel's page stream, with and without the free-to-tail heuristic.
for tp in 0 1; do
	res=$("$K" replay "$T/page.trace" --on "page_alloc.tail_placement=$tp" 2>&1 | grep '^RESULT')
	if grep -q 'kmem_peak_kb=[1-9]' <<<"$res" && grep -q 'unusable9_end=[01]\.' <<<"$res"; then
		ok "replay page sample with page_alloc.tail_placement=$tp: kmem's pages and the unusable index"
	else
		fail "replay page sample with page_alloc.tail_placement=$tp: $res"
	fi
done

# SLAB and SLOB replay the kernel's slab stream as SLUB does.
for b in slab slob; do
	"$K" replay "$T/slab.trace" --on "$b" >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc = 0 ] && grep -q '^RESULT.*kmem_peak_kb=[1-9]' "$T/out"; then
		ok "replay on $b"
	else
		fail "replay on $b: status $rc: $(head -n 2 "$T/err")"
	fi
done
# A kmem setting that does not boot: one line, kmem's own reason, status 1.
"$K" replay "$T/slab.trace" --on slob:slob.lists=4 >"$T/out" 2>"$T/err"
rc=$?
if [ $rc = 1 ] && [ "$(wc -l <"$T/err")" = 1 ] &&
   grep -q 'kmem does not boot with "slab=slob slob.lists=4": .*slob.lists' "$T/err"; then
	ok "replay on slob:slob.lists=4: $(cat "$T/err")"
else
	fail "replay on slob:slob.lists=4: status $rc: $(head -n 2 "$T/err")"
fi

# ---- compare on a tiny trace ---------------------------------------------------
on=slub,glibc,slub:slub_min_order=1,slab
[ $preload = 1 ] && on=$on,jemalloc,mimalloc,tcmalloc
if "$K" compare "$T/slab.trace" --on "$on" --png "$T/cmp.png" >"$T/cmp" 2>"$T/cmp.err"; then
	rows=$(grep -cE '^(slub|glibc|slub:slub_min_order=1|slab|jemalloc|mimalloc|tcmalloc) +[0-9]+ ' "$T/cmp")
	nas=$(grep -cE '^[a-z:_=0-9]+ +n/a: ' "$T/cmp")
	peers=$(grep -cE '^(jemalloc|mimalloc|tcmalloc) ' "$T/cmp")
	if [ "$rows" -ge 3 ] && [ $((rows + nas)) = $((4 + peers)) ] && grep -qE '^slab +(n/a: |[0-9])' "$T/cmp" &&
	   { ! command -v gnuplot >/dev/null || [ -s "$T/cmp.png" ]; }; then
		ok "compare: $rows allocators in the table, $nas n/a$(command -v gnuplot >/dev/null && echo ', and the plot')"
	else
		fail "compare: $rows rows, $nas n/a, png $(ls -la "$T/cmp.png" 2>&1)"
		sed 's/^/    /' "$T/cmp"
	fi
else
	fail "compare: status $?: $(head -n 3 "$T/cmp.err")"
fi

# ---- bad input: one line on stderr, a non-zero status, no crash ---------------
# bad NAME PATTERN CMD...: the command must fail (not by a signal) with one
# line on stderr matching PATTERN.
bad() {
	local name=$1 pat=$2
	shift 2
	"$@" >"$T/bad.out" 2>"$T/bad.err"
	local rc=$?
	if [ $rc = 0 ] || [ $rc -ge 128 ] && [ $rc != 127 ]; then
		fail "$name: status $rc"
	elif [ "$(wc -l <"$T/bad.err")" != 1 ] || ! grep -qE "$pat" "$T/bad.err"; then
		fail "$name: want one line matching '$pat', got: $(head -n 3 "$T/bad.err" | tr '\n' '|')"
	else
		ok "$name: $(cat "$T/bad.err")"
	fi
}
good=$T/slab.trace
size=$(stat -c %s "$good")
head -c $((size - 7)) "$good" >"$T/truncated.trace"
head -c 40 "$good" >"$T/truncated2.trace"
head -c 20 "$good" >"$T/truncated3.trace"
cp "$good" "$T/corrupt.trace"
printf '\x55\xaa\x55' | dd of="$T/corrupt.trace" bs=1 seek=$((size / 2)) conv=notrunc status=none
cp "$good" "$T/version.trace"
printf '\x09' | dd of="$T/version.trace" bs=1 seek=8 conv=notrunc status=none
printf 'hello\n' >"$T/text.trace"
: >"$T/empty.trace"
head -n 50 "$DATA/kernel-slab-sample.perf.txt" | sed 's/ kmem:/ sched:/' >"$T/nokmem.txt"
for f in truncated truncated2 truncated3 corrupt version text empty; do
	case $f in
	truncated*) pat='truncated trace' ;;
	corrupt) pat='corrupt trace' ;;
	version) pat='version 9; this kmem-trace reads version 1' ;;
	*) pat='not a kmem-trace file' ;;
	esac
	bad "replay of a $f trace" "$pat" "$K" replay "$T/$f.trace" --on slub
done
bad "info of a corrupt trace" 'corrupt trace' "$K" info "$T/corrupt.trace"
bad "compare of a truncated trace" "truncated trace" "$K" compare "$T/truncated.trace" --on slub,glibc
bad "replay of a missing file" 'No such file' "$K" replay "$T/nothere.trace" --on glibc
bad "import-perf of text without kmem events" 'no kmem events' "$K" import-perf "$T/nokmem.txt" -o "$T/x.trace"
bad "import-perf of a missing file" 'No such file' "$K" import-perf "$T/nothere.txt" -o "$T/x.trace"
bad "replay on an unknown allocator" "unknown allocator 'nosuch'" "$K" replay "$good" --on nosuch
bad "compare with an unknown allocator" "unknown allocator 'nosuch'" "$K" compare "$good" --on slub,nosuch
bad "parameters on a peer" 'apply to kmem' "$K" replay "$good" --on glibc:slub_min_order=1
bad "a kmem parameter that does not exist" 'kmem does not boot' "$K" replay "$good" --on slub:no_such_param=1
bad "record of a program that cannot start" 'cannot run /nonexistent/prog' "$K" record -o "$T/x.trace" -- /nonexistent/prog
# Out of memory: order-10 blocks (4 MiB) on a machine of 8 MiB.
for i in $(seq 1 8); do
	printf '  cc1  1 [000]  1.%06d: kmem:mm_page_alloc: page=0x%x pfn=0x%x order=10 migratetype=0 gfp_flags=GFP_KERNEL\n' \
		"$i" $((i * 1024)) $((i * 1024))
done >"$T/huge.txt"
"$K" import-perf "$T/huge.txt" -o "$T/huge.trace" >/dev/null
bad "replay that runs out of memory" 'out of memory at operation [0-9]+ of 8' "$K" replay "$T/huge.trace" --on slub --cmdline mem=8M

# ---- record -> replay round trip ---------------------------------------------
if [ $preload = 0 ]; then
	echo "skipped: record and the peers under a sanitizer build (KMEM_SANITIZE=$KMEM_SANITIZE): LD_PRELOAD cannot work"
elif ! command -v cc >/dev/null; then
	fail "record: no C compiler for the test program"
else
	# A program that counts its own live bytes (no stdio until the end: every
	# malloc call in it is its own) and prints them after every op.
	cat >"$T/rt.c" <<-'EOF'
		#include <pthread.h>
		#include <stdio.h>
		#include <stdlib.h>
		#include <string.h>
		#include <sys/wait.h>
		#include <unistd.h>
		enum { N = 500, ROUNDS = 8 };
		static unsigned long long curve[N * ROUNDS + 8];
		static int n;
		static void *handoff[64];
		static void *thread_fn(void *arg)
		{
			(void)arg;
			for (int i = 0; i < 64; i++)
				handoff[i] = malloc(100 + i);
			return NULL;
		}
		int main(int argc, char **argv)
		{
			static void *p[N];
			static size_t sz[N];
			unsigned long long live = 0, x = 12345;
			for (int r = 0; r < ROUNDS; r++)
				for (int i = 0; i < N; i++) {
					x = x * 6364136223846793005ULL + 1442695040888963407ULL;
					size_t s = (x >> 33) % 3000 + 1;
					if (p[i] && (x & 3) == 0) {
						live -= sz[i];
						p[i] = realloc(p[i], s);
					} else if (p[i]) {
						free(p[i]);
						live -= sz[i];
						p[i] = NULL;
						curve[n++] = live;
						continue;
					} else if ((x & 7) == 1) {
						p[i] = calloc(1, s);
					} else if ((x & 7) == 2) {
						if (posix_memalign(&p[i], 64, s))
							return 1;
					} else if ((x & 7) == 3) {
						p[i] = aligned_alloc(256, 256 * (s / 256 + 1));
						s = 256 * (s / 256 + 1);
					} else {
						p[i] = malloc(s);
					}
					live += s;
					sz[i] = s;
					curve[n++] = live;
				}
			if (argc > 1) {
				/* Blocks made by a thread, freed by main; and a child. */
				pthread_t t;
				pthread_create(&t, NULL, thread_fn, NULL);
				pthread_join(t, NULL);
				for (int i = 0; i < 64; i++)
					free(handoff[i]);
				pid_t c = fork();
				if (c == 0) {
					void *volatile q = malloc(12345);
					free(q);
					_exit(0);
				}
				waitpid(c, NULL, 0);
				return 0;
			}
			for (int i = 0; i < n; i++)
				printf("%llu\n", curve[i]);
			return 0;
		}
	EOF
	if ! cc -O1 -pthread "$T/rt.c" -o "$T/rt" 2>"$T/cc.err"; then
		fail "record: the test program does not build: $(head -n 3 "$T/cc.err")"
	else
		"$K" record -o "$T/rt.trace" -- "$T/rt" >"$T/own.txt" 2>"$T/rec.err"
		rc=$?
		"$K" replay "$T/rt.trace" --on glibc --live-out "$T/replayed.txt" >"$T/rep.out" 2>&1
		# The program's ops, then its stdio's buffer: one op more at the end.
		nown=$(wc -l <"$T/own.txt")
		if [ $rc = 0 ] && head -n "$nown" "$T/replayed.txt" | cmp -s - "$T/own.txt" &&
		   [ "$(wc -l <"$T/replayed.txt")" -le $((nown + 2)) ] && grep -q "ops=$(wc -l <"$T/replayed.txt") " "$T/rep.out"; then
			ok "record -> replay on glibc: the program's $nown ops, the same live bytes after every one"
		else
			fail "record -> replay: status $rc, $nown ops of its own, $(wc -l <"$T/replayed.txt") replayed: $(head -n 2 "$T/rec.err" "$T/rep.out" | tr '\n' '|')"
		fi
		for a in slub jemalloc; do
			out=$("$K" replay "$T/rt.trace" --on "$a" 2>&1)
			if grep -q "^RESULT alloc=$a ops=$(wc -l <"$T/replayed.txt") " <<<"$out" ||
			   { [ $a != slub ] && grep -q 'is not installed' <<<"$out"; }; then
				ok "record -> replay on $a: $(head -n 1 <<<"$out")"
			else
				fail "record -> replay on $a: $out"
			fi
		done
		# Threads: the thread's blocks freed by main, in order; a child to its own file.
		"$K" record --children -o "$T/mt.trace" -- "$T/rt" threads 2>"$T/rec.err"
		rc=$?
		kids=$(ls "$T"/mt.trace.* 2>/dev/null | wc -l)
		info=$("$K" info "$T/mt.trace" 2>&1)
		out=$("$K" replay "$T/mt.trace" --on glibc --threads 2>&1)
		if [ $rc = 0 ] && [ "$kids" = 1 ] && grep -q ', 2 threads,' <<<"$info" &&
		   grep -q 'frees of blocks from before the trace: 0; addresses given again while live: 0' <<<"$info" &&
		   grep -q '^RESULT' <<<"$out" && "$K" replay "$T"/mt.trace.* --on glibc >/dev/null 2>&1; then
			ok "record with a thread and a fork: 2 threads, cross-thread frees in order, the child's own trace; --threads replays"
		else
			fail "record with threads: status $rc, $kids child files: $(tr '\n' '|' <<<"$info") $(head -n 2 <<<"$out")"
		fi
		# A trace is compact: at most ~8 bytes an op.
		bpo=$(awk '/bytes\/op/ { gsub(/[()]/, ""); for (i = 1; i <= NF; i++) if ($(i + 1) == "bytes/op") print $i }' <<<"$("$K" info "$T/rt.trace")")
		if awk -v b="$bpo" 'BEGIN { exit !(b > 0 && b <= 9) }'; then
			ok "record: $bpo bytes an op"
		else
			fail "record: $bpo bytes an op"
		fi
	fi
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
