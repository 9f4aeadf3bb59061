#!/usr/bin/env bash
# `make bench`: build, then run every build/bin/bench_* (no arguments yet),
# each under a banner.  All benchmarks run; the script fails if any failed.
set -euo pipefail
cd "$(dirname "$0")/.."

[ -f build/CMakeCache.txt ] || cmake -S . -B build
cmake --build build -j"${JOBS:-2}"

shopt -s nullglob
failed=()
ran=0
for b in build/bin/bench_*; do
	if [ ! -f "$b" ] || [ ! -x "$b" ]; then continue; fi
	printf '\n==== %s ====\n' "$(basename "$b")"
	ran=$((ran + 1))
	rc=0
	"$b" || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "!!!! $(basename "$b") exited with status $rc" >&2
		failed+=("$(basename "$b")")
	fi
done

if [ "$ran" = 0 ]; then
	echo "note: no benchmarks (bench/*.c) built"
	exit 0
fi
if [ ${#failed[@]} -gt 0 ]; then
	echo "benchmarks failed: ${failed[*]}" >&2
	exit 1
fi
echo "all $ran benchmark(s) finished"
