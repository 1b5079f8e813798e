#!/usr/bin/env bash
# Sweep throughput: points per minute of `npusim sweep` with -j 1 and -j 2 on ResNet-50 and
# MobileNetV2 (greedy fusion, edge-m; 24 points: rows 16/32/64 x cols 16/32 x SRAM
# 512 KiB..4 MiB). The figures of docs/performance.md. Usage: bench/sweep_speed.sh. Needs a build;
# runs build/npusim, or $NPUSIM if set (a saved copy of a binary before a change).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${NPUSIM:-build/npusim}")
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-14s %-4s %7s %8s %12s %14s\n' workload jobs points wall_s points_per_min points_per_hour
for w in resnet50 mobilenet_v2; do
  cat >"$out/$w.yaml" <<YAML
base: edge-m
workloads: [$w]
fusion: [greedy]
axes:
  npu.mac_array.rows: [16, 32, 64]
  npu.mac_array.cols: [16, 32]
  npu.sram.capacity: [512 KiB, 1 MiB, 2 MiB, 4 MiB]
YAML
  for j in 1 2; do
    /usr/bin/time -f '%e' -o "$out/time" "$bin" sweep "$out/$w.yaml" --out "$out/$w-j$j" -j "$j" --no-progress >/dev/null
    wall=$(cat "$out/time")
    points=$(wc -l <"$out/$w-j$j/results.jsonl")
    printf '%-14s %-4s %7s %8s %12.0f %14.0f\n' "$w" "$j" "$points" "$wall" "$(echo "$points * 60 / $wall" | bc -l)" \
      "$(echo "$points * 3600 / $wall" | bc -l)"
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
