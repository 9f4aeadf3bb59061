#!/usr/bin/env bash
# The whole test flow behind `make test` (and .ci/run):
#   main  build/       default build (-O2 -g, asserts on); whole ctest suite;
#                      then an install + pkg-config smoke test
#   asan  build-asan/  -fsanitize=address,undefined; whole ctest suite
#   tsan  build-tsan/  -fsanitize=thread; ctest -L concurrency (tests that start threads)
# The sanitizer builds count every object through a sheaf (KMEM_SLUB_STATS,
# the kernel's CONFIG_SLUB_STATS), so the tests of those counters run there;
# the main build is the default one, without.
# Usage: scripts/test.sh [main|asan|tsan]...   (no argument: all three, in order)
# Any failure exits non-zero.  JOBS (default 2) sets build and ctest parallelism.
# An empty suite is an error, except for the tsan stage (no concurrency tests
# is only a note); KMEM_ALLOW_NO_TESTS=1 relaxes that while tests/ is empty.
# KMEM_SANITIZER_NO_ASLR=1 runs the sanitizer suites with ASLR off regardless.
set -euo pipefail
cd "$(dirname "$0")/.."

JOBS=${JOBS:-2}
CC=${CC:-cc}
NO_TESTS=error
[ "${KMEM_ALLOW_NO_TESTS:-0}" = 1 ] && NO_TESTS=ignore

banner() {
	printf '\n==================================================================\n'
	printf '== %s\n' "$*"
	printf '==================================================================\n'
}

# configure_and_build DIR [cmake -D options...]
configure_and_build() {
	local dir=$1; shift
	cmake -S . -B "$dir" "$@"
	cmake --build "$dir" -j"$JOBS"
}

run_ctest() {
	local dir=$1; shift
	ctest --test-dir "$dir" --output-on-failure -j"$JOBS" --no-tests="$NO_TESTS" "$@"
}

# sanitizer_launcher DIR FLAGS...: prints the command prefix needed to run
# binaries built with FLAGS here: nothing, or `setarch <arch> -R` (ASLR off)
# when the runtime cannot start with the kernel's mmap randomisation (TSan
# with vm.mmap_rnd_bits > 28: "FATAL: ThreadSanitizer: unexpected memory
# mapping").  Fails if the runtime works neither way.
# KMEM_SANITIZER_NO_ASLR=1 forces the setarch path.
sanitizer_launcher() {
	local dir=$1; shift
	local probe=$dir/sanitizer-probe log=$dir/sanitizer-probe.log
	local bits arch ok=1
	"$CC" "$@" -pthread cmake/sanitizer-probe.c -o "$probe"
	bits=$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 0)
	for _ in 1 2 3; do
		"$probe" >"$log" 2>&1 || { ok=0; break; }
	done
	if [ "$ok" = 1 ] && [ "$bits" -le 28 ] && [ "${KMEM_SANITIZER_NO_ASLR:-0}" != 1 ]; then
		echo "note: sanitizer runtime OK with ASLR on (vm.mmap_rnd_bits=$bits)" >&2
		return 0
	fi
	arch=$(uname -m)
	if command -v setarch >/dev/null && setarch "$arch" -R "$probe" >>"$log" 2>&1; then
		echo "note: running with ASLR disabled (setarch $arch -R):" \
		     "vm.mmap_rnd_bits=$bits, probe without it: $([ $ok = 1 ] && echo ok || echo FAILED)" >&2
		echo "setarch $arch -R"
		return 0
	fi
	echo "error: a $* program does not run on this machine (see $log):" >&2
	cat "$log" >&2
	return 1
}

stage_main() {
	banner "[main] build/: default build (-O2 -g, asserts on), whole test suite"
	configure_and_build build -DKMEM_SANITIZE=
	run_ctest build

	banner "[main] install + pkg-config smoke test (build/install-check/)"
	if ! command -v pkg-config >/dev/null; then
		echo "error: pkg-config missing: run scripts/install-deps.sh" >&2
		return 1
	fi
	local prefix=$PWD/build/install-check
	rm -rf "$prefix"
	cmake --install build --prefix "$prefix" >/dev/null
	# The program calls nothing (the API is not known here), so keep the
	# DT_NEEDED entry despite gcc's default --as-needed.
	printf '#include <kmem.h>\nint main(void) { return 0; }\n' >"$prefix/check.c"
	# shellcheck disable=SC2046
	"$CC" "$prefix/check.c" -o "$prefix/check" -Wl,--no-as-needed \
		$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs kmem)
	local dyn
	dyn=$(readelf -d "$prefix/check")
	grep -q 'NEEDED.*\[libkmem\.so\.0\]' <<<"$dyn" ||
		{ echo "error: check program does not need libkmem.so.0" >&2; return 1; }
	LD_LIBRARY_PATH=$prefix/lib "$prefix/check"
	# A plain static link (no --whole-archive): boot parameters and the
	# /proc files are registered in linker sections, all there or none.
	cat >"$prefix/check_static.c" <<-'EOF'
		#include <kmem.h>
		#include <stdio.h>
		#include <string.h>
		int main(void)
		{
			static char buf[1 << 16];
			if (kmem_init("mem=8M slub_min_objects=4"))
				return 1;
			if (kmem_read("/proc/slabinfo", buf, sizeof(buf)) <= 0 ||
			    !strstr(buf, "slabinfo - version: 2.1"))
				return 2;
			if (kmem_read("/sys/kernel/slab/kmalloc-64/objs_per_slab", buf, sizeof(buf)) <= 0)
				return 3;
			void *p = kmalloc(100, GFP_KERNEL);
			kfree(p);
			return p ? 0 : 4;
		}
	EOF
	"$CC" "$prefix/check_static.c" -o "$prefix/check_static" -I"$prefix/include" \
		"$prefix/lib/libkmem.a" -pthread
	"$prefix/check_static" || { echo "error: statically linked check failed ($?)" >&2; return 1; }
	echo "install check OK: $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --modversion kmem)," \
	     "$(find "$prefix" -type f -o -type l | wc -l) files installed," \
	     "libkmem.so exports $(readelf -W --dyn-syms "$prefix/lib/libkmem.so" |
	                            awk '$7 != "UND" && $6 == "DEFAULT" && $5 != "LOCAL"' | wc -l) symbols"
}

stage_asan() {
	banner "[asan] build-asan/: -fsanitize=address,undefined, KMEM_SLUB_STATS, whole test suite"
	configure_and_build build-asan -DKMEM_SANITIZE=address,undefined -DKMEM_SLUB_STATS=ON
	local launcher
	launcher=$(sanitizer_launcher build-asan -fsanitize=address,undefined)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		$launcher ctest --test-dir build-asan --output-on-failure -j"$JOBS" --no-tests="$NO_TESTS"
}

stage_tsan() {
	banner "[tsan] build-tsan/: -fsanitize=thread, KMEM_SLUB_STATS, concurrency tests (ctest -L concurrency)"
	configure_and_build build-tsan -DKMEM_SANITIZE=thread -DKMEM_SLUB_STATS=ON
	local n launcher
	n=$(ctest --test-dir build-tsan -N -L concurrency | sed -n 's/^Total Tests: *//p')
	if [ "${n:-0}" = 0 ]; then
		echo "note: no tests labelled 'concurrency' (tests that start threads): nothing to run under TSan"
		return 0
	fi
	launcher=$(sanitizer_launcher build-tsan -fsanitize=thread)
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		$launcher ctest --test-dir build-tsan --output-on-failure -j"$JOBS" -L concurrency
}

stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(main asan tsan)
for s in "${stages[@]}"; do
	case $s in
	main|asan|tsan) "stage_$s" ;;
	*) echo "usage: $0 [main|asan|tsan]..." >&2; exit 2 ;;
	esac
done
banner "all test stages passed: ${stages[*]}"
