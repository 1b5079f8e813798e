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
  EXPECT_DOUBLE_EQ(r.roofs[0].value, 8.192e12);
  EXPECT_EQ(r.roofs[1].name, "vector unit");
  EXPECT_DOUBLE_EQ(r.roofs[1].value, 6.4e10);
  EXPECT_EQ(r.roofs[2].name, "DRAM");
  EXPECT_EQ(r.roofs[2].kind, "memory");
  EXPECT_EQ(r.roofs[2].unit, "bytes/s");
  EXPECT_DOUBLE_EQ(r.roofs[2].value, 1.6e11);
  EXPECT_EQ(r.roofs[3].name, "SRAM");
  EXPECT_DOUBLE_EQ(r.roofs[3].value, 1.024e12);
}

TEST(Roofline, GemmOpIsMemoryBoundOnDram) {
  // gemm0: ops = 2 * 1e6 = 2e6 over its span 0..1 us -> 2e12 ops/s.
  // DRAM bytes 80000 + 20000 = 1e5 -> I = 20 ops/B; roof 20 * 1.6e11 = 3.2e12 < peak 8.192e12.
  // SRAM bytes 80000 + 220000 + 20000 = 3.2e5 -> I = 6.25; roof 6.25 * 1.024e12 = 6.4e12.
  // Lowest roof 3.2e12 (DRAM) -> memory; 2e12 / 3.2e12 = 0.625 >= 0.5, so not latency.
  const Roofline r = make_roofline(sample_trace());
  const RooflinePoint& d = point(r, "op", "gemm0", "dram");
  EXPECT_EQ(d.compute_roof, "MAC array");
  EXPECT_DOUBLE_EQ(d.ops, 2e6);
  EXPECT_DOUBLE_EQ(d.bytes, 1e5);
  EXPECT_DOUBLE_EQ(d.seconds, 1e-6);
  EXPECT_DOUBLE_EQ(d.intensity, 20.0);
  EXPECT_DOUBLE_EQ(d.ops_per_second, 2e12);
  EXPECT_DOUBLE_EQ(d.attainable, 3.2e12);
  EXPECT_DOUBLE_EQ(d.fraction_of_roof, 0.625);
  EXPECT_EQ(d.bound, "memory");
  const RooflinePoint& s = point(r, "op", "gemm0", "sram");
  EXPECT_DOUBLE_EQ(s.bytes, 3.2e5);
  EXPECT_DOUBLE_EQ(s.intensity, 6.25);
  EXPECT_DOUBLE_EQ(s.ops_per_second, 2e12);  // same height at both levels
  EXPECT_DOUBLE_EQ(s.attainable, 6.4e12);
  EXPECT_DOUBLE_EQ(s.fraction_of_roof, 0.3125);
  EXPECT_EQ(s.bound, "memory");  // the class is the entity's, not the level's
}

TEST(Roofline, VectorOpIsComputeBound) {
  // relu1: ops = 2e4 over 1.0..1.5 us -> 4e10 ops/s.
  // DRAM bytes 4e4 -> I = 0.5; roof 0.5 * 1.6e11 = 8e10. SRAM 8e4 -> I = 0.25; roof 2.56e11.
  // Vector peak 6.4e10 is the lowest -> compute; 4e10 / 6.4e10 = 0.625 at both levels.
  const Roofline r = make_roofline(sample_trace());
  const RooflinePoint& d = point(r, "op", "relu1", "dram");
  EXPECT_EQ(d.compute_roof, "vector unit");
  EXPECT_DOUBLE_EQ(d.intensity, 0.5);
  EXPECT_DOUBLE_EQ(d.ops_per_second, 4e10);
  EXPECT_DOUBLE_EQ(d.attainable, 6.4e10);
  EXPECT_DOUBLE_EQ(d.fraction_of_roof, 0.625);
  EXPECT_EQ(d.bound, "compute");
  const RooflinePoint& s = point(r, "op", "relu1", "sram");
  EXPECT_DOUBLE_EQ(s.intensity, 0.25);
  EXPECT_DOUBLE_EQ(s.attainable, 6.4e10);
  EXPECT_EQ(s.bound, "compute");
}

TEST(Roofline, NetworkUsesBothPeaksAndEndTime) {
  // ops = 2e6 + 2e4 = 2.02e6 over end_ps 1.5 us -> 1.34667e12 ops/s.
  // compute roof = 8.192e12 + 6.4e10 = 8.256e12 ("MAC array + vector unit").
  // DRAM bytes 1.4e5 -> I = 14.2857; roof 2.30857e12 (lowest) -> memory.
  // fraction = (2.02e6 / 1.5e-6) / (2.02e6 / 1.4e5 * 1.6e11) = 1.4e5 / 2.4e5 = 0.58333.
  const Roofline r = make_roofline(sample_trace());
  const RooflinePoint& d = point(r, "network", "network", "dram");
  EXPECT_EQ(d.compute_roof, "MAC array + vector unit");
  EXPECT_DOUBLE_EQ(d.seconds, 1.5e-6);
  EXPECT_DOUBLE_EQ(d.intensity, 2.02e6 / 1.4e5);
  EXPECT_NEAR(d.ops_per_second, 2.02e6 / 1.5e-6, 1.0);
  EXPECT_NEAR(d.attainable, 2.02e6 / 1.4e5 * 1.6e11, 1.0);
  EXPECT_NEAR(d.fraction_of_roof, 1.4 / 2.4, 1e-12);
  EXPECT_EQ(d.bound, "memory");
  // SRAM: bytes 4e5 -> I = 5.05; roof 5.05 * 1.024e12 = 5.1712e12.
  const RooflinePoint& s = point(r, "network", "network", "sram");
  EXPECT_DOUBLE_EQ(s.intensity, 5.05);
  EXPECT_NEAR(s.attainable, 5.1712e12, 1.0);
}

TEST(Roofline, GroupsAndViews) {
  // Group 1 holds relu1 and the view flatten2: its numbers are relu1's (the view runs nothing).
  const Roofline r = make_roofline(sample_trace());
  const RooflinePoint& g = point(r, "group", "relu1_chain", "dram");
  EXPECT_EQ(g.compute_roof, "vector unit");
  EXPECT_DOUBLE_EQ(g.ops_per_second, 4e10);
  EXPECT_EQ(g.bound, "compute");
  EXPECT_FALSE(has_point(r, "flatten2"));
  // 2 ops + 2 groups + network, two levels each.
  EXPECT_EQ(r.points.size(), 10u);
  EXPECT_TRUE(r.violations.empty());
}

TEST(Roofline, SlowOpIsLatencyBound) {
  // Stretch relu1's vector command to end at 2.1 us: span 1.0..2.1 us -> 2e4 / 1.1e-6
  // = 1.818e10 ops/s < 0.5 * 6.4e10 = 3.2e10 -> latency.
  Trace t = sample_trace();
  t.commands[4].end_ps = 2000000;
  t.commands[5].begin_ps = 2000000;
  t.commands[5].end_ps = 2100000;
  t.end_ps = 2100000;
  const Roofline r = make_roofline(t);
  EXPECT_EQ(point(r, "op", "relu1", "dram").bound, "latency");
  EXPECT_NEAR(point(r, "op", "relu1", "dram").fraction_of_roof, 2e4 / 1.1e-6 / 6.4e10, 1e-12);
}

TEST(Roofline, ZeroByteLevelGetsNoPoint) {
  // A GEMM fed entirely from SRAM: no DRAM point, and the DRAM roof does not bind.
  Trace t = sample_trace();
  t.commands[0].dram_read_bytes = 0;
  t.commands[2].dram_write_bytes = 0;
  const Roofline r = make_roofline(t);
  EXPECT_THROW(point(r, "op", "gemm0", "dram"), std::runtime_error);
  // SRAM roof 6.4e12 < peak 8.192e12 -> memory; 2e12 / 6.4e12 = 0.3125 < 0.5 -> latency.
  EXPECT_EQ(point(r, "op", "gemm0", "sram").bound, "latency");
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
      EXPECT_NE(v.find("2e+12 ops/s exceeds the attainable 1e+12 ops/s by 100%"), std::string::npos)
          << v;
    }
  }
  EXPECT_TRUE(named);
  EXPECT_TRUE(exceeds_roof(point(r, "op", "gemm0", "dram")));
  EXPECT_FALSE(exceeds_roof(point(r, "op", "relu1", "dram")));
}

TEST(Roofline, ToJsonCarriesEveryField) {
  const nlohmann::json j = to_json(make_roofline(sample_trace()));
  ASSERT_EQ(j.at("roofs").size(), 4u);
  EXPECT_EQ(j["roofs"][2]["name"], "DRAM");
  EXPECT_EQ(j["roofs"][2]["unit"], "bytes/s");
  ASSERT_EQ(j.at("points").size(), 10u);
  const nlohmann::json& p = j["points"][0];
  for (const char* key :
       {"name", "scope", "level", "intensity", "ops_per_second", "bound", "fraction_of_roof", "ops",
        "bytes", "seconds", "attainable", "compute_roof"}) {
    EXPECT_TRUE(p.contains(key)) << key;
  }
  EXPECT_EQ(p["name"], "gemm0");
  EXPECT_DOUBLE_EQ(p["intensity"].get<double>(), 20.0);
  EXPECT_TRUE(j.at("violations").is_array());
  EXPECT_EQ(j.at("units").at("intensity"), "ops/byte");
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

bool gnuplot_available() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

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

TEST(RooflinePlot, ArrowsNeedTwoSeries) {
  const Roofline r = make_roofline(sample_trace());
  EXPECT_THROW(
      plot_roofline_svg({{"one", &r}}, {{"gemm0", "gemm0"}}, sample::temp_path("x.svg"), "x"),
      SimulationError);
}

}  // namespace
}  // namespace npusim::traces
