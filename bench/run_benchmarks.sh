#!/usr/bin/env bash
# Whole-run benchmark: wall time and peak memory of npusim runs (one core each; see
# docs/performance.md). Usage: bench/run_benchmarks.sh [config] (default edge-m). Needs a build.
set -euo pipefail
cd "$(dirname "$0")/.."
config=${1:-edge-m}
bin=build/npusim
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 2; }
out=$(mktemp -d)
printf '%-18s %-8s %-8s %10s %12s %12s\n' workload config fusion wall_s peak_rss_MiB sim_cycles
for w in resnet50 mobilenet_v2 bert_base_layer; do
  for f in none greedy; do
    /usr/bin/time -f '%e %M' -o "$out/time" taskset -c 0 "$bin" run --config "$config" --workload "$w" \
      --fusion "$f" --out "$out/$w-$f" >/dev/null
    read -r wall rss <"$out/time"
    cycles=$(grep -m1 '"cycles"' "$out/$w-$f/summary.json" | tr -dc '0-9')
    printf '%-18s %-8s %-8s %10s %12.1f %12s\n' "$w" "$config" "$f" "$wall" "$(echo "$rss/1024" | bc -l)" "$cycles"
  done
done
rm -rf "$out"
