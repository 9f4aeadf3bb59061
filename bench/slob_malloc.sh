#!/usr/bin/env bash
# SLOB under malloc: the peers workloads frag and longlived on glibc and on
# kmem's malloc booted with slab=slob, for each free-list setting, in
# interleaved rounds (every setting once per round, so that the machine's
# load falls on all alike); medians of peak and final RSS and of the time,
# against glibc's, and SLOB's own evidence at the end of the run (and, for
# frag, after its 90% free): pages, holes by size, page and block scans per
# allocation (/sys/kernel/debug/slob/stats, printed by
# bench_peers_workloads as SLOBSTAT lines).
#
#   bench/slob_malloc.sh [-r ROUNDS] [-x FRAG_SCALE] [-l LONGLIVED_SCALE] [-o DIR] [BUILD]
#
# ROUNDS 3; the scales multiply the workloads' op counts (frag: objects,
# default 0.1; longlived: replacements, default 0.1; its 100 MB population
# is not scaled).  SLOB searches every partially free page of a list, so
# its time grows with the square of the heap: frag at scale 1 takes 220 s
# on SLOB against glibc's 5.  BUILD: the build directory (default build).
# DIR keeps the raw outputs (default: a temporary directory).
# Output: a Markdown table on stdout, then the evidence per setting.
set -u

rounds=3 xf=0.1 xl=0.1 keep=
while getopts "r:x:l:o:" o; do
	case $o in
	r) rounds=$OPTARG ;;
	x) xf=$OPTARG ;;
	l) xl=$OPTARG ;;
	o) keep=$OPTARG ;;
	*) sed -n '11,19s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
build=${1:-build}
bin=$build/bin/bench_peers_workloads
so=$build/lib/libkmem-malloc.so
[ -x "$bin" ] && [ -f "$so" ] || { echo "$0: $bin or $so missing (build first)" >&2; exit 1; }
if [ -n "$keep" ]; then
	dir=$keep
	mkdir -p "$dir"
else
	dir=$(mktemp -d "${TMPDIR:-/tmp}/slob-malloc.XXXXXX")
	trap 'rm -rf "$dir"' EXIT
fi

# label|KMEM_CMDLINE ("" = glibc)
settings=(
	"glibc|"
	"lists=1|slab=slob slob.lists=1"
	"lists=2 break=128|slab=slob slob.lists=2 slob.break=128"
	"lists=2 break=300|slab=slob slob.lists=2 slob.break=300"
	"lists=2 break=1024|slab=slob slob.lists=2 slob.break=1024"
	"lists=2 break=2048|slab=slob slob.lists=2 slob.break=2048"
	"lists=3|slab=slob slob.lists=3"
)

for ((r = 1; r <= rounds; r++)); do
	for wl in frag longlived; do
		x=$xf
		[ "$wl" = longlived ] && x=$xl
		for i in "${!settings[@]}"; do
			cmd=${settings[$i]#*|}
			o=$dir/$wl.$i.$r
			if [ -z "$cmd" ]; then
				"$bin" "$wl" -x "$x" >"$o" 2>"$o.err"
			else
				env KMEM_CMDLINE="$cmd" LD_PRELOAD="$so" PEERS_ALLOC=kmem-slob "$bin" "$wl" -x "$x" >"$o" 2>"$o.err"
			fi
			rc=$?
			[ $rc = 0 ] || echo "$wl ${settings[$i]%%|*} round $r: exit status $rc" >&2
		done
	done
done

echo "SLOB under malloc: frag (-x $xf) and longlived (-x $xl), medians of $rounds interleaved rounds"
echo
echo "| workload | allocator | peak MB | final MB | peak / glibc | final / glibc | time / glibc (wall) | time / glibc (CPU) |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for wl in frag longlived; do
	for i in "${!settings[@]}"; do
		for ((r = 1; r <= rounds; r++)); do
			f=$dir/$wl.$i.$r
			[ -f "$f" ] && sed -n "s/^RESULT /set=$i /p" "$f"
		done
	done | awk -v wl="$wl" -v labels="$(printf '%s\n' "${settings[@]%%|*}" | paste -sd'|')" '
		function med(a, n,    i, j, t) {
			for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		{
			delete v
			for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			s = v["set"]; c = ++n[s]
			pk[s, c] = v["peak_kb"]; fn[s, c] = v["final_kb"]; ns[s, c] = v["ns_op"]; cpu[s, c] = v["cpu_ns_op"]
			if (s + 1 > ns_max) ns_max = s + 1
		}
		END {
			split(labels, L, "|")
			for (s = 0; s < ns_max; s++) {
				if (!n[s]) continue
				for (k = 1; k <= n[s]; k++) { a1[k] = pk[s, k]; a2[k] = fn[s, k]; a3[k] = ns[s, k]; a4[k] = cpu[s, k] }
				P[s] = med(a1, n[s]); F[s] = med(a2, n[s]); T[s] = med(a3, n[s]); C[s] = med(a4, n[s])
			}
			for (s = 0; s < ns_max; s++) {
				if (!n[s]) continue
				if (n[0] && s > 0)
					printf "| %s | %s | %.1f | %.1f | %.2fx | %.2fx | %.1fx | %.1fx |\n", wl, L[s + 1],
					       P[s] / 1024, F[s] / 1024, P[s] / P[0], F[s] / F[0], T[s] / T[0], C[s] / C[0]
				else
					printf "| %s | %s | %.1f | %.1f | | | | |\n", wl, L[s + 1], P[s] / 1024, F[s] / 1024
			}
		}'
done

# SLOB's evidence, from the first round: the heap, where its pages go, the holes, the scans.
echo
echo "SLOB's statistics in round 1 (/sys/kernel/debug/slob/stats): each list's pages and free bytes, its"
echo "holes by size (B:n, n free blocks of B/2 to B bytes), the searches' pages and blocks looked at; the"
echo "heap's pages and live blocks; the pages of allocations of a page or more; total pages, and packed:"
echo "the pages the live data would fill; kmem's memory from the OS and its free pages (/proc/meminfo)."
echo
echo '```'
first=1
for wl in frag longlived; do
	for i in "${!settings[@]}"; do
		f=$dir/$wl.$i.1
		[ -f "$f" ] && grep -q '^SLOBSTAT' "$f" || continue
		for at in mid end; do
			grep -q "^SLOBSTAT wl=$wl at=$at " "$f" || continue
			[ -n "$first" ] || echo
			first=
			echo "$wl, ${settings[$i]%%|*}, at $at:"
			sed -n "s/^SLOBSTAT wl=$wl at=$at //p" "$f" | awk '
				/ list pages / { printf "  %-6s list: %6d pages, %7.1f MB free, biggest hole %d B\n", $1, $4, $6 / 1048576, $8 }
				/ list holes / { printf "  %-6s holes:", $1; for (i = 4; i <= NF; i++) printf " %s", $i; printf "\n" }
				/ list searches / && $4 > 0 { printf "  %-6s searches %d: %.1f pages and %.1f blocks looked at each, %d new pages\n",
							$1, $4, $7 / $4, $10 / $4, $13 }
				/^slob pages / { printf "  heap: %d pages, %d live blocks of %.1f MB (headers in), %.1f pages and %.1f blocks per allocation\n",
						 $3, $9, $11 / 1048576, $14 / $5, $17 / $5 }
				/^bigpages / { printf "  big allocations: %d pages now\n", $4 }
				/^total / { printf "  total %d pages (%.1f MB), packed %d (%.1f MB)\n", $2, $2 / 256, $4, $4 / 256 }
				/^meminfo / { printf "  kmem: %.1f MB from the OS, %.1f MB of it free pages\n", $3 / 1024, $5 / 1024 }'
		done
	done
done
echo '```'
