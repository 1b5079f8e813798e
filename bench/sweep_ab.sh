#!/usr/bin/env bash
# Two npusim binaries on the 96-point ResNet-50 sweep of docs/performance.md (edge-m, greedy,
# 4 x 4 x 6 designs, -j 2), run in turn N times each so that the machine's drift falls on both
# alike; prints each one's median and least wall time and CPU time. CPU is `perf stat -e
# task-clock`, which counts every process the sweep starts: the sweep's zygote forks its points
# and the sweep does not reap them, so /usr/bin/time's user and system times leave them out.
# Without perf, wall time only. Usage: bench/sweep_ab.sh N BINARY_A BINARY_B (e.g. a copy of
# build/npusim saved before a change, and build/npusim).
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: bench/sweep_ab.sh N BINARY_A BINARY_B" >&2; exit 2; }
n=$1
[[ "$n" =~ ^[1-9][0-9]{0,2}$ ]] || { echo "bench/sweep_ab.sh: expected N from 1 to 999, found '$n'" >&2; exit 2; }
a=$(realpath "$2")
b=$(realpath "$3")
for bin in "$a" "$b"; do [ -x "$bin" ] || { echo "bench/sweep_ab.sh: $bin is not an executable" >&2; exit 2; }; done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cat >"$out/sweep.yaml" <<'YAML'
base: edge-m
workloads: [resnet50]
fusion: [greedy]
axes:
  npu.mac_array.rows: [16, 24, 32, 64]
  npu.mac_array.cols: [16, 24, 32, 64]
  npu.sram.capacity: [512 KiB, 768 KiB, 1 MiB, 2 MiB, 3 MiB, 4 MiB]
YAML
perf=$(command -v perf || true)
for ((i = 0; i < n; ++i)); do
  for side in A B; do
    bin=$a
    [ "$side" = B ] && bin=$b
    rm -rf "$out/run"
    if [ -n "$perf" ]; then
      "$perf" stat -x, -e task-clock -o "$out/cpu" /usr/bin/time -f '%e' -o "$out/wall" \
        "$bin" sweep "$out/sweep.yaml" --out "$out/run" -j 2 --no-progress >/dev/null 2>&1
      cpu=$(grep task-clock "$out/cpu" | cut -d, -f1)
    else
      /usr/bin/time -f '%e' -o "$out/wall" "$bin" sweep "$out/sweep.yaml" --out "$out/run" -j 2 --no-progress \
        >/dev/null 2>&1
      cpu=nan
    fi
    echo "$side $(cat "$out/wall") $cpu" >>"$out/runs"
  done
done
python3 - "$out/runs" "$a" "$b" <<'PY'
import math, statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
for side, name in (("A", sys.argv[2]), ("B", sys.argv[3])):
    wall = [float(r[1]) for r in rows if r[0] == side]
    cpu = [float(r[2]) / 1000 for r in rows if r[0] == side and r[2] != "nan"]
    line = f"{side} {name}: wall median {statistics.median(wall):.3f} s, least {min(wall):.3f} s"
    line += f"; {96 * 3600 / statistics.median(wall):,.0f} points an hour"
    if cpu:
        line += f"; CPU median {statistics.median(cpu):.3f} s, least {min(cpu):.3f} s"
    print(line)
PY
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
