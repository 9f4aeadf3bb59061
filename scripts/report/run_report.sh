#!/usr/bin/env bash
# The report of `make run` (called by scripts/run.sh after the build):
#
#   1. the benchmarks that exist in build/bin (bench_page_frag,
#      bench_page_alloc_speed, bench_slab_bulk, bench_slab_prodcons,
#      bench_slab_vs_malloc, bench_threads_rss, bench_real_programs,
#      bench_startup), with options for a shorter run; one that is
#      missing or fails is noted and skipped;
#  1b. the slab allocators side by side: bench_slab_mem,
#      bench_slab_bulk_table, bench_sched_messaging (SLUB, SLAB and SLOB,
#      each booted in its own process);
#   2. build/bin/kmem-run, the page-allocator demo;
#   3. bench_peers_workloads under kmem (libkmem-malloc.so, SLUB), glibc,
#      jemalloc, mimalloc and tcmalloc (LD_PRELOAD; a peer that is not
#      installed is n/a), interleaved: for each round, for each workload,
#      for each allocator (starting at a different one each round), one run;
#      then one run of each under kmem built with KMEM_SLUB_STATS (build-stats/:
#      its SLUB counters, raw/kmemstat.txt), and bench_rss_floor: frag and
#      longlived replayed on a model of ideal size classes (raw/rss_floor.txt);
#  3b. the same workloads under kmem booted with slab=slab and slab=slob
#      (raw/peers-slab.tsv);
#  3c. bench/slob_malloc.sh: frag and longlived on glibc and SLOB's
#      free-list settings, at a smaller scale (raw/slob_malloc.md);
#      then scripts/report/traces.sh: kmem-trace on recorded programs and
#      on the kernel's own slab and page traffic;
#   4. scripts/report/render.sh: report/README.md and the PNG plots.
#
# Raw output goes to report/raw/.  Took 51 minutes on a shared 2-core host
# (load average 8-25).
#
#   scripts/report/run_report.sh [--quick]
#     --quick              1 round at scale 0.2 (a smoke test, ~1 minute)
#   Environment:
#     REPORT_ROUNDS=N      interleaved rounds of the peers workloads (default 5)
#     REPORT_SCALE=X       multiplies the peers workloads' op counts (default 1)
#     REPORT_DIR=dir       output directory (default report)
#     REPORT_BUILD_DIR=dir the build tree to take binaries from (default build)
#     REPORT_STATS_BUILD_DIR=dir  where kmem is built with KMEM_SLUB_STATS (default build-stats)
#     REPORT_WORKLOADS="hot larson ..."   a subset of the peers workloads
#     REPORT_SKIP_BENCHES=1  skip steps 1, 1b and 2 (peers only; REPORT_SKIP_SEEDS=1 too)
#     REPORT_SKIP_TRACES=1 skip the traces (scripts/report/traces.sh, before step 4)
#     REPORT_KMEM_RUN_CMDLINE="mem=64M ..."   kmem-run's boot command line
#     REPORT_SLAB_ROUNDS=N rounds of the peers workloads under kmem on SLAB and SLOB (default 1)
#     REPORT_SLOB_ROUNDS=N rounds of bench/slob_malloc.sh (default 1; REPORT_SKIP_SLOB_MALLOC=1 skips it)
#     REPORT_SLAB_TRACE=file  the kernel slab trace bench_slab_mem replays
#                          (default: the cut in bench/data/)
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

rounds=${REPORT_ROUNDS:-5}
scale=${REPORT_SCALE:-1}
out=${REPORT_DIR:-report}
workloads=(${REPORT_WORKLOADS:-hot larson prodcons frag longlived bulk server threads leak big stress bulk4096})
slob_scales="-x 0.1 -l 0.02"	# bench/slob_malloc.sh's frag and longlived scales (3c)
for arg in "$@"; do
	case $arg in
	--quick) rounds=1; scale=0.2; slob_scales="-x 0.02 -l 0.002" ;;
	-h|--help) sed -n '/^set /q; 2,$s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "usage: $0 [--quick]" >&2; exit 2 ;;
	esac
done

build=${REPORT_BUILD_DIR:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
bin=$build/bin
raw=$out/raw
rm -rf "$out"
mkdir -p "$raw"
rawabs=$(cd "$raw" && pwd)
start=$(date +%s)
notes=$raw/notes.txt		# one line per skipped or failed step, for the README
: >"$notes"
[ "${REPORT_BUILD_RC:-0}" != 0 ] &&
	echo "build failed: the full build failed (status $REPORT_BUILD_RC); the report's targets were built one by one" >>"$notes"
[ -n "${REPORT_BUILD_FAILED:-}" ] &&
	echo "build stale: these targets did not build, so what they measured is an older build's, if any: $REPORT_BUILD_FAILED" >>"$notes"

log() { printf '[report %4ds] %s\n' $(($(date +%s) - start)) "$*"; }

# ---- the machine and the build -------------------------------------------
{
	echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
	echo "ncpu=$(nproc)"
	echo "mem_mb=$(awk '/^MemTotal/ { print int($2 / 1024) }' /proc/meminfo)"
	echo "kernel=$(uname -sr)"
	echo "os=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
	echo "gcc=$(gcc -dumpfullversion 2>/dev/null)"
	echo "glibc=$(dpkg-query -W -f='${Version}' libc6 2>/dev/null)"
	echo "jemalloc_pkg=$(dpkg-query -W -f='${Version}' libjemalloc2 2>/dev/null)"
	echo "mimalloc_pkg=$(dpkg-query -W -f='${Version}' libmimalloc2.0 2>/dev/null)"
	echo "tcmalloc_pkg=$(dpkg-query -W -f='${Version}' libtcmalloc-minimal4 2>/dev/null)"
	echo "commit=$(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
	echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "rounds=$rounds"
	echo "scale=$scale"
} >"$raw/machine.txt"

# run NAME TIMEOUT CMD...: stdout to raw/NAME.txt, stderr to raw/NAME.err.
# Returns the command's status (124: timed out).
run() {
	local name=$1 limit=$2
	shift 2
	timeout --kill-after=10 "$limit" "$@" >"$raw/$name.txt" 2>"$raw/$name.err"
}

# bench BENCH TIMEOUT SHORT-ARGS...: run build/bin/BENCH with the short-run
# arguments; if it rejects them (status 2, usage), again with its defaults.
bench() {
	local b=$1 limit=$2 rc
	shift 2
	if [ ! -x "$bin/$b" ]; then
		log "$b: not built: skipped"
		echo "$b missing" >>"$notes"
		return
	fi
	log "$b $*"
	local t0=$(date +%s)
	run "$b" "$limit" "$bin/$b" "$@"
	rc=$?
	if [ "$rc" = 2 ] && [ $# -gt 0 ]; then
		log "$b: rejected '$*' (status 2): running it with its defaults"
		echo "$b usage: rejected the short-run options '$*', ran with defaults" >>"$notes"
		run "$b" "$limit" "$bin/$b"
		rc=$?
	fi
	echo "$b seconds $(($(date +%s) - t0))" >>"$raw/timings.txt"
	if [ "$rc" != 0 ]; then
		log "$b: FAILED, status $rc (see $raw/$b.err)"
		echo "$b failed status $rc" >>"$notes"
	fi
}

# Does BENCH's usage text (-h) mention OPTION?  (Read whole: -h exits 2.)
accepts() {
	local usage
	usage=$(timeout 10 "$bin/$1" -h 2>&1)
	grep -q -- "$2" <<<"$usage"
}

# The columns of raw/peers.tsv and raw/peers-slab.tsv.
peers_tsv_header() {
	printf 'round\talloc\twl\tops\tns_op\tcpu_ns_op\tsecs\tpeak_kb\tfinal_kb\tlive_kb\tmid_kb\terrors\trc\n'
}

# peers_tsv_rows ROUND RC FILE: the RESULT lines of bench_peers_workloads'
# output FILE as rows of those columns (RC: the run's exit status).
peers_tsv_rows() {
	awk -v r="$1" -v rc="$2" '
		/^RESULT/ {
			delete v
			for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r, v["alloc"],
			       v["wl"], v["ops"], v["ns_op"], v["cpu_ns_op"], v["secs"],
			       v["peak_kb"], v["final_kb"], v["live_kb"], v["mid_kb"],
			       v["errors"], rc
		}' "$3"
}

# The benchmarks of the slab allocators side by side: Mackall's and Enberg's
# tables (bench_slab_mem, on the boot-like workload and a cut of a real
# kernel's slab trace: the whole capture when REPORT_SLAB_TRACE names it),
# the SLAB bulk table (bench_slab_bulk_table) and the messaging benchmark
# (bench_sched_messaging, time and cachegrind's cache misses).
slab_benches() {
	local trace=${REPORT_SLAB_TRACE:-$root/bench/data/devbox-6.18-slab-cut.perf.txt.xz}
	local targs=()
	[ -r "$trace" ] && targs=(-t "$trace")
	bench bench_slab_mem 120 "${targs[@]}"
	bench bench_slab_bulk_table 120 -r 3 -n 200000
	bench bench_sched_messaging 240 -g 2 -l 50 -r 3 -m -G 1 -L 50 -M 3 -T 30
}

if [ -n "${REPORT_SKIP_BENCHES:-}${REPORT_SKIP_SEEDS:-}" ]; then
	echo "benchmarks skipped (REPORT_SKIP_BENCHES)" >>"$notes"
else
	# ---- 1. benchmarks (shorter runs than their defaults) ----------------
	bench bench_page_frag 300 -n 5000 -s 1,2,3,4,5 -o "$rawabs/page_frag.dat"
	bench bench_page_alloc_speed 300 -r 7
	bench bench_slab_bulk 300 -r 3 -n 500000
	if [ -x "$bin/bench_slab_prodcons" ]; then
		args=()
		accepts bench_slab_prodcons '-r ROUNDS' && args+=(-r 3)
		accepts bench_slab_prodcons '-C' && args+=(-C)
		bench bench_slab_prodcons 300 "${args[@]}"
	else
		bench bench_slab_prodcons 1
	fi
	bench bench_slab_vs_malloc 300 -r 3 -n 500000 -C
	bench bench_threads_rss 120
	bench bench_real_programs 400 -r 3
	bench bench_startup 300 -n 100 -r 3

	# ---- 1b. the slab allocators side by side (SLUB, SLAB, SLOB) ------------
	# Each boots every allocator in its own process; one that does not boot
	# in this build is n/a in its output.  About 30 s together.
	slab_benches
	# ---- 2. the page-allocator demo ---------------------------------------
	if [ -x "$bin/kmem-run" ]; then
		demo=()
		[ -n "${REPORT_KMEM_RUN_CMDLINE:-}" ] && demo=("$REPORT_KMEM_RUN_CMDLINE")
		log "kmem-run ${demo[*]} (page-allocator demo)"
		run kmem-run 120 "$bin/kmem-run" "${demo[@]}" || {
			log "kmem-run: FAILED, status $?"
			echo "kmem-run failed" >>"$notes"
		}
	else
		echo "kmem-run missing" >>"$notes"
	fi
fi

# ---- 3. peers workloads, interleaved --------------------------------------
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
find_lib() {
	local f
	f=$(/sbin/ldconfig -p 2>/dev/null | awk -v lib="$1" '$1 == lib { print $NF; exit }')
	[ -n "$f" ] && [ -e "$f" ] && { echo "$f"; return; }
	for f in "/usr/lib/$multiarch/$1" "/usr/lib/$1" "/usr/local/lib/$1"; do
		[ -e "$f" ] && { echo "$f"; return; }
	done
}

names=(kmem glibc jemalloc mimalloc tcmalloc)
declare -A lib=(
	[kmem]=$build/lib/libkmem-malloc.so
	[glibc]=""
	[jemalloc]=$(find_lib libjemalloc.so.2)
	[mimalloc]=$(find_lib libmimalloc.so.2)
	[tcmalloc]=$(find_lib libtcmalloc_minimal.so.4)
)
avail=()
: >"$raw/allocators.txt"
for a in "${names[@]}"; do
	if [ "$a" = glibc ] || [ -e "${lib[$a]}" ]; then
		avail+=("$a")
		echo "$a ${lib[$a]:-(libc malloc, nothing preloaded)}" >>"$raw/allocators.txt"
	else
		echo "$a n/a" >>"$raw/allocators.txt"
		log "$a: not installed (n/a)"
	fi
done

peers=$raw/peers.tsv
peers_tsv_header >"$peers"
kstats=$raw/kmemstat.txt
: >"$kstats"
: >"$raw/peers-failures.txt"
if [ ! -x "$bin/bench_peers_workloads" ]; then
	log "bench_peers_workloads: not built: no peers comparison"
	echo "bench_peers_workloads missing" >>"$notes"
else
	t0=$(date +%s)
	n=${#avail[@]}
	for ((r = 1; r <= rounds; r++)); do
		log "peers round $r/$rounds: ${workloads[*]} x ${avail[*]}"
		for wl in "${workloads[@]}"; do
			for ((i = 0; i < n; i++)); do
				a=${avail[$(((i + r - 1) % n))]}
				o=$raw/peers-$wl-$a-$r
				pre=()
				[ -n "${lib[$a]}" ] && pre=(LD_PRELOAD="${lib[$a]}")
				timeout --kill-after=10 180 env "${pre[@]}" PEERS_ALLOC="$a" \
					"$bin/bench_peers_workloads" "$wl" -x "$scale" >"$o.out" 2>"$o.err"
				rc=$?
				if ! grep -q '^RESULT' "$o.out" || [ "$rc" != 0 ]; then
					# A crash, a timeout (124), a wrong object (3) or a NULL (1).
					why="status $rc"
					[ "$rc" = 124 ] && why="timed out after 180 s"
					[ "$rc" -gt 128 ] && [ "$rc" != 124 ] && why="killed by signal $((rc - 128)) ($(kill -l $((rc - 128)) 2>/dev/null))"
					[ "$rc" = 3 ] && why="wrong or misaligned objects (status 3)"
					printf '%s\t%s\t%s\t%s\t%s\n' "$r" "$a" "$wl" "$why" \
						"$(tail -n 3 "$o.err" | tr '\t\n' '  ')" >>"$raw/peers-failures.txt"
					log "  $wl under $a: FAILED: $why"
				fi
				peers_tsv_rows "$r" "$rc" "$o.out" >>"$peers"
				# Keep the output of failed runs only.
				[ "$rc" = 0 ] && rm -f "$o.out" "$o.err"
			done
		done
	done
	echo "peers seconds $(($(date +%s) - t0))" >>"$raw/timings.txt"
	# kmem's SLUB counters (raw/kmemstat.txt): the objects that go through
	# sheaves are counted only with KMEM_SLUB_STATS (the kernel's
	# CONFIG_SLUB_STATS), which the timed build leaves out (an increment on
	# each fast path): one more run of each workload, under a build with it.
	sbuild=${REPORT_STATS_BUILD_DIR:-$root/build-stats}
	if [ -n "${lib[kmem]}" ] && [ -e "${lib[kmem]}" ] &&
	   cmake -S "$root" -B "$sbuild" -DKMEM_SLUB_STATS=ON >"$raw/build-stats.log" 2>&1 &&
	   cmake --build "$sbuild" -j"${JOBS:-2}" --target kmem-malloc >>"$raw/build-stats.log" 2>&1; then
		log "SLUB counters: ${workloads[*]} under kmem built with KMEM_SLUB_STATS"
		for wl in "${workloads[@]}"; do
			o=$raw/stats-$wl
			if timeout --kill-after=10 180 env LD_PRELOAD="$sbuild/lib/libkmem-malloc.so" PEERS_ALLOC=kmem \
				"$bin/bench_peers_workloads" "$wl" -x "$scale" >"$o.out" 2>"$o.err"; then
				sed -n "s/^KMEMSTAT /round=stats /p" "$o.out" >>"$kstats"
			else
				echo "the SLUB counters' run of $wl failed (exit $?): no counters for it" >>"$notes"
			fi
			rm -f "$o.out" "$o.err"
		done
	else
		echo "kmem with KMEM_SLUB_STATS could not be built (see raw/build-stats.log): no SLUB counters" >>"$notes"
	fi
	# What ideal size classes would need on the same operations (a simulation, under a second).
	: >"$raw/rss_floor.txt"
	for wl in "${workloads[@]}"; do
		[ "$wl" = frag ] || [ "$wl" = longlived ] || continue
		if [ ! -x "$bin/bench_rss_floor" ]; then
			echo "bench_rss_floor missing" >>"$notes"
			break
		fi
		timeout 60 "$bin/bench_rss_floor" "$wl" -x "$scale" >>"$raw/rss_floor.txt" 2>>"$raw/rss_floor.err" ||
			echo "bench_rss_floor $wl failed (exit $?)" >>"$notes"
	done
fi

# ---- 3b. kmem's malloc on SLAB and SLOB -------------------------------------
# The same workloads under libkmem-malloc.so booted with KMEM_CMDLINE=slab=slab
# and slab=slob (raw/peers-slab.tsv, same columns as peers.tsv), in
# REPORT_SLAB_ROUNDS rounds (default 1: each round of both costs about 30 s,
# more on SLOB's page walks).  A back-end that does not boot in this build
# (a probe: ls under it) is n/a (raw/allocators-slab.txt).
slab_rounds=${REPORT_SLAB_ROUNDS:-1}
echo "slab_rounds=$slab_rounds" >>"$raw/machine.txt"
slab_peers=$raw/peers-slab.tsv
peers_tsv_header >"$slab_peers"
: >"$raw/allocators-slab.txt"
if [ -x "$bin/bench_peers_workloads" ] && [ -e "${lib[kmem]}" ]; then
	t0=$(date +%s)
	for a in kmem-slab kmem-slob; do
		cmd="slab=${a#kmem-}"
		if ! env KMEM_CMDLINE="$cmd" LD_PRELOAD="${lib[kmem]}" ls / >/dev/null 2>"$raw/probe-$a.err"; then
			echo "$a n/a" >>"$raw/allocators-slab.txt"
			log "$a (KMEM_CMDLINE=$cmd): does not boot in this build (n/a)"
			continue
		fi
		echo "$a ${lib[kmem]} KMEM_CMDLINE=$cmd" >>"$raw/allocators-slab.txt"
		nfail=0
		for ((r = 1; r <= slab_rounds; r++)); do
			log "kmem on ${a#kmem-} (KMEM_CMDLINE=$cmd), round $r/$slab_rounds: ${workloads[*]}"
			for wl in "${workloads[@]}"; do
				# SLOB's frag and longlived past scale 0.2 take minutes (its page walk
				# grows with the square of the heap): section 3c runs them smaller.
				if [ "$a" = kmem-slob ] && { [ "$wl" = frag ] || [ "$wl" = longlived ]; } &&
				   awk -v s="$scale" 'BEGIN { exit !(s > 0.2) }'; then
					continue
				fi
				# Two failures (a hang costs the whole timeout): the rest of this back-end is skipped.
				if [ "$nfail" -ge 2 ]; then
					echo "$a: $wl skipped after two failed runs" >>"$notes"
					continue
				fi
				o=$raw/peers-$wl-$a-$r
				timeout --kill-after=10 120 env KMEM_CMDLINE="$cmd" LD_PRELOAD="${lib[kmem]}" PEERS_ALLOC="$a" \
					"$bin/bench_peers_workloads" "$wl" -x "$scale" >"$o.out" 2>"$o.err"
				rc=$?
				if ! grep -q '^RESULT' "$o.out" || [ "$rc" != 0 ]; then
					printf '%s\t%s\t%s\t%s\t%s\n' "$r" "$a" "$wl" "status $rc" \
						"$(tail -n 3 "$o.err" | tr '\t\n' '  ')" >>"$raw/peers-failures-slab.txt"
					log "  $wl under $a: FAILED: status $rc"
					nfail=$((nfail + 1))
				fi
				peers_tsv_rows "$r" "$rc" "$o.out" >>"$slab_peers"
				[ "$rc" = 0 ] && rm -f "$o.out" "$o.err"
			done
		done
	done
	echo "peers-slab seconds $(($(date +%s) - t0))" >>"$raw/timings.txt"
fi

# ---- 3c. SLOB under malloc: frag and longlived for each free-list setting --
# bench/slob_malloc.sh: glibc and slab=slob with slob.lists=1, 2 (breaks 128,
# 300, 1024, 2048) and 3, interleaved, at scales small enough for SLOB's walk
# (frag -x 0.1, longlived -x 0.02; --quick smaller): peak and final
# RSS and time against glibc's, and SLOB's statistics (raw/slob_malloc.md;
# REPORT_SLOB_ROUNDS rounds, default 1: about 3 minutes a round).
# REPORT_SKIP_SLOB_MALLOC=1 skips it.
if [ -z "${REPORT_SKIP_SLOB_MALLOC:-}" ] && [ -x "$bin/bench_peers_workloads" ] && [ -e "${lib[kmem]}" ]; then
	log "SLOB under malloc: bench/slob_malloc.sh (frag, longlived; each slob.lists setting)"
	t0=$(date +%s)
	bash "$root/bench/slob_malloc.sh" -r "${REPORT_SLOB_ROUNDS:-1}" $slob_scales "$build" \
		>"$raw/slob_malloc.md" 2>"$raw/slob_malloc.err" ||
		echo "bench/slob_malloc.sh failed (exit $?): see raw/slob_malloc.err" >>"$notes"
	echo "slob_malloc seconds $(($(date +%s) - t0))" >>"$raw/timings.txt"
fi

# ---- traces: kmem-trace on recorded programs and the kernel's own traffic --
if [ -z "${REPORT_SKIP_TRACES:-}" ]; then
	log "traces: kmem-trace record, import-perf, compare (scripts/report/traces.sh)"
	t0=$(date +%s)
	bash scripts/report/traces.sh "$out" "$build" >"$raw/traces.log" 2>&1 ||
		echo "traces failed (see raw/traces.log)" >>"$notes"
	echo "traces seconds $(($(date +%s) - t0))" >>"$raw/timings.txt"
fi

echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$raw/machine.txt"
echo "seconds=$(($(date +%s) - start))" >>"$raw/machine.txt"

# ---- 4. README.md and plots ------------------------------------------------
log "rendering $out/README.md"
bash scripts/report/render.sh "$out"
if [ -s "$out/peers_headline.md" ]; then
	echo
	echo "kmem beside the peers: ns per object (wall), ratio to the fastest; then the targets"
	echo
	cat "$out/peers_headline.md"
fi
if [ -s "$notes" ]; then
	echo "Skipped or failed steps:"
	sed 's/^/  /' "$notes"
fi
log "done: $out/README.md (open it for the kernel patches, the details and the plots)"
