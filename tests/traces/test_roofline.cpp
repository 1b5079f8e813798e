// Roofline points of the hand-made trace (tests/traces/sample_trace.h), computed on paper.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "sim/core/errors.h"
#include "tests/traces/sample_trace.h"
#include "traces/roofline.h"

namespace npusim::traces {
namespace {

using sample::sample_trace;

const RooflinePoint& point(const Roofline& r, const std::string& scope, const std::string& name,
                           const std::string& level) {
  for (const RooflinePoint& p : r.points) {
    if (p.scope == scope && p.name == name && p.level == level) return p;
  }
  throw std::runtime_error("no point " + scope + " " + name + " " + level);
}

bool has_point(const Roofline& r, const std::string& name) {
  for (const RooflinePoint& p : r.points) {
    if (p.name == name) return true;
  }
  return false;
}

TEST(Roofline, RoofsComeFromTheTrace) {
  const Roofline r = make_roofline(sample_trace());
  ASSERT_EQ(r.roofs.size(), 4u);
  EXPECT_EQ(r.roofs[0].name, "MAC array");
  EXPECT_EQ(r.roofs[0].kind, "compute");
  EXPECT_EQ(r.roofs[0].unit, "ops/s");
  EXPECT_EQ(r.roofs[0].dtype, "int8");
  EXPECT_EQ(r.roofs[0].definition, "2 ops x 64 x 64 MACs x 1 GHz");
  EXPECT_DOUBLE_EQ(r.roofs[0].value, 8.192e12);
  EXPECT_EQ(r.roofs[1].name, "vector unit");
  EXPECT_DOUBLE_EQ(r.roofs[1].value, 6.4e10);
  EXPECT_EQ(r.roofs[2].name, "DRAM");
  EXPECT_EQ(r.roofs[2].kind, "memory");
  EXPECT_EQ(r.roofs[2].unit, "bytes/s");
  EXPECT_DOUBLE_EQ(r.roofs[2].value, 1.6e11);
  EXPECT_EQ(r.roofs[3].name, "SRAM");
  EXPECT_DOUBLE_EQ(r.roofs[3].value, 1.024e12);
  // Ridge points: 8.192e12 / 1.6e11 = 51.2 and 8.192e12 / 1.024e12 = 8 ops/byte for the MAC
  // array; the DRAM roof meets the vector unit at 6.4e10 / 1.6e11 = 0.4.
  EXPECT_EQ(r.roofs[0].ridge_points, (std::vector<std::pair<std::string, double>>{{"DRAM", 51.2}, {"SRAM", 8.0}}));
  EXPECT_EQ(r.roofs[2].ridge_points,
            (std::vector<std::pair<std::string, double>>{{"MAC array", 51.2}, {"vector unit", 0.4}}));
}

TEST(Roofline, GemmOpIsLatencyBoundBelowItsDramRoof) {
  // gemm0: ops = 2 * 1e6 = 2e6 over its span 0..1 us -> 2e12 ops/s.
  // Derated: 2e6 ops / 450 stall-free cycles (450 ns) = 4.444e12 ops/s (< peak 8.192e12).
  // DRAM bytes 80000 + 20000 = 1e5 -> I = 20 ops/B; roof 20 * 1.6e11 = 3.2e12 (the lowest).
  // SRAM bytes 80000 + 220000 + 20000 = 3.2e5 -> I = 6.25; roof 6.25 * 1.024e12 = 6.4e12.
  // 2e12 / 3.2e12 = 0.625 < 0.8 -> latency; its largest loss is DMA wait (stalls test).
  const Roofline r = make_roofline(sample_trace());
  const RooflinePoint& d = point(r, "op", "gemm0", "dram");
  EXPECT_EQ(d.compute_roof, "MAC array");
  EXPECT_DOUBLE_EQ(d.ops, 2e6);
  EXPECT_DOUBLE_EQ(d.bytes, 1e5);
  EXPECT_DOUBLE_EQ(d.seconds, 1e-6);
  EXPECT_DOUBLE_EQ(d.intensity, 20.0);
  EXPECT_DOUBLE_EQ(d.ops_per_second, 2e12);
  EXPECT_DOUBLE_EQ(d.peak, 8.192e12);
  EXPECT_NEAR(d.derated_peak, 2e6 / 450e-9, 1.0);
  EXPECT_DOUBLE_EQ(d.attainable, 3.2e12);
  EXPECT_DOUBLE_EQ(d.fraction_of_roof, 0.625);
  EXPECT_EQ(d.binding_roof, "DRAM");
  EXPECT_EQ(d.bound, "latency");
  EXPECT_EQ(d.latency_cause, "DMA wait");
  EXPECT_DOUBLE_EQ(d.time_share, 1.0 / 1.5);
  const RooflinePoint& s = point(r, "op", "gemm0", "sram");
  EXPECT_DOUBLE_EQ(s.bytes, 3.2e5);
  EXPECT_DOUBLE_EQ(s.intensity, 6.25);
  EXPECT_DOUBLE_EQ(s.ops_per_second, 2e12);      // same height at both levels
  EXPECT_NEAR(s.attainable, 2e6 / 450e-9, 1.0);  // min(derated 4.444e12, 6.4e12)
  EXPECT_NEAR(s.fraction_of_roof, 0.45, 1e-12);  // 2e12 / 4.444e12
  EXPECT_EQ(s.bound, "latency");                 // the class is the entity's, not the level's
}

TEST(Roofline, TheLevelNearestItsRoofIsTheBottleneck) {
  // gemm0 reaches 62.5 % of its DRAM-level roof and 45 % of its SRAM-level one.
  const Roofline r = make_roofline(sample_trace());
  EXPECT_TRUE(point(r, "op", "gemm0", "dram").bottleneck);
  EXPECT_FALSE(point(r, "op", "gemm0", "sram").bottleneck);
}

TEST(Roofline, VectorOpIsHeldToItsDeratedRoof) {
  // relu1: ops = 2e4 over 1.0..1.5 us -> 4e10 ops/s. Derated: 2e4 / 313 ns = 6.3898e10, just
  // below the 6.4e10 peak (313 cycles for 312.5 of work). DRAM roof 0.5 * 1.6e11 = 8e10, SRAM
  // 0.25 * 1.024e12 = 2.56e11: the derated roof binds; 4e10 / 6.3898e10 = 0.626 -> latency.
  // Fill/drain is inside the derated roof, so the cause is the next loss: DMA wait.
  const Roofline r = make_roofline(sample_trace());
  const RooflinePoint& d = point(r, "op", "relu1", "dram");
  EXPECT_EQ(d.compute_roof, "vector unit");
  EXPECT_DOUBLE_EQ(d.intensity, 0.5);
  EXPECT_DOUBLE_EQ(d.ops_per_second, 4e10);
  EXPECT_NEAR(d.derated_peak, 2e4 / 313e-9, 1e-3);
  EXPECT_NEAR(d.attainable, 2e4 / 313e-9, 1e-3);
  EXPECT_NEAR(d.fraction_of_roof, 4e10 * 313e-9 / 2e4, 1e-12);
  EXPECT_EQ(d.binding_roof, "vector unit (derated)");
  EXPECT_EQ(d.bound, "latency");
  EXPECT_EQ(d.latency_cause, "DMA wait");
  const RooflinePoint& s = point(r, "op", "relu1", "sram");
  EXPECT_DOUBLE_EQ(s.intensity, 0.25);
  EXPECT_NEAR(s.attainable, 2e4 / 313e-9, 1e-3);
}

TEST(Roofline, NetworkUsesBothPeaksAndEndTime) {
  // ops = 2e6 + 2e4 = 2.02e6 over end_ps 1.5 us -> 1.34667e12 ops/s.
  // compute roof = 8.192e12 + 6.4e10 = 8.256e12 ("MAC array + vector unit"); derated: the
  // busiest unit's stall-free time is the MAC array's 450 ns -> 2.02e6 / 450e-9 = 4.4889e12.
  // DRAM bytes 1.4e5 -> I = 14.2857; roof 2.30857e12 (lowest) -> 0.5833 of it -> latency.
  const Roofline r = make_roofline(sample_trace());
  const RooflinePoint& d = point(r, "network", "network", "dram");
  EXPECT_EQ(d.compute_roof, "MAC array + vector unit");
  EXPECT_DOUBLE_EQ(d.peak, 8.256e12);
  EXPECT_NEAR(d.derated_peak, 2.02e6 / 450e-9, 1.0);
  EXPECT_DOUBLE_EQ(d.seconds, 1.5e-6);
  EXPECT_DOUBLE_EQ(d.intensity, 2.02e6 / 1.4e5);
  EXPECT_NEAR(d.ops_per_second, 2.02e6 / 1.5e-6, 1.0);
  EXPECT_NEAR(d.attainable, 2.02e6 / 1.4e5 * 1.6e11, 1.0);
  EXPECT_NEAR(d.fraction_of_roof, 1.4 / 2.4, 1e-12);
  EXPECT_EQ(d.bound, "latency");
  EXPECT_DOUBLE_EQ(d.time_share, 1.0);
  // SRAM: bytes 4e5 -> I = 5.05; roof 5.05 * 1.024e12 = 5.1712e12 > derated 4.4889e12.
  const RooflinePoint& s = point(r, "network", "network", "sram");
  EXPECT_DOUBLE_EQ(s.intensity, 5.05);
  EXPECT_NEAR(s.attainable, 2.02e6 / 450e-9, 1.0);
}

TEST(Roofline, GroupsAndViews) {
  // Group 1 holds relu1 and the view flatten2: its numbers are relu1's (the view runs nothing).
  const Roofline r = make_roofline(sample_trace());
  const RooflinePoint& g = point(r, "group", "relu1_chain", "dram");
  EXPECT_EQ(g.compute_roof, "vector unit");
  EXPECT_DOUBLE_EQ(g.ops_per_second, 4e10);
  EXPECT_EQ(g.bound, "latency");
  EXPECT_FALSE(has_point(r, "flatten2"));
  // 2 ops + 2 groups + network, two levels each.
  EXPECT_EQ(r.points.size(), 10u);
  EXPECT_TRUE(r.violations.empty());
}

/// One op, one short load and one GEMM whose shape leaves much of the array idle.
Trace depthwise_like() {
  // c0 load [0, 10 ns) 1000 B; c1 gemm [10, 460 ns): 1e6 MACs in 450 stall-free cycles, where
  // the full 64x64 array would need 1e6 / 4096 = 244.14.
  Trace t = sample_trace();
  t.ops = {{"dw", "depthwise_conv2d", "MAC array", 0, 1000000, 0}};
  t.groups = {{"dw", "none", {0}, 4096}};
  CommandEvent c0 = sample::command(0, CommandKind::DmaLoad, Unit::Dma, 0, 0, 0, 0, 10000);
  c0.dram_read_bytes = 1000;
  c0.sram_write_bytes = 1000;
  CommandEvent c1 = sample::command(1, CommandKind::Gemm, Unit::MacArray, 0, 0, 0, 10000, 460000);
  c1.macs = 1000000;
  c1.compute_cycles = 450;
  c1.sram_read_bytes = 10000;
  c1.deps = {0};
  t.commands = {c0, c1};
  t.sram_allocations = {{0, 4096, 0, 460000}};
  t.end_ps = 460000;
  return t;
}

TEST(Roofline, ArrayShapeCapsAnOp) {
  // 2e6 ops in 460 ns = 4.3478e12 ops/s. Derated roof 2e6 / 450 ns = 4.4444e12 (54 % of the
  // 8.192e12 peak); DRAM roof 2000 ops/B * 1.6e11 = 3.2e14, SRAM 181.8 * 1.024e12 = 1.86e14.
  // The derated roof binds and the op reaches 460/450 -> 97.8 % of it: compute-bound.
  const Roofline r = make_roofline(depthwise_like());
  const RooflinePoint& d = point(r, "op", "dw", "dram");
  EXPECT_NEAR(d.derated_peak, 2e6 / 450e-9, 1.0);
  EXPECT_NEAR(d.derated_peak / d.peak, 2e6 / 450e-9 / 8.192e12, 1e-12);
  EXPECT_EQ(d.binding_roof, "MAC array (derated)");
  EXPECT_EQ(d.bound, "compute");
  EXPECT_NEAR(d.fraction_of_roof, 450.0 / 460.0, 1e-9);
  EXPECT_TRUE(d.latency_cause.empty());
  EXPECT_TRUE(r.violations.empty());
}

TEST(Roofline, SlowOpIsLatencyBound) {
  // Stretch relu1's vector command to end at 2.0 us with 587 stall cycles (900 = 313 + 587):
  // span 1.0..2.1 us -> 2e4 / 1.1e-6 = 1.818e10 ops/s, 313 / 1100 = 28.5 % of its derated
  // roof -> latency; the largest loss is the SRAM stall (587 ns against 200 ns of DMA wait).
  Trace t = sample_trace();
  t.commands[4].end_ps = 2000000;
  t.commands[4].stall_cycles = 587;
  t.commands[5].begin_ps = 2000000;
  t.commands[5].end_ps = 2100000;
  t.end_ps = 2100000;
  const Roofline r = make_roofline(t);
  const RooflinePoint& p = point(r, "op", "relu1", "dram");
  EXPECT_EQ(p.bound, "latency");
  EXPECT_NEAR(p.fraction_of_roof, 313.0 / 1100.0, 1e-9);
  EXPECT_EQ(p.latency_cause, "SRAM stall");
}

TEST(Roofline, ZeroByteLevelGetsNoPoint) {
  // A GEMM fed entirely from SRAM: no DRAM point, and the DRAM roof does not bind.
  Trace t = sample_trace();
  t.commands[0].dram_read_bytes = 0;
  t.commands[2].dram_write_bytes = 0;
  const Roofline r = make_roofline(t);
  EXPECT_THROW(point(r, "op", "gemm0", "dram"), std::runtime_error);
  // Derated 4.444e12 < SRAM roof 6.4e12 -> binds; 2e12 / 4.444e12 = 0.45 < 0.8 -> latency.
  EXPECT_EQ(point(r, "op", "gemm0", "sram").bound, "latency");
  EXPECT_EQ(point(r, "op", "gemm0", "sram").binding_roof, "MAC array (derated)");
  EXPECT_TRUE(point(r, "op", "gemm0", "sram").bottleneck);
}

TEST(Roofline, OpAboveItsRoofIsAViolation) {
  // With a MAC peak of 1e12 ops/s, gemm0's 2e12 ops/s is twice its attainable min(1e12, 3.2e12).
  Trace t = sample_trace();
  t.roofs.mac_peak_ops = 1e12;
  const Roofline r = make_roofline(t);
  ASSERT_FALSE(r.violations.empty());
  bool named = false;
  for (const std::string& v : r.violations) {
    if (v.find("op gemm0 at dram") != std::string::npos) {
      named = true;
      EXPECT_NE(v.find("2e+12 ops/s exceeds the attainable 1e+12 ops/s by 100%"), std::string::npos) << v;
    }
  }
  EXPECT_TRUE(named);
  EXPECT_TRUE(exceeds_roof(point(r, "op", "gemm0", "dram")));
  EXPECT_FALSE(exceeds_roof(point(r, "op", "relu1", "dram")));
}

TEST(Roofline, ComputeCyclesBelowTheIdealAreAViolation) {
  // 1e6 MACs cannot take fewer than 1e6 / 4096 = 244 cycles on a 64x64 array; 100 would mean
  // 2e6 / 100 ns = 2e13 ops/s, above the 8.192e12 peak.
  Trace t = sample_trace();
  t.commands[1].compute_cycles = 100;
  const Roofline r = make_roofline(t);
  bool named = false;
  for (const std::string& v : r.violations) {
    named |= v.find("op gemm0: stall-free compute cycles imply 2e+13 ops/s") != std::string::npos;
  }
  EXPECT_TRUE(named);
  EXPECT_DOUBLE_EQ(point(r, "op", "gemm0", "dram").derated_peak, 8.192e12);  // capped at the peak
}

TEST(Roofline, ToJsonCarriesEveryField) {
  const nlohmann::json j = to_json(make_roofline(sample_trace()));
  ASSERT_EQ(j.at("roofs").size(), 4u);
  EXPECT_EQ(j["roofs"][2]["name"], "DRAM");
  EXPECT_EQ(j["roofs"][2]["unit"], "bytes/s");
  EXPECT_DOUBLE_EQ(j["roofs"][0]["ridge_points"]["DRAM"].get<double>(), 51.2);
  EXPECT_EQ(j["roofs"][0]["dtype"], "int8");
  ASSERT_EQ(j.at("points").size(), 10u);
  const nlohmann::json& p = j["points"][0];
  for (const char* key : {"name", "scope", "level", "intensity", "ops_per_second", "bound", "fraction_of_roof", "ops",
                          "bytes", "seconds", "attainable", "compute_roof", "peak", "derated_peak", "binding_roof",
                          "bottleneck", "latency_cause", "time_share"}) {
    EXPECT_TRUE(p.contains(key)) << key;
  }
  EXPECT_EQ(p["name"], "gemm0");
  EXPECT_DOUBLE_EQ(p["intensity"].get<double>(), 20.0);
  EXPECT_TRUE(j.at("violations").is_array());
  EXPECT_EQ(j.at("units").at("intensity"), "ops/byte");
  EXPECT_DOUBLE_EQ(j.at("latency_bound_fraction").get<double>(), 0.8);
  EXPECT_TRUE(j.at("energy").is_object());
}

// ---- energy roofline ---------------------------------------------------------------------

TEST(EnergyRoofline, RoofsAndPointsFromTheModel) {
  // Roofs: MAC 1 pJ per MAC = 0.5 pJ per op; vector 2 pJ per op; DRAM 10 pJ/B.
  // gemm0: ideal energy = 1e6 MACs * 1 pJ + 1e5 DRAM B * 10 pJ = 2 uJ -> roof 2e6 / 2e-6 = 1e12
  // ops/J. Its energy is 2.45 uJ (test_energy.cpp) -> 8.163e11 ops/J = 2 / 2.45 of the roof.
  const Roofline r = make_roofline(sample_trace());
  ASSERT_EQ(r.energy_roofs.size(), 3u);
  EXPECT_DOUBLE_EQ(r.energy_roofs[0].value, 0.5e-12);
  EXPECT_EQ(r.energy_roofs[0].unit, "J/op");
  EXPECT_DOUBLE_EQ(r.energy_roofs[1].value, 2e-12);
  EXPECT_EQ(r.energy_roofs[2].name, "DRAM");
  EXPECT_DOUBLE_EQ(r.energy_roofs[2].value, 1e-11);
  const EnergyPoint* gemm = nullptr;
  for (const EnergyPoint& p : r.energy_points) {
    if (p.scope == "op" && p.name == "gemm0") gemm = &p;
  }
  ASSERT_NE(gemm, nullptr);
  EXPECT_DOUBLE_EQ(gemm->intensity, 20.0);
  EXPECT_NEAR(gemm->energy_j, 2.45e-6, 1e-18);
  EXPECT_NEAR(gemm->attainable_ops_per_joule, 1e12, 1e-3);
  EXPECT_NEAR(gemm->ops_per_joule, 2e6 / 2.45e-6, 1e-3);
  EXPECT_NEAR(gemm->fraction_of_roof, 2.0 / 2.45, 1e-12);
  EXPECT_NEAR(gemm->energy_share, 2.45 / 3.025, 1e-12);
  // ops, groups and the network (relu1_chain and relu1 both have DRAM bytes): 5 points.
  EXPECT_EQ(r.energy_points.size(), 5u);
}

TEST(EnergyRoofline, NoModelNoEnergyOutputs) {
  Trace t = sample_trace();
  t.config.erase("energy");
  const Roofline r = make_roofline(t);
  EXPECT_TRUE(r.energy_roofs.empty());
  EXPECT_TRUE(r.energy_points.empty());
  EXPECT_TRUE(to_json(r).at("energy").is_null());
}

TEST(Roofline, MissingRoofIsAnInputError) {
  // A trace whose roofs were never filled cannot place a GEMM against a 0 ops/s MAC array.
  Trace t = sample_trace();
  t.roofs.mac_peak_ops = 0;
  EXPECT_THROW(make_roofline(t), InputError);
}

TEST(Roofline, CommandNamingAMissingOpIsAnError) {
  Trace t = sample_trace();
  t.commands[1].op = 9;
  EXPECT_THROW(make_roofline(t), SimulationError);
}

// ---- compare arrows -----------------------------------------------------------------------

TEST(CompareArrows, FusedOpsPointAtTheirGroupAndLoneOpsAtThemselves) {
  const Trace a = sample_trace();  // unfused: every op alone
  Trace b = sample_trace();
  // b fuses gemm0 and relu1 into one epilogue group; flatten2 (a view) stays alone.
  b.groups = {{"gemm0+relu1", "epilogue", {0, 1}, 327680}, {"flatten2", "none", {2}, 0}};
  b.ops[0].group = 0;
  b.ops[1].group = 0;
  b.ops[2].group = 1;
  Trace a2 = a;
  a2.ops.push_back({"pool3", "max_pool", "vector unit", 1, 0, 10});
  b.ops.push_back({"pool3", "max_pool", "vector unit", 1, 0, 10});
  const std::vector<PlotArrow> arrows = compare_arrows(a2, b);
  ASSERT_EQ(arrows.size(), 3u);  // gemm0, relu1, pool3; flatten2 is a view
  EXPECT_EQ(arrows[0].from_point, "gemm0");
  EXPECT_EQ(arrows[0].to_point, "gemm0+relu1");
  EXPECT_EQ(arrows[1].from_point, "relu1");
  EXPECT_EQ(arrows[1].to_point, "gemm0+relu1");
  EXPECT_EQ(arrows[2].from_point, "pool3");
  EXPECT_EQ(arrows[2].to_point, "pool3");
}

// ---- plot ---------------------------------------------------------------------------------

bool gnuplot_available() {
  return std::system("command -v gnuplot >/dev/null 2>&1") == 0;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(RooflinePlot, WritesSvgWithRoofLabels) {
  if (!gnuplot_available()) GTEST_SKIP() << "gnuplot is not on PATH";
  const Roofline r = make_roofline(sample_trace());
  const std::string svg = sample::temp_path("roofline.svg");
  plot_roofline_svg({{"tiny", &r}}, {}, svg, "tiny on test-npu");
  const std::string text = slurp(svg);
  ASSERT_NE(text.find("<svg"), std::string::npos);
  for (const char* label : {"MAC array", "vector unit", "DRAM", "SRAM", "1 MAC = 2 ops",
                            "arithmetic intensity (ops/byte)", "tiny on test-npu"}) {
    EXPECT_NE(text.find(label), std::string::npos) << label;
  }
}

TEST(RooflinePlot, CompareWithArrowsAndViolation) {
  if (!gnuplot_available()) GTEST_SKIP() << "gnuplot is not on PATH";
  const Trace a = sample_trace();
  Trace b = sample_trace();
  b.roofs.mac_peak_ops = 1e12;  // makes gemm0 a violation, which the plot must mark
  const Roofline ra = make_roofline(a), rb = make_roofline(b);
  const std::string svg = sample::temp_path("compare.svg");
  plot_roofline_svg({{"unfused", &ra}, {"fused", &rb}}, compare_arrows(a, b), svg, "compare");
  const std::string text = slurp(svg);
  EXPECT_NE(text.find("above its roof"), std::string::npos);
  EXPECT_NE(text.find("! gemm0"), std::string::npos);
  EXPECT_NE(text.find("unfused network"), std::string::npos);
}

TEST(RooflinePlot, PngAndSvgFromOneRun) {
  if (!gnuplot_available()) GTEST_SKIP() << "gnuplot is not on PATH";
  const Roofline r = make_roofline(depthwise_like());
  const std::string svg = sample::temp_path("r.svg"), png = sample::temp_path("r.png");
  plot_roofline({{"dw", &r}}, {}, {svg, png}, "dw");
  EXPECT_EQ(slurp(png).substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  const std::string text = slurp(svg);
  // The legend explains colour (bound class), size (time share) and the derated roof the op gets.
  for (const char* label :
       {"compute-bound", "latency-bound", "size: share of run time", "derated roof (array shape)", "MAC array int8"}) {
    EXPECT_NE(text.find(label), std::string::npos) << label;
  }
}

TEST(RooflinePlot, EnergyRooflineNeedsAModel) {
  if (!gnuplot_available()) GTEST_SKIP() << "gnuplot is not on PATH";
  const Roofline r = make_roofline(sample_trace());
  const std::string svg = sample::temp_path("e.svg");
  plot_energy_roofline({{"tiny", &r}}, {svg, ""}, "energy");
  const std::string text = slurp(svg);
  for (const char* label : {"energy efficiency (ops/J)", "DRAM 10 pJ/B", "MAC array int8 2 Tops/J"}) {
    EXPECT_NE(text.find(label), std::string::npos) << label;
  }
  Trace t = sample_trace();
  t.config.erase("energy");
  const Roofline none = make_roofline(t);
  EXPECT_THROW(plot_energy_roofline({{"tiny", &none}}, {sample::temp_path("x.svg"), ""}, "x"), SimulationError);
}

TEST(RooflinePlot, ArrowsNeedTwoSeries) {
  const Roofline r = make_roofline(sample_trace());
  EXPECT_THROW(plot_roofline_svg({{"one", &r}}, {{"gemm0", "gemm0"}}, sample::temp_path("x.svg"), "x"),
               SimulationError);
}

}  // namespace
}  // namespace npusim::traces

namespace npusim::traces {

TEST(Roofline, BiasAddedInTheAccumulatorRidesOnTheMacRoof) {
  // A perfectly mapped GEMM: 64x64 array at 1 GHz (peak 2 * 4096 * 1e9 = 8.192e12 ops/s),
  // 4096 * 1000 MACs in exactly 1000 stall-free cycles, carrying 64000 bias adds done by the
  // accumulator as outputs drain (no array cycle of their own). ops = 8192000 + 64000 in 1 us =
  // 8.256e12 ops/s. The op's MAC roof scales by 8256000 / 8192000, so it sits exactly on it.
  Trace t = sample::sample_trace();
  t.ops = {{"fc", "matmul", "MAC array", 0, 4096000, 64000}};
  t.groups = {{"fc", "none", {0}, 0}};
  CommandEvent c = sample::command(0, CommandKind::Gemm, Unit::MacArray, 0, 0, 0, 0, 1000000);
  c.macs = 4096000;
  c.vector_ops = 64000;
  c.compute_cycles = 1000;
  c.sram_read_bytes = 65536;  // bytes so the op gets points: 126 ops/B, far right of the SRAM ridge
  t.commands = {c};
  t.sram_allocations = {{0, 0, 0, 1000000}};
  t.end_ps = 1000000;
  const Roofline r = make_roofline(t);
  EXPECT_TRUE(r.violations.empty()) << r.violations.front();
  const RooflinePoint& p = point(r, "op", "fc", "sram");
  EXPECT_DOUBLE_EQ(p.ops_per_second, 8.256e12);
  EXPECT_NEAR(p.peak, 8.192e12 * 8256000.0 / 8192000.0, 1e3);
  EXPECT_NEAR(p.fraction_of_roof, 1.0, 1e-12);
  EXPECT_EQ(p.bound, "compute");
}

}  // namespace npusim::traces

namespace npusim::traces {
namespace {

/// A 32 x 32 array at 1 GHz: MAC peak 2 ops x 1024 MACs x 1e9 = 2.048e12 ops/s.
Trace array_32x32(const std::string& dataflow) {
  Trace t = sample_trace();
  t.roofs.mac_rows = 32;
  t.roofs.mac_cols = 32;
  t.roofs.mac_peak_ops = 2.048e12;
  t.config["mac_array"]["dataflow"] = dataflow;
  t.sram_allocations.clear();
  return t;
}

/// MobileNetV2's first depthwise conv, reduced: 3x3, 32 channels, 56x56 outputs, so 32 groups of
/// a GEMM with M = 3136 output pixels, K = 9, N = 1 output channel. Under OS the M pixels fill
/// the 32 rows (98 folds) and the single output channel fills 1 of 32 columns; each fold
/// streams T = K = 9 cycles. Without fill/drain: 98 x 9 x 32 = 28224 stall-free cycles for
/// 3136 x 9 x 32 = 903168 MACs: 903168 / (28224 x 1024) = 1/32 of the array.
Trace depthwise_on_32x32() {
  Trace t = array_32x32("os");
  t.ops = {{"block_1_dw", "conv2d", "MAC array", 0, 903168, 0, {32, 3136, 9, 1}}};
  t.groups = {{"block_1_dw", "none", {0}, 65536, "OS"}};
  CommandEvent load = sample::command(0, CommandKind::DmaLoad, Unit::Dma, 0, 0, 0, 0, 10000);
  load.dram_read_bytes = 100000;  // 1.81e6 ops / 1e5 B = 18 ops/B: DRAM roof 2.9e12, far above
  load.sram_write_bytes = 100000;
  CommandEvent gemm = sample::command(1, CommandKind::Gemm, Unit::MacArray, 0, 0, 0, 10000, 28234000);
  gemm.macs = 903168;
  gemm.compute_cycles = 28224;
  gemm.sram_read_bytes = 100000;
  gemm.deps = {0};
  t.commands = {load, gemm};
  t.end_ps = 28234000;
  return t;
}

TEST(RooflineBound, DepthwiseOnA32x32ArrayIsHeldToOneColumnInWords) {
  // ops = 2 x 903168 = 1806336 over the GEMM's span of 28.234 us (the op's commands: 0..28.234):
  // 6.39773e10 ops/s. Derated roof = 1806336 / 28224 ns = 6.4e10 = 2.048e12 / 32.
  const Roofline r = make_roofline(depthwise_on_32x32());
  const RooflinePoint& p = point(r, "op", "block_1_dw", "dram");
  EXPECT_NEAR(p.derated_peak, 2.048e12 / 32, 1.0);
  EXPECT_EQ(p.bound, "compute");
  EXPECT_EQ(p.bound_roof, "derated MAC array");
  EXPECT_NEAR(p.bound_roof_value, 6.4e10, 1.0);
  EXPECT_NEAR(p.fraction_of_bound_roof, 28224.0 / 28234.0, 1e-9);
  EXPECT_NEAR(p.fraction_of_peak, 28224.0 / 28234.0 / 32, 1e-9);
  // Rows fill completely (3136 = 98 x 32), so only the columns are named; no fill/drain.
  EXPECT_EQ(p.derate_reason, "depthwise: 1 of 32 columns (N = 1), OS");
  EXPECT_EQ(p.bound_text,
            "compute: 100 % of the derated MAC array roof (64 Gops/s = 3.12 % of the MAC array peak 2.05 Tops/s; "
            "depthwise: 1 of 32 columns (N = 1), OS)");
  // Both levels say the same.
  EXPECT_EQ(point(r, "op", "block_1_dw", "sram").bound_text, p.bound_text);
}

TEST(RooflineBound, ANetworkAtThreePercentOfPeakIsComputeOnlyAtItsDrawnDeratedRoof) {
  // The network is the one op: 3.1 % of the MAC peak, yet at 99.96 % of its derated roof. Its
  // point names that roof, its value (derated_peak, which the plots draw as a dashed line) and
  // the op that loses the most: the reason is the plot's, not a hidden one.
  const Roofline r = make_roofline(depthwise_on_32x32());
  const RooflinePoint& n = point(r, "network", "network", "dram");
  EXPECT_EQ(n.bound, "compute");
  EXPECT_EQ(n.bound_roof, "derated MAC array");
  EXPECT_NEAR(n.derated_peak, 6.4e10, 1.0);
  EXPECT_NEAR(n.fraction_of_peak, 1806336 / 28.234e-6 / 2.048e12, 1e-9);
  // The MAC array's stall-free 28224 ns against 903168 / 1024 = 882 ns of work at peak: 32x;
  // all of the loss is in the one op.
  EXPECT_EQ(n.derate_reason,
            "MAC array busiest: stall-free time 32x its work at peak; largest loss 100 % in block_1_dw "
            "(depthwise: 1 of 32 columns (N = 1), OS)");
}

TEST(RooflineBound, ANetworkAtTenPercentOfAFullRoofIsLatency) {
  // A perfectly shaped GEMM (M = 1000, K = N = 32: 1024000 MACs in 1000 cycles, the whole array)
  // that waits 9 us for its operands: ops 2.048e6 over 10 us = 2.048e11 = 10 % of the peak.
  // DRAM: 2.048e6 / 4096 B = 500 ops/B -> 8e13 ops/s; SRAM 2.048e6 / 2e4 B -> 1.05e14: the MAC
  // array's full roof binds, and 10 % of it is "latency", whatever the class of its op.
  Trace t = array_32x32("ws");
  t.ops = {{"fc", "matmul", "MAC array", 0, 1024000, 0, {1, 1000, 32, 32}}};
  t.groups = {{"fc", "none", {0}, 65536, "WS"}};
  CommandEvent load = sample::command(0, CommandKind::DmaLoad, Unit::Dma, 0, 0, 0, 0, 9000000);
  load.dram_read_bytes = 4096;
  load.sram_write_bytes = 4096;
  CommandEvent gemm = sample::command(1, CommandKind::Gemm, Unit::MacArray, 0, 0, 0, 9000000, 10000000);
  gemm.macs = 1024000;
  gemm.compute_cycles = 1000;
  gemm.sram_read_bytes = 15904;
  gemm.deps = {0};
  t.commands = {load, gemm};
  t.end_ps = 10000000;
  const Roofline r = make_roofline(t);
  const RooflinePoint& n = point(r, "network", "network", "dram");
  EXPECT_NEAR(n.fraction_of_peak, 0.1, 1e-12);
  EXPECT_EQ(n.bound, "latency");
  EXPECT_EQ(n.bound_roof, "MAC array");
  EXPECT_TRUE(n.derate_reason.empty());
  EXPECT_EQ(n.bound_text, "latency: 10 % of the MAC array roof (2.05 Tops/s); dominant loss: DMA wait");
}

TEST(RooflineBound, AnSramBoundEntityNamesTheSram) {
  // relu1 of the sample trace: 2e4 ops at 4e10 ops/s, 8e4 SRAM bytes (0.25 ops/B). With an SRAM
  // of 1.7e11 B/s its roof is 0.25 x 1.7e11 = 4.25e10 ops/s, below the derated vector roof
  // (2e4 / 313 ns = 6.39e10) and the DRAM roof: the op is at 4 / 4.25 = 94 % of the SRAM roof,
  // "memory", and the words name the SRAM, not DRAM.
  Trace t = sample_trace();
  t.roofs.sram_bandwidth = 1.7e11;
  const Roofline r = make_roofline(t);
  const RooflinePoint& p = point(r, "op", "relu1", "sram");
  EXPECT_EQ(p.binding_roof, "SRAM");
  EXPECT_EQ(p.bound_roof, "SRAM");
  EXPECT_NE(p.bound_text.find("of the SRAM roof"), std::string::npos) << p.bound_text;
  EXPECT_NE(p.bound_text.find("at 0.25 ops/B"), std::string::npos) << p.bound_text;
  EXPECT_EQ(p.bound, "memory");
  EXPECT_NEAR(p.fraction_of_bound_roof, 4.0 / 4.25, 1e-9);
}

TEST(RooflineBound, JsonCarriesTheWords) {
  const nlohmann::json j = to_json(make_roofline(depthwise_on_32x32()));
  const nlohmann::json& p = j["points"][0];
  for (const char* key :
       {"bound_roof", "bound_roof_value", "fraction_of_bound_roof", "fraction_of_peak", "derate_reason", "bound_text"})
    EXPECT_TRUE(p.contains(key)) << key;
  EXPECT_EQ(j["units"]["bound_roof_value"], "ops/s");
}

}  // namespace
}  // namespace npusim::traces
