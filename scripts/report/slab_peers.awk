# kmem's malloc on its three slab allocators beside the peers: the
# "kmem (SLAB)" and "kmem (SLOB)" columns of report/README.md's peers
# section.  POSIX awk (mawk is enough).
#
#   awk -f scripts/report/common.awk -f scripts/report/slab_peers.awk -v out=report \
#       report/raw/allocators.txt report/raw/allocators-slab.txt \
#       report/raw/peers.tsv report/raw/peers-slab.tsv \
#       report/raw/peers-failures-slab.txt   (optional: -v srounds=N)
#
# Writes out/peers_slab.md: time per object and peak RSS on every workload
# for kmem (SLUB, the default boot), kmem (SLAB) and kmem (SLOB) (malloc
# under LD_PRELOAD with KMEM_CMDLINE=slab=slab / slab=slob), glibc and the
# peers; medians over the rounds each ran; then the SLOB question of the
# fragmentation workloads (peak and final RSS against glibc's, time).

# file: which input a line comes from (common.awk).
file <= 2 {		# allocators.txt, allocators-slab.txt: "name path..." or "name n/a"
	note_allocator()
	next
}

(file == 3 || file == 4) && FNR > 1 {	# peers.tsv, peers-slab.tsv
	k = $3 SUBSEP $2
	c = ++cnt[k]
	ns[k, c] = $5; peak[k, c] = $8; fin[k, c] = $9
	if ($12 + 0 > 0)
		err[k] += $12
	seen[$3] = 1
	next
}

file == 5 {		# peers-failures-slab.txt: round alloc wl why stderr (tab-separated)
	split($0, fl, "\t")
	nw = fl[3] == "hot" ? split("hot16 hot64 hot256 hot1024", fw, " ") : split(fl[3], fw, " ")
	for (j = 1; j <= nw; j++) {
		failed[fw[j], fl[2]] = fl[4]
		seen[fw[j]] = 1
	}
	next
}

END {
	nA = split("kmem kmem-slab kmem-slob glibc jemalloc mimalloc tcmalloc", A, " ")
	head["kmem"] = "kmem (SLUB)"; head["kmem-slab"] = "kmem (SLAB)"; head["kmem-slob"] = "kmem (SLOB)"
	head["glibc"] = "glibc"; head["jemalloc"] = "jemalloc"; head["mimalloc"] = "mimalloc"
	head["tcmalloc"] = "tcmalloc"
	nW = split("hot16 hot64 hot256 hot1024 larson prodcons frag longlived bulk", W, " ")
	workload_labels()
	f = out "/peers_slab.md"

	for (i = 1; i <= nW; i++)
		for (j = 1; j <= nA; j++) {
			k = W[i] SUBSEP A[j]
			if (cnt[k])
				medians(k)
		}

	printf "#### kmem on SLUB, SLAB and SLOB\n\n" > f
	printf "The same workloads under kmem's malloc booted with each slab allocator " \
	       "(`KMEM_CMDLINE=slab=slab` or `slab=slob`, SLOB with its default `slob.lists=3`; " \
	       "kmem (SLUB) is the default boot of the tables above). Medians of the rounds each " \
	       "ran: SLUB and the peers every round, SLAB and SLOB %s round(s) " \
	       "(REPORT_SLAB_ROUNDS). n/a: the allocator does not boot in this build; -: no result.\n\n",
	       (srounds != "" ? srounds : "?") > f

	for (t = 1; t <= 2; t++) {
		printf "%s\n\n| workload |", (t == 1 ? "Time per object (ns, wall):" : "Peak RSS (MB):") > f
		for (j = 1; j <= nA; j++)
			printf " %s |", head[A[j]] > f
		printf " SLAB / SLUB | SLOB / SLUB |\n|---|" > f
		for (j = 1; j <= nA + 2; j++)
			printf "---:|" > f
		printf "\n" > f
		for (i = 1; i <= nW; i++) {
			w = W[i]
			if (!seen[w])
				continue
			printf "| %s |", label[w] > f
			for (j = 1; j <= nA; j++) {
				k = w SUBSEP A[j]
				if (na[A[j]])
					cell = "n/a"
				else if (!cnt[k])
					cell = failed[k] != "" ? "**failed** (" failed[k] ")" : "-"
				else
					cell = (t == 1 ? fmt_ns(mns[k]) : fmt_mb(mpeak[k])) (err[k] ? " (**errors**)" : "")
				printf " %s |", cell > f
			}
			for (j = 2; j <= 3; j++) {
				k = w SUBSEP A[j]; b = w SUBSEP "kmem"
				if (cnt[k] && cnt[b] && (t == 1 ? mns[b] : mpeak[b]) > 0)
					printf " %.2fx |", (t == 1 ? mns[k] / mns[b] : mpeak[k] / mpeak[b]) > f
				else
					printf " - |" > f
			}
			printf "\n" > f
		}
		printf "\n" > f
	}

	# SLOB against glibc where a coalescing heap wins: frag and longlived.
	any = 0
	for (i = 1; i <= nW; i++) {
		w = W[i]
		if (w != "frag" && w != "longlived")
			continue
		k = w SUBSEP "kmem-slob"; g = w SUBSEP "glibc"
		if (!cnt[k] || !cnt[g])
			continue
		if (!any++)
			printf "SLOB against glibc on the workloads where glibc's coalescing heap beats every " \
			       "segregated-fit allocator (target: peak and final RSS at or below glibc's at no " \
			       "more than 3x its time):\n\n| workload | SLOB peak / glibc | SLOB final / glibc | " \
			       "SLOB time / glibc | |\n|---|---:|---:|---:|---|\n" > f
		pr = mpeak[k] / mpeak[g]; fr = mfin[k] / mfin[g]; tr = mns[k] / mns[g]
		printf "| %s | %.2fx (%s vs %s MB) | %.2fx (%s vs %s MB) | %.2fx | %s |\n", w, pr,
		       fmt_mb(mpeak[k]), fmt_mb(mpeak[g]), fr, fmt_mb(mfin[k]), fmt_mb(mfin[g]), tr,
		       (pr <= 1 && fr <= 1 && tr <= 3 ? "met" : "**NOT met**") > f
	}
	if (any)
		printf "\n" > f
}
