#!/usr/bin/env bash
# kmem-trace's targets, measured (the figures in docs/trace.md):
#   1. recording: time and peak RSS of python3 and sqlite3 (bench_real_programs'
#      workloads) with and without the recorder, the median of alternating
#      rounds; trace bytes per operation
#   2. fidelity: the peak RSS of a replay on glibc against the program's own
#      (its peak minus its RSS when the recorder started, before main)
#   3. replay speed on kmem (SLUB) of the kernel's slab and page traces
#   4. import-perf of a 1-million-line perf script file
# The kernel captures are ../shared/data/kernel-traces/ when present, else
# the cuts in bench/data/kernel-traces/.
#
#   scripts/trace-bench.sh [-r ROUNDS]      (default 3; build/ must be built)
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
rounds=3
[ "${1:-}" = -r ] && rounds=$2
K=$root/build/bin/kmem-trace
[ -x "$K" ] || { echo "trace-bench: build first (make)" >&2; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/kmem-trace-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
shared=$root/../shared/data/kernel-traces
cuts=$root/bench/data/kernel-traces

# The workloads of bench_real_programs (bench/real_programs.c).
cat >"$T/alloc.py" <<'EOF'
import json
d = {}
for i in range(400000):
    d['key%07d' % (i * 7919 % 400000)] = (i, str(i) * (i % 7 + 1), [i % 13, i % 17])
items = sorted(d.items(), key=lambda kv: (kv[1][1], kv[0]))
s = json.dumps(items)
back = json.loads(s)
print(len(d), len(items), len(s), back[12345][0], sum(v[0] for k, v in back[:1000]))
EOF
python3 - "$T/t4k.sql" <<'EOF'
import sys
M = (1 << 64) - 1
rng = 3
def xr():
    global rng
    rng ^= (rng << 13) & M; rng ^= rng >> 7; rng ^= (rng << 17) & M
    return rng
with open(sys.argv[1], "w") as f:
    f.write("PRAGMA page_size=4096;\nCREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b INTEGER, c TEXT);\nBEGIN;\n")
    for i in range(300000):
        na = 10 + xr() % 190; nc = xr() % 100
        f.write("INSERT INTO t VALUES(%d,'%s',%d,'%s');\n" % (i, "x" * na, xr() % (1 << 30), "y" * nc))
    f.write("COMMIT;\nCREATE INDEX ia ON t(a);\nCREATE INDEX ib ON t(b);\n"
            "SELECT count(*), sum(length(a)) FROM t;\n"
            "SELECT b % 100, count(*) FROM t GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 3;\n")
EOF

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# measure NAME ENV... -- CMD...: rounds of plain and recorded runs, alternating.
measure() {
	local name=$1
	shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	: >"$T/$name.plain"
	: >"$T/$name.rec"
	for ((r = 1; r <= rounds; r++)); do
		env "${envs[@]}" /usr/bin/time -f "%e %U %S %M" -o "$T/tm" "$@" <"${STDIN:-/dev/null}" >/dev/null 2>&1
		cat "$T/tm" >>"$T/$name.plain"
		env "${envs[@]}" /usr/bin/time -f "%e %U %S %M" -o "$T/tm" "$K" record -o "$T/$name.trace" -- "$@" \
			<"${STDIN:-/dev/null}" >/dev/null 2>"$T/$name.rec.err"
		cat "$T/tm" >>"$T/$name.rec"
	done
	local pw pc pr rw rc rr
	pw=$(awk '{ print $1 }' "$T/$name.plain" | median)
	pc=$(awk '{ print $2 + $3 }' "$T/$name.plain" | median)
	pr=$(awk '{ print $4 }' "$T/$name.plain" | median)
	rw=$(awk '{ print $1 }' "$T/$name.rec" | median)
	rc=$(awk '{ print $2 + $3 }' "$T/$name.rec" | median)
	rr=$(awk '{ print $4 }' "$T/$name.rec" | median)
	local info ops bytes
	info=$("$K" info "$T/$name.trace")
	ops=$(awk '/ operations,/ { for (i = 1; i <= NF; i++) if ($(i + 1) == "operations,") print $i }' <<<"$info")
	bytes=$(stat -c %s "$T/$name.trace")
	printf '%-26s wall %6.2f -> %6.2f s (%.2fx)  CPU %6.2f -> %6.2f s (%.2fx)  peak RSS %7d -> %7d KiB (%.2fx)  %d ops, %.2f bytes/op\n' \
		"$name" "$pw" "$rw" "$(echo "$rw / $pw" | bc -l)" "$pc" "$rc" "$(echo "$rc / $pc" | bc -l)" \
		"$pr" "$rr" "$(echo "$rr / $pr" | bc -l)" "$ops" "$(echo "$bytes / $ops" | bc -l)"
	# Fidelity: the replay on glibc against the program's heap (its peak
	# RSS over its RSS when the recorder started).
	local start peak rep
	start=$(grep -o 'start_rss_kb=[0-9]*' <<<"$info" | tail -n 1 | cut -d= -f2)
	peak=$(grep -o 'peak_rss_kb=[0-9]*' <<<"$info" | tail -n 1 | cut -d= -f2)
	rep=$("$K" replay "$T/$name.trace" --on glibc | sed -n 's/.* rss_peak_kb=\([0-9]*\).*/\1/p')
	printf '%-26s program peak RSS over its start %d KiB, replay on glibc %d KiB (%.2fx)\n' \
		"  fidelity" $((peak - start)) "$rep" "$(echo "$rep / ($peak - $start)" | bc -l)"
}

echo "== 1, 2. recording cost and fidelity ($rounds rounds, medians) =="
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
measure python3 PYTHONHASHSEED=0 -- "$PY" "$T/alloc.py"
measure python3-PYTHONMALLOC=malloc PYTHONHASHSEED=0 PYTHONMALLOC=malloc -- "$PY" "$T/alloc.py"
STDIN=$T/t4k.sql measure sqlite3 -- sqlite3 :memory:

echo
echo "== 3. replay speed on kmem (CPU time of the replay loop) =="
slab=$shared/devbox-6.18-slab.perf.txt.xz
page=$shared/devbox-6.18-page.perf.txt.xz
[ -r "$slab" ] || slab=$cuts/devbox-6.18-slab.cut.perf.txt.xz
[ -r "$page" ] || page=$cuts/devbox-6.18-page.cut.perf.txt.xz
"$K" import-perf "$slab" -o "$T/slab.trace" >/dev/null
"$K" import-perf "$page" -o "$T/page.trace" >/dev/null
for tr in slab page; do
	for touch in "" --no-touch; do
		for ((r = 1; r <= rounds; r++)); do
			"$K" replay "$T/$tr.trace" --on slub $touch | sed -n 's/.* ops=\([0-9]*\) ns_op=\([0-9.]*\).*/\1 \2/p'
		done >"$T/speed.$tr"
		ns=$(awk '{ print $2 }' "$T/speed.$tr" | median)
		printf '%-26s %d ops (%s), %.1f ns/op, %.1f M ops/s (median of %d)\n' "$tr trace on slub $touch" \
			"$(head -n 1 "$T/speed.$tr" | cut -d' ' -f1)" "$(basename "$(eval echo "\$$tr")")" "$ns" \
			"$(echo "1000 / $ns" | bc -l)" "$rounds"
	done
done

echo
echo "== 4. import-perf of 1,000,000 lines =="
if [ "$slab" = "$shared/devbox-6.18-slab.perf.txt.xz" ]; then
	xz -dc "$slab" | head -n 1000000 >"$T/1m.txt"
else
	for i in 1 2 3 4 5; do xz -dc "$slab"; done | head -n 1000000 >"$T/1m.txt"
fi
for ((r = 1; r <= rounds; r++)); do
	/usr/bin/time -f "%e %U %S" -o "$T/tm" "$K" import-perf "$T/1m.txt" -o "$T/1m.trace" >/dev/null
	cat "$T/tm"
done >"$T/imp"
printf '%-26s %d lines: wall %.2f s, CPU %.2f s (median of %d)\n' "import-perf" "$(wc -l <"$T/1m.txt")" \
	"$(awk '{ print $1 }' "$T/imp" | median)" "$(awk '{ print $2 + $3 }' "$T/imp" | median)" "$rounds"
