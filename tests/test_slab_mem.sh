#!/usr/bin/env bash
# bench_slab_mem (Mackall's and Enberg's tables): the boot-like workload
# must do exactly what it declares (the patch's statistics: 22,500 cache
# allocations, 12,100 frees, 10,400 live objects of about 90 bytes; 10,250
# kmallocs of which 5,450 live, about 340 bytes each, about 3.48 MB), be the
# same sequence on every run, and every allocator that boots must have
# replayed all of it: its allocation and free counts and the live bytes at
# the end and at the peak equal the declared ones, and it holds at least as
# many slab pages as the live data fills.  The trace replay (the shipped cut
# of a real kernel's slab traffic, first 20,000 events) likewise.
#
# Environment (set by ctest): KMEM_BINARY_DIR, KMEM_SOURCE_DIR.
set -u
ROOT=${KMEM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
BIN=${KMEM_BINARY_DIR:-$ROOT/build}/bin
TRACE=$ROOT/bench/data/devbox-6.18-slab-cut.perf.txt.xz
fail=0
bad() { echo "FAIL: $*"; fail=1; }
field() {	# field NAME LINE
	sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"
}

args=()
if [ -r "$TRACE" ] && command -v xz >/dev/null; then
	args=(-t "$TRACE" -E 20000)
else
	echo "note: no $TRACE or no xz: the trace replay is not checked"
fi
out=$("$BIN/bench_slab_mem" "${args[@]}" 2>/dev/null) || bad "bench_slab_mem exited with $?"
out2=$("$BIN/bench_slab_mem" -a slub 2>/dev/null) || bad "bench_slab_mem -a slub exited with $?"

wl=$(grep '^WORKLOAD ' <<<"$out")
[ -n "$wl" ] || { bad "no WORKLOAD line"; exit 1; }
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
[ "$(field digest "$wl")" = "$(field digest "$(grep '^WORKLOAD ' <<<"$out2")")" ] ||
	bad "two runs drew different workloads"

allocs=$(($(field cache_allocs "$wl") + km + $(field big_allocs "$wl")))
frees=$(($(field cache_frees "$wl") + $(field kmalloc_frees "$wl") + $(field big_allocs "$wl") - $(field big_live "$wl")))
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
	if [ "$w" = boot ]; then
		[ "$(field allocs "$line")" = "$allocs" ] || bad "boot on $a: $(field allocs "$line") allocations, declared $allocs"
		[ "$(field frees "$line")" = "$frees" ] || bad "boot on $a: $(field frees "$line") frees, declared $frees"
		[ "$le" = "$(field live_bytes "$wl")" ] || bad "boot on $a: $le live bytes at the end, declared $(field live_bytes "$wl")"
		[ "$(field live_peak "$line")" = "$(field peak_live_bytes "$wl")" ] ||
			bad "boot on $a: peak live $(field live_peak "$line"), declared $(field peak_live_bytes "$wl")"
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
exit $fail
