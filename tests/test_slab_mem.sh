#!/usr/bin/env bash
# bench_slab_mem (Mackall's and Enberg's tables): the boot-like workload
# must do exactly what it declares (the patch's statistics: 22,500 cache
# allocations, 12,100 frees, 10,400 live objects of about 90 bytes; 10,250
# kmallocs of which 5,450 live, about 340 bytes each, about 3.48 MB), be the
# same sequence on every run, and every allocator that boots must have
# replayed all of it: its allocation and free counts and the live bytes at
# the end and at the peak equal the declared ones, and it holds at least as
# many slab pages as the live data fills.  The trace replay (the shipped cut
# of a real kernel's slab traffic, first 20,000 events) likewise.  The second
# reading of the patch's figures (boot12k: the slob line counting kmallocs
# too: 12,280 cache allocations, 4,970 live, about 932 KB live in all) is
# replayed on every allocator too.  SLOB's breakdown of its heap pages adds
# up: each list's pages are exactly its live bytes, kmalloc headers,
# rounding and free bytes; the free bytes are the holes' and the statistics
# file's unused bytes of that list, the holes its fragments; the pages of
# all lists and the big pages are the slab pages held.
#
# Environment (set by ctest): KMEM_BINARY_DIR, KMEM_SOURCE_DIR.
set -u
ROOT=${KMEM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
BIN=${KMEM_BINARY_DIR:-$ROOT/build}/bin
TRACE=$ROOT/bench/data/devbox-6.18-slab-cut.perf.txt.xz
fail=0
bad() { echo "FAIL: $*"; fail=1; }
field() {	# field NAME LINE (no sed: this runs hundreds of times)
	local l=" $2 " v
	v=${l#* "$1"=}
	[ "$v" = "$l" ] || echo "${v%% *}"
}

args=()
if [ -r "$TRACE" ] && command -v xz >/dev/null; then
	args=(-t "$TRACE" -E 20000)
else
	echo "note: no $TRACE or no xz: the trace replay is not checked"
fi
out=$("$BIN/bench_slab_mem" "${args[@]}" 2>/dev/null) || bad "bench_slab_mem exited with $?"
out2=$("$BIN/bench_slab_mem" -a slub 2>/dev/null) || bad "bench_slab_mem -a slub exited with $?"

wl=$(grep '^WORKLOAD wl=boot ' <<<"$out")
wl2=$(grep '^WORKLOAD wl=boot12k ' <<<"$out")
[ -n "$wl" ] && [ -n "$wl2" ] || { bad "no WORKLOAD line for boot and boot12k"; exit 1; }
# The declared counts are the patch's.
for kv in cache_allocs=22500 cache_frees=12100 cache_live=10400 kmallocs=10250 kmalloc_live=5450 \
	  big_live=17; do
	k=${kv%%=*}
	v=$(field "$k" "$wl")
	[ "$v" = "${kv#*=}" ] || bad "$k is '$v', expected ${kv#*=}"
done
cl=$(field cache_live "$wl"); clb=$(field cache_live_bytes "$wl")
km=$(field kmallocs "$wl"); kb=$(field kmalloc_bytes "$wl")
awk -v a="$clb" -v n="$cl" 'BEGIN { exit !(a / n >= 85 && a / n <= 95) }' ||
	bad "live cache objects average $clb / $cl bytes, not about 90"
awk -v a="$kb" -v n="$km" 'BEGIN { exit !(a / n >= 320 && a / n <= 360 && a >= 3.3e6 && a <= 3.65e6) }' ||
	bad "kmallocs request $kb bytes in $km, not about 3.48 MB at about 340 bytes"
[ "$(field digest "$wl")" = "$(field digest "$(grep '^WORKLOAD wl=boot ' <<<"$out2")")" ] ||
	bad "two runs drew different workloads"
# The second reading: the slob line's 22,528 allocations less 10,247 kmallocs, and its
# 932,647 live bytes (4-byte headers in: 910,847 of objects) within 3%.
for kv in cache_allocs=12280 cache_frees=7310 cache_live=4970 kmallocs=10250 kmalloc_live=5450 big_live=17; do
	k=${kv%%=*}
	v=$(field "$k" "$wl2")
	[ "$v" = "${kv#*=}" ] || bad "boot12k: $k is '$v', expected ${kv#*=}"
done
small2=$(($(field live_bytes "$wl2") - 4096 * $(field big_live "$wl2")))
awk -v a="$small2" 'BEGIN { exit !(a >= 910847 * 0.97 && a <= 910847 * 1.03) }' ||
	bad "boot12k: $small2 live bytes below a page, not about 910,847"

declared() {	# declared WORKLOAD-LINE: "allocs frees live_bytes peak_live_bytes"
	echo "$(($(field cache_allocs "$1") + $(field kmallocs "$1") + $(field big_allocs "$1")))" \
	     "$(($(field cache_frees "$1") + $(field kmalloc_frees "$1") + $(field big_allocs "$1") - $(field big_live "$1")))" \
	     "$(field live_bytes "$1")" "$(field peak_live_bytes "$1")"
}
nok=0
while read -r line; do
	[ -n "$line" ] || continue
	a=$(field alloc "$line"); w=$(field wl "$line")
	st=$(field state "$line")
	[ "$st" = failed ] && bad "$w on $a: the replay failed"
	[ "$st" = ok ] || continue
	nok=$((nok + 1))
	pe=$(field pages_end "$line"); pp=$(field pages_peak "$line")
	de=$(field data_end "$line"); dp=$(field data_peak "$line")
	le=$(field live_end "$line")
	if [ "$w" = boot ] || [ "$w" = boot12k ]; then
		wlw=$wl; [ "$w" = boot12k ] && wlw=$wl2
		read -r allocs frees lb pb <<<"$(declared "$wlw")"
		[ "$(field allocs "$line")" = "$allocs" ] || bad "$w on $a: $(field allocs "$line") allocations, declared $allocs"
		[ "$(field frees "$line")" = "$frees" ] || bad "$w on $a: $(field frees "$line") frees, declared $frees"
		[ "$le" = "$lb" ] || bad "$w on $a: $le live bytes at the end, declared $lb"
		[ "$(field live_peak "$line")" = "$pb" ] || bad "$w on $a: peak live $(field live_peak "$line"), declared $pb"
	else
		objs=$(sed -n 's/.*replayed: [0-9]* operations on \([0-9]*\) objects.*/\1/p' <<<"$out")
		[ "$(field allocs "$line")" = "$objs" ] || bad "trace on $a: $(field allocs "$line") allocations of $objs objects"
	fi
	[ "$(field failed "$line")" = 0 ] || bad "$w on $a: allocations failed"
	[ "$pe" -ge "$de" ] && [ "$pp" -ge "$pe" ] && [ "$dp" -ge "$de" ] && [ $((pe * 4096)) -ge "$le" ] ||
		bad "$w on $a: impossible pages: end $pe (data $de), peak $pp (data $dp), live $le bytes"
	echo "$w on $a: $pe slab pages for $de data pages at the end, $pp for $dp at the peak"
done <<<"$(grep '^RESULT ' <<<"$out")"

# SLUB boots in every build, and single-threaded it is deterministic.
s1=$(grep '^RESULT wl=boot alloc=slub ' <<<"$out"); s2=$(grep '^RESULT wl=boot alloc=slub ' <<<"$out2")
[ "$(field state "$s1")" = ok ] || bad "SLUB did not run the boot-like workload"
[ "$(field pages_end "$s1")" = "$(field pages_end "$s2")" ] && [ "$(field pages_peak "$s1")" = "$(field pages_peak "$s2")" ] ||
	bad "SLUB's pages differ between two runs: $s1 / $s2"
# Mackall's table: every SLOB setting that boots shows its statistics.
for s in 1 2 3; do
	line=$(grep "^RESULT wl=boot alloc=slob$s " <<<"$out")
	[ "$(field state "$line")" = ok ] || continue
	grep -q "^-- SLOB lists=$s .*--$" <<<"$out" && sed -n "/^-- SLOB lists=$s /,/^--/p" <<<"$out" | grep -q '^total [0-9]* used [0-9]*' ||
		bad "SLOB lists=$s booted but its statistics have no 'total P used P' line"
done
[ "$nok" -ge 1 ] || bad "no allocator ran"
# Both readings on every allocator that boots (all five: SLOB is built in).
for w in boot boot12k; do
	for a in slub slab slob1 slob2 slob3; do
		[ "$(field state "$(grep "^RESULT wl=$w alloc=$a " <<<"$out")")" = ok ] || bad "$w did not run on $a"
	done
done

# SLOB's breakdown adds up (one awk pass: the statistics blocks of Mackall's
# section, then the BREAKDOWN and RESULT lines).
check_bd() {	# check_bd < OUTPUT: FAIL lines, then "nbd N"
awk '
function f(k,   i, n, kv) {
	n = split($0, kv, " ")
	for (i = 1; i <= n; i++) if (index(kv[i], k "=") == 1) return substr(kv[i], length(k) + 2)
	return ""
}
/^-- SLOB lists=[123] \(slab=slob slob\.lists=[123][^)]*\)( --|, boot-like, 12k --)$/ {
	cur = ($0 ~ /12k --$/ ? "boot12k" : "boot") " slob" substr($0, 15, 1); next
}
/^--/ || /^$/ { cur = ""; next }
cur != "" && / list pages / { st[cur " " $1] = $4 " " $6 " " $10; next }
/^RESULT / { res[f("wl") " " f("alloc")] = f("pages_base") + f("pages_end") " " f("live_end"); next }
/^BREAKDOWN / {
	k = f("wl") " " f("alloc"); n[k]++; nbd++
	p = f("pages"); fr = f("free"); l = f("list")
	if (f("live") + f("headers") + f("rounding") + fr != p * 4096) print "FAIL: " k " " l ": live+headers+rounding+free != " p " pages"
	if (f("rounding") + 0 > p * 4096) print "FAIL: " k " " l ": rounding negative"
	if (f("h0") + f("h1") + f("h2") + f("h3") + f("h4") != fr) print "FAIL: " k " " l ": holes by size do not add up to " fr
	if (l == "full" && fr != 0) print "FAIL: " k ": full pages with " fr " free bytes"
	if (l != "full" && f("wl") != "trace") {
		if (!((k " " l) in st)) print "FAIL: " k " " l ": no statistics line"
		else if (st[k " " l] != p " " fr " " f("holes")) print "FAIL: " k " " l ": breakdown " p " " fr " " f("holes") ", statistics " st[k " " l]
	}
	pages[k] += p; live[k] += f("live"); big[k] = f("big_pages")
}
END {
	for (k in n) {
		split(res[k], r, " ")
		if (pages[k] + big[k] != r[1]) print "FAIL: " k ": " pages[k] " heap + " big[k] " big pages, " r[1] " slab pages held"
		if (k !~ /^trace/ && live[k] + 4096 * big[k] != r[2]) print "FAIL: " k ": breakdown live " live[k] " + " big[k] " pages, replay live " r[2]
		split(k, kk, " "); want = substr(kk[2], 5) + 1
		if (n[k] != want) print "FAIL: " k ": " n[k] " breakdown lines, not " want
	}
	print "nbd " nbd + 0
}'
}
bdcheck=$(check_bd <<<"$out")
grep '^FAIL' <<<"$bdcheck" && fail=1
nbd=$(sed -n 's/^nbd //p' <<<"$bdcheck")
[ "$nbd" -ge 27 ] || bad "only $nbd SLOB breakdown lines (3 workloads x 3 settings)"

# -K: the temporary kmallocs in a real kernel's sizes; the same counts, all replayed.
outk=$("$BIN/bench_slab_mem" -a slob1 -w boot -K 2>/dev/null) || bad "-K exited with $?"
wlk=$(grep '^WORKLOAD wl=boot ' <<<"$outk"); rk=$(grep '^RESULT wl=boot alloc=slob1 ' <<<"$outk")
read -r allocs frees lb pb <<<"$(declared "$wlk")"
[ "$(field kmallocs "$wlk")" = 10250 ] && [ "$(field kmalloc_live "$wlk")" = 5450 ] &&
	[ "$(field digest "$wlk")" != "$(field digest "$wl")" ] || bad "-K: not the same counts in other sizes: $wlk"
[ "$(field allocs "$rk")" = "$allocs" ] && [ "$(field frees "$rk")" = "$frees" ] && [ "$(field live_end "$rk")" = "$lb" ] ||
	bad "-K: not all replayed: $rk"
grep -q "sizes as a real kernel's" <<<"$outk" || bad "-K: the workload line does not say so"

# -H 4 and -H 8: kmallocs as the kernel's SLOB laid them out (smaller headers) on the
# same heap: all replayed, the breakdown adds up, and the pages held are fewer.
for h in 4 8; do
	outh=$("$BIN/bench_slab_mem" -a slob3 -w boot12k -H $h 2>/dev/null) || bad "-H $h exited with $?"
	r=$(grep '^RESULT wl=boot12k alloc=slob3 ' <<<"$outh")
	read -r allocs frees lb pb <<<"$(declared "$wl2")"
	[ "$(field allocs "$r")" = "$allocs" ] && [ "$(field frees "$r")" = "$frees" ] && [ "$(field failed "$r")" = 0 ] ||
		bad "-H $h: not all replayed: $r"
	grep '^FAIL' <<<"$(check_bd <<<"$outh")" && fail=1
	hdr=$(grep '^BREAKDOWN wl=boot12k alloc=slob3 list=small ' <<<"$outh")
	[ "$(field headers "$hdr")" -gt 0 ] && [ $(( $(field headers "$hdr") % h )) = 0 ] || bad "-H $h: headers $(field headers "$hdr")"
	r16=$(grep '^RESULT wl=boot12k alloc=slob3 ' <<<"$out")
	[ "$(field pages_end "$r")" -lt "$(field pages_end "$r16")" ] ||
		bad "-H $h: $(field pages_end "$r") pages, not fewer than the 16-byte header's $(field pages_end "$r16")"
	echo "-H $h: boot12k on slob3 holds $(field pages_end "$r") slab pages (16-byte header: $(field pages_end "$r16"))"
done
echo "SLOB breakdown: $nbd lines add up"
exit $fail
