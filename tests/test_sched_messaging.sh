#!/usr/bin/env bash
# bench_sched_messaging (the byte-sized freelist index patch's messaging
# benchmark): every message must arrive intact and be freed by its
# receiver (the child mode counts them: groups x 20 x 20 x loops, none
# corrupted); the report mode must print a time row for SLUB and n/a, not
# a failure, for a configuration that does not boot; and, when valgrind is
# installed, cachegrind's counts must be there and plausible (at least one
# D1 miss per message: each crosses threads).
#
# Environment (set by ctest): KMEM_BINARY_DIR, KMEM_SANITIZE.
set -u
BIN=${KMEM_BINARY_DIR:-$(cd "$(dirname "$0")/.." && pwd)/build}/bin
fail=0
bad() { echo "FAIL: $*"; fail=1; }

one=$("$BIN/bench_sched_messaging" -C 0 -g 2 -l 10 2>&1) || bad "child mode exited with $?: $one"
grep -q '^RESULT cfg=slub .* messages=8000 bad=0$' <<<"$one" || bad "child mode: $one"

args=(-g 1 -l 10 -r 1)
if [ -z "${KMEM_SANITIZE:-}" ] && command -v valgrind >/dev/null; then
	args+=(-m -G 1 -L 5 -M 1)
fi
out=$("$BIN/bench_sched_messaging" "${args[@]}" 2>/dev/null) || bad "bench_sched_messaging exited with $?"
echo "$out" | sed -n '/^configuration/,/^$/p'
grep -q '^RESULT cfg=slub wall_s=[0-9.]* cpu_s=[0-9.]*$' <<<"$out" || bad "no SLUB time"
grep -q 'FAILED' <<<"$out" && bad "a configuration failed: $(grep FAILED <<<"$out")"
if [[ " ${args[*]} " == *" -m "* ]]; then
	cg=$(grep '^RESULT cfg=slub cg_' <<<"$out")
	d1=$(sed -n 's/.* cg_d1_misses=\([0-9]*\).*/\1/p' <<<"$cg")
	ir=$(sed -n 's/.* cg_irefs=\([0-9]*\).*/\1/p' <<<"$cg")
	# 1 group x 20 x 20 x 5 loops = 2000 messages.
	[ -n "$d1" ] && [ "$d1" -ge 2000 ] && [ -n "$ir" ] && [ "$ir" -gt "$d1" ] ||
		bad "cachegrind's counts missing or implausible: '$cg'"
fi
exit $fail
