#!/usr/bin/env bash
# Product text states behaviour, method and figures: docs, tests, code comments, benchmarks and
# scripts never cite the project's tracker or its work process. This lists every line that does:
#   an issue number      "issue 12", "issue #12", "Issue 31, point 4", "issues 23", "issue-23"
#   a work session       "session 18", "session-17" (an HTTP session, with no number, is fine)
#   a work round         "this round", "round 3", "5th round"
# Words that only look alike pass: round(), rounding, rounded, round trip, round-robin, "the last
# round of refreshes", "may issue 2 commands", an upstream tracker's address (.../issues/125).
#   scripts/check-product-text.sh [ROOT]   scan ROOT (default: this repository)
# Prints file:line: text of each hit; exit 1 if any, 0 if none, 2 on a usage error. Skips this
# script and its self-test, node_modules, build*/ and .git folders, and binary files.
set -euo pipefail
if [ $# -gt 1 ] || [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
  echo "usage: $0 [ROOT]" >&2
  exit 2
fi
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
[ -d "$root" ] || { echo "$0: no folder $root" >&2; exit 2; }
cd "$root"

scanned=()
for p in docs tests web/tests web/src sim models workloads traces bench fuzz scripts configs cmake README.md \
  CMakeLists.txt; do
  [ -e "$p" ] && scanned+=("$p")
done
[ ${#scanned[@]} -gt 0 ] || { echo "$0: nothing to scan under $root" >&2; exit 2; }

# PCRE, case-insensitive. An issue number not followed by what a DRAM command count is followed
# by ("issue 2 commands"); a session number; "this round" but not "this round trip/robin"; a
# round number; an ordinal round.
counted='(?:commands?|bursts?|requests?|reads?|writes?|cycles?|REFs?|REFpbs?|ACTs?|PREs?|times)'
pattern="\\bissues?[-\\s#]*+\\d++(?!(?:\\.\\d+)?\\s+$counted\\b)"
pattern+="|\\bsessions?[-\\s#]*+\\d"
pattern+="|\\bthis\\s+round\\b(?![-\\s](?:trips?|robin))"
pattern+="|\\bround[-\\s#]*+\\d"
pattern+="|\\b\\d+(?:st|nd|rd|th)\\s+round\\b"

rc=0
hits=$(grep -rnIiP --exclude-dir=node_modules --exclude-dir='build*' --exclude-dir=.git \
  --exclude=check-product-text.sh --exclude=check-product-text-selftest.sh \
  -e "$pattern" -- "${scanned[@]}") || rc=$?
if [ "$rc" -gt 1 ]; then
  echo "$0: grep failed (exit $rc)" >&2
  exit 2
fi
if [ -z "$hits" ]; then
  exit 0
fi
# file:line: text, the text cut at 200 characters; sorted by file, then line.
printf '%s\n' "$hits" | cut -c1-240 | sort -t: -k1,1 -k2,2n
echo "$(printf '%s\n' "$hits" | wc -l) line(s) cite an issue, a work session or a work round:" \
  "state the behaviour, method or figure instead" >&2
exit 1
