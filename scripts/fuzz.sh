#!/usr/bin/env bash
# Fuzzes every reader with libFuzzer for a bounded time each (docs/fuzzing.md).
#   scripts/fuzz.sh [SECONDS_PER_HARNESS=60] [READER...]
# The mutation seed is fixed (NPUSIM_FUZZ_SEED, default 1) and NPUSIM_FUZZ_RUNS=N stops each
# harness after N inputs, which makes a pass repeatable on one machine and build, not across
# machines (coverage feedback differs, so the corpus diverges: docs/fuzzing.md). Set another seed
# (or 0: random) to explore further or to chase a crash CI found.
# NPUSIM_FUZZ_WORK=DIR keeps the seeds, corpora, findings and logs there instead of build-fuzz/
# (a second pass beside a running campaign, e.g. CI's pass from a fresh corpus).
# Builds build-fuzz/ with clang (ASan + UBSan + libFuzzer; scripts/configure-asan.sh --fuzz), seeds each
# corpus from the repo's own files, runs each harness, and prints the executions per harness.
# Exit 1 if anything crashed, hung or blew its memory limit: the input is in
# build-fuzz/fuzz-artifacts/<reader>/; once fixed, keep it as a regression input in
# fuzz/regressions/<reader>/ (replayed by CTest).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
readers=("$@")
[ ${#readers[@]} -gt 0 ] || readers=(workload_yaml hardware_yaml onnx scalesim_cfg scalesim_csv schedule_json dram_trace trace_json sweep_yaml sweep_results run_request validation_csv llm_config)

B=build-fuzz
scripts/configure-asan.sh --fuzz
source scripts/ccache-env.sh  # the same object keys as at configure time
targets=(npusim)
for r in "${readers[@]}"; do targets+=("fuzz_$r"); done
cmake --build "$B" -j"$(nproc)" --target "${targets[@]}" >/dev/null

# Seeds: the repo's files of each format, plus a schedule, a trace and a DRAM trace made by npusim.
export ASAN_OPTIONS=detect_leaks=0
W="${NPUSIM_FUZZ_WORK:-$B}"
seeds="$W/fuzz-seeds"
rm -rf "$seeds"
mkdir -p "$seeds"/{workload_yaml,hardware_yaml,onnx,scalesim_cfg,scalesim_csv,schedule_json,dram_trace,trace_json,sweep_yaml,sweep_results,run_request,validation_csv,llm_config}
cp workloads/zoo/*.yaml tests/data/*.yaml "$seeds/workload_yaml/"
cp configs/*.yaml "$seeds/hardware_yaml/"
for f in configs/dram/*.yaml; do cp "$f" "$seeds/hardware_yaml/dram-$(basename "$f")"; done
cp tests/data/scalesim/*.cfg "$seeds/scalesim_cfg/"
cp tests/data/scalesim/*.csv "$seeds/scalesim_csv/"
cp validation/*.csv fuzz/regressions/validation_csv/* "$seeds/validation_csv/"
/usr/bin/python3 fuzz/make_onnx_seeds.py "$seeds/onnx" 2>/dev/null || echo "fuzz: no python3-onnx, ONNX corpus starts empty"
"$B/npusim" schedule -w small_cnn -o "$seeds/schedule_json/greedy.json"
"$B/npusim" schedule -w small_cnn -f none -o "$seeds/schedule_json/none.json"
# Small whole traces (12-15 KB with 1 us counter windows): a trace over -max_len would be cut
# short, and every mutation of a cut trace fails at its end after a long parse.
for w in gemm_small conv_pool; do
  "$B/npusim" run -w "tests/data/$w.yaml" -f greedy -o "$W/seed-run" --counter-window 1us >/dev/null
  cp "$W/seed-run/trace.json" "$seeds/trace_json/$w.json"
done
for g in sequential random read_write; do
  "$B/npusim" dram --generate "$g" --requests 64 --trace "$seeds/dram_trace/$g.trace" >/dev/null
done
cp tests/data/sweep_small.yaml "$seeds/sweep_yaml/"
# An LLM sweep naming a shipped model (a config.json path would be read relative to the
# harness's in-memory file).
printf '%s\n' 'base: edge-s' 'llm:' '  model: [SmolLM2-360M]' '  prompt: [16, 32]' '  generate: [2]' \
  '  weight_dtype: [int4, int8]' 'axes:' '  npu.mac_array.rows: [16, 32]' 'objectives: [ttft, tokens_per_second]' \
  >"$seeds/sweep_yaml/llm.yaml"
cp workloads/llm/configs/*.json tests/data/llm_tiny.json "$seeds/llm_config/"
# A small sweep's own results (6 points of small_cnn on edge-s), ok and failed records alike.
rm -rf "$W/seed-sweep"
"$B/npusim" sweep tests/data/sweep_small.yaml --out "$W/seed-sweep" -j 2 --no-progress >/dev/null
cp "$W/seed-sweep/results.jsonl" "$seeds/sweep_results/"
printf '%s\n' '{"config": "edge-s", "workload": "small_cnn", "fusion": "greedy", "set": {"npu.mac_array.rows": 8, "npu.sram.capacity": "128 KiB"}, "session": "s1"}' \
  >"$seeds/run_request/request.json"

failed=0
printf '%-16s %14s %10s %s\n' harness executions exec/s result
for r in "${readers[@]}"; do
  corpus="$W/fuzz-corpus/$r" artifacts="$W/fuzz-artifacts/$r"
  mkdir -p "$corpus" "$artifacts"
  log="$W/fuzz_$r.log"
  status=ok
  "$B/fuzz/fuzz_$r" -seed="${NPUSIM_FUZZ_SEED:-1}" -max_total_time="$seconds" ${NPUSIM_FUZZ_RUNS:+-runs=$NPUSIM_FUZZ_RUNS} -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" "$seeds/$r" >"$log" 2>&1 || status=FAILED
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  if [ "$status" != ok ] || [ -n "$(ls -A "$artifacts")" ]; then
    status="FAILED: $(ls "$artifacts" | head -3 | tr '\n' ' ')(see $log)"
    failed=1
  fi
  printf '%-16s %14s %10s %s\n' "$r" "${execs:-?}" "${rate:-?}" "$status"
done
exit $failed
