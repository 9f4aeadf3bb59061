#!/usr/bin/env bash
# README.md, docs/*.md and the report generator (scripts/report/*) describe
# kmem as it is: what it is, how it works, what it measures now.  How the
# work was organised does not belong there (git log keeps the history), so
# this fails on any of these words, case-insensitively:
#
#   "session", "helper's", "a helper"   (the regex of the project's hooks)
#   "the issue", "issue N"              (the tracker, not the product)
#   "seed 00N", "seed00N"               (the kernel patches go by what they
#                                        are: "SLAB bulk API, Brouer 2015")
#   "review" as a noun or verb of the process ("a review", "review fixes")
#
# Run with an extra file or directory as arguments to check those instead
# (used to see that the check can fail).
#
# Environment (set by ctest): KMEM_SOURCE_DIR.
set -u
SRC=${KMEM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$SRC" || exit 1

words='\bsession\b|\bhelper.s\b|a helper|the issue|\bissue [0-9]+|\bseed ?00[0-9]\b|\breview(s|ed|er|ers)?\b'

if [ $# -gt 0 ]; then
	files=("$@")
else
	files=(README.md docs/*.md scripts/report/*)
fi
for f in "${files[@]}"; do
	if [ ! -e "$f" ]; then
		echo "FAIL: $f is missing"
		exit 1
	fi
done

hits=$(grep -rHniE -- "$words" "${files[@]}")
if [ -n "$hits" ]; then
	echo "FAIL: process words in the docs or the report (describe the product, not the work):"
	echo "$hits" | head -n 60
	echo "($(echo "$hits" | wc -l) line(s))"
	exit 1
fi
echo "ok: ${#files[@]} file(s) free of process words"
