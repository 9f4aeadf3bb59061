#!/usr/bin/env bash
# The project's main job (`make run ARGS="..."`): build, then
# scripts/report/run_report.sh, which runs the kernel patches' experiments, the
# page-allocator demo (build/bin/kmem-run) and kmem beside glibc, jemalloc,
# mimalloc and tcmalloc, and writes report/README.md with its plots.
# Took 51 minutes on a shared 2-core host (load average 8-25).
#
#   ARGS starting with "--" go to run_report.sh (e.g. ARGS=--quick, a
#   one-minute smoke run); any other ARGS are kmem-run's boot command line
#   (e.g. ARGS="mem=64M page_alloc.tail_placement=0").
#
# If the full build fails (e.g. a test that does not compile), the targets
# the report needs are built one by one, the report is still written, and
# the script exits with the build's failure status.
set -euo pipefail
cd "$(dirname "$0")/.."

report_args=()
demo_cmdline=()
for arg in "$@"; do
	case $arg in
	--*) report_args+=("$arg") ;;
	*) demo_cmdline+=("$arg") ;;
	esac
done

[ -f build/CMakeCache.txt ] || cmake -S . -B build
build_rc=0
cmake --build build -j"${JOBS:-2}" || build_rc=$?
if [ "$build_rc" != 0 ]; then
	echo "run.sh: WARNING: the full build failed (status $build_rc); building what the report needs" >&2
	targets=(kmem-malloc tool_kmem-run)
	for f in bench/*.c; do
		n=$(basename "$f" .c)
		targets+=("bench_${n#bench_}")
	done
	failed=()
	for t in "${targets[@]}"; do
		cmake --build build -j"${JOBS:-2}" --target "$t" >/dev/null 2>&1 || {
			echo "run.sh: WARNING: target $t does not build" >&2
			failed+=("$t")
		}
	done
fi

REPORT_KMEM_RUN_CMDLINE="${demo_cmdline[*]}" REPORT_BUILD_RC=$build_rc \
REPORT_BUILD_FAILED="${failed[*]:-}" \
	bash scripts/report/run_report.sh "${report_args[@]}"
exit "$build_rc"
