#!/usr/bin/env bash
# bench_slab_bulk_table (the SLAB bulk API table on each slab allocator):
# a short run must print a row for every bulk size asked for, with the
# patch's figures beside it; SLUB (which always boots) must have measured
# every cell; a configuration that does not boot is n/a, never a failure;
# and when SLAB's tuned configuration runs, /proc/slabinfo must show the
# tunables that were written to it.
#
# Environment (set by ctest): KMEM_BINARY_DIR.
set -u
BIN=${KMEM_BINARY_DIR:-$(cd "$(dirname "$0")/.." && pwd)/build}/bin
fail=0
bad() { echo "FAIL: $*"; fail=1; }

out=$("$BIN/bench_slab_bulk_table" -r 1 -n 20000 -b 1,16,250,4096 -L "300 150 4" 2>/dev/null) ||
	bad "bench_slab_bulk_table exited with $?"
echo "$out" | sed -n '/^bulk |/,/^$/p'
for b in 1 16 250 4096; do
	row=$(grep -E "^ *$b \| " <<<"$out")
	[ -n "$row" ] || { bad "no row for bulk $b"; continue; }
	# The patch's bulk figure for this size is printed beside ours.
	case $b in
	1) want='42  10.71' ;; 16) want='17   4.34' ;; 250) want='20   5.04' ;; 4096) want='90  22.59' ;;
	esac
	grep -qF "$want" <<<"$row" || bad "bulk $b: the patch's figure '$want' is not in: $row"
done
slub=$(grep '^RESULT alloc=slub ' <<<"$out")
grep -q ' state=ok ' <<<"$slub" || bad "SLUB did not run: $slub"
n=$(grep -o ' b[0-9]*=[0-9.]*/[0-9.]*' <<<"$slub" | awk -F'[=/]' '$2 > 0 && $3 > 0' | wc -l)
[ "$n" = 4 ] || bad "SLUB: $n of 4 bulk sizes with positive figures: $slub"
grep -q ' state=failed' <<<"$out" && bad "a configuration crashed: $(grep ' state=failed' <<<"$out")"
if grep -q '^RESULT alloc=slab-tuned state=ok' <<<"$out"; then
	grep -q '^SLAB tuned .*tunables (limit batchcount shared) 300 150 4$' <<<"$out" ||
		bad "SLAB tuned ran, but /proc/slabinfo does not show the tunables written: $(grep '^SLAB tuned' <<<"$out")"
fi
exit $fail
