#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "tests/support/plan_support.h"
#include "tests/support/scratch.h"

using namespace npusim;
namespace fs = std::filesystem;

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const fs::path p = test::scratch_path("npusim_cfg", name);
  std::ofstream(p) << text;
  return p.string();
}

std::string error_of(const std::string& spec, const std::vector<std::string>& sets = {}) {
  return test::config_load_error(spec, sets);
}

}  // namespace

TEST(Config, PresetsLoadWithTheirDram) {
  const auto s = config::load_hardware_config("edge-s");
  EXPECT_EQ(s.mac_array.rows, 16u);
  EXPECT_EQ(s.sram.capacity_bytes, 256u * 1024);
  EXPECT_EQ(s.dram.preset, "LPDDR4-3200-x32");
  // 32-bit bus at 3200 MT/s = 12.8 GB/s.
  EXPECT_DOUBLE_EQ(s.dram.peak_bandwidth().bytes_per_second, 12.8e9);
  EXPECT_EQ(s.dram.timing.tRCD, 29u);

  const auto m = config::load_hardware_config("edge-m");
  EXPECT_EQ(m.mac_array.cols, 32u);
  EXPECT_EQ(m.dram.preset, "LPDDR4X-4266-x32");
  const auto l = config::load_hardware_config("edge-l");
  EXPECT_EQ(l.mac_array.rows, 64u);
  EXPECT_EQ(l.sram.capacity_bytes, 4u * 1024 * 1024);
  EXPECT_DOUBLE_EQ(l.dram.peak_bandwidth().bytes_per_second, 25.6e9);
  // Peak MAC throughput: 64 x 64 MACs x 2 ops x 1.2 GHz.
  EXPECT_DOUBLE_EQ(l.mac_peak_ops(), 64.0 * 64 * 2 * 1.2e9);
}

TEST(Config, SetOverridesFileAndPreset) {
  const auto c =
      config::load_hardware_config("edge-m", {"npu.mac_array.rows=64", "npu.mac_array.dataflow=os",
                                              "npu.dram.timing.tRCD=20 ns", "npu.dram.preset=DDR4-3200-8Gb-x8"});
  EXPECT_EQ(c.mac_array.rows, 64u);
  EXPECT_EQ(c.mac_array.dataflow, Dataflow::OS);
  EXPECT_EQ(c.dram.standard, "DDR4");
  // DDR4-3200: tCK = 0.625 ns, 20 ns -> 32 nCK.
  EXPECT_EQ(c.dram.timing.tRCD, 32u);
}

TEST(Config, Lpddr5PresetsRescaleTheirNsTimingsWithTheClock) {
  // edge-l's LPDDR5-6400-x32 at its 800 MHz CK (tCK 1.25 ns): tRCD 18 ns -> 14.4 -> 15 nCK,
  // tREFI 3906 ns -> 3124.8 -> 3125 nCK; RL 17 nCK as written.
  const auto bin6400 = config::load_hardware_config("edge-l");
  EXPECT_EQ(bin6400.dram.timing.tRCD, 15u);
  EXPECT_EQ(bin6400.dram.timing.tREFI, 3125u);
  EXPECT_EQ(bin6400.dram.timing.CL, 17u);
  // The 5500 bin's CK, 687.5 MHz (tCK 1.4545 ns): 18 / 1.4545 = 12.4 -> 13 nCK and
  // 3906 / 1.4545 = 2685.4 -> 2686 nCK; RL, a cycle count of the 6400 bin, stays 17.
  const auto bin5500 = config::load_hardware_config(
      "edge-l", {"npu.dram.preset=LPDDR5-6400-x64", "npu.dram.clock=687.5 MHz", "npu.dram.data_rate=5500 MT/s"});
  EXPECT_EQ(bin5500.dram.timing.tRCD, 13u);
  EXPECT_EQ(bin5500.dram.timing.tREFI, 2686u);
  EXPECT_EQ(bin5500.dram.timing.CL, 17u);
  // Four x16 channels at 5500 MT/s: 4 x 2 B x 5.5 G = 44 GB/s.
  EXPECT_DOUBLE_EQ(bin5500.dram.peak_bandwidth().bytes_per_second, 44e9);
}

TEST(Config, AFileEditedWithinOneProcessIsReadAgain) {
  // Parsed config files are kept for the process, by content: the same file loads from the
  // kept copy, an edited one (same path) is parsed again, and an error found once is found again.
  const auto path = write_temp("edited.yaml", "name: a\nnpu:\n  mac_array:\n    rows: 8\n");
  EXPECT_EQ(config::load_hardware_config(path).mac_array.rows, 8u);
  EXPECT_EQ(config::load_hardware_config(path).mac_array.rows, 8u);
  EXPECT_EQ(config::load_hardware_config(path, {"npu.mac_array.rows=16"}).mac_array.rows, 16u);
  write_temp("edited.yaml", "name: a\nnpu:\n  mac_array:\n    rows: 24\n");
  EXPECT_EQ(config::load_hardware_config(path).mac_array.rows, 24u);
  write_temp("edited.yaml", "name: a\nnpu:\n  mac_array:\n    rowz: 24\n");
  for (int i = 0; i < 2; ++i) EXPECT_NE(error_of(path).find("edited.yaml:4"), std::string::npos) << error_of(path);
  write_temp("edited.yaml", "name: a\nnpu:\n  mac_array:\n    rows: 8\n");
  EXPECT_EQ(config::load_hardware_config(path).mac_array.rows, 8u);
  fs::remove(path);
}

TEST(Config, UnknownKeyNamesFileLineAndKey) {
  const auto path = write_temp("unknown.yaml", "name: x\nnpu:\n  clock: 1 GHz\n  sram:\n    capacty: 1 MiB\n");
  const std::string msg = error_of(path);
  EXPECT_NE(msg.find(path + ":5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("npu.sram.capacty"), std::string::npos) << msg;
}

TEST(Config, WrongUnitAndNegativeSize) {
  auto path = write_temp("unit.yaml", "npu:\n  clock: 1 GB/s\n");
  std::string msg = error_of(path);
  EXPECT_NE(msg.find(path + ":2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("frequency"), std::string::npos) << msg;
  path = write_temp("neg.yaml", "npu:\n  sram:\n    capacity: -4 KiB\n");
  msg = error_of(path);
  EXPECT_NE(msg.find(path + ":3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("-4 KiB"), std::string::npos) << msg;
}

TEST(Config, BadEnumListsValidNames) {
  const std::string msg = error_of("edge-m", {"npu.mac_array.dataflow=rs"});
  EXPECT_NE(msg.find("ws, os, is"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--set npu.mac_array.dataflow=rs"), std::string::npos) << msg;
}

namespace {

/// Every name of enum `E`'s table loads through `key` and comes back the same in the resolved
/// config (to_json at `path`, a JSON pointer): the loader and the writer read one table.
template <typename E>
void expect_round_trip(const std::string& key, const std::string& path) {
  ASSERT_FALSE(enum_names<E>().empty()) << key;
  for (const auto& [name, value] : enum_names<E>()) {
    std::vector<std::string> sets{key + "=" + name};
    if (key == "npu.sram.operand_buffers" && name == "separate")  // separate takes the three sizes
      for (const char* b : {"ifmap_bytes", "filter_bytes", "ofmap_bytes"})
        sets.push_back(std::string("npu.sram.") + b + "=64KiB");
    const auto c = config::load_hardware_config("edge-m", sets);
    EXPECT_EQ(to_json(c).at(nlohmann::json::json_pointer(path)), name) << key;
    EXPECT_EQ(enum_name(value), name);
  }
}

}  // namespace

TEST(Config, EveryEnumNameRoundTripsThroughItsOneTable) {
  expect_round_trip<Dataflow>("npu.mac_array.dataflow", "/mac_array/dataflow");
  expect_round_trip<DType>("npu.mac_array.dtype", "/mac_array/dtype");
  expect_round_trip<FoldModel>("npu.mac_array.fold_model", "/mac_array/fold_model");
  expect_round_trip<DequantPath>("npu.mac_array.dequant", "/mac_array/dequant");
  expect_round_trip<OperandBufferMode>("npu.sram.operand_buffers", "/sram/operand_buffers");
  expect_round_trip<TileLayout>("npu.sram.tile_layout", "/sram/tile_layout");
  expect_round_trip<KvCacheHome>("npu.sram.kv_cache", "/sram/kv_cache");
  expect_round_trip<PagePolicy>("npu.dram.page_policy", "/dram/page_policy");
  expect_round_trip<DramScheduler>("npu.dram.scheduler", "/dram/scheduler");
  expect_round_trip<RefreshMode>("npu.dram.refresh", "/dram/refresh");
  expect_round_trip<DramWritePolicy>("npu.dram.write_policy", "/dram/write_policy");
}

TEST(Config, ContradictoryTimingsRejected) {
  // LPDDR4X-4266 tRAS = 90 nCK and tRP = 39 nCK, so tRC must be at least 129.
  const std::string msg = error_of("edge-m", {"npu.dram.timing.tRC=100"});
  EXPECT_NE(msg.find("tRC"), std::string::npos) << msg;
  EXPECT_NE(msg.find("found tRC = 100"), std::string::npos) << msg;
}

TEST(Config, UnknownPresetAndMissingFile) {
  EXPECT_NE(error_of("edge-xl").find("presets: edge-l, edge-m, edge-s, rk3588, rk3588-core"), std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.dram.preset=HBM9"}).find("unknown DRAM preset 'HBM9'"), std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.sram.capacity"}).find("KEY=VALUE"), std::string::npos);
}

// Declared limits (docs/config.md "Valid ranges"): a value beyond one names the key and the range,
// and a 64-bit value is never truncated to 32 bits first (4294967297 = 2^32 + 1 would be 1 row).
TEST(ConfigLimits, CountsAreCheckedOnTheirFullValue) {
  EXPECT_NE(error_of("edge-m", {"npu.mac_array.rows=4294967297"})
                .find("npu.mac_array.rows): expected a whole number from 1 to 65536, found '4294967297'"),
            std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.mac_array.cols=4294967296"}).find("from 1 to 65536"), std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.mac_array.cols=18446744073709551616"}).find("from 1 to 65536"), std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.mac_array.rows=-1"}).find("from 1 to 65536, found '-1'"), std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.mac_array.rows=12x"}).find("expected a whole number from 1 to 65536, found '12x'"),
            std::string::npos);
  // The limit itself is accepted.
  EXPECT_EQ(config::load_hardware_config("edge-m", {"npu.mac_array.rows=65536"}).mac_array.rows, 65536u);
}

TEST(ConfigLimits, AllocationSizedByAUserNumberIsBoundedUpFront) {
  // 10^9 banks used to allocate 7.8 GB before failing.
  EXPECT_NE(
      error_of("edge-m", {"npu.sram.banks=1000000000"}).find("npu.sram.banks): expected a whole number from 1 to 4096"),
      std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.dma.channels=100000"}).find("npu.dma.channels"), std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.dram.channels=65536"}).find("from 1 to 32"), std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.vector_unit.lanes=4294967296"}).find("npu.vector_unit.lanes"), std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.dram.read_queue_depth=100000"}).find("from 1 to 4096"), std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.sram.capacity=2 TiB"}).find("npu.sram.capacity"), std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.sram.bank_width=4294967297"}).find("[1 B, 4 KiB]"), std::string::npos);
}

TEST(ConfigLimits, ClocksHaveARange) {
  // A 1 Hz clock stretches simulated time a billion-fold (and the memory that grows with it).
  EXPECT_NE(error_of("edge-m", {"npu.clock=1 Hz"}).find("npu.clock): expected a frequency in [1 MHz, 100 GHz]"),
            std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.clock=1e300 GHz"}).find("npu.clock"), std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.dram.clock=1 kHz"}).find("npu.dram.clock"), std::string::npos);
}

TEST(ConfigLimits, DramTimingsDoNotWrap) {
  // 2^32 cycles used to wrap to tRCD 0.
  EXPECT_NE(error_of("edge-m", {"npu.dram.timing.tRCD=4294967296"})
                .find("npu.dram.timing.tRCD): expected a timing of at most 16777216"),
            std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.dram.timing.tRCD=1e12 ns"}).find("tRCD"), std::string::npos);
}

TEST(ConfigLimits, VectorCostKindsAreKnownOpKinds) {
  // A typo used to be ignored (the op then cost default_cost).
  const std::string e = error_of("edge-m", {"npu.vector_unit.cost.gleu=4"});
  EXPECT_NE(e.find("npu.vector_unit.cost.gleu): unknown vector op kind 'gleu'; known: "), std::string::npos);
  EXPECT_NE(e.find("gelu"), std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.vector_unit.cost.gelu=inf"}).find("expected a positive number"),
            std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.vector_unit.default_cost=1e7"}).find("(0, 1000000]"), std::string::npos);
  EXPECT_DOUBLE_EQ(config::load_hardware_config("edge-m", {"npu.vector_unit.cost.gelu=8"}).vector_unit.cost_of("gelu"),
                   8.0);
}

TEST(Config, Rk3588PresetIsThreeDirectCoresOnFourChannels) {
  const auto c = config::load_hardware_config("rk3588");
  EXPECT_EQ(c.cores, 3u);
  EXPECT_EQ(c.mac_array.kind, MacArrayKind::Direct);
  // 32 x 32 cells x 2 ops x 1 GHz = 2.048 T ops/s per core: the public 2 TOPS int8 of a core.
  EXPECT_DOUBLE_EQ(c.mac_peak_ops(), 2.048e12);
  EXPECT_DOUBLE_EQ(c.mac_array.rate_of(DType::Fp16), 0.5);
  EXPECT_DOUBLE_EQ(c.mac_array.rate_of(DType::Int8), 1.0);
  // 4 channels x 16 bits / 8 x 4224 MT/s = 33.792 GB/s, the public 64-bit LPDDR4X-4224 peak.
  EXPECT_EQ(c.dram.channels, 4u);
  EXPECT_DOUBLE_EQ(c.dram.peak_bandwidth().bytes_per_second, 33.792e9);
  // 12 CBUF banks of 32 KiB = 384 KiB: 7 data banks + 5 weight banks.
  EXPECT_EQ(c.sram.ifmap_bytes + c.sram.filter_bytes, 384u * 1024);
  EXPECT_DOUBLE_EQ(c.runtime.dispatch_latency_s, 20e-6);
  EXPECT_EQ(config::load_hardware_config("rk3588-core").cores, 1u);
}

TEST(Config, RuntimeCostsAndMacRatesReadWithUnits) {
  const auto c = config::load_hardware_config(
      "edge-m", {"npu.runtime.dispatch_latency=35us", "npu.runtime.core_sync=0.5 ms", "npu.mac_array.rate.fp16=0.25",
                 "npu.mac_array.kind=direct", "npu.mac_array.efficiency=0.5"});
  EXPECT_DOUBLE_EQ(c.runtime.dispatch_latency_s, 35e-6);
  EXPECT_DOUBLE_EQ(c.runtime.core_sync_s, 0.5e-3);
  EXPECT_DOUBLE_EQ(c.mac_array.rate_of(DType::Fp16), 0.25);
  // fp16 sustains 0.25 x 0.5 = 0.125 MACs a cell a cycle; int8 (not listed, 1) 0.5.
  EXPECT_DOUBLE_EQ(c.mac_array.sustained_rate(DType::Fp16), 0.125);
  EXPECT_DOUBLE_EQ(c.mac_array.sustained_rate(DType::Int8), 0.5);
  EXPECT_EQ(c.mac_array.kind, MacArrayKind::Direct);
  // Defaults: an ideal runtime, every type at one MAC per cell per cycle.
  const auto d = config::load_hardware_config("edge-m");
  EXPECT_TRUE(d.runtime.ideal());
  EXPECT_DOUBLE_EQ(d.mac_array.rate_of(DType::Fp16), 1.0);
  EXPECT_DOUBLE_EQ(d.mac_array.efficiency, 1.0);
  EXPECT_EQ(d.mac_array.kind, MacArrayKind::Systolic);
}

TEST(Config, RuntimeCostsAndMacRatesOutOfRangeNameTheKey) {
  EXPECT_NE(error_of("edge-m", {"npu.runtime.dispatch_latency=2s"}).find("expected a time from 0 to 1 s"),
            std::string::npos)
      << error_of("edge-m", {"npu.runtime.dispatch_latency=2s"});
  EXPECT_NE(error_of("edge-m", {"npu.runtime.dispatch_latency=-1us"}).find("npu.runtime.dispatch_latency"),
            std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.runtime.core_sync=20"}).find("npu.runtime.core_sync"), std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.mac_array.rate.fp16=0"}).find("expected a positive number"), std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.mac_array.rate.fp16=17"}).find("at most 16"), std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.mac_array.rate.int3=1"}).find("expected one of int8"), std::string::npos);
  // The efficiency is a share of cycles: above 0 and at most 1.
  EXPECT_NE(error_of("edge-m", {"npu.mac_array.efficiency=1.5"}).find("at most 1,"), std::string::npos)
      << error_of("edge-m", {"npu.mac_array.efficiency=1.5"});
  EXPECT_NE(error_of("edge-m", {"npu.mac_array.efficiency=0"}).find("npu.mac_array.efficiency"), std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.mac_array.kind=tpu"}).find("expected one of systolic, direct"), std::string::npos);
}
