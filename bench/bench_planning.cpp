// Speed of planning: make_plan on a zoo network and preset, the workload and config loaded
// once (as a sweep, the server or Python plan them again and again), and of loading them.
// Run: build/bench/bench_planning  (Release build; figures in docs/scheduling.md, "Speed of
// planning", and docs/performance.md).
#include <string>

#include <benchmark/benchmark.h>

#include "sim/config/config_loader.h"
#include "sim/scheduler/plan.h"
#include "workloads/loader.h"

namespace {

using npusim::sched::FusionPolicy;

void BM_MakePlan(benchmark::State& state, const std::string& workload, const std::string& preset, FusionPolicy policy) {
  const auto hw = npusim::config::load_hardware_config(preset);
  const auto g = npusim::workloads::load_workload(workload, npusim::config::data_dir() + "/workloads/zoo");
  for (auto _ : state) benchmark::DoNotOptimize(npusim::sched::make_plan(g, hw, policy));
}

void BM_LoadWorkload(benchmark::State& state, const std::string& workload) {
  for (auto _ : state)
    benchmark::DoNotOptimize(npusim::workloads::load_workload(workload, npusim::config::data_dir() + "/workloads/zoo"));
}

void BM_LoadConfig(benchmark::State& state, const std::string& preset) {
  for (auto _ : state) benchmark::DoNotOptimize(npusim::config::load_hardware_config(preset));
}

BENCHMARK_CAPTURE(BM_LoadWorkload, resnet50, "resnet50")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LoadConfig, edge_m, "edge-m")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MakePlan, resnet50_edge_m_greedy, "resnet50", "edge-m", FusionPolicy::Greedy)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MakePlan, mobilenet_v2_edge_m_greedy, "mobilenet_v2", "edge-m", FusionPolicy::Greedy)
    ->Unit(benchmark::kMillisecond);
// Depth-first tile shapes at 1024 x 1024 (column strips on edge-s): the planner sizes ~100
// shapes of up to a million tiles each (bench/conv_chain_1024.yaml).
BENCHMARK_CAPTURE(BM_MakePlan, conv_chain_1024_edge_s_greedy,
                  npusim::config::data_dir() + "/bench/conv_chain_1024.yaml", "edge-s", FusionPolicy::Greedy)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MakePlan, resnet50_edge_m_none, "resnet50", "edge-m", FusionPolicy::None)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
