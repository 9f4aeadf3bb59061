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
#           loaded at run time only, via LD_PRELOAD/dlopen)
set -euo pipefail

pkgs=(pkgconf libasan8 libtsan2 libubsan1 util-linux gnuplot-nox python3 sqlite3 g++ xz-utils perl)
bench_pkgs=(libjemalloc2 libmimalloc2.0 libtcmalloc-minimal4)

for arg in "$@"; do
	case $arg in
	--bench) pkgs+=("${bench_pkgs[@]}") ;;
	-h|--help) sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "usage: $0 [--bench]" >&2; exit 2 ;;
	esac
done

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
	command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
	sudo=(sudo)
fi
apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -qq -o Dpkg::Use-Pty=0 -o DPkg::Lock::Timeout=300)

echo "install-deps: installing ${missing[*]}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { "${apt[@]}" update && "${apt[@]}" install -y --no-install-recommends "${missing[@]}"; } </dev/null >"$log" 2>&1; then
	cat "$log" >&2
	echo "install-deps: apt-get failed" >&2
	exit 1
fi
echo "install-deps: done"
