#!/usr/bin/env bash
# The project's main job (`make run ARGS="..."`): build, then run
# build/bin/kmem-run (from tools/kmem-run.c) with this script's arguments.
# Extend here (e.g. report/ generation) rather than in the Makefile.
set -euo pipefail
cd "$(dirname "$0")/.."

[ -f build/CMakeCache.txt ] || cmake -S . -B build
cmake --build build -j"${JOBS:-2}"

if [ ! -x build/bin/kmem-run ]; then
	echo "note: build/bin/kmem-run does not exist (no tools/kmem-run.c yet): nothing to run" >&2
	exit 0
fi
exec build/bin/kmem-run "$@"
