#!/bin/sh
# The speed-up tables of docs/multicore.md: each workload at batch 4 on edge-m with
# 1, 2 and 4 cores (--parallel $PARALLEL, data by default; 1 core: none) and 1 and 2 DRAM
# channels. Prints one line per run: workload, channels, cores, cycles, speed-up over one core
# on the same channels.
# Usage: [PARALLEL=tensor] [SETS="--set npu.l2.capacity=4MiB ..."] [CORES="1 4"] [CHANNELS=1]
#        bench/multicore_speedup.sh NPUSIM WORKDIR WORKLOAD.yaml...
# (SETS: more --set flags for the multi-core runs, e.g. a shared L2; the 1-core run takes none)
# (bench/decode_step_b4.yaml: the decoder step of the table)
set -eu
npusim=$1 work=$2
shift 2
mkdir -p "$work"
for w in "$@"; do
  name=$(basename "$w" .yaml)
  for ch in ${CHANNELS:-1 2}; do
    base=
    for cores in ${CORES:-1 2 4}; do
      par=${PARALLEL:-data}
      sets=${SETS:-}
      [ "$cores" = 1 ] && par=none sets=
      out="$work/$name.$par.ch$ch.c$cores"
      rm -rf "$out"
      # shellcheck disable=SC2086 # SETS is a list of flags
      "$npusim" run -w "$w" --set npu.cores=$cores --set npu.dram.channels=$ch --parallel $par $sets --out "$out" >/dev/null 2>&1
      cycles=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['cycles'])" "$out/summary.json")
      [ -z "$base" ] && base=$cycles
      /usr/bin/python3 -c "import sys; print('%-18s ch=%s cores=%s cycles=%10s speed-up=%.2fx' % (sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]) / float(sys.argv[4])))" \
        "$name" "$ch" "$cores" "$cycles" "$base"
    done
  done
done
