// summary.json of the hand-made trace (tests/traces/sample_trace.h), checked against hand sums.
#include <gtest/gtest.h>

#include "tests/traces/sample_trace.h"
#include "traces/roofline.h"
#include "traces/summary.h"

namespace npusim::traces {
namespace {

using nlohmann::json;
using sample::sample_trace;

json summary_of(const Trace& t) {
  return make_summary(t, make_roofline(t));
}

TEST(Summary, TotalsAreTheHandSums) {
  const json s = summary_of(sample_trace());
  EXPECT_EQ(s["workload"], "tiny");
  EXPECT_EQ(s["fusion"], "none");
  EXPECT_EQ(s["config_name"], "test-npu");
  // cycles = round(1.5e6 ps * 1e9 Hz / 1e12) = 1500.
  EXPECT_EQ(s["cycles"].get<std::uint64_t>(), 1500u);
  EXPECT_DOUBLE_EQ(s["seconds"].get<double>(), 1.5e-6);
  EXPECT_EQ(s["macs"].get<std::uint64_t>(), 1000000u);
  EXPECT_EQ(s["vector_ops"].get<std::uint64_t>(), 20000u);
  // DRAM read c0 + c3 = 80000 + 20000; write c2 + c5 = 20000 + 20000.
  EXPECT_EQ(s["dram_read_bytes"].get<std::uint64_t>(), 100000u);
  EXPECT_EQ(s["dram_write_bytes"].get<std::uint64_t>(), 40000u);
  // SRAM read c1 + c2 + c4 + c5 = 200000 + 20000 + 20000 + 20000;
  // write c0 + c1 + c3 + c4 = 80000 + 20000 + 20000 + 20000.
  EXPECT_EQ(s["sram_read_bytes"].get<std::uint64_t>(), 260000u);
  EXPECT_EQ(s["sram_write_bytes"].get<std::uint64_t>(), 140000u);
  // (2 * 1e6 + 2e4) / 1.4e5 DRAM bytes.
  EXPECT_DOUBLE_EQ(s["arithmetic_intensity"].get<double>(), 2.02e6 / 1.4e5);
  // 1e6 MACs / (1500 cycles * 64 * 64) = 0.16276.
  EXPECT_DOUBLE_EQ(s["mac_utilization"].get<double>(), 1e6 / (1500.0 * 4096.0));
  EXPECT_NEAR(s["achieved_ops_per_second"].get<double>(), 2.02e6 / 1.5e-6, 1.0);
  // 58.3 % of its DRAM roof (test_roofline.cpp); the MAC array mostly waited for DMA.
  EXPECT_EQ(s["bound"], "latency");
  EXPECT_EQ(s["latency_cause"], "DMA wait");
  EXPECT_EQ(s["dram"]["row_hits"], 17);
}

TEST(Summary, RecomputedMacsAreTheExecutedBeyondTheModels) {
  // The sample's gemm0 is 1,000,000 MACs in the graph; a depth-first halo makes its tiles do
  // 1,250,000 (a second GEMM command of 250,000): 250,000 recomputed.
  Trace t = sample_trace();
  CommandEvent halo = t.commands[1];
  halo.id = 6;
  halo.macs = 250000;
  halo.begin_ps = halo.end_ps = 800000;  // within the run, no time of its own
  t.commands.push_back(halo);
  const json s = summary_of(t);
  EXPECT_EQ(s["macs"].get<std::uint64_t>(), 1250000u);
  EXPECT_EQ(s["model_macs"].get<std::uint64_t>(), 1000000u);
  EXPECT_EQ(s["recomputed_macs"].get<std::int64_t>(), 250000);
  // Utilisation on the model's MACs: 1e6 / (1500 cycles x 4096 cells); executed: 1.25e6 / the same.
  EXPECT_DOUBLE_EQ(s["model_mac_utilization"].get<double>(), 1e6 / (1500.0 * 4096.0));
  EXPECT_DOUBLE_EQ(s["mac_utilization"].get<double>(), 1.25e6 / (1500.0 * 4096.0));
  // Without recomputation the two agree.
  const json plain = summary_of(sample_trace());
  EXPECT_EQ(plain["recomputed_macs"].get<std::int64_t>(), 0);
  EXPECT_EQ(plain["model_macs"], plain["macs"]);
}

TEST(Summary, RecordsTheLoadersChoicesOnlyWhenItMadeSome) {
  EXPECT_FALSE(summary_of(sample_trace()).contains("import_choices"));
  Trace t = sample_trace();
  t.import_choices.push_back({{"node", "choose"}, {"choice", "else_branch"}, {"reason", "--branch"}});
  const json s = summary_of(t);
  ASSERT_EQ(s["import_choices"].size(), 1u);
  EXPECT_EQ(s["import_choices"][0]["node"], "choose");
  EXPECT_EQ(s["import_choices"][0]["reason"], "--branch");
}

TEST(Summary, CyclesFollowTheClock) {
  // 1.5e6 ps at 800 MHz = 1.5e-6 s * 8e8 = 1200 cycles; at 333 MHz 499.5 rounds to 500.
  Trace t = sample_trace();
  t.roofs.core_clock_hz = 8e8;
  EXPECT_EQ(summary_of(t)["cycles"].get<std::uint64_t>(), 1200u);
  t.roofs.core_clock_hz = 333e6;
  EXPECT_EQ(summary_of(t)["cycles"].get<std::uint64_t>(), 500u);
}

TEST(Summary, PerOpFigures) {
  const json s = summary_of(sample_trace());
  ASSERT_EQ(s["ops"].size(), 3u);
  const json& gemm = s["ops"][0];
  EXPECT_EQ(gemm["name"], "gemm0");
  EXPECT_EQ(gemm["kind"], "matmul");
  EXPECT_EQ(gemm["group"], "gemm0");
  EXPECT_EQ(gemm["cycles"].get<std::uint64_t>(), 1000u);  // span 0..1 us at 1 GHz
  EXPECT_DOUBLE_EQ(gemm["seconds"].get<double>(), 1e-6);
  EXPECT_EQ(gemm["macs"].get<std::uint64_t>(), 1000000u);
  EXPECT_EQ(gemm["dram_read_bytes"].get<std::uint64_t>(), 80000u);
  EXPECT_EQ(gemm["dram_write_bytes"].get<std::uint64_t>(), 20000u);
  EXPECT_EQ(gemm["sram_read_bytes"].get<std::uint64_t>(), 220000u);
  EXPECT_EQ(gemm["sram_write_bytes"].get<std::uint64_t>(), 100000u);
  EXPECT_DOUBLE_EQ(gemm["arithmetic_intensity"].get<double>(), 20.0);  // 2e6 / 1e5
  EXPECT_EQ(gemm["bound"], "latency");
  EXPECT_EQ(gemm["latency_cause"], "DMA wait");
  EXPECT_DOUBLE_EQ(gemm["time_share"].get<double>(), 1.0 / 1.5);  // alone for 1 of 1.5 us
  const json& relu = s["ops"][1];
  EXPECT_EQ(relu["group"], "relu1_chain");
  EXPECT_EQ(relu["cycles"].get<std::uint64_t>(), 500u);
  EXPECT_DOUBLE_EQ(relu["arithmetic_intensity"].get<double>(), 0.5);  // 2e4 / 4e4
  EXPECT_EQ(relu["bound"], "latency");
  const json& view = s["ops"][2];
  EXPECT_EQ(view["cycles"].get<std::uint64_t>(), 0u);
  EXPECT_TRUE(view["arithmetic_intensity"].is_null());  // no DRAM byte
  EXPECT_EQ(view["bound"], "none");
  EXPECT_TRUE(view["latency_cause"].is_null());
  EXPECT_DOUBLE_EQ(view["time_share"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(view["energy_j"].get<double>(), 0.0);
}

TEST(Summary, PerOpPartsSumToTotals) {
  const json s = summary_of(sample_trace());
  for (const char* field :
       {"macs", "vector_ops", "dram_read_bytes", "dram_write_bytes", "sram_read_bytes", "sram_write_bytes"}) {
    std::uint64_t by_ops = 0, by_groups = 0;
    for (const json& op : s["ops"]) by_ops += op[field].get<std::uint64_t>();
    for (const json& g : s["groups"]) by_groups += g[field].get<std::uint64_t>();
    EXPECT_EQ(by_ops, s[field].get<std::uint64_t>()) << field;
    EXPECT_EQ(by_groups, s[field].get<std::uint64_t>()) << field;
  }
}

TEST(Summary, Groups) {
  const json s = summary_of(sample_trace());
  ASSERT_EQ(s["groups"].size(), 2u);
  const json& chain = s["groups"][1];
  EXPECT_EQ(chain["name"], "relu1_chain");
  EXPECT_EQ(chain["fusion"], "chain");
  EXPECT_EQ(chain["members"], json({"relu1", "flatten2"}));
  EXPECT_EQ(chain["cycles"].get<std::uint64_t>(), 500u);
  EXPECT_EQ(chain["bound"], "latency");
  EXPECT_EQ(chain["sram_bytes"].get<std::uint64_t>(), 65536u);
}

TEST(Summary, EnergyTotalsAndBreakdown) {
  // Hand sums in test_energy.cpp: gemm0 2.45 uJ, relu1 0.575 uJ, network 3.025 uJ.
  const json s = summary_of(sample_trace());
  EXPECT_NEAR(s["energy_j"].get<double>(), 3.025e-6, 1e-18);
  EXPECT_NEAR(s["energy"]["dram_j"].get<double>(), 1.4e6 * 1e-12, 1e-18);  // 1.4e5 B * 10 pJ
  EXPECT_NEAR(s["ops"][0]["energy_j"].get<double>(), 2.45e-6, 1e-18);
  EXPECT_NEAR(s["ops"][1]["energy"]["vector_j"].get<double>(), 4e-8, 1e-20);
  EXPECT_NEAR(s["groups"][1]["energy_j"].get<double>(), 5.75e-7, 1e-18);
  double by_ops = 0;
  for (const json& op : s["ops"]) by_ops += op["energy_j"].get<double>();
  EXPECT_NEAR(by_ops, s["energy_j"].get<double>(), 1e-18);
  Trace t = sample_trace();
  t.config.erase("energy");
  const json none = summary_of(t);
  EXPECT_TRUE(none["energy_j"].is_null());
  EXPECT_TRUE(none["ops"][0]["energy"].is_null());
}

TEST(Summary, PartialSumBytesPerOpGroupAndNetwork) {
  // c1 (op 0 "gemm0", group 0) spilled 4096 B of partial sums and read back 2048 B: 6144 B,
  // already part of its sram_read_bytes / sram_write_bytes (which stay as they were).
  Trace t = sample_trace();
  t.commands[1].psum_write_bytes = 4096;
  t.commands[1].psum_read_bytes = 2048;
  const json s = summary_of(t);
  EXPECT_EQ(s["sram_psum_bytes"], 6144);
  EXPECT_EQ(s["ops"][0]["sram_psum_bytes"], 6144);
  EXPECT_EQ(s["ops"][1]["sram_psum_bytes"], 0);
  EXPECT_EQ(s["groups"][0]["sram_psum_bytes"], 6144);
  EXPECT_EQ(s["sram_read_bytes"], summary_of(sample_trace())["sram_read_bytes"]);
  EXPECT_TRUE(s["units"].contains("sram_psum_bytes"));
}

TEST(Summary, StallsAndUnitsBusy) {
  const json s = summary_of(sample_trace());
  // The MAC array over 1.5 us: waits 0.3 us for c0, works 0.5 us, then idles 0.7 us until the
  // end (the last compute command is on the vector unit; the tail counts as DMA wait).
  const json& st = s["stalls"];
  EXPECT_EQ(st["unit"], "MAC array");
  EXPECT_NEAR(st["dma_wait_s"].get<double>(), 1.0e-6, 1e-15);
  EXPECT_NEAR(st["sram_stall_s"].get<double>(), 50e-9, 1e-15);
  EXPECT_EQ(st["dominant_loss"], "DMA wait");
  // Units: MAC array 0.5 of 1.5 us busy; DMA ch0 c0 + c3 = 0.4 us.
  const json& units = s["units_busy"];
  ASSERT_EQ(units.size(), 4u);
  EXPECT_EQ(units[0]["name"], "MAC array");
  EXPECT_NEAR(units[0]["busy_fraction"].get<double>(), 0.5 / 1.5, 1e-12);
  EXPECT_EQ(units[2]["name"], "DMA ch0");
  EXPECT_NEAR(units[2]["busy_fraction"].get<double>(), 0.4 / 1.5, 1e-12);
  EXPECT_EQ(units[2]["commands"], 2);
}

TEST(Summary, EveryNumericTotalHasAUnit) {
  const json s = summary_of(sample_trace());
  for (const auto& [key, value] : s.items()) {
    if (value.is_number()) {
      EXPECT_TRUE(s["units"].contains(key)) << key;
    }
  }
}

}  // namespace
}  // namespace npusim::traces
