// Speed of the DRAM engine: bursts scheduled per second of host time, for the standalone mode
// (a generated pattern pulled request by request, as `npusim dram` runs a trace) and for the
// SystemC controller's path (strided transfers through access_transfer).
// Run: build/bench/bench_dram  (Release build; figures in docs/dram.md).
#include <cstdint>

#include <benchmark/benchmark.h>

#include "models/dram/dram_engine.h"
#include "models/dram/dram_trace.h"
#include "sim/core/hardware_config.h"

namespace {

using npusim::DramConfig;
using npusim::models::DramEngine;
using npusim::models::PatternSource;
using npusim::models::TracePattern;

/// LPDDR4-3200 x32 as configs/dram/LPDDR4-3200-x32.yaml (built here so the bench needs no files).
DramConfig lpddr4_3200() {
  DramConfig c;
  c.preset = "LPDDR4-3200-x32";
  c.clock = npusim::Frequency{1600e6};
  c.data_rate = 3200e6;
  c.banks_per_group = 8;
  c.rows = 65536;
  c.columns = 1024;
  c.bus_width = 32;
  c.burst_length = 16;
  auto& t = c.timing;
  t.CL = 28, t.CWL = 14, t.tRCD = 29, t.tRP = 29, t.tRPab = 34, t.tRAS = 68, t.tRC = 97;
  t.tCCD_S = t.tCCD_L = 8, t.tRRD_S = t.tRRD_L = 16, t.tFAW = 64;
  t.tWR = 29, t.tWTR_S = t.tWTR_L = 16, t.tRTP = 12, t.tRTW = 30;
  t.tRFC = 448, t.tRFCpb = 224, t.tREFI = 6246, t.tDQSCK = 6, t.tPPD = 4;
  return c;
}

/// A pattern of range(1) requests through the standalone engine, one request per DRAM cycle.
void BM_DramPattern(benchmark::State& state) {
  const auto pattern = static_cast<TracePattern>(state.range(0));
  npusim::models::TraceOptions options;
  options.requests = static_cast<std::uint64_t>(state.range(1));
  std::uint64_t bursts = 0;
  for (auto _ : state) {
    DramEngine engine(lpddr4_3200());
    PatternSource source(pattern, engine.config(), options);
    benchmark::DoNotOptimize(engine.run(source));
    bursts += engine.stats().bursts();
  }
  state.counters["bursts_per_s"] = benchmark::Counter(double(bursts), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DramPattern)
    ->ArgNames({"pattern", "requests"})
    ->Args({static_cast<int>(TracePattern::Sequential), 1 << 20})
    ->Args({static_cast<int>(TracePattern::ReadWrite), 1 << 20})
    ->Args({static_cast<int>(TracePattern::Random), 1 << 18})
    ->Unit(benchmark::kMillisecond);

/// Transfers of range(0) bytes through access_transfer with 16 bursts outstanding (sequential, or
/// 64-byte runs every 4 KiB when range(1) is 1, which makes every burst a row miss or conflict),
/// with the activity record (rows per bank included) when range(2) is 1.
void BM_DramTransfer(benchmark::State& state) {
  const DramConfig config = lpddr4_3200();
  DramEngine engine(config);
  if (state.range(2) != 0) engine.record_activity(true);
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  const bool strided = state.range(1) != 0;
  const std::uint64_t run = strided ? 64 : bytes;
  const std::uint64_t stride = strided ? 4096 : bytes;
  const std::uint64_t runs = bytes / run;
  const std::uint64_t span = runs * stride;
  std::uint64_t now = 0, addr = 0;
  for (auto _ : state) {
    now = engine.access_transfer(addr, run, stride, runs, false, now, 16);
    addr = (addr + span) % (config.capacity_bytes() - span);
    benchmark::DoNotOptimize(now);
  }
  const double bursts = double(engine.stats().bursts());
  state.counters["bursts_per_s"] = benchmark::Counter(bursts, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DramTransfer)
    ->Args({1 << 20, 0, 0})
    ->Args({1 << 20, 1, 0})
    ->Args({4096, 0, 0})
    ->Args({1 << 20, 0, 1})
    ->Args({1 << 20, 1, 1});

}  // namespace

BENCHMARK_MAIN();
