#!/usr/bin/env bash
# The figures the DRAM engine must keep when it is changed for speed (docs/performance.md):
# summary.json of every zoo network x preset x fusion policy (npusim run) and dram_summary.json
# of every `npusim dram --generate` pattern on every DRAM preset, plus the controller's options
# (write policy, page policies, refresh, scheduler, row-hit cap, bank groups in one stream).
#   bench/dram_outputs.sh save DIR      writes the outputs of build/npusim into DIR
#   bench/dram_outputs.sh compare DIR   runs again and compares byte for byte with DIR
# Exit 1 if any file differs (each one named) other than in provenance.commit. Runs build/npusim, or $NPUSIM if set (a saved
# copy of the binary before the change, so a rebuild during the run cannot mix the two).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
ref=${2:-}
[ "$mode" = save ] || [ "$mode" = compare ] || { echo "usage: $0 save|compare DIR" >&2; exit 2; }
[ -n "$ref" ] || { echo "usage: $0 save|compare DIR" >&2; exit 2; }
bin=$(realpath "${NPUSIM:-build/npusim}")
[ -x "$bin" ] || { echo "build first: cmake --build build --target npusim" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "$mode" = save ]; then dest=$ref; mkdir -p "$dest"; else dest=$work/new; mkdir -p "$dest"; fi

networks="small_cnn mobilenet_v2 resnet18 resnet50 ds_cnn_kws bert_base_layer vit_s16_block"
total=$(( 7 * 3 * 2 ))
n=0
for w in $networks; do
  for p in edge-s edge-m edge-l; do
    for f in none greedy; do
      n=$((n + 1))
      [ -t 2 ] && printf '\r  npusim run %d/%d %-40s' "$n" "$total" "$w $p $f" >&2
      "$bin" run -c "$p" -w "$w" -f "$f" --out "$work/run" >/dev/null 2>&1
      cp "$work/run/summary.json" "$dest/run-$w-$p-$f.json"
      rm -rf "$work/run"
    done
  done
done
[ -t 2 ] && printf '\r%60s\r' '' >&2

dram() {  # name, then npusim dram arguments
  local name=$1
  shift
  [ -t 2 ] && printf '\r  npusim dram %-50s' "$name" >&2
  # Relative paths: the summary records the trace's path as given, the same in every run.
  (cd "$work" && "$bin" dram "$@" --trace t.trc --out dram >/dev/null)
  cp "$work/dram/dram_summary.json" "$dest/dram-$name.json"
  rm -rf "$work/dram" "$work/t.trc"
}
for preset in DDR4-3200-8Gb-x8 DDR4-3200-8Gb-x16 LPDDR4-3200-x32 LPDDR4X-4266-x32 LPDDR5-6400-x32; do
  for pattern in sequential interleaved read_write random strided bank_groups; do
    dram "$preset-$pattern" --generate "$pattern" --requests 20000 --preset "$preset"
    dram "$preset-$pattern-slow" --generate "$pattern" --requests 5000 --interval 7 --preset "$preset"
  done
done
for pattern in interleaved read_write random; do
  for option in write_policy=watermarks page_policy=closed page_policy=adaptive page_policy=open_adaptive \
                refresh=per_bank scheduler=fcfs row_hit_cap=4 refresh_max_postponed=8 xor_bank_hash=true; do
    dram "LPDDR4-$pattern-$option" --generate "$pattern" --requests 20000 --preset LPDDR4-3200-x32 --set "$option"
    [ "$option" = refresh=per_bank ] && continue  # DDR4 has no per-bank refresh
    dram "DDR4-$pattern-$option" --generate "$pattern" --requests 20000 --preset DDR4-3200-8Gb-x8 --set "$option"
  done
done
dram "DDR4-sequential-rochrababgco" --generate sequential --requests 20000 --preset DDR4-3200-8Gb-x8 --set mapping=rochrababgco
dram "LPDDR5-read_write-per_bank" --generate read_write --requests 20000 --preset LPDDR5-6400-x32 --set refresh=per_bank
[ -t 2 ] && printf '\r%70s\r' '' >&2

if [ "$mode" = save ]; then
  echo "saved $(ls "$dest" | wc -l) outputs in $dest"
  exit 0
fi
# A run's summary records the commit it was built from (provenance.commit, a line of its own):
# outputs of two commits may differ there and nowhere else, which is reported apart.
status=0
commit_only=0
for f in "$ref"/*.json; do
  name=$(basename "$f")
  cmp -s "$f" "$dest/$name" && continue
  if [ -f "$dest/$name" ] && cmp -s <(grep -v '^ *"commit": ' "$f") <(grep -v '^ *"commit": ' "$dest/$name"); then
    commit_only=$((commit_only + 1))
    continue
  fi
  echo "differs: $name"
  status=1
done
if [ "$status" = 0 ]; then
  echo "identical: $(ls "$ref" | wc -l) outputs ($commit_only of them but for provenance.commit)"
fi
exit $status
