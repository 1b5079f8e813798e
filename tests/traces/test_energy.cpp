// The energy model read from a trace's config and the energy per op, group and network of the
// hand-made trace (tests/traces/sample_trace.h), computed on paper.
#include <gtest/gtest.h>

#include "sim/core/errors.h"
#include "tests/traces/sample_trace.h"
#include "traces/analysis.h"
#include "traces/energy.h"

namespace npusim::traces {
namespace {

using sample::sample_trace;

TraceEnergy energy_of(const Trace& t) {
  return *analyse_trace(t).energy;
}

TEST(Energy, ModelPicksTheArraysDtype) {
  const EnergyModel m = *energy_model(sample_trace());
  EXPECT_EQ(m.dtype, "int8");
  EXPECT_DOUBLE_EQ(m.mac_j, 1e-12);  // not the fp16 entry (5 pJ)
  EXPECT_DOUBLE_EQ(m.vector_op_j, 2e-12);
  EXPECT_DOUBLE_EQ(m.standing_w(), 0.03);
  Trace fp16 = sample_trace();
  fp16.config["mac_array"]["dtype"] = "fp16";
  EXPECT_DOUBLE_EQ(energy_model(fp16)->mac_j, 5e-12);
}

TEST(Energy, OpsByComponent) {
  // gemm0: 1e6 MACs * 1 pJ = 1 uJ; SRAM read (c1 200000 + c2 20000) * 1 pJ = 0.22 uJ;
  // SRAM write (c0 80000 + c1 20000) * 2 pJ = 0.2 uJ; DRAM 1e5 B * 10 pJ = 1 uJ;
  // standing 30 mW over its 1 us share of the run: 10 nJ DRAM background + 20 nJ static.
  const TraceEnergy e = energy_of(sample_trace());
  const EnergyBreakdown& g = e.ops[0];
  EXPECT_NEAR(g.mac_j, 1e-6, 1e-18);
  EXPECT_DOUBLE_EQ(g.vector_j, 0.0);
  EXPECT_NEAR(g.sram_read_j, 2.2e-7, 1e-18);
  EXPECT_NEAR(g.sram_write_j, 2e-7, 1e-18);
  EXPECT_NEAR(g.dram_j, 1e-6, 1e-18);
  EXPECT_NEAR(g.dram_background_j, 1e-8, 1e-20);
  EXPECT_NEAR(g.static_j, 2e-8, 1e-20);
  EXPECT_NEAR(g.total_j(), 2.45e-6, 1e-18);
  // relu1: 2e4 vector ops * 2 pJ = 40 nJ; SRAM read 4e4 * 1 pJ = 40 nJ; SRAM write 4e4 * 2 pJ
  // = 80 nJ; DRAM 4e4 * 10 pJ = 400 nJ; standing 30 mW * 0.5 us = 15 nJ -> 575 nJ.
  EXPECT_NEAR(e.ops[1].total_j(), 5.75e-7, 1e-18);
  EXPECT_NEAR(e.ops[1].standing_j(), 1.5e-8, 1e-20);
  EXPECT_DOUBLE_EQ(e.ops[2].total_j(), 0.0);  // the view
}

TEST(Energy, PerOpEnergySumsToTheNetworkTotal) {
  // Network: dynamic 2.42 + 0.56 uJ, standing 30 mW * 1.5 us = 45 nJ -> 3.025 uJ; and so do
  // the ops (2.45 + 0.575 + 0) and the groups.
  const TraceEnergy e = energy_of(sample_trace());
  EXPECT_NEAR(e.network.total_j(), 3.025e-6, 1e-18);
  double ops = 0, groups = 0;
  for (const EnergyBreakdown& b : e.ops) ops += b.total_j();
  for (const EnergyBreakdown& b : e.groups) groups += b.total_j();
  EXPECT_NEAR(ops, e.network.total_j(), 1e-18);
  EXPECT_NEAR(groups, e.network.total_j(), 1e-18);
}

TEST(Energy, OverlappingOpsShareStandingEnergyAndStillSum) {
  // Move relu1 to overlap gemm0 (its load at 0.5 us): the standing energy of [0.5, 1.0) is split
  // between the two, and the per-op totals still add up to the network's.
  Trace t = sample_trace();
  for (int i : {3, 4, 5}) {
    t.commands[i].begin_ps -= 500000;
    t.commands[i].end_ps -= 500000;
  }
  t.end_ps = 1000000;
  const TraceEnergy e = energy_of(t);
  EXPECT_NEAR(e.network.standing_j(), 0.03 * 1e-6, 1e-20);
  EXPECT_NEAR(e.ops[0].total_j() + e.ops[1].total_j(), e.network.total_j(), 1e-18);
  // gemm0 alone in [0, 0.5) and shares [0.5, 1.0) -> 0.75 us of standing power.
  EXPECT_NEAR(e.ops[0].standing_j(), 0.03 * 0.75e-6, 1e-20);
}

TEST(Energy, NoBlockNoModel) {
  Trace t = sample_trace();
  t.config.erase("energy");
  EXPECT_FALSE(energy_model(t).has_value());
  EXPECT_FALSE(analyse_trace(t).energy.has_value());
}

TEST(Energy, MalformedBlockIsAnInputError) {
  Trace t = sample_trace();
  t.config["energy"]["dram_j_per_byte"] = "lots";
  EXPECT_THROW(energy_model(t), InputError);
  t = sample_trace();
  t.config["energy"]["static_w"] = -1.0;
  EXPECT_THROW(energy_model(t), InputError);
  t = sample_trace();
  t.config["mac_array"]["dtype"] = "bf16";  // no MAC energy for bf16
  try {
    energy_model(t);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("mac_j.bf16"), std::string::npos) << e.what();
  }
}

TEST(Energy, PricingEstimatedEventsFromTheConfigAlone) {
  // The planner's path: the model from the resolved config (no controller figures), events
  // estimated. The sample config's prices: MAC 1 pJ, vector op 2 pJ, SRAM read 1 pJ/B, write
  // 2 pJ/B, DRAM 10 pJ/B, standing 30 mW.
  const EnergyModel m = *energy_model_of_config(sample_trace().config);
  const EnergyBreakdown e = price_energy(m, {1e6, 1e4, 2e5, 1e5, 5e4, 1e-4});
  EXPECT_DOUBLE_EQ(e.mac_j, 1e-6);                         // 1e6 x 1 pJ
  EXPECT_DOUBLE_EQ(e.vector_j, 2e-8);                      // 1e4 x 2 pJ
  EXPECT_DOUBLE_EQ(e.sram_read_j + e.sram_write_j, 4e-7);  // 2e5 x 1 pJ + 1e5 x 2 pJ
  EXPECT_DOUBLE_EQ(e.dram_j, 5e-7);                        // 5e4 x 10 pJ
  EXPECT_DOUBLE_EQ(e.standing_j(), 3e-6);                  // 30 mW x 100 us
  EXPECT_FALSE(m.dram_from_controller);
}

}  // namespace
}  // namespace npusim::traces
