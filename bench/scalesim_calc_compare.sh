#!/bin/sh
# Runs `npusim scalesim` in CALC mode over the test topologies and ResNet-18 on a grid of
# arrays, buffer sizes and dataflows, writing each run's three reports under OUT/<case>/.
# Run it with two binaries and `diff -r` the two folders to check a change keeps every figure.
# Usage: bench/scalesim_calc_compare.sh NPUSIM OUT
set -eu
bin=$1 out=$2 root=$(cd "$(dirname "$0")/.." && pwd)
base=$root/tests/data/scalesim/calc_ws_8x8.cfg
mkdir -p "$out"
for topo in "$root"/tests/data/scalesim/conv.csv "$root"/tests/data/scalesim/strided.csv \
            "$root"/tests/data/scalesim/strided_112.csv "$root"/tests/data/scalesim/gemm.csv \
            "$root"/tests/data/scalesim/scalesim_v2/layers_*.csv "$root"/workloads/scalesim/resnet18.csv; do
  t=$(basename "$topo" .csv)
  gemm=""
  case $t in gemm|layers_e) gemm=--gemm ;; esac
  for arr in 4x4 8x8 16x8 32x32; do
    h=${arr%x*} w=${arr#*x}
    for kb in 1 4 64; do
      [ "$t" = resnet18 ] && [ "$arr" != 32x32 ] && continue
      for df in ws os is; do
        c=$t.$arr.$kb.$df
        sed -e "s/^ArrayHeight:.*/ArrayHeight: $h/; s/^ArrayWidth:.*/ArrayWidth: $w/" \
            -e "s/^IfmapSramSzkB:.*/IfmapSramSzkB: $kb/; s/^FilterSramSzkB:.*/FilterSramSzkB: $kb/" \
            -e "s/^Dataflow :.*/Dataflow : $df/" "$base" > "$out/$c.cfg"
        rm -rf "$out/$c"
        "$bin" scalesim --config "$out/$c.cfg" --topology "$topo" $gemm --out "$out/$c" > /dev/null
        rm "$out/$c.cfg"
      done
    done
  done
done
