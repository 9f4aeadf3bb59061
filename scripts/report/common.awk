# What the report's awk programs share (peers.awk, slab_peers.awk): number
# formats, the median, which input file a line comes from, the workloads'
# row labels.  POSIX awk (mawk is enough).  Loaded before the program:
#
#   awk -f scripts/report/common.awk -f scripts/report/peers.awk ...

function fmt_ns(x) { return x >= 100 ? sprintf("%.0f", x) : sprintf("%.1f", x) }
function fmt_mb(kb) { return sprintf("%.1f", kb / 1024) }

# Median of arr[key, 1..cnt].
function median(arr, key, cnt,    v, i, j, t) {
	for (i = 1; i <= cnt; i++)
		v[i] = arr[key, i] + 0
	for (i = 2; i <= cnt; i++) {
		t = v[i]
		for (j = i - 1; j >= 1 && v[j] > t; j--)
			v[j + 1] = v[j]
		v[j + 1] = t
	}
	if (cnt % 2)
		return v[(cnt + 1) / 2]
	return (v[cnt / 2] + v[cnt / 2 + 1]) / 2
}

# The medians over a run's rounds of its time, peak and final RSS:
# mns[k], mpeak[k], mfin[k] for k = workload SUBSEP allocator.
function medians(k) {
	mns[k] = median(ns, k, cnt[k])
	mpeak[k] = median(peak, k, cnt[k])
	mfin[k] = median(fin, k, cnt[k])
}

# An allocators list line, "name path..." or "name n/a": na[name] when it
# is not installed (a peer) or does not boot (kmem on a slab allocator).
function note_allocator() {
	if ($2 == "n/a")
		na[$1] = 1
}

# The report's label of each workload, label[w].
function workload_labels() {
	label["hot16"] = "hot 16 B"; label["hot64"] = "hot 64 B"; label["hot256"] = "hot 256 B"
	label["hot1024"] = "hot 1024 B"; label["larson"] = "larson (2 thr)"
	label["prodcons"] = "prodcons 256 B"; label["frag"] = "frag"; label["longlived"] = "longlived"
	label["bulk"] = "bulk 1000x256 B"
	label["server"] = "server (thread chains)"; label["threads"] = "threads (4 churns)"
	label["leak"] = "leak (short threads)"; label["big"] = "big 5-25 MiB calloc"
	label["stress"] = "stress (8 thr, realloc)"; label["bulk4096"] = "bulk 4096x256 B"
}

# Which input a line comes from (file), by its place on the command line:
# counting files as they start would skip an empty one.
BEGIN {
	for (i = 1; i < ARGC; i++)
		argn[ARGV[i]] = i
}
FNR == 1 { file = argn[FILENAME] }
