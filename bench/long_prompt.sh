#!/bin/bash
# Wall time, peak RSS and TTFT of `npusim llm` on a long prompt (docs/performance.md, docs/llm.md
# "Query blocks share their timing"): Llama-3.2-1B int4, prompt 32768 + 16 tokens, in one step and
# in chunks of 512.
#   bench/long_prompt.sh [BUILD_DIR] [CONFIG] [PROMPT]
set -euo pipefail
build=${1:-build}
config=${2:-edge-m}
prompt=${3:-32768}
[ -x "$build/npusim" ] || { echo "build first: scripts/build.sh (missing $build/npusim)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf "%-12s %-8s %8s %10s %8s %8s\n" prefill config prompt "TTFT(s)" "wall(s)" "RSS(MB)"
for chunk in 0 512; do
  run="$out/chunk$chunk"
  /usr/bin/time -f "%e %M" -o "$run.time" "$build/npusim" llm --model Llama-3.2-1B --config "$config" \
    --prompt "$prompt" --generate 16 --weight-dtype int4 --prefill-chunk "$chunk" --quiet --out "$run" >/dev/null
  read -r wall rss <"$run.time"
  ttft=$(/usr/bin/python3 -c 'import json, sys; print("%.3f" % json.load(open(sys.argv[1]))["llm"]["ttft_seconds"])' \
    "$run/summary.json")
  printf "%-12s %-8s %8s %10s %8s %8.0f\n" "$([ "$chunk" = 0 ] && echo whole || echo "chunks $chunk")" "$config" \
    "$prompt" "$ttft" "$wall" "$((rss / 1024))"
done
