#!/usr/bin/env bash
# report/README.md and the plots, from report/raw/ (written by
# run_report.sh).  bash, awk, sed and gnuplot only; can be re-run alone:
#
#   scripts/report/render.sh [DIR]      (default: report)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-report}
raw=$out/raw
md=$out/README.md
here=scripts/report

[ -d "$raw" ] || { echo "render.sh: no $raw (run scripts/report/run_report.sh)" >&2; exit 1; }

get() { sed -n "s/^$1=//p" "$raw/machine.txt" 2>/dev/null | tail -n 1; }
have() { [ -s "$raw/$1.txt" ]; }
note() { grep -q "^$1 " "$raw/notes.txt" 2>/dev/null; }
# One line about a benchmark that did not run (missing or failed).
status_line() {
	local b=$1
	if note "$b missing"; then
		echo "_\`$b\` was not built: skipped._"
	elif note "$b failed"; then
		echo "**\`$b\` failed ($(grep "^$b failed" "$raw/notes.txt" | head -n 1 | cut -d' ' -f3-)); its stderr:**"
		echo
		echo '```'
		tail -n 15 "$raw/$b.err" 2>/dev/null
		echo '```'
	fi
	if ! have "$b" && ! note "$b missing" && ! note "$b failed"; then
		echo "_\`$b\` did not run in this report._"
	fi
	if note "$b usage"; then
		echo "_Note: \`$b\` rejected the short-run options; it ran with its defaults._"
	fi
}
# Lines FROM..TO (sed address regexps) of raw/NAME.txt, as a code block;
# a fourth argument "x" leaves out the TO line.
excerpt() {
	echo '```'
	if [ "${4:-}" = x ]; then
		sed -n "/$2/,/$3/{/$3/!p}" "$raw/$1.txt"
	else
		sed -n "/$2/,/$3/p" "$raw/$1.txt"
	fi
	echo '```'
}

# ---- peers: tables (awk) and plots (gnuplot) -------------------------------
peers_ok=
if [ -s "$raw/peers.tsv" ] && [ "$(wc -l <"$raw/peers.tsv")" -gt 1 ]; then
	touch "$raw/kmemstat.txt" "$raw/peers-failures.txt" "$raw/rss_floor.txt"
	awk -f "$here/common.awk" -f "$here/peers.awk" -v out="$out" "$raw/allocators.txt" "$raw/peers.tsv" \
		"$raw/kmemstat.txt" "$raw/peers-failures.txt" "$raw/rss_floor.txt" && peers_ok=1
fi

# kmem's malloc on SLAB and SLOB beside SLUB and the peers (slab_peers.awk).
if [ -n "$peers_ok" ] && [ -e "$raw/peers-slab.tsv" ]; then
	touch "$raw/allocators-slab.txt" "$raw/peers-failures-slab.txt"
	awk -f "$here/common.awk" -f "$here/slab_peers.awk" -v out="$out" -v srounds="$(get slab_rounds)" "$raw/allocators.txt" \
		"$raw/allocators-slab.txt" "$raw/peers.tsv" "$raw/peers-slab.tsv" \
		"$raw/peers-failures-slab.txt" || rm -f "$out/peers_slab.md"
fi

# The slab allocators side by side: bench_slab_mem (Mackall's and Enberg's
# tables), bench_slab_bulk_table, bench_sched_messaging.
slab_section() {
	local m=$raw/bench_slab_mem.txt
	echo "## The slab allocators side by side"
	echo
	echo "SLUB, SLAB and SLOB on the same workloads, each booted in its own process (\`slab=\`);"
	echo "an allocator that does not boot in this build shows n/a. docs/allocators.md explains the methods."
	echo
	echo "### Mackall's table: SLOB's split free lists (Mackall 2008) — bench_slab_mem"
	echo
	status_line bench_slab_mem
	if have bench_slab_mem; then
		echo "A boot-like workload with the patch's statistics (22,500 cache allocations, 12,100 frees,"
		echo "10,250 kmallocs of which 5,450 stay live, a few page-sized objects; seeded, the same on every"
		echo "allocator), SLOB's statistics file after it with one list, two (break 300) and three, beside"
		echo "the patch's own (one list: 427 pages for 245 of data, +74%; split: 259 for 244, +6%);"
		echo "then the second reading of the patch's figures (boot12k: its slob line counting kmallocs too,"
		echo "12,280 cache allocations, 932 KB live), and where SLOB's pages go (headers, rounding, holes):"
		echo
		echo '```'
		sed -n '/^Boot-like workload/,/^WORKLOAD/{/^WORKLOAD/!p}' "$m"
		sed -n "/^== Mackall's table/,/^== Enberg's table/{/^== Enberg's table/!p}" "$m"
		echo '```'
		echo
		echo "### Enberg's table: slab pages against live data, SLUB, SLAB, SLOB — bench_slab_mem"
		echo
		echo "The boot-like workload and a real Linux 6.18 kernel's slab traffic (\`perf script\` of"
		echo "kmem:kmalloc/kfree/kmem_cache_alloc/kmem_cache_free during a build, bench/data/), replayed on"
		echo "each allocator: the slab pages held (/proc/meminfo Slab's counters) against the pages the"
		echo "live objects' bytes fill, at the end and at the peak."
		echo
		echo '```'
		sed -n '/^Trace /,/^$/p' "$m"
		sed -n "/^== Enberg's table/,/^RESULT/{/^RESULT/!p}" "$m"
		echo '```'
		echo
	fi

	echo "### The SLAB bulk table (Brouer 2015) on each allocator — bench_slab_bulk_table"
	echo
	status_line bench_slab_bulk_table
	if have bench_slab_bulk_table; then
		echo "256-byte objects; single alloc+free loops against \`kmem_cache_alloc_bulk\`/\`free_bulk\`, per"
		echo "object, on SLUB, SLAB with its default tunables and SLAB with \`limit\` raised through"
		echo "/proc/slabinfo, beside the patch's figures (flat to the array's limit, 4.2 ns at 30, rising"
		echo "to 22.6 ns at 4096):"
		echo
		echo '```'
		sed -n '/^SLUB  /,$p' "$raw/bench_slab_bulk_table.txt" | grep -v '^RESULT'
		echo '```'
		echo
	fi

	echo "### The messaging benchmark of SLAB's byte-sized freelist index (Kim 2013) — bench_sched_messaging"
	echo
	status_line bench_sched_messaging
	if have bench_sched_messaging; then
		echo "\`perf bench sched messaging\`'s counterpart: groups of 20 sender and 20 receiver threads, each"
		echo "message a skbuff_head_cache object and a kmalloc(448) freed by the receiving thread; time, and"
		echo "cache misses from cachegrind's simulated caches (medians of 3 runs; this host has no hardware"
		echo "counters), on SLUB and SLAB's three freelist layouts; the patch: -5% cache misses per step,"
		echo "-3.1% and -4.2% time."
		echo
		echo '```'
		sed -n '/^Time:/,$p' "$raw/bench_sched_messaging.txt" | grep -v '^RESULT'
		echo '```'
		echo
	fi
}

plots=()
if command -v gnuplot >/dev/null; then
	if [ -n "$peers_ok" ]; then
		gnuplot <<-EOF 2>"$raw/gnuplot.err" && plots+=(peers_time.png)
		set terminal pngcairo size 1200,600 font ',10' noenhanced
		set output '$out/peers_time.png'
		set title 'Peers: wall time per object, relative to the fastest allocator (lower is better, log scale)'
		set datafile separator '\t'
		set datafile missing '-'
		set style data histograms
		set style histogram clustered gap 1
		set style fill solid 0.85 border -1
		set boxwidth 0.9
		set logscale y 2
		set yrange [0.5:*]
		set ytics (0.5, 1, 1.2, 2, 4, 8, 16, 32, 64)
		set grid ytics
		set key top left
		set xtics nomirror
		set ylabel 'time / fastest'
		set arrow 1 from graph 0, first 1.2 to graph 1, first 1.2 nohead dt 2 lc rgb '#d62728'
		set label 1 '1.2x' at graph 1.005, first 1.2 tc rgb '#d62728'
		plot '$raw/time_ratio.dat' using 2:xtic(1) title columnheader(2) lc rgb '#d62728', \
		     '' using 3 title columnheader(3) lc rgb '#7f7f7f', \
		     '' using 4 title columnheader(4) lc rgb '#1f77b4', \
		     '' using 5 title columnheader(5) lc rgb '#2ca02c', \
		     '' using 6 title columnheader(6) lc rgb '#ff7f0e'
		EOF
		gnuplot <<-EOF 2>>"$raw/gnuplot.err" && plots+=(peers_rss.png)
		set terminal pngcairo size 1200,600 font ',10' noenhanced
		set output '$out/peers_rss.png'
		set title 'Peers: resident memory (MB; lower is better)'
		set datafile separator '\t'
		set datafile missing '-'
		set style data histograms
		set style histogram clustered gap 1
		set style fill solid 0.85 border -1
		set boxwidth 0.9
		set yrange [0:*]
		set grid ytics
		set key top left
		set ylabel 'MB'
		plot '$raw/rss.dat' using 2:xtic(1) title columnheader(2) lc rgb '#d62728', \
		     '' using 3 title columnheader(3) lc rgb '#7f7f7f', \
		     '' using 4 title columnheader(4) lc rgb '#1f77b4', \
		     '' using 5 title columnheader(5) lc rgb '#2ca02c', \
		     '' using 6 title columnheader(6) lc rgb '#ff7f0e'
		EOF
	fi
	if [ -s "$raw/page_frag.dat" ]; then
		hdr=$(sed -n '1s/^# //p' "$raw/page_frag.dat")
		gnuplot <<-EOF 2>>"$raw/gnuplot.err" && plots+=(tail_placement_unusable.png)
		set terminal pngcairo size 1000,550 font ',10' noenhanced
		set output '$out/tail_placement_unusable.png'
		set title "Buddy free-to-tail: unusable free space index at order 9 over time (mean of the random seeds)\n$hdr"
		set xlabel 'step'
		set ylabel 'unusable free space index (lower is better)'
		set grid
		set key bottom right
		set yrange [0:*]
		plot '$raw/page_frag.dat' using 1:(\$2/1000) with lines lw 2 lc rgb '#b2182b' title 'tail placement off (page_alloc.tail_placement=0)', \
		     '' using 1:(\$3/1000) with lines lw 2 lc rgb '#2166ac' title 'tail placement on (free to tail)'
		EOF
	fi
fi
has_plot() { case " ${plots[*]} " in *" $1 "*) return 0 ;; esac; return 1; }
# Plots that should be there and are not: said in the README, not left out silently.
plot_notes=()
if ! command -v gnuplot >/dev/null; then
	plot_notes+=("plots: gnuplot is not installed (scripts/install-deps.sh installs gnuplot-nox): no PNG plots")
else
	[ -n "$peers_ok" ] && ! has_plot peers_time.png &&
		plot_notes+=("plot peers_time.png failed (see raw/gnuplot.err)")
	[ -n "$peers_ok" ] && ! has_plot peers_rss.png &&
		plot_notes+=("plot peers_rss.png failed (see raw/gnuplot.err)")
	[ -s "$raw/page_frag.dat" ] && ! has_plot tail_placement_unusable.png &&
		plot_notes+=("plot tail_placement_unusable.png failed (see raw/gnuplot.err)")
fi

# ---- README.md ---------------------------------------------------------------
{
	echo "# kmem report (\`make run\`)"
	echo
	echo "Generated $(get date) by \`make run\` (scripts/run.sh -> scripts/report/run_report.sh)"
	echo "in $(get seconds) s, at commit $(get commit)."
	echo
	echo "Machine: $(get cpu), $(get ncpu) CPUs, $(get mem_mb) MB, $(get os), $(get kernel), gcc $(get gcc)."
	echo "Load average (1, 5, 15 min) at the start: $(get load_start); at the end: $(get load_end)."
	ls=$(get load_start); ls=${ls%% *}
	if awk -v l="$ls" -v n="$(get ncpu)" 'BEGIN { exit !(l + 0 > n * 0.5) }'; then
		echo "**The machine was busy with other work during this run** (load above half its CPUs):"
		echo "wall times are inflated and noisy; the CPU-time table and kmem's path counters are"
		echo "steadier, and the ratios between allocators (interleaved runs) matter more than the absolute ns."
	fi
	echo
	echo "Contents: [kmem beside the peers](#kmem-beside-glibc-jemalloc-mimalloc-and-tcmalloc) ·"
	echo "[the kernel patches](#the-kernel-patches) · [page-allocator demo](#page-allocator-demo-kmem-run) · [files](#files)"
	echo

	echo "## kmem beside glibc, jemalloc, mimalloc and tcmalloc"
	echo
	if [ -z "$peers_ok" ]; then
		echo "_No peers results (bench_peers_workloads did not run; see raw/notes.txt)._"
	else
		echo "\`build/bin/bench_peers_workloads WORKLOAD\` (bench/peers_workloads.c) calls plain"
		echo "malloc/free; the allocator is chosen with LD_PRELOAD. One process per workload and"
		echo "allocator; $(get rounds) interleaved round(s) (for each round, each workload, each"
		echo "allocator, starting with a different allocator each round), op counts x$(get scale); medians."
		echo
		echo "| allocator | library |"
		echo "|---|---|"
		while read -r a path; do
			case $a in
			kmem) v="kmem's SLUB back-end, default boot (sheaves on, malloc's fine size classes, growable memory)" ;;
			glibc) v="glibc $(get glibc)" ;;
			jemalloc) v="Debian libjemalloc2 $(get jemalloc_pkg)" ;;
			mimalloc) v="Debian libmimalloc2.0 $(get mimalloc_pkg)" ;;
			tcmalloc) v="Debian libtcmalloc-minimal4 $(get tcmalloc_pkg) (gperftools)" ;;
			esac
			[ "$path" = n/a ] && v="**not installed: n/a**"
			echo "| $a | \`$path\` — $v |"
		done <"$raw/allocators.txt"
		echo
		echo "| workload | what it does |"
		echo "|---|---|"
		echo "| hot N B | one thread: malloc(N) + free in a tight loop, 40 M pairs per size |"
		echo "| larson | 2 threads, each replacing random slots of a 5000-object array (16..1024 B); every 20000 replacements the threads swap arrays, so each frees what the other allocated; 20 M replacements; ns per replacement (free + malloc), wall time over both threads |"
		echo "| prodcons | a producer thread mallocs 256 B, a consumer thread frees, through a 4096-slot lock-free ring (indices published every 32 objects); 20 M objects |"
		echo "| frag | 1 M objects of 16..512 B, 90% freed in random order, then 2..8 KiB objects up to half the freed bytes; RSS against the live bytes |"
		echo "| longlived | a ~100 MB population, 4 M replacements (free a random object, allocate back to the budget) while the size mix drifts through 4 phases |"
		echo "| bulk | rounds of malloc 1000 x 256 B then free the 1000 in order |"
		echo
		echo "Every object is written (frag and longlived: entirely) and its tag checked when freed."
		if [ "$(get ncpu)" -ge 2 ] 2>/dev/null; then
			echo "The two threads of larson and prodcons are pinned to two different CPUs, so every"
			echo "hand-off crosses cores (on a busy machine a pinned thread also waits for its CPU)."
		else
			echo "This machine has one CPU: the two threads of larson and prodcons share it, so their"
			echo "hand-offs do not cross cores, unlike on the machines the targets were set on."
		fi
		echo
		echo "### Headline: time per object (ns, wall)"
		echo
		cat "$out/peers_headline.md"
		if has_plot peers_time.png; then
			echo "![time ratios](peers_time.png)"
			echo
		fi
		if has_plot peers_rss.png; then
			echo "![resident memory](peers_rss.png)"
			echo
		fi
		echo "### Details"
		echo
		cat "$out/peers_details.md"
		[ -s "$out/peers_slab.md" ] && cat "$out/peers_slab.md"
		if [ -s "$raw/slob_malloc.md" ]; then
			echo "#### SLOB under malloc: frag and longlived on each free-list setting (bench/slob_malloc.sh)"
			echo
			echo "Past REPORT_SCALE=0.2 SLOB's frag and longlived are not in the table above: its page walk"
			echo "makes them take minutes. Here at a smaller scale, glibc on the same, every setting in each round."
			echo "Target: peak and final RSS at or below glibc's with some setting, at no more than 3x its time"
			echo "(docs/allocators.md, \"malloc on SLUB, SLAB and SLOB\", explains the result)."
			echo
			cat "$raw/slob_malloc.md"
			echo
		fi
	fi

	echo "### Many live threads (bench_threads_rss)"
	echo
	status_line bench_threads_rss
	if have bench_threads_rss; then
		echo "Per-thread caches cost memory per thread. Each allocator in its own process:"
		echo
		echo '```'
		sed -n '/^allocator/,$p' "$raw/bench_threads_rss.txt"
		echo '```'
		echo
		echo "kmem: a thread's first refills of a class (2, 4, 8, 16, 32 objects; one first over 2 KiB) come"
		echo "from slabs shared with other threads, so a thread that holds a few objects pins its"
		echo "sheaves' spare objects and its per-thread slots, not a slab per class (docs/design.md, SLUB: sheaves and the barn)."
		echo
	fi

	echo "### Real programs (bench_real_programs)"
	echo
	status_line bench_real_programs
	if have bench_real_programs; then
		echo "Debian's sqlite3, python3 and sort under each allocator (LD_PRELOAD), each in its own"
		echo "process, rounds alternating the allocators; peak RSS (MB) and wall time, medians; a"
		echo "\`*\` would mark output that differs from glibc's:"
		echo
		echo '```'
		sed -n '/^program/,$p' "$raw/bench_real_programs.txt"
		echo '```'
		echo
		echo "sqlite3 keeps its pages in blocks of the page size plus a header: 4376 bytes for 4 KiB"
		echo "pages, which kmem's class of 4512 holds 29 to a 128 KiB slab (4519 bytes each); 8480 bytes"
		echo "for 8 KiB pages, which its class of 8736 holds 15 to a 128 KiB slab (8738 bytes each)."
		echo "glibc's heap fits each block to 16 bytes; jemalloc's class for 8480 is 10240."
		echo
	fi

	echo "### Short-lived processes (bench_startup)"
	echo
	status_line bench_startup
	if have bench_startup; then
		echo "What an allocator costs a process that starts, allocates a little, forks once and"
		echo "exits, as the commands of a shell script do:"
		echo
		echo '```'
		sed -n '/^allocator/,$p' "$raw/bench_startup.txt"
		echo '```'
		echo
		echo "kmem loses to glibc and mimalloc here: at boot it reserves and maps its memory model"
		echo "(the memory, \`mem_map\`, the page map, per-thread slots: some 30 system calls more than"
		echo "glibc's 42 for this process) and creates its kmalloc and malloc-class caches, and each"
		echo "class a process uses takes at least a page of its own (a new slab is built whole, its"
		echo "freelist written through it). Known limit (docs/malloc.md); a 4 MiB first memory block"
		echo "(\`kmem.mem_first\`), lock-free single-threaded forks and first slabs of a class's"
		echo "minimum order (\`malloc.small_first\`: 312 -> 254 faults) took part of it back."
		echo
	fi

	echo "### The kmem_cache API beside the peers' malloc (bench_slab_vs_malloc)"
	echo
	status_line bench_slab_vs_malloc
	if have bench_slab_vs_malloc; then
		echo "kmem's own \`kmem_cache_alloc/free\` and \`kmalloc/kfree\`"
		echo "called in-process (no LD_PRELOAD), the peers through dlopen; pinned to one CPU;"
		echo "ns per alloc+free pair, the thread's CPU time, then wall clock."
		echo
		# The CPU-time table, then the wall-clock one with its heading.
		echo '```'
		awk '/^pattern/ && !seen++ { p = 1 } /^Wall clock/ { p = 1 } p { print } /^$/ { p = 0 }' \
			"$raw/bench_slab_vs_malloc.txt"
		echo '```'
		sed -n '/^Target/,$p' "$raw/bench_slab_vs_malloc.txt"
		echo
	fi

	echo "## The kernel patches"
	echo
	echo "Five kernel mailing-list posts, each one's experiment reproduced in userspace on the code"
	echo "the patch changes (SLOB's and SLAB's side by side with SLUB in \"The slab allocators side by side\" below)."
	echo

	echo "### SLOB split free lists — Matt Mackall, 2008, linux-kernel, \"[RFC PATCH] greatly reduce SLOB external fragmentation\""
	echo
	echo "Measured on kmem's SLOB (\`slab=slob\`), with one free list, two and three: Mackall's table in"
	echo "\"The slab allocators side by side\" below (bench_slab_mem)."
	echo "_(The post: 259 pages used for 244 pages of data after boot, 6% overhead, against SLUB's ~35%.)_"
	echo

	echo "### SLAB bulk API — Jesper Dangaard Brouer, 2015, netdev, \"[mm] slab: implement bulking for SLAB allocator\""
	echo
	echo "The post's experiment on kmem's SLAB, beside SLUB, is the SLAB bulk table in \"The slab allocators"
	echo "side by side\" below (bench_slab_bulk_table). Here the same test (slab_bulk_test01: 256 B objects,"
	echo "alloc+free per object, fallback loop against \`kmem_cache_alloc_bulk\`/\`free_bulk\`) on kmem's"
	echo "**SLUB** bulk API alone, with its slow-path counters (bench_slab_bulk), beside the post's SLAB table."
	echo
	status_line bench_slab_bulk
	if have bench_slab_bulk; then
		fast=$(sed -nE 's/^Type:kmem fastpath reuse Per elem: *[0-9]+ cycles\(tsc\) +([0-9.]+) ns.*/\1/p' "$raw/bench_slab_bulk.txt" | head -n 1)
		b16=$(sed -nE 's/^ *16 - .* ([0-9.]+) ns +- improved.*\|.*/\1/p' "$raw/bench_slab_bulk.txt" | head -n 1)
		echo "Key figures: single alloc+free (fast path reuse) **${fast:-?} ns** for kmem SLUB here,"
		echo "against the post's **24.1 ns (96 cycles)** for 2015 SLAB on an i7-4790K at 4 GHz;"
		echo "bulk of 16: **${b16:-?} ns/object** here against the post's **4.34 ns (17 cycles)**;"
		echo "the post's SLAB takes 4.2-5.2 ns/object from bulk 8 to 512 and reaches 22.6 ns at 4096."
		echo
		excerpt bench_slab_bulk '^Type:for_loop' '^4096 -'
		echo
		echo '```'
		sed -n '/^Targets/,$p' "$raw/bench_slab_bulk.txt"
		echo '```'
		echo
	fi

	echo "### SLAB byte-sized freelist index — Joonsoo Kim, 2013, linux-mm, \"slab: implement byte sized indexes for the freelist of a slab\""
	echo
	echo "Measured on kmem's SLAB (\`slab=slab\`, \`slab.layout=\`): the messaging benchmark in \"The slab"
	echo "allocators side by side\" below (bench_sched_messaging); objperslab is checked against the post's"
	echo "for every cache and layout by the test suite (test_slab_objperslab)."
	echo "_(The post: kmalloc-32 goes from 113 to 124 objects per slab, ~9% of its memory; hackbench 11.628 -> 11.505 s with this patch, 1.1% (4.2% against the baseline, with the patch before it).)_"
	echo

	echo "### SLUB slab_thrash_ratio — David Rientjes, 2009, linux-kernel, \"[patch 1/3] slub: add per-cache slab thrash ratio\""
	echo
	echo "kmem has the tunable (/sys/kernel/slab/<cache>/slab_thrash_ratio, and the thrash_detected"
	echo "counters). The post: netperf TCP_RR with many threads thrashes kmalloc-256 and kmalloc-2048"
	echo "(kmalloc-256: 98.1 M fast / 31.6 M slow allocations, 0.17 M fast / 129.5 M slow frees);"
	echo "with a ratio of 20 the transfer rate rises from 95373 to 119731/s at 32 threads (+25.5%)"
	echo "and from 243182 to 255596/s at 192 threads (+5.1%); at 16 threads it falls, 71592 to"
	echo "69505/s (-2.9%). The post's table (netperf TCP_RR transfers per second):"
	echo
	echo "| threads | before | slab_thrash_ratio 20 | change |"
	echo "|---:|---:|---:|---:|"
	while read -r th b a; do
		awk -v t="$th" -v b="$b" -v a="$a" 'BEGIN { printf "| %d | %d | %d | %+.1f%% |\n", t, b, a, 100 * (a - b) / b }'
	done <<-'EOF'
	16 71592 69505
	32 95373 119731
	48 113072 125014
	64 149043 158919
	80 172035 179679
	96 187849 192154
	112 204962 209988
	128 217547 223507
	144 232369 234565
	160 239871 244789
	176 242712 248971
	192 243182 255596
	EOF
	echo
	status_line bench_slab_prodcons
	if have bench_slab_prodcons; then
		p=$raw/bench_slab_prodcons.txt
		# Lowest and highest of column I (1: r20/r0, 3: kmem/r0) of the
		# per-CPU-second throughput table, over the pair counts.
		tput_range() {
			sed -n '/^Transactions per CPU-second/,/^$/p' "$p" |
				awk -F'|' -v i="$1" 'NF == 3 && $1 ~ /^ *[0-9]+ *$/ {
					split($3, a, " "); if (sub(/x$/, "", a[i])) print a[i] }' |
				sort -g | sed -n '1p;$p' | tr '\n' ' '
		}
		r=$(tput_range 1)
		d=$(tput_range 3)
		# kmalloc-256 counters: alloc fast/slow of classic SLUB (kmem r0,
		# slub_sheaves=0), and the sheaves' share with the defaults (kmem).
		c256=$(sed -n '/^kmalloc-256, SLUB counters/,/^$/p' "$p")
		q=$(awk -F'|' '$1 ~ /kmem r0 *$/ { split($2, a, " "); if (a[4] != "-") print a[4] }' <<<"$c256" |
			sort -g | sed -n '1p;$p' | tr '\n' ' ')
		# "-": a build without KMEM_SLUB_STATS does not count objects through sheaves.
		sh=$(awk -F'|' '$1 ~ / kmem *$/ {
				split($2, a, " "); split($3, f, " ")
				if (a[1] == "-" || f[1] == "-") { nostats = 1; next }
				as += a[1]; at += a[1] + a[2] + a[3]; fs += f[1]; ft += f[1] + f[2] + f[3]
			}
			END { if (nostats) print "-"; else if (at && ft) printf "%.1f %.1f", 100 * as / at, 100 * fs / ft }' <<<"$c256")
		echo "kmem (\`bench_slab_prodcons\`, the post's TCP_RR-like load in userspace: every object"
		echo "freed by another thread). The patch is about cpu slabs, so its configurations (kmem r0,"
		echo "r20, and np without cpu partial lists) boot the classic SLUB it ran on (\`slub_sheaves=0\`:"
		echo "cpu slabs and partial lists, no sheaves); \"kmem\" is today's default boot, with sheaves."
		echo
		if [ -n "$q" ]; then
			read -r q0 q1 <<<"$q"
			echo "- Classic SLUB (kmem r0): kmalloc-256 allocations run $q0..$q1 fast per slow one across"
			echo "  the pair counts (the post's thrashing kernel: 98.1 M / 31.6 M = 3.1)."
		fi
		if [ -n "$r" ]; then
			read -r r0 r1 <<<"$r"
			# As printed (1.00x: unchanged to two decimals).
			post="-2.9% at 16 threads, +25.5% at 32, +5.1% at 192"
			if awk -v a="$r1" 'BEGIN { exit !(a + 0 < 1) }'; then
				v="lower at every pair count, unlike the post's $post"
			elif awk -v a="$r1" 'BEGIN { exit !(a + 0 == 1) }'; then
				v="lower or unchanged at every pair count, unlike the post's $post"
			elif awk -v a="$r0" 'BEGIN { exit !(a + 0 > 1) }'; then
				v="higher at every pair count, as in the post from 32 threads on: $post"
			elif awk -v a="$r0" 'BEGIN { exit !(a + 0 == 1) }'; then
				v="higher or unchanged at every pair count, as in the post from 32 threads on: $post"
			else
				v="lower at some pair counts, higher at others; the post: $post"
			fi
			echo "- slab_thrash_ratio=20 changes classic SLUB's transactions per CPU-second by"
			echo "  **${r0}x..${r1}x** across the pair counts ($v)."
		fi
		if [ -n "$sh" ] || [ -n "$d" ]; then
			echo "- With the defaults (kmem, sheaves on):"
			if [ "$sh" = - ]; then
				echo "  (how many of its objects went through sheaves is not counted in this build:"
				echo "  KMEM_SLUB_STATS, the kernel's CONFIG_SLUB_STATS, is off; see the peers' path table)"
			elif [ -n "$sh" ]; then
				read -r sa sf <<<"$sh"
				echo "  $sa% of kmalloc-256 allocations come from a sheaf and $sf% of its frees go into one;"
			fi
			if [ -n "$d" ]; then
				read -r d0 d1 <<<"$d"
				echo "  kmem runs **${d0}x..${d1}x** the transactions per CPU-second of classic SLUB (kmem r0);"
			fi
			echo "  the glibc target below is judged on this configuration."
		fi
		echo
		excerpt bench_slab_prodcons '^Transactions per CPU-second' '^kmalloc-256, SLUB counters' x
		sed -n '/^Target/,$p' "$p"
		echo
		echo "<details><summary>full output, with the SLUB counters per configuration</summary>"
		echo
		echo '```'
		cat "$p"
		echo '```'
		echo
		echo "</details>"
		echo
	fi
	# The peers' prodcons workload (default boot): where its cross-thread frees went.
	pc=$(awk '$2 == "wl=prodcons" {
			for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] += kv[2] }
		}
		END {
			f = v["free_cpu_sheaf"] + v["free_fastpath"] + v["free_slowpath"]
			o = v["alloc_cpu_sheaf"] + v["alloc_fastpath"] + v["alloc_slowpath"]
			if (f && o)
				printf "%.1f %.1f %.1f", 100 * v["free_cpu_sheaf"] / f,
				       1000 * v["barn_put"] / o, 1000 * v["barn_get"] / o
		}' "$raw/kmemstat.txt" 2>/dev/null)
	if [ -n "$pc" ]; then
		read -r pcf pcp pcg <<<"$pc"
		echo "The peers' prodcons workload above has the same free pattern (default boot): $pcf% of"
		echo "kmem's frees went into a sheaf (the consumer thread's), and full sheaves reached the"
		echo "producer through the barn ($pcp put and $pcg taken per 1000 objects; see \"Which paths kmem took\")."
		echo
	fi

	echo "### Buddy free-to-tail — Corrado Zoccolo and Mel Gorman, 2010, linux-mm, \"page allocator: reduce fragmentation in buddy allocator by adding buddies that are merging to the tail of the free lists\""
	echo
	echo "The post: \"the absolute number of huge pages allocated are the same with or without the"
	echo "page [sic: patch]. However, the unusability free space index [...] was slightly lower (lower is"
	echo "better) throughout the lifetime of the system\"; kernbench, netperf and sysbench within"
	echo "noise (e.g. kernbench x86-64 elapsed 94.45 -> 94.01 s, +0.47%)."
	echo
	status_line bench_page_frag
	if have bench_page_frag; then
		sum=$(sed -n '/^Summary:/,/^$/p' "$raw/bench_page_frag.txt" | tr '\n' ' ')
		read -r d u0 u1 < <(echo "$sum" | sed -nE 's/.*unusable index at order 9 by ([-+0-9.]+) \(([0-9.]+) -> ([0-9.]+)\).*/\1 \2 \3/p')
		if [ -n "${d:-}" ]; then
			if awk -v a="$u0" -v b="$u1" 'BEGIN { exit !(b < a) }'; then
				verdict="lower with tail placement, as in the post"
			else
				verdict="**not** lower with tail placement, unlike the post"
			fi
			echo "kmem (\`bench_page_frag\`, the post's high-order stress test on a fixed-size machine):"
			echo "the mean unusable free space index at order 9 is **$u0 -> $u1** ($d), $verdict."
			echo
		fi
		echo "> $sum"
		echo
		if has_plot tail_placement_unusable.png; then
			echo "![unusable index over time, tail placement off and on](tail_placement_unusable.png)"
			echo
		fi
		excerpt bench_page_frag '^Order-9 fragmentation over time' '^Per seed' x
		excerpt bench_page_frag '^  seed |' '^ *mean |'
	fi
	echo
	echo "The cost of the page allocator's paths (\`bench_page_alloc_speed\`):"
	echo
	status_line bench_page_alloc_speed
	if have bench_page_alloc_speed; then
		excerpt bench_page_alloc_speed '^case' '^order-9 pair, reporting off'
		sed -n '/^target/p' "$raw/bench_page_alloc_speed.txt"
		echo
	fi

	slab_section

	echo "## Page-allocator demo (kmem-run)"
	echo
	if have kmem-run; then
		echo "\`build/bin/kmem-run\` (tools/kmem-run.c; its boot command line: \`make run ARGS=\"mem=256M\"\`,"
		echo "or run it directly):"
		echo "boot a machine (128 MiB unless its command line says otherwise), allocate up to 24000"
		echo "blocks of orders 0-3 (all of 128 MiB), free three in four, then count the 2 MiB"
		echo "allocations that succeed. Every allocation comes before every free, so"
		echo "\`page_alloc.tail_placement\` changes nothing here: the free-to-tail benchmark above measures it."
		echo
		echo '```'
		# The buddyinfo and unusable index at boot and after the churn, and the result.
		awk '/^== / { sec = $0; print; next }
		     /^\$ cat \/proc\/buddyinfo/ || /^\$ cat \/sys\/kernel\/debug\/extfrag\/unusable_index/ { show = 1; print; next }
		     show && /^Node/ { print; show = 0; next }
		     /^order-9/ { print }' "$raw/kmem-run.txt"
		echo '```'
		echo
		echo "<details><summary>full output</summary>"
		echo
		echo '```'
		cat "$raw/kmem-run.txt"
		echo '```'
		echo
		echo "</details>"
	else
		echo "_kmem-run did not run (see raw/notes.txt)._"
	fi
	echo

	# The traces section (scripts/report/traces.sh writes it whole).
	if [ -s "$raw/traces.md" ]; then
		cat "$raw/traces.md"
		echo
	fi

	echo "## Files"
	echo
	echo "- \`raw/machine.txt\` — machine, versions, load, rounds; \`raw/timings.txt\` — seconds per step"
	echo "- \`raw/peers.tsv\` — every peers run (one line per result); \`raw/kmemstat.txt\` — kmem's SLUB counters per run; \`raw/rss_floor.txt\` — bench_rss_floor's model of ideal size classes"
	echo "- \`raw/peers-failures.txt\` — runs that crashed, timed out or saw a wrong object (with their output kept as raw/peers-WL-ALLOC-ROUND.*)"
	echo "- \`raw/<benchmark>.txt\`, \`.err\` — the benchmarks' and kmem-run's full output; \`raw/page_frag.dat\` — the free-to-tail time series"
	echo "- \`raw/time_ratio.dat\`, \`raw/rss.dat\` — the data of the plots"
	echo "- \`raw/peers-slab.tsv\`, \`raw/allocators-slab.txt\` — the peers workloads under kmem booted with slab=slab and slab=slob"
	if [ -s "$raw/notes.txt" ] || [ ${#plot_notes[@]} -gt 0 ]; then
		echo
		echo "Skipped or failed steps:"
		echo
		[ -s "$raw/notes.txt" ] && sed 's/^/- /' "$raw/notes.txt"
		for n in "${plot_notes[@]}"; do echo "- $n"; done
	fi
} >"$md"

echo "render.sh: wrote $md${plots[*]:+ and ${plots[*]}}"
