#!/usr/bin/env bash
# Install the Debian packages the test flow needs (and, with --bench, what
# `make bench` / `make run` need).  Idempotent: apt is not touched when every
# package is already installed.  Runs with no stdin; uses sudo when not root.
# gcc, cmake and make are assumed present.
#
#   test:   pkgconf (install check), libasan8 libtsan2 libubsan1 (gcc 12's
#           sanitizer runtimes), util-linux (setarch, for TSan), gnuplot-nox,
#           and the real programs run under LD_PRELOAD: python3, sqlite3,
#           g++ (C++ new/delete), xz-utils, perl
#   bench:  libjemalloc2 libmimalloc2.0 libtcmalloc-minimal4 (peer allocators,
#           loaded at run time only, via LD_PRELOAD/dlopen); valgrind
#           (bench_sched_messaging's cache misses, cachegrind's simulated caches)
#   --best-effort: install what can be installed (one package at a time if
#           the batch fails), say what could not, and exit 0 (make run: the
#           report marks a missing peer n/a rather than not being written).
set -euo pipefail

pkgs=(pkgconf libasan8 libtsan2 libubsan1 util-linux gnuplot-nox python3 sqlite3 g++ xz-utils perl)
bench_pkgs=(libjemalloc2 libmimalloc2.0 libtcmalloc-minimal4 valgrind)

best_effort=0
for arg in "$@"; do
	case $arg in
	--bench) pkgs+=("${bench_pkgs[@]}") ;;
	--best-effort) best_effort=1 ;;
	-h|--help) sed -n '2,15s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "usage: $0 [--bench] [--best-effort]" >&2; exit 2 ;;
	esac
done

# Failure: fatal, or with --best-effort a warning naming what is missing.
give_up() {
	echo "install-deps: $1" >&2
	if [ "$best_effort" = 1 ]; then
		echo "install-deps: warning: going on without: ${missing[*]}" >&2
		exit 0
	fi
	exit 1
}

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all ${#pkgs[@]} packages present"
	exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || give_up "need root or sudo to install: ${missing[*]}"
	sudo=(sudo)
fi
apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -qq -o Dpkg::Use-Pty=0 -o DPkg::Lock::Timeout=300)

echo "install-deps: installing ${missing[*]}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { "${apt[@]}" update && "${apt[@]}" install -y --no-install-recommends "${missing[@]}"; } </dev/null >"$log" 2>&1; then
	cat "$log" >&2
	if [ "$best_effort" = 1 ]; then
		# One at a time: a package this mirror lacks must not keep out the others.
		left=()
		for p in "${missing[@]}"; do
			"${apt[@]}" install -y --no-install-recommends "$p" </dev/null >"$log" 2>&1 || left+=("$p")
		done
		missing=("${left[@]}")
		[ ${#missing[@]} -eq 0 ] || give_up "apt-get could not install every package"
	else
		give_up "apt-get failed"
	fi
fi
echo "install-deps: done"
