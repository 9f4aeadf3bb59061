# The peers part of report/README.md, from the raw data of run_report.sh.
# POSIX awk (Debian's default mawk is enough).
#
#   awk -f scripts/report/common.awk -f scripts/report/peers.awk -v out=report \
#       report/raw/allocators.txt report/raw/peers.tsv \
#       report/raw/kmemstat.txt report/raw/peers-failures.txt \
#       report/raw/rss_floor.txt
#
# Writes out/peers_headline.md (headline table and targets),
# out/peers_details.md (the rest), and for gnuplot out/raw/time_ratio.dat,
# out/raw/rss.dat.  Medians over the rounds; "best" is the lowest median.

function fmt_x(x) { return sprintf("%.2fx", x) }
# a as a share of total; per 1000 objects; a count per 1000 with 2 to 3 significant digits.
function share(a, total) { return total > 0 ? sprintf("%.1f%%", 100 * a / total) : "-" }
function per1k(x, objs) { return objs > 0 ? 1000 * x / objs : 0 }
function fmt_k(x) { return x >= 100 ? sprintf("%.0f", x) : x >= 10 ? sprintf("%.1f", x) : sprintf("%.2f", x) }

# kmalloc's bucket for a request: 8, 16, 32, 64, 96, 128, 192, then powers of 2
# (what malloc uses with malloc.fine_classes=0).
function kclass(s,    c) {
	if (s <= 8) return 8
	if (s <= 16) return 16
	if (s <= 32) return 32
	if (s <= 64) return 64
	if (s <= 96) return 96
	if (s <= 128) return 128
	if (s <= 192) return 192
	for (c = 256; c < s; c *= 2)
		;
	return c
}

# kmem's malloc size class (src/malloc/size_class.c, the default
# malloc.fine_classes=1): every 16 B up to 128, then eight per doubling to
# 4 KiB, less the classes whose objects cost no less slab than a larger
# class's (with the default order-3 slabs on 2 CPUs: 3328 and 3840 go; the
# slab calculation depends on the CPU count, so on other machines this
# model may differ a little from malloc), then the sizes that fill a 128
# KiB slab k times (k = 31 down to 16, to 8 KiB); at least 16.
function mclass(s,    i) {
	if (s <= 128)
		return s <= 16 ? 16 : int((s + 15) / 16) * 16
	if (!nMC)
		nMC = split("144 160 176 192 208 224 240 256 288 320 352 384 416 448 480 512 " \
			    "576 640 704 768 832 896 960 1024 1152 1280 1408 1536 " \
			    "1664 1792 1920 2048 2304 2560 2816 3072 3584 4096 4224 4368 4512 4672 4848 " \
			    "5040 5232 5456 5696 5952 6240 6544 6896 7280 7696 8192", MC, " ")
	for (i = 1; i < nMC && MC[i] < s; i++)
		;
	return MC[i]
}

# Mean class / mean request over uniform sizes lo..hi, with kmem's malloc
# classes (fine = 1) or kmalloc's buckets (fine = 0).
function round_uniform(lo, hi, fine,    s, req, got) {
	for (s = lo; s <= hi; s++) {
		req += s
		got += fine ? mclass(s) : kclass(s)
	}
	return got / req
}

# The same over longlived's log-uniform mix: bucket b in [lo, hi), uniform in it.
function round_loguniform(lo, hi, fine,    b, s, req, got) {
	for (b = lo; b < hi; b++)
		for (s = 2 ^ b; s < 2 ^ (b + 1); s++) {
			req += s / 2 ^ b
			got += (fine ? mclass(s) : kclass(s)) / 2 ^ b
		}
	return got / req
}

# How many of kmem's malloc classes serve requests of lo..hi bytes.
function nclasses(lo, hi,    s, c, n, last) {
	for (s = lo; s <= hi; s++)
		if ((c = mclass(s)) != last) {
			n++
			last = c
		}
	return n
}

# The allocator columns of a table's header row and its separator row, into
# file f; extra names one more (right-aligned) column after them, or is "".
function alloc_header(f, extra,    j) {
	for (j = 1; j <= nA; j++)
		printf "%s | ", A[j] > f
	printf "%s\n|---|", (extra != "" ? extra " |" : "") > f
	for (j = 1; j <= nA; j++)
		printf "---:|" > f
	printf "%s\n", (extra != "" ? "---:|" : "") > f
}

# The header line of a gnuplot data file f: first, then a column per allocator.
function dat_header(f, first,    j) {
	printf "%s", first > f
	for (j = 1; j <= nA; j++)
		printf "\t%s", A[j] > f
	printf "\n" > f
}

# The peer (not kmem) with the lowest arr[w, peer] among those that ran w, or "".
function lowest_peer(arr, w,    j, q, b) {
	b = ""
	for (j = 2; j <= nA; j++) {
		q = w SUBSEP A[j]
		if (cnt[q] && (b == "" || arr[q] < arr[w, b]))
			b = A[j]
	}
	return b
}

# A targets row for workload w against the reference figure for its best peer
# (claim, e.g. "larson ~34 ns/op (tcmalloc)", fig the ns in it).
function target_row(w, claim, fig,    b) {
	b = bestp[w]
	if (b == "")
		return
	printf "| best peer's %s | %s ns (%s; CPU time, both threads, %s ns); kmem %s ns | %s |\n",
	       claim, fmt_ns(mns[w, b]), b, fmt_ns(mcpu[w, b]),
	       (cnt[w, "kmem"] ? fmt_ns(mns[w, "kmem"]) : "-"),
	       sprintf("%.1fx the reference figure (CPU time: %.1fx)", mns[w, b] / fig, mcpu[w, b] / fig) > hl
}

# "<kmem> ns against <best peer> ns (<peer>), **<ratio>**" for workload w.
function against(w) {
	return sprintf("%s ns against %s ns (%s), **%s**", fmt_ns(mns[w, "kmem"]),
		       fmt_ns(mns[w, bestp[w]]), bestp[w], fmt_x(kr[w]))
}

# file: which input a line comes from (common.awk); an empty one (no
# failures, no floor) still has its number.
file == 1 {		# allocators.txt: "name path..." or "name n/a"
	note_allocator()
	next
}

file == 2 && FNR > 1 {	# peers.tsv
	k = $3 SUBSEP $2
	c = ++cnt[k]
	ns[k, c] = $5; cpu[k, c] = $6; peak[k, c] = $8; fin[k, c] = $9; mid[k, c] = $11
	live[k] = $10
	ops[k] = $4
	if ($12 + 0 > err[k] + 0)
		err[k] = $12
	if ($13 != 0)
		badrc[k] = $13
	seen_wl[$3] = 1
	next
}

file == 3 {		# kmemstat.txt: round=R wl=W name=value...
	w = ""
	for (i = 1; i <= NF; i++) {
		split($i, kv, "=")
		if (kv[1] == "wl")
			w = kv[2]
		else if (kv[1] != "round")
			ks[w, kv[1]] += kv[2]
	}
	ksn[w]++
	next
}

file == 4 {		# peers-failures.txt: round alloc wl why stderr (tab-separated)
	split($0, f, "\t")
	# One hot process runs the four sizes: its failure is each size's.
	nw = f[3] == "hot" ? split("hot16 hot64 hot256 hot1024", fw, " ") : split(f[3], fw, " ")
	for (j = 1; j <= nw; j++) {
		k = fw[j] SUBSEP f[2]
		nfail[k]++
		failmsg[k] = f[4] (f[5] != "" ? ": " f[5] : "")
	}
	anyfail = 1
	next
}

file == 5 && /^RESULT / {	# rss_floor.txt: bench_rss_floor's RESULT lines
	split("", fl)		# (delete fl: not in POSIX awk)
	for (i = 2; i <= NF; i++) {
		split($i, kv, "=")
		fl[kv[1]] = kv[2]
	}
	w = fl["wl"]
	fpeak[w] = fl["peak_kb"]; ffin[w] = fl["final_kb"]; fmid[w] = fl["mid_kb"]
	flive[w] = fl["live_kb"]; fops[w] = fl["ops"]
	next
}

END {
	nA = split("kmem glibc jemalloc mimalloc tcmalloc", A, " ")
	nW = split("hot16 hot64 hot256 hot1024 larson prodcons frag longlived bulk " \
		   "server threads leak big stress bulk4096", W, " ")
	workload_labels()
	# Workload groups of the geometric mean: hot counts once (geomean of its sizes).
	nG = split("hot larson prodcons frag longlived bulk server threads leak big stress bulk4096", G, " ")
	for (i = 1; i <= nW; i++)
		group[W[i]] = W[i] ~ /^hot/ ? "hot" : W[i]

	for (i = 1; i <= nW; i++) {
		w = W[i]
		best[w] = ""; bestp[w] = ""
		for (j = 1; j <= nA; j++) {
			a = A[j]; k = w SUBSEP a
			if (!cnt[k])
				continue
			medians(k)
			m = mns[k]
			mcpu[k] = median(cpu, k, cnt[k])
			mmid[k] = median(mid, k, cnt[k])
			if (best[w] == "" || m < mns[w, best[w]])
				best[w] = a
			if (a != "kmem" && (bestp[w] == "" || m < mns[w, bestp[w]]))
				bestp[w] = a
			if (brss[w] == "" || mpeak[k] < brss[w])
				brss[w] = mpeak[k]
		}
	}

	# Geometric means of the time ratios, per allocator (to the best of all)
	# and for kmem against the best peer.
	for (j = 1; j <= nA; j++) {
		a = A[j]
		sumlog = 0; ng = 0
		for (g = 1; g <= nG; g++) {
			s = 0; n = 0
			for (i = 1; i <= nW; i++) {
				w = W[i]
				if (group[w] != G[g] || !cnt[w, a] || best[w] == "")
					continue
				s += log(mns[w, a] / mns[w, best[w]]); n++
			}
			if (n) {
				gr[a, G[g]] = exp(s / n)
				sumlog += s / n; ng++
			}
		}
		geo[a] = ng ? exp(sumlog / ng) : ""
		geon[a] = ng
	}
	sumlog = 0; ngk = 0
	for (g = 1; g <= nG; g++) {
		s = 0; n = 0
		for (i = 1; i <= nW; i++) {
			w = W[i]
			if (group[w] != G[g] || !cnt[w, "kmem"] || bestp[w] == "")
				continue
			kr[w] = mns[w, "kmem"] / mns[w, bestp[w]]
			s += log(kr[w]); n++
		}
		if (n) {
			kgr[G[g]] = exp(s / n)
			sumlog += s / n; ngk++
		}
	}
	kgeo = ngk ? exp(sumlog / ngk) : ""

	hl = out "/peers_headline.md"
	dt = out "/peers_details.md"

	# ---- headline: time per workload -------------------------------------
	printf "| workload | " > hl
	alloc_header(hl, "kmem / best peer")
	for (i = 1; i <= nW; i++) {
		w = W[i]
		if (!seen_wl[w])
			continue
		printf "| %s | ", label[w] > hl
		for (j = 1; j <= nA; j++) {
			a = A[j]; k = w SUBSEP a
			if (na[a])
				cell = "n/a"
			else if (!cnt[k])
				cell = nfail[k] ? "**failed**" : "-"
			else {
				cell = fmt_ns(mns[k]) " (" fmt_x(mns[k] / mns[w, best[w]]) ")"
				if (a == best[w])
					cell = "**" cell "**"
			}
			printf "%s | ", cell > hl
		}
		if (kr[w] != "")
			printf "%s (%s)%s |\n", fmt_x(kr[w]), bestp[w], (kr[w] > 1.2 ? " ✗" : " ✓") > hl
		else
			printf "- |\n" > hl
	}
	printf "| **geomean of time ratios** (%d groups) | ", ngk > hl
	for (j = 1; j <= nA; j++)
		printf "%s | ", (geo[A[j]] != "" ? "**" fmt_x(geo[A[j]]) "**" : (na[A[j]] ? "n/a" : "-")) > hl
	printf "%s |\n\n", (kgeo != "" ? "**" fmt_x(kgeo) "**" : "-") > hl
	printf "ns per object allocated and freed (median of the rounds), and in parentheses the ratio " \
	       "to the fastest allocator (bold). ✓/✗: kmem within 1.2x of the best peer or not. The " \
	       "geometric mean counts %d workload groups, hot once (the geometric mean of its " \
	       "sizes).\n\n", ngk > hl

	# ---- targets ------------------------------------------------------------
	printf "**Targets** (kmem's; the best peer's reference figures were measured on " \
	       "another machine and are shown for calibration):\n\n" > hl
	printf "| target | measured here | |\n|---|---|---|\n" > hl
	# Best peer on hot: the fastest hot cell of any peer.
	hb = ""; hbw = ""
	for (i = 1; i <= 4; i++) {
		w = W[i]
		if (bestp[w] != "" && (hb == "" || mns[w, bestp[w]] < hb)) {
			hb = mns[w, bestp[w]]; hbw = w
		}
	}
	if (hb != "" && mns[hbw, "kmem"] != "")
		printf "| best peer's hot malloc+free pair ~6 ns (tcmalloc) | %s ns (%s, %s; CPU time %s ns); kmem %s ns (CPU %s ns) | %s |\n",
		       fmt_ns(hb), bestp[hbw], label[hbw], fmt_ns(mcpu[hbw, bestp[hbw]]),
		       fmt_ns(mns[hbw, "kmem"]), fmt_ns(mcpu[hbw, "kmem"]),
		       sprintf("%.1fx the reference figure (CPU time: %.1fx)", hb / 6, mcpu[hbw, bestp[hbw]] / 6) > hl
	target_row("prodcons", "producer/consumer 256 B ~30 ns/object (mimalloc)", 30)
	target_row("larson", "larson ~34 ns/op (tcmalloc)", 34)
	w = "frag"
	if (seen_wl[w]) {
		bfr = ""; bfa = ""
		for (j = 2; j <= nA; j++) {
			k = w SUBSEP A[j]
			if (cnt[k] && live[k] > 0 && (bfr == "" || mfin[k] / live[k] < bfr)) {
				bfr = mfin[k] / live[k]; bfa = A[j]
			}
		}
		k = w SUBSEP "kmem"
		if (cnt[k] && live[k] > 0) {
			kfr = mfin[k] / live[k]
			peers_fr = ""
			for (j = 2; j <= nA; j++) {
				q = w SUBSEP A[j]
				if (cnt[q] && live[q] > 0)
					peers_fr = peers_fr sprintf(", %s %.2fx", A[j], mfin[q] / live[q])
			}
			printf "| fragmentation ends at ~2.9x live bytes in RSS | kmem %.2fx%s | %s |\n",
			       kfr, peers_fr, (kfr <= 2.9 ? "met" : "**NOT met**") > hl
		}
	}
	nlose = 0; loses = ""; nk = 0
	for (i = 1; i <= nW; i++) {
		w = W[i]
		if (kr[w] != "") {
			nk++
			if (kr[w] > 1.2) {
				nlose++
				loses = loses (loses == "" ? "" : ", ") label[w] " " fmt_x(kr[w])
			}
		} else if (nfail[w, "kmem"] && !cnt[w, "kmem"]) {
			nk++; nlose++
			loses = loses (loses == "" ? "" : ", ") label[w] " **failed**"
		}
	}
	if (nk) {
		printf "| kmem within 1.2x of the best peer on every workload | %d of %d rows within%s | %s |\n",
		       nk - nlose, nk, nlose ? "; over: " loses : "", nlose ? "**NOT met**" : "met" > hl
		printf "| kmem's geometric mean <= 1.0x the best peer | %s | %s |\n", fmt_x(kgeo),
		       kgeo <= 1.0 ? "met" : "**NOT met**" > hl
	}
	for (i = 1; i <= nW; i++) {
		w = W[i]
		if (w != "frag" && w != "longlived")
			continue
		k = w SUBSEP "kmem"
		if (!cnt[k] || bestp[w] == "")
			continue
		bpa = lowest_peer(mpeak, w); bp = mpeak[w, bpa]
		bfa = lowest_peer(mfin, w); bf = mfin[w, bfa]
		ok = mpeak[k] <= bp && mfin[k] <= bf
		floor = ""
		if (fpeak[w] != "") {
			# No line breaks inside ?: chains: mawk (Debian's awk) refuses them.
			above = ""
			if (fpeak[w] > bp && ffin[w] > bf)
				above = ": both above the best peer's"
			else if (fpeak[w] > bp)
				above = ": the peak above the best peer's"
			else if (ffin[w] > bf)
				above = ": the final above the best peer's"
			# "Where kmem loses" has a paragraph on w only when kmem's peak is above the best peer's.
			if (above != "" && mpeak[k] > bp)
				above = above ", see Where kmem loses"
			floor = sprintf("; ideal size classes: peak %s MB, final %s MB (bench_rss_floor%s)",
					fmt_mb(fpeak[w]), fmt_mb(ffin[w]), above)
		}
		printf "| %s: kmem's peak and final RSS no higher than the best peer's | peak %s MB vs %s MB (%s), final %s MB vs %s MB (%s)%s | %s |\n",
		       w, fmt_mb(mpeak[k]), fmt_mb(bp), bpa, fmt_mb(mfin[k]), fmt_mb(bf), bfa, floor,
		       ok ? "met" : "**NOT met**" > hl
	}
	printf "\n" > hl
	nerr = 0
	for (i = 1; i <= nW; i++)
		for (j = 1; j <= nA; j++)
			if (err[W[i], A[j]] + 0 > 0 || nfail[W[i], A[j]]) {
				nerr++
			}
	if (nerr || anyfail) {
		printf "**Failures:** " > hl
		for (i = 1; i <= nW; i++)
			for (j = 1; j <= nA; j++) {
				k = W[i] SUBSEP A[j]
				if (nfail[k])
					printf "%s under %s failed in %d run(s) (%s). ", W[i], A[j], nfail[k], failmsg[k] > hl
				if (err[k] + 0 > 0)
					printf "%s under %s: %d wrong or misaligned object(s). ", W[i], A[j], err[k] > hl
			}
		printf "\n\n" > hl
	} else {
		missing = ""
		for (j = 1; j <= nA; j++)
			if (na[A[j]])
				missing = missing (missing == "" ? "" : ", ") A[j]
		printf "Every object checked out (tags intact, 16-byte aligned) under every allocator%s; " \
		       "no run crashed.\n\n", (missing != "" ? " that ran (not installed: " missing ")" : "") > hl
	}

	# ---- details: CPU time, RSS -----------------------------------------------
	printf "#### Process CPU time per object\n\n" > dt
	printf "The same runs, CPU time of all threads per object (for the two-thread workloads " \
	       "it includes the waiting side's spinning; less sensitive than wall time to other " \
	       "load on the machine):\n\n| workload | " > dt
	alloc_header(dt, "kmem / best peer")
	for (i = 1; i <= nW; i++) {
		w = W[i]
		if (!seen_wl[w])
			continue
		printf "| %s | ", label[w] > dt
		bc = ""; bca = ""
		for (j = 1; j <= nA; j++) {
			k = w SUBSEP A[j]
			printf "%s | ", (na[A[j]] ? "n/a" : (cnt[k] ? fmt_ns(mcpu[k]) : "-")) > dt
			if (A[j] != "kmem" && cnt[k] && (bc == "" || mcpu[k] < bc)) { bc = mcpu[k]; bca = A[j] }
		}
		if (cnt[w, "kmem"] && bc > 0)
			printf "%s (%s) |\n", fmt_x(mcpu[w, "kmem"] / bc), bca > dt
		else
			printf "- |\n" > dt
	}

	printf "\n#### Peak RSS (MB, ru_maxrss)\n\nMedian of the rounds; in parentheses the ratio to the " \
	       "lowest. For hot, prodcons and bulk it is mostly the allocator's fixed footprint.\n\n| workload | " > dt
	alloc_header(dt, "")
	for (i = 1; i <= nW; i++) {
		w = W[i]
		if (!seen_wl[w])
			continue
		printf "| %s | ", label[w] > dt
		for (j = 1; j <= nA; j++) {
			k = w SUBSEP A[j]
			if (na[A[j]])
				cell = "n/a"
			else if (!cnt[k])
				cell = "-"
			else {
				cell = fmt_mb(mpeak[k]) " (" fmt_x(mpeak[k] / brss[w]) ")"
				if (mpeak[k] == brss[w])
					cell = "**" cell "**"
			}
			printf "%s | ", cell > dt
		}
		printf "\n" > dt
	}

	printf "\n#### Fragmentation and the long-lived population\n\n" > dt
	printf "live: the bytes the workload holds at the end (requested sizes); final: resident " \
	       "size then (/proc/self/statm); after free: frag's resident size once 90%% of the " \
	       "small objects are freed.\n\n" > dt
	printf "| workload | allocator | peak MB | after free MB | final MB | live MB | final / live | peak / live |\n" > dt
	printf "|---|---|---:|---:|---:|---:|---:|---:|\n" > dt
	for (i = 1; i <= nW; i++) {
		w = W[i]
		if (w != "frag" && w != "longlived")
			continue
		for (j = 1; j <= nA; j++) {
			k = w SUBSEP A[j]
			if (!cnt[k] || live[k] <= 0)
				continue
			printf "| %s | %s | %s | %s | %s | %s | %.2fx | %.2fx |\n", w, A[j], fmt_mb(mpeak[k]),
			       w == "frag" ? fmt_mb(mmid[k]) : "-", fmt_mb(mfin[k]), fmt_mb(live[k]),
			       mfin[k] / live[k], mpeak[k] / live[k] > dt
		}
		if (seen_wl[w] && fpeak[w] != "" && flive[w] > 0)
			printf "| %s | *ideal size classes* (bench_rss_floor, simulated) | %s | %s | %s | %s | %.2fx | %.2fx |\n",
			       w, fmt_mb(fpeak[w]), w == "frag" ? fmt_mb(fmid[w]) : "-", fmt_mb(ffin[w]),
			       fmt_mb(flive[w]), ffin[w] / flive[w], fpeak[w] / flive[w] > dt
	}
	if ((seen_wl["frag"] && fpeak["frag"] != "") || (seen_wl["longlived"] && fpeak["longlived"] != ""))
		printf "\n*Ideal size classes*: the same operations replayed (no memory allocated) on a " \
		       "model of a size-class allocator with every choice in its favour: a class every 16 " \
		       "bytes, no headers, one-page slabs up to 2 KiB, each allocation into the fullest " \
		       "slab with room, no thread caches, and a slab's pages out of RSS the moment it " \
		       "empties; plus the workload's own arrays and the process's start-up RSS, which " \
		       "every run holds (`bench_rss_floor`). On frag this is within about 2%% of the least " \
		       "any allocator can need that keeps each page to one size class and never moves an " \
		       "object; on longlived, where the choice of slab matters, it is the model's figure, " \
		       "not a bound.\n" > dt

	# ---- kmem's SLUB counters ---------------------------------------------------
	printf "\n#### Which paths kmem took (SLUB counters)\n\n" > dt
	printf "Summed over the caches malloc uses (kmalloc-\\* and malloc-\\*), from " \
	       "/sys/kernel/slab/*/ (read by the workload with kmem_read() after its result), in one " \
	       "more run of each workload under kmem built with KMEM_SLUB_STATS (the kernel's " \
	       "CONFIG_SLUB_STATS: the timed build does not count the objects that go through " \
	       "sheaves, an increment on each fast path; build-stats/). Every " \
	       "allocation is counted once: from the thread's main sheaf (alloc_cpu_sheaf), from its " \
	       "cpu slab's freelist (alloc_fastpath) or on the slow path (alloc_slowpath); every free " \
	       "likewise (free_cpu_sheaf, free_fastpath, free_slowpath). The next six columns are per " \
	       "1000 objects allocated: objects flushed from sheaves back to their slabs (sheaf_flush) " \
	       "and moved from slabs into sheaves (sheaf_refill), full sheaves taken from the barn " \
	       "(barn_get) and left in it (barn_put), slabs allocated from and freed to the page " \
	       "allocator (alloc_slab, free_slab); the last is the memory page reporting gave back " \
	       "to the OS (pgreported).\n\n" > dt
	printf "| workload | allocations from sheaves | frees into sheaves | flushed to slabs | " \
	       "refilled from slabs | barn get | barn put | slabs allocated | slabs freed | " \
	       "MB given back to the OS per run |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n" > dt
	for (i = 1; i <= nW; i++) {
		w = W[i]
		if (!ksn[w])
			continue
		objs = ks[w, "alloc_cpu_sheaf"] + ks[w, "alloc_fastpath"] + ks[w, "alloc_slowpath"]
		frees = ks[w, "free_cpu_sheaf"] + ks[w, "free_fastpath"] + ks[w, "free_slowpath"]
		asheaf[w] = share(ks[w, "alloc_cpu_sheaf"], objs)
		fsheaf[w] = share(ks[w, "free_cpu_sheaf"], frees)
		flush[w] = per1k(ks[w, "sheaf_flush"], objs)
		refill[w] = per1k(ks[w, "sheaf_refill"], objs)
		bget[w] = per1k(ks[w, "barn_get"], objs)
		bput[w] = per1k(ks[w, "barn_put"], objs)
		slabs[w] = per1k(ks[w, "alloc_slab"], objs)
		sfreed[w] = per1k(ks[w, "free_slab"], objs)
		reported[w] = ks[w, "pgreported"] * 4 / 1024 / ksn[w]
		released[w] = ks[w, "slab_pages_released"] * 4 / 1024 / ksn[w]
		restored[w] = ks[w, "slab_pages_restored"] * 4 / 1024 / ksn[w]
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f |\n", label[w], asheaf[w],
		       fsheaf[w], fmt_k(flush[w]), fmt_k(refill[w]), fmt_k(bget[w]), fmt_k(bput[w]),
		       fmt_k(slabs[w]), fmt_k(sfreed[w]), reported[w] > dt
	}

	# ---- where kmem loses, and why ---------------------------------------------
	rf_small = round_uniform(16, 512, 1); rf_big = round_uniform(2048, 8192, 1)
	rf_ll1 = round_loguniform(8, 13, 1); rf_ll3 = round_loguniform(6, 12, 1)
	rk_small = round_uniform(16, 512, 0); rk_big = round_uniform(2048, 8192, 0)
	rk_ll1 = round_loguniform(8, 13, 0); rk_ll3 = round_loguniform(6, 12, 0)
	classes = "kmem's malloc size classes (every 16 B up to 128 B, then eight per doubling to 4 KiB: " \
		  "144, 160, ..., 256, 288, ..., 1152, 1280, ..., 4096, then the sizes that fill a 128 KiB slab " \
		  "k times: 4224, 4368, 4512, ..., 7696, 8192; malloc.fine_classes=1)"
	printf "\n### Where kmem loses, and why\n\n" > dt
	if (!nlose)
		printf "kmem is within 1.2x of the best peer in time on every workload.\n\n" > dt
	# The hot sizes kmem loses on, in one item.
	hotl = ""; hotf = ""; hotm = 0; nhot = 0; hotsame = 1; hotcounted = 1
	for (i = 1; i <= nW; i++) {
		w = W[i]
		if (w !~ /^hot/ || kr[w] == "" || kr[w] <= 1.2)
			continue
		if (!ksn[w])
			hotcounted = 0
		hotl = hotl (hotl == "" ? "" : "; ") label[w] ": " against(w)
		if (nhot++ && asheaf[w] "/" fsheaf[w] != hotf1)
			hotsame = 0
		if (nhot == 1)
			hotf1 = asheaf[w] "/" fsheaf[w]
		hotf = hotf (hotf == "" ? "" : ", ") asheaf[w] "/" fsheaf[w]
		if (flush[w] + refill[w] + bget[w] + bput[w] > hotm)
			hotm = flush[w] + refill[w] + bget[w] + bput[w]
	}
	if (nhot > 1 && hotsame)
		hotf = hotf1 " at every size"
	if (hotl != "" && hotcounted)
		hotpaths = sprintf("kmem stays on its sheaves here (allocations from / frees into " \
				   "sheaves: %s; flushed and refilled objects and barn trips together %s " \
				   "per 1000 objects), so the gap is the fast path itself.", hotf,
				   (hotm < 0.005 ? "below 0.01" : "at most " fmt_k(hotm)))
	else if (hotl != "")
		hotpaths = "(No SLUB counters from this run, so which paths kmem took is not known.)"
	if (hotl != "")
		printf "- **hot** (%s; CPU time in the table above). %s " \
		       "malloc finds the class's cache in a table indexed by (size + 15) >> 4, reaches " \
		       "the thread's slot through TLS and pops the main sheaf. free checks that the " \
		       "address is in kmem's memory, looks up its struct page, reads the cache index " \
		       "stored in every page of a slab (for the thread's slot), tests PageSlab on the " \
		       "head page, checks the slot start (a range check and a multiply by div_magic), " \
		       "that the object is not the top of the sheaf (a cheap double-free check) and " \
		       "that its slab is not entirely free (a load of the slab's state word), then " \
		       "pushes; neither counts the object unless kmem is built with KMEM_SLUB_STATS. " \
		       "The best peers' free also maps the address to a size class (jemalloc's radix " \
		       "tree, tcmalloc's page map), then pushes onto a thread-cache list without the " \
		       "slot-start, double-free and slab-state checks.\n", hotl, hotpaths > dt
	for (i = 1; i <= nW; i++) {
		w = W[i]
		if (w ~ /^hot/ || kr[w] == "" || kr[w] <= 1.2)
			continue
		printf "- **%s**: %s. ", label[w], against(w) > dt
		if (!ksn[w]) {
			printf "(No SLUB counters from this run.)\n" > dt
			continue
		}
		if (w == "larson")
			printf "Cross-thread frees go into the freeing thread's sheaf (%s of frees; %s of " \
			       "allocations from sheaves), and full sheaves move between the two threads " \
			       "through the barn, one lock round trip per sheaf (%s put and %s taken per " \
			       "1000 objects). %s objects per 1000 are flushed from sheaves to slabs (a " \
			       "compare-and-swap in __slab_free per run of objects of one slab) and %s " \
			       "refilled from slabs, with the node list_lock when a slab changes list; %s " \
			       "slabs per 1000 objects come from the page allocator. The 16..1024 B sizes " \
			       "fall in %d size classes, each with its own sheaves and barn. The peers " \
			       "batch remote frees likewise (tcmalloc's transfer cache, mimalloc's delayed " \
			       "thread-free lists, jemalloc's tcache flush per bin).\n",
			       fsheaf[w], asheaf[w], fmt_k(bput[w]), fmt_k(bget[w]), fmt_k(flush[w]),
			       fmt_k(refill[w]), fmt_k(slabs[w]), nclasses(16, 1024) > dt
		else if (w == "prodcons")
			printf "Every free is the consumer thread's: it goes into the consumer's sheaf (%s " \
			       "of frees); each full sheaf is left in the barn for an empty one, and the " \
			       "producer takes it (%s put and %s taken per 1000 objects: one trip through " \
			       "the barn's lock per sheaf on each side; %s of allocations from sheaves). " \
			       "%s objects per 1000 are flushed to slabs when the barn is full and %s " \
			       "refilled from slabs when it has no full sheaf; %s slabs per 1000 objects " \
			       "come from the page allocator.\n",
			       fsheaf[w], fmt_k(bput[w]), fmt_k(bget[w]), asheaf[w], fmt_k(flush[w]),
			       fmt_k(refill[w]), fmt_k(slabs[w]) > dt
		else if (w == "bulk") {
			printf "For 256 B objects a sheaf holds 60 and the barn up to 17 full sheaves " \
			       "(slub_barn_kb=256: 256 KiB / (60 x 256 B)), so with the thread's main and " \
			       "spare sheaf %s: the frees leave full sheaves in the barn (%s per 1000 " \
			       "objects) and the allocations take them back (%s per 1000; %s of allocations " \
			       "and %s of frees through sheaves). ",
			       (flush[w] + refill[w] < 1 ? "a round's 1000 objects fit in sheaves" : "most of a round's 1000 objects stay in sheaves"),
			       fmt_k(bput[w]), fmt_k(bget[w]), asheaf[w], fsheaf[w] > dt
			if (flush[w] + refill[w] < 1)
				printf "Only %s objects per 1000 are flushed to slabs and %s refilled. ",
				       fmt_k(flush[w]), fmt_k(refill[w]) > dt
			else
				printf "The rest go to and come back from slabs: %s objects per 1000 flushed " \
				       "and %s refilled. ", fmt_k(flush[w]), fmt_k(refill[w]) > dt
			printf "Per object, kmem pays the fast path described under hot (%s ns a pair in " \
			       "hot 256 B here), plus a barn lock round trip every 60 objects each way. The " \
			       "peers keep the freed objects in a thread cache.\n",
			       cnt["hot256", "kmem"] ? fmt_ns(mns["hot256", "kmem"]) : "?" > dt
		} else if (w == "frag" || w == "longlived")
			printf "Random frees go into the thread's sheaf (%s of frees), but each cache's " \
			       "barn holds only 10 to 64 full sheaves (about slub_barn_kb=256 KiB of " \
			       "objects); once it is full, every further full sheaf is flushed to its slabs: " \
			       "%s objects per 1000 here. Neighbours in a sheaf of randomly freed objects " \
			       "seldom share a slab, so a flush is about one compare-and-swap on a slab's " \
			       "state word per object in __slab_free (a cache miss on its struct page), plus " \
			       "the node list_lock when the slab changes list (full to partial, or empty). " \
			       "Allocations take %s of their objects from sheaves, and sheaves are refilled " \
			       "from slabs (%s objects per 1000; %s full sheaves per 1000 objects come from " \
			       "the barn); %s slabs per 1000 objects come from the page allocator%s. Writing " \
			       "the objects and the page faults of fresh memory cost every allocator alike.\n",
			       fsheaf[w], fmt_k(flush[w]), asheaf[w], fmt_k(refill[w]), fmt_k(bget[w]),
			       fmt_k(slabs[w]),
			       (reported[w] > 0 ? sprintf(", and %.0f MB per run went back to the OS (page reporting) to be faulted in again", reported[w]) : "") > dt
		else
			printf "\n" > dt
	}
	for (i = 1; i <= nW; i++) {
		w = W[i]
		if (w != "frag" && w != "longlived")
			continue
		k = w SUBSEP "kmem"
		if (!cnt[k])
			continue
		if ((bpa = lowest_peer(mpeak, w)) == "" || mpeak[k] <= mpeak[w, bpa])
			continue
		bp = mpeak[w, bpa]
		printf "- **%s, memory**: kmem's peak RSS is %s MB against %s MB (%s), %s. ", w,
		       fmt_mb(mpeak[k]), fmt_mb(bp), bpa, fmt_x(mpeak[k] / bp) > dt
		if (w == "frag") {
			printf "%s round frag's 16..512 B requests up by %.2fx on average and its 2..8 KiB " \
			       "requests by %.2fx (a 4097-byte object takes 5 KiB; kmalloc's buckets alone, " \
			       "powers of two plus 96 and 192 with malloc.fine_classes=0, would round them " \
			       "by %.2fx and %.2fx); " \
			       "jemalloc's, mimalloc's and tcmalloc's classes are spaced about alike, glibc's " \
			       "chunks 16 B apart. After the random 90%% free, the slabs left empty go back " \
			       "to the page allocator, and the 2..8 KiB caches build slabs of their minimum " \
			       "order out of them before memory grows (order_fallback, as a fragmented " \
			       "kernel does); but most slabs keep a live object. The pages of those slabs " \
			       "that hold no live object go back to the OS on malloc_trim() and, with " \
			       "slub_release_pages=2, at the free (%.1f MB per run here; with it frag's peak " \
			       "is 383 MB at 1.2x the time, see docs/design.md, SLUB: releasing the free pages of partial slabs); that is possible only in " \
			       "slabs of two pages or more, and most of " \
			       "frag's classes below 448 B have one-page slabs, whose free page is an empty " \
			       "slab, already freed. A page that keeps one live object can be reused " \
			       "neither by the 2..8 KiB caches nor by the OS. Free pages of the page " \
			       "allocator go back only as whole 2 MiB blocks (page_reporting_order=9, after " \
			       "page_reporting.delay_ms; %.1f MB per run here). " \
			       "glibc does best here because it splits and coalesces free chunks of any size, " \
			       "so the 2..8 KiB objects reuse the holes the small ones left; a segregated-fit " \
			       "allocator cannot place a 2 KiB object in the free half of a page of 256 B " \
			       "objects.",
			       classes, rf_small, rf_big, rk_small, rk_big, released[w], reported[w] > dt
			if (fpeak[w] != "")
				printf " Replayed on ideal size classes (bench_rss_floor, in the table above) the " \
				       "same operations need %s MB at the peak and %s MB at the end, %s %s's peak: " \
				       "after the 90%% free %s MB stay resident (pages that keep a live object, " \
				       "and the workload's arrays), and the 2..8 KiB objects need pages of their " \
				       "own on top. That is within about 2%% of the least any allocator can need " \
				       "that keeps each page to one size class and never moves an object (in " \
				       "expectation over which objects survive); kmem's peak is %s it.",
				       fmt_mb(fpeak[w]), fmt_mb(ffin[w]), fmt_x(fpeak[w] / bp), bpa, fmt_mb(fmid[w]),
				       fmt_x(mpeak[k] / fpeak[w]) > dt
			printf "\n" > dt
		} else {
			printf "%s round longlived's size mixes up by %.2fx (phase 2, 256 B-8 KiB) and " \
			       "%.2fx (phase 4, 64 B-4 KiB) on average (kmalloc's buckets alone, with " \
			       "malloc.fine_classes=0: %.2fx and %.2fx), about as the peers' classes do, " \
			       "so the rounding " \
			       "explains little of the gap. Slabs that keep one old object when the mix " \
			       "drifts stay resident (their pages without a live object go back on " \
			       "malloc_trim(), or at the free with slub_release_pages=2: %.1f MB per run " \
			       "given back here, %.1f MB taken back when their slabs were allocated from " \
			       "again; with it longlived's peak is 212 MB), each cache's barn may keep about " \
			       "256 KiB of freed objects in full sheaves, and free pages go back to the OS " \
			       "only by whole 2 MiB blocks (%.1f MB per run here). The peak comes when " \
			       "phase 2 replaces phase 1's small objects: those classes shrink eightfold, " \
			       "their slabs thin out evenly and empty only as their last objects die, " \
			       "while the new classes need new slabs; an allocator that gives memory " \
			       "back by whole pages keeps about 180 MB there (a page of k objects is free " \
			       "once all k are), whatever it prefers, and glibc's heap reuses the holes " \
			       "for the new sizes instead (docs/benchmarks.md, Where kmem loses).", classes,
			       rf_ll1, rf_ll3, rk_ll1, rk_ll3, released[w], restored[w], reported[w] > dt
			if (fpeak[w] != "" && mfin[k] > ffin[w])
				printf " The ideal size-class model (bench_rss_floor) peaks at %s MB here, %s %s's, and " \
				       "ends at %s MB, where kmem ends at %s MB: at the end kmem keeps more slabs " \
				       "than the ideal, because a sheaf hands its freed objects out again whatever " \
				       "slab they live in, which spreads a shrinking class's live objects over all " \
				       "its slabs, and because free pages go back to the OS only as 2 MiB blocks " \
				       "(docs/benchmarks.md, Tried and not kept: freeing sparse slabs' objects past the " \
				       "sheaves cut slab memory by a quarter here, but cost frag 1.17x the time).",
				       fmt_mb(fpeak[w]), fmt_x(fpeak[w] / bp), bpa, fmt_mb(ffin[w]), fmt_mb(mfin[k]) > dt
			printf "\n" > dt
		}
	}
	printf "\n" > dt

	# ---- gnuplot data ----------------------------------------------------------
	tr = out "/raw/time_ratio.dat"
	dat_header(tr, "workload")
	for (i = 1; i <= nW; i++) {
		w = W[i]
		if (!seen_wl[w])
			continue
		l = label[w]; gsub(/ /, "_", l)
		printf "%s", l > tr
		for (j = 1; j <= nA; j++) {
			k = w SUBSEP A[j]
			printf "\t%s", cnt[k] ? sprintf("%.3f", mns[k] / mns[w, best[w]]) : "-" > tr
		}
		printf "\n" > tr
	}
	rs = out "/raw/rss.dat"
	dat_header(rs, "what")
	n = split("larson:peak frag:peak frag:after_free frag:final longlived:peak longlived:final", R, " ")
	for (i = 1; i <= n; i++) {
		split(R[i], p, ":")
		w = p[1]
		if (!seen_wl[w])
			continue
		printf "%s_%s", w, p[2] > rs
		for (j = 1; j <= nA; j++) {
			k = w SUBSEP A[j]
			v = p[2] == "peak" ? mpeak[k] : p[2] == "final" ? mfin[k] : mmid[k]
			printf "\t%s", cnt[k] ? sprintf("%.1f", v / 1024) : "-" > rs
		}
		printf "\n" > rs
	}
}
