#!/usr/bin/env bash
# Self-test of scripts/check-product-text.sh on a scratch tree: every line that cites an issue,
# a work session or a work round is found and its file named (exit 1); then, with only lines that
# look alike left (rounding, round trips, round-robin, an HTTP session, "issue" as a verb, an
# upstream tracker's address), and the same bad lines in folders and files the check skips, it
# passes (exit 0). The bad lines are assembled at run time, so this file holds none.
set -euo pipefail
check="$(cd "$(dirname "$0")" && pwd)/check-product-text.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

I=Issue i=issue S=Session s=session r=round  # assembled below, so this file never matches
mkdir -p "$work/docs" "$work/tests/cli" "$work/web/tests" "$work/bench"
printf '// %s 31, point 4: the server refuses a body over 64 KiB.\n' "$I" >"$work/tests/cli/test_bad_point.cpp"
printf 'See %s #12 for the limits.\n' "$i" >"$work/docs/bad_hash.md"
printf '%s 18: the stream path.\n' "$S" >"$work/docs/bad_session.md"
printf 'Measured in this %s on 2 cores.\n' "$r" >"$work/bench/bad_this_round.sh"
printf '  // Fifth %s 3 of the engine.\n' "$r" >"$work/web/tests/bad_round_n.mjs"
printf '# The %s-23 table.\n' "$i" >"$work/README.md"
cat >"$work/docs/good.md" <<'TEXT'
cycles = round(time_ps * core_clock_hz / 1e12), rounded to the nearest cycle; rounding mode.
Every intermediate tensor makes a DRAM round trip; round-trips and round-robin arbitration.
A newer run of the same session cancels the older one ("session": "tab1").
The controller may issue 2 commands per cycle; a REF issues 4 cycles later.
Each round refreshes every unit once; only the last round of REFpbs touches the banks.
SCALE-Sim reports 9, not 10 (github.com/scalesim-project/SCALE-Sim/issues/125).
TEXT

out=$("$check" "$work" 2>&1) && fail "exit 0 with bad lines present"$'\n'"$out"
rc=$("$check" "$work" >/dev/null 2>&1; echo $?) || true
[ "$rc" = 1 ] || fail "exit $rc with bad lines present, expected 1"
for f in tests/cli/test_bad_point.cpp:1 docs/bad_hash.md:1 docs/bad_session.md:1 bench/bad_this_round.sh:1 \
  web/tests/bad_round_n.mjs:1 README.md:1; do
  grep -q "^$f:" <<<"$out" || fail "$f not named"$'\n'"$out"
done
grep -q 'good\.md' <<<"$out" && fail "a good line was flagged"$'\n'"$out"

# Only good lines, plus bad ones where the check does not look: node_modules, build folders,
# binary files and the check's own files.
rm "$work"/tests/cli/test_bad_point.cpp "$work"/docs/bad_*.md "$work"/bench/bad_this_round.sh \
  "$work"/web/tests/bad_round_n.mjs "$work"/README.md
mkdir -p "$work/web/tests/node_modules/pkg" "$work/tests/build-asan" "$work/scripts"
printf '%s 7\n' "$i" >"$work/web/tests/node_modules/pkg/index.js"
printf '%s 7\n' "$i" >"$work/tests/build-asan/log.txt"
printf 'x\0%s 7\n' "$i" >"$work/tests/data.bin"
printf '# %s 7\n' "$i" >"$work/scripts/check-product-text.sh"
out=$("$check" "$work" 2>&1) || fail "exit $? with only good lines"$'\n'"$out"
[ -z "$out" ] || fail "output with only good lines"$'\n'"$out"
echo "check-product-text.sh: bad lines found and named, look-alikes and skipped files pass"
