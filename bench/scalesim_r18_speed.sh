#!/bin/sh
# User time of `npusim scalesim` on ResNet-18 (workloads/scalesim/resnet18.csv) on a 32x32
# array, CALC and USER, WS/OS/IS: tests/data/scalesim/calc_ws_8x8.cfg with the array and the
# dataflow changed (docs/scalesim.md section 5). Prints the fastest and slowest of RUNS runs.
# Usage: bench/scalesim_r18_speed.sh [NPUSIM] [RUNS]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/npusim} runs=${2:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for mode in CALC USER; do
  for df in ws os is; do
    sed -e "s/^ArrayHeight:.*/ArrayHeight: 32/; s/^ArrayWidth:.*/ArrayWidth: 32/; s/^Dataflow :.*/Dataflow : $df/" \
        -e "s/^InterfaceBandwidth:.*/InterfaceBandwidth: $mode/" "$root/tests/data/scalesim/calc_ws_8x8.cfg" > "$tmp/r18.cfg"
    : > "$tmp/all"
    i=0
    while [ "$i" -lt "$runs" ]; do
      rm -rf "$tmp/out"
      /usr/bin/time -f '%U' -o "$tmp/t" "$bin" scalesim --config "$tmp/r18.cfg" \
        --topology "$root/workloads/scalesim/resnet18.csv" --out "$tmp/out" > /dev/null
      cat "$tmp/t" >> "$tmp/all"
      i=$((i + 1))
    done
    awk -v c="$mode $df" 'NR == 1 || $1 < lo { lo = $1 } NR == 1 || $1 > hi { hi = $1 }
                          END { printf "%s: %.2f-%.2f s user\n", c, lo, hi }' "$tmp/all"
  done
done
