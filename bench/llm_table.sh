#!/bin/bash
# The table of docs/llm.md, "Speed": TTFT, tokens/s, J/token, wall time and peak RSS of
# `npusim llm` for the shipped configs on edge-s/m/l (int4 weights with fp16 scales per 128,
# prompt 512, generate 128).
#   bench/llm_table.sh [BUILD_DIR] [OUT_DIR] [MODELS...]
set -euo pipefail
build=${1:-build}
out=${2:-/tmp/npusim-llm-table}
shift $(( $# > 2 ? 2 : $# ))
models=${*:-Llama-3.2-1B Qwen2.5-0.5B SmolLM2-360M Phi-3-mini-4k-instruct gemma-2-2b}
mkdir -p "$out"
printf "%-24s %-7s %-10s %10s %10s %10s %8s %8s\n" model preset weights "TTFT(ms)" "tok/s" "mJ/token" "wall(s)" "RSS(MB)"
for m in $models; do
  for c in edge-s edge-m edge-l; do
    run="$out/$m.$c"
    if ! /usr/bin/time -f "%e %M" -o "$run.time" "$build/npusim" llm --model "$m" --config "$c" --prompt 512 --generate 128 \
      --weight-dtype int4 --quiet --out "$run" >"$run.log" 2>&1; then
      printf "%-24s %-7s %s\n" "$m" "$c" "$(tail -1 "$run.log")"  # e.g. the preset's DRAM cannot hold it
      continue
    fi
    /usr/bin/python3 - "$run" "$m" "$c" <<'PY'
import json, sys
run, m, c = sys.argv[1:]
s = json.load(open(run + "/summary.json"))["llm"]
wall, rss = open(run + ".time").read().split()[:2]
e = s["decode"]["energy_per_token_j"]
print("%-24s %-7s %-10s %10.1f %10.2f %10s %8s %8.0f" % (m, c, s["widths"]["weights"], s["ttft_seconds"] * 1e3,
      s["decode"]["tokens_per_second"], "%.2f" % (e * 1e3) if e else "-", wall, int(rss) / 1024))
PY
  done
done
