#!/usr/bin/env bash
# The "Traces" section of `make run`'s report (called by run_report.sh):
# kmem-trace records a python3 and a sqlite3 run, imports the Linux
# kernel's own slab and page traffic, and compares each on kmem's
# allocators and the peers; the kernel's page stream is replayed with
# page_alloc.tail_placement=1 and =0.  Writes RAW/traces/ (tables, logs),
# OUT/trace_*.png and RAW/traces.md, the section render.sh puts in the
# README.  Anything missing (a peer, gnuplot, ../shared) is said, not fatal.
#
#   scripts/report/traces.sh OUT BUILD
#
# The kernel captures: ../shared/data/kernel-traces/ when present (3.2 M slab
# and 1.4 M page events), else (or with REPORT_TRACES_CUT=1) the cuts shipped
# in bench/data/kernel-traces/.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out=$1
build=$2
raw=$out/raw
dir=$raw/traces
md=$raw/traces.md
K=$build/bin/kmem-trace
mkdir -p "$dir"
: >"$md"

{
	echo "## Traces (kmem-trace)"
	echo
} >>"$md"
if [ ! -x "$K" ]; then
	echo "_\`kmem-trace\` is not built: no traces._" >>"$md"
	exit 0
fi

on=slub,slab,slob,glibc,jemalloc,mimalloc,tcmalloc
pages_on=slub,page_alloc.tail_placement=0,slab,slob,glibc,jemalloc,mimalloc,tcmalloc
shared=$root/../shared/data/kernel-traces
cuts=$root/bench/data/kernel-traces
slab=$shared/devbox-6.18-slab.perf.txt.xz
page=$shared/devbox-6.18-page.perf.txt.xz
src="the whole capture (../shared/data/kernel-traces/)"
if [ ! -r "$slab" ] || [ ! -r "$page" ] || [ -n "${REPORT_TRACES_CUT:-}" ]; then
	slab=$cuts/devbox-6.18-slab.cut.perf.txt.xz
	page=$cuts/devbox-6.18-page.cut.perf.txt.xz
	src="the cuts shipped in bench/data/kernel-traces/"
fi

# The programs: smaller runs of bench_real_programs' python3 and sqlite3.
cat >"$dir/alloc.py" <<'EOF'
import json
d = {}
for i in range(100000):
    d['key%07d' % (i * 7919 % 100000)] = (i, str(i) * (i % 7 + 1), [i % 13, i % 17])
items = sorted(d.items(), key=lambda kv: (kv[1][1], kv[0]))
s = json.dumps(items)
back = json.loads(s)
print(len(d), len(items), len(s), back[12345][0])
EOF
python3 - "$dir/t.sql" <<'EOF' 2>/dev/null
import random, sys
r = random.Random(3)
with open(sys.argv[1], "w") as f:
    f.write("CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b INTEGER, c TEXT);\nBEGIN;\n")
    for i in range(60000):
        f.write("INSERT INTO t VALUES(%d,'%s',%d,'%s');\n" % (i, "x" * r.randrange(10, 200), r.randrange(1 << 30), "y" * r.randrange(100)))
    f.write("COMMIT;\nCREATE INDEX ia ON t(a);\nCREATE INDEX ib ON t(b);\nSELECT count(*), sum(length(a)) FROM t;\n")
EOF

# section TITLE NAME [compare options...]: a table and its plot(s).
section() {
	local title=$1 name=$2
	shift 2
	echo "### $title" >>"$md"
	echo >>"$md"
	if ! timeout 600 "$K" compare "$dir/$name.trace" --png "$out/trace_$name.png" "$@" \
		>"$dir/$name.compare.txt" 2>"$dir/$name.compare.err"; then
		echo "_compare failed: $(grep -m 1 'kmem-trace:' "$dir/$name.compare.err" | tail -n 1)_" >>"$md"
		echo >>"$md"
		return
	fi
	{
		echo '```'
		grep -v '^plot: ' "$dir/$name.compare.txt" | sed "s|^$dir/||"
		echo '```'
		echo
		[ -s "$out/trace_$name.png" ] && echo "![$title: memory against operations](trace_$name.png)" && echo
		[ -s "$out/trace_$name-unusable.png" ] && echo "![$title: unusable free space index](trace_$name-unusable.png)" && echo
	} >>"$md"
}

# record NAME STDIN CMD...
record() {
	local name=$1 in=$2
	shift 2
	if ! command -v "$1" >/dev/null || { [ "$1" = env ] && [ -z "${py:-}" ]; }; then
		echo "_$name is not installed: no $name trace._" >>"$md"
		return 1
	fi
	timeout 300 "$K" record -o "$dir/$name.trace" -- "$@" <"$in" >/dev/null 2>"$dir/$name.record.err" || {
		echo "_recording $name failed: $(tail -n 1 "$dir/$name.record.err")_" >>"$md"
		return 1
	}
	"$K" info "$dir/$name.trace" >"$dir/$name.info.txt" 2>&1
}

{
	echo "\`build/bin/kmem-trace\` ([docs/trace.md](../docs/trace.md)) records a program's malloc calls"
	echo "and imports the kernel's own slab and page events (\`perf record -e 'kmem:*'\`), then replays"
	echo "them, each allocator in its own process, every block touched. Memory: for kmem on a kernel"
	echo "trace, the pages its slab and page allocators hold (MemTotal - MemFree of its /proc/meminfo);"
	echo "otherwise the RSS the replay adds. A kmem setting that does not boot shows n/a, as does a peer"
	echo "that is not installed. Time is the replay loop's CPU time."
	echo
} >>"$md"

py=/usr/bin/python3	# Debian's, not a shim on PATH
[ -x "$py" ] || py=$(command -v python3)
if record python3 /dev/null env PYTHONHASHSEED=0 "$py" "$dir/alloc.py"; then
	section "python3 (a dict of 100000 tuples, sorted, to JSON and back)" python3 --on "$on"
fi
if record sqlite3 "$dir/t.sql" sqlite3 :memory:; then
	section "sqlite3 (:memory:, 60000 rows, two indexes)" sqlite3 --on "$on"
fi

echo "Kernel traffic: $src, Linux 6.18, a developer's box (git, a C build, tests, tar+xz)." >>"$md"
echo >>"$md"
if "$K" import-perf "$slab" -o "$dir/kernel-slab.trace" >"$dir/kernel-slab.import.txt" 2>&1; then
	section "The kernel's slab traffic (kmem_cache_alloc/free by cache, kmalloc/kfree)" kernel-slab --on "$on"
else
	echo "_import-perf of the slab capture failed: $(tail -n 1 "$dir/kernel-slab.import.txt")_" >>"$md"
fi
if "$K" import-perf "$page" -o "$dir/kernel-page.trace" >"$dir/kernel-page.import.txt" 2>&1; then
	{
		echo "The kernel's page stream on kmem's buddy allocator (\`alloc_pages\` of the traced order and"
		echo "migratetype), with the buddy free-to-tail heuristic (slub: \`page_alloc.tail_placement=1\`,"
		echo "the default) and without it (\`=0\`): the unusable free space index at order 9 over the"
		echo "replay (mean of the samples, and at the end); the peers get \`aligned_alloc(4096, size)\`."
		echo
	} >>"$md"
	section "The kernel's page traffic (mm_page_alloc/free by order and migratetype)" kernel-page --on "$pages_on"
else
	echo "_import-perf of the page capture failed: $(tail -n 1 "$dir/kernel-page.import.txt")_" >>"$md"
fi
exit 0
