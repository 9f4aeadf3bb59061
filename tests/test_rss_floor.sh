#!/usr/bin/env bash
# bench_rss_floor (the report's "ideal size classes" rows) must replay the
# very operations of bench_peers_workloads' frag and longlived: the two
# print the same op count, the same live bytes at the end and the same
# digest of the sizes and frees drawn, here on glibc at a small scale.  Its model must pass its self-test (a case worked
# out by hand), and its figures must be possible ones: no fewer pages than
# the live bytes, a peak no lower than the end.
#
# Environment (set by ctest): KMEM_BINARY_DIR.
set -u
BIN=${KMEM_BINARY_DIR:-$(cd "$(dirname "$0")/.." && pwd)/build}/bin
SCALE=0.02
fail=0

field() {	# field NAME LINE
	sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$2"
}

if ! "$BIN/bench_rss_floor" --selftest; then
	echo "FAIL: bench_rss_floor --selftest"
	fail=1
fi

for wl in frag longlived; do
	floor_out=$("$BIN/bench_rss_floor" "$wl" -x "$SCALE")
	real_out=$("$BIN/bench_peers_workloads" "$wl" -x "$SCALE")
	floor=$(grep '^RESULT ' <<<"$floor_out")
	real=$(grep '^RESULT ' <<<"$real_out")
	a=$(sed -n 's/^STREAM wl=[a-z]* digest=//p' <<<"$floor_out")
	b=$(sed -n 's/^STREAM wl=[a-z]* digest=//p' <<<"$real_out")
	if [ -z "$a" ] || [ "$a" != "$b" ]; then
		echo "FAIL $wl: stream digest '$a' in bench_rss_floor, '$b' in bench_peers_workloads: not the same operations"
		fail=1
	fi
	if [ -z "$floor" ] || [ -z "$real" ]; then
		echo "FAIL $wl: no RESULT line (floor: '$floor', workload: '$real')"
		fail=1
		continue
	fi
	for f in ops live_kb; do
		a=$(field "$f" "$floor")
		b=$(field "$f" "$real")
		if [ -z "$a" ] || [ "$a" != "$b" ]; then
			echo "FAIL $wl: $f is '$a' in bench_rss_floor, '$b' in bench_peers_workloads: not the same operations"
			fail=1
		fi
	done
	live=$(field live_kb "$floor")
	peak=$(field slab_peak_kb "$floor")
	fin=$(field slab_final_kb "$floor")
	if [ -z "$live" ] || [ -z "$peak" ] || [ -z "$fin" ] ||
	   [ "$fin" -lt "$live" ] || [ "$peak" -lt "$fin" ]; then
		echo "FAIL $wl: impossible figures: live $live KiB, slab pages at the end $fin KiB, at the peak $peak KiB"
		fail=1
	fi
	echo "$wl: ops $(field ops "$floor"), live $live KiB; ideal size classes: slab peak $peak KiB, end $fin KiB"
done
exit $fail
