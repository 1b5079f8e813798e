#!/usr/bin/env bash
# The sanitizer pass (docs/fuzzing.md): builds build-asan/ with clang, AddressSanitizer +
# UndefinedBehaviorSanitizer (scripts/configure-asan.sh), runs the whole CTest suite and a set of
# whole runs, and fails on any sanitizer report.
# LeakSanitizer: SystemC's coroutine stacks look like leaks, so leak checks are off
# (ASAN_OPTIONS=detect_leaks=0) for everything that elaborates SystemC (test_models, test_sim,
# the npusim binary) and on for the plain libraries' suites (test_core, test_workloads, test_traces,
# test_planner).
set -euo pipefail
cd "$(dirname "$0")/.."
B=build-asan
scripts/configure-asan.sh
source scripts/ccache-env.sh  # the same object keys as at configure time
# What CTest runs (bench/ is left out: benchmarks are not tests).
targets=(npusim test_core test_workloads test_traces test_planner test_models test_engine test_sim test_serve)
for h in fuzz/fuzz_*.cpp; do h=$(basename "$h" .cpp); targets+=("replay_${h#fuzz_}"); done
start=$SECONDS
cmake --build "$B" -j"$(nproc)" --target "${targets[@]}"
echo "sanitize: the build took $((SECONDS - start)) s" >&2

export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
# The C++ suites and the fuzz replays; not the browser, Python or corpus tests (they drive the
# npusim binary through other languages and are covered by the normal build's run; the binary
# itself is exercised by the whole runs below), nor the golden outputs (tests/golden/: the same
# figures as the normal build, 63 whole simulations, slow under ASan; the whole runs below cover
# the code). The server's tests run here (a build with assertions on: Beast's own checks hold);
# children of an ASan build run without RLIMIT_AS (sim/engine/child.h), so the two memory-limit
# tests skip themselves. ServeLlm.AnLlmRun* and ServeImage.AnImageRuns* simulate a shipped language
# model (the server takes only those; the second with Qwen2-VL's vision encoder): seconds in the
# release build, a minute and more under ASan; the whole runs below run `npusim llm` on a tiny
# model instead. OutOfMemory.* runs npusim under `ulimit -v`, which ASan's
# shadow memory cannot start under.
export TMPDIR="$PWD/$B/test-tmp"  # as scripts/test.sh: the tests' files in the build, not /tmp
rm -rf "$TMPDIR" && mkdir -p "$TMPDIR"
ctest --test-dir "$B" --output-on-failure -j"$(nproc)" --timeout 900 \
  -E '^(OutOfMemory\.|browser\.|python\.|corpus_|validation_|test_golden|(Zoo|Corpus)/Golden\.|ServeLlm\.AnLlmRun|ServeImage\.AnImageRuns)'

for suite in test_core test_workloads test_traces test_planner; do
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 "$B/tests/$suite" --gtest_brief=1 >/dev/null
done

# Whole runs: every command on a few workloads, every zoo model once.
out="$B/whole-runs"
rm -rf "$out"
for w in workloads/zoo/*.yaml; do
  "$B/npusim" run -w "$w" -o "$out/run-$(basename "$w" .yaml)" >/dev/null
done
"$B/npusim" run -w resnet18 -c edge-s --vcd "$out/resnet18.vcd" -o "$out/vcd" >/dev/null
"$B/npusim" compare -w mobilenet_v2 -o "$out/compare" >/dev/null
"$B/npusim" run -w small_cnn -f search -o "$out/search" >/dev/null
"$B/npusim" schedule -w resnet50 -f epilogue -o "$out/schedule.json"
"$B/npusim" run -w small_cnn -f "file:$out/schedule.json" -o "$out/file" >/dev/null 2>&1 || true  # other workload: exit 2 expected
"$B/npusim" llm --model tests/data/llm_tiny.json -c edge-s --prompt 16 --generate 4 --weight-dtype int4 \
  --set npu.mac_array.dequant=vector_unit --out "$out/llm" >/dev/null
"$B/npusim" roofline "$out/run-small_cnn/trace.json" -o "$out/roofline" >/dev/null
"$B/npusim" inspect "$out/run-small_cnn/trace.json" >/dev/null
"$B/npusim" dram --generate random --requests 20000 --trace "$out/random.trace" -o "$out/dram" >/dev/null
"$B/npusim" scalesim --config tests/data/scalesim/calc_ws_8x8.cfg --topology tests/data/scalesim/conv.csv -o "$out/scalesim" >/dev/null
echo "sanitize: the suite and $(ls "$out" | wc -l) whole runs are clean"
