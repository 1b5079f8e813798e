// SCALE-Sim mode: the .cfg parser, the per-layer model against hand-computed demand matrices and
// against SCALE-Sim v2's own published COMPUTE_REPORT rows, and the report format.
#include <gtest/gtest.h>

#include "sim/core/errors.h"
#include "sim/scalesim/layer_model.h"
#include "sim/scalesim/reports.h"
#include "sim/scalesim/scalesim_config.h"
#include "workloads/loader.h"
#include "tests/support/test_paths.h"

namespace npusim::scalesim {
namespace {

const std::string kData = std::string(test_paths::data_dir()) + "/scalesim/";

ScaleSimConfig array(std::uint32_t rows, std::uint32_t cols, Dataflow d) {
  ScaleSimConfig c;
  c.rows = rows;
  c.cols = cols;
  c.ifmap_kb = c.filter_kb = c.ofmap_kb = 64;
  c.dataflow = d;
  return c;
}

/// A GEMM layer (every operand entry inside): ifmap m x k, filter k x n.
Layer gemm(const std::string& name, std::int64_t m, std::int64_t k, std::int64_t n, std::uint64_t ifmap_words) {
  Layer l;
  l.name = name, l.m = m, l.k = k, l.n = n, l.ifmap_words = ifmap_words;
  return l;
}

std::string config_error(const std::string& text) {
  try {
    parse_scalesim_config(text, "test.cfg");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

const std::string kGoodConfig =
    "[general]\nrun_name = t\n[architecture_presets]\nArrayHeight: 4\nArrayWidth: 4\n"
    "IfmapSramSzkB: 64\nFilterSramSzkB: 64\nOfmapSramSzkB: 64\nDataflow: os\nBandwidth: 10\n"
    "[run_presets]\nInterfaceBandwidth: CALC\n";

TEST(ScaleSimConfig, ReadsTheArchitectureAndRunPresets) {
  const ScaleSimConfig c = load_scalesim_config(kData + "calc_ws_8x8.cfg");
  EXPECT_EQ(c.run_name, "tiny_ws");
  EXPECT_EQ(c.rows, 8u);
  EXPECT_EQ(c.cols, 8u);
  EXPECT_EQ(c.ifmap_kb, 64u);
  EXPECT_EQ(c.ofmap_kb, 32u);
  EXPECT_EQ(c.dataflow, Dataflow::WS);
  EXPECT_EQ(c.interface, InterfaceBandwidth::Calc);
  EXPECT_EQ(c.bandwidths, std::vector<std::uint64_t>{10});
  // Keys are case-insensitive, as in Python's configparser.
  std::string lower = kGoodConfig;
  lower.replace(lower.find("ArrayHeight"), 11, "arrayheight");
  EXPECT_EQ(parse_scalesim_config(lower, "x.cfg").rows, 4u);
}

TEST(ScaleSimConfig, BadConfigsNameFileLineAndKey) {
  const std::string missing = [] {
    try {
      load_scalesim_config(kData + "missing_key.cfg");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  }();
  EXPECT_NE(missing.find("missing_key.cfg ([architecture_presets] ArrayWidth)"), std::string::npos) << missing;
  std::string zero = kGoodConfig;
  zero.replace(zero.find("ArrayWidth: 4"), 13, "ArrayWidth: 0");
  const std::string z = config_error(zero);
  EXPECT_NE(z.find("test.cfg:5 ([architecture_presets] ArrayWidth)"), std::string::npos) << z;
  EXPECT_NE(z.find("an integer from 1 to 65536, found '0'"), std::string::npos) << z;
  std::string text = kGoodConfig;
  text.replace(text.find("IfmapSramSzkB: 64"), 17, "IfmapSramSzkB: 6x4");
  EXPECT_NE(config_error(text).find("found '6x4'"), std::string::npos);
  std::string df = kGoodConfig;
  df.replace(df.find("Dataflow: os"), 12, "Dataflow: rs");
  const std::string d = config_error(df);
  EXPECT_NE(d.find(":9 ([architecture_presets] Dataflow)"), std::string::npos) << d;
  EXPECT_NE(d.find("ws, os or is"), std::string::npos) << d;
  std::string mode = kGoodConfig;
  mode.replace(mode.find("CALC"), 4, "FAST");
  EXPECT_NE(config_error(mode).find("CALC or USER"), std::string::npos);
  // A repeated key or section: configparser (and so SCALE-Sim) refuses it; so does npusim,
  // naming both lines, instead of letting one value silently win.
  const std::string twice = config_error(kGoodConfig + "[architecture_presets]\nArrayWidth: 8\n");
  EXPECT_NE(twice.find("test.cfg:13: expected each section once, found a second [architecture_presets] "
                       "(first on line 3)"),
            std::string::npos)
      << twice;
  std::string key = kGoodConfig;
  key.replace(key.find("Dataflow: os"), 12, "Dataflow: os\narraywidth: 8");
  const std::string k = config_error(key);
  EXPECT_NE(k.find("test.cfg:10 ([architecture_presets] arraywidth): expected each key once per section, "
                   "found a second 'arraywidth' (first on line 5)"),
            std::string::npos)
      << k;
  // USER mode needs Bandwidth.
  std::string user = kGoodConfig;
  user.replace(user.find("Bandwidth: 10\n"), 14, "");
  user.replace(user.find("CALC"), 4, "USER");
  EXPECT_NE(config_error(user).find("[architecture_presets] Bandwidth"), std::string::npos);
}

TEST(ScaleSimLayer, WsOn2x2ByHandFromTheDemandMatrices) {
  // WS on 2x2, M=3 K=3 N=2: Sr=K=3 -> 2 row folds (2 rows, then 1), Sc=N=2 -> 1, T=M=3.
  // Each fold has 2R + C + T - 2 = 7 demand rows; Total Cycles is the last row's index:
  // 2 * 7 - 1 = 13.
  const LayerReport r = simulate_layer(gemm("l", 3, 3, 2, 9), array(2, 2, Dataflow::WS));
  EXPECT_EQ(r.total_cycles, 13u);
  EXPECT_EQ(r.stall_cycles, 0u);
  EXPECT_EQ(r.folds, 2u);
  // 18 MACs * 100 / (13 cycles * 4 PEs)
  EXPECT_DOUBLE_EQ(r.overall_util, 1800.0 / 52.0);
  // folds map 2x2 and 1x2 PEs: (1 + 0.5) / 2 = 75 %
  EXPECT_DOUBLE_EQ(r.mapping_efficiency, 75.0);
  // per fold mac_used * T / (R*C * (2R + 2C + T - 3)) = 4*3/32 and 2*3/32: mean 28.125 %
  EXPECT_DOUBLE_EQ(r.compute_util, 28.125);
  // ifmap: an R=2-row preload gap, then T=3 rows skewed by the rows used; read at +1 latency.
  // First at row 2 (+1 = 3); the last fold (base 7) uses 1 row: 7 + 2 + 3 - 1 + 0 (+1) = 12.
  // Reads: each of the 1 column folds streams the whole 3x3 ifmap: 9.
  EXPECT_EQ(r.sram[kIfmap].start, 3);
  EXPECT_EQ(r.sram[kIfmap].stop, 12);
  EXPECT_EQ(r.sram[kIfmap].words, 9u);
  // filter: R rows flipped, so the first fold's 2 used rows are rows 0-1 (+1 = 1); the last
  // fold's used row is its row 1: 7 + 1 (+1) = 9. Every weight once: 3*2 = 6.
  EXPECT_EQ(r.sram[kFilter].start, 1);
  EXPECT_EQ(r.sram[kFilter].stop, 9);
  EXPECT_EQ(r.sram[kFilter].words, 6u);
  // ofmap: 2R-1 = 3 empty rows, then T rows skewed by the 2 columns: first 3, last
  // 7 + 3 + 2 + (2 - 1) = 13. Each row fold writes all 3x2 outputs: 12.
  EXPECT_EQ(r.sram[kOfmap].start, 3);
  EXPECT_EQ(r.sram[kOfmap].stop, 13);
  EXPECT_EQ(r.sram[kOfmap].words, 12u);
  EXPECT_DOUBLE_EQ(r.sram_bw[kOfmap], 12.0 / 13.0);
  // npusim beyond SCALE-Sim: overlapped 7 + max(3, 2) = 10; 3*2 partial sums spilled once.
  EXPECT_EQ(r.overlapped_cycles, 10u);
  EXPECT_EQ(r.psum_words, 6u);
}

TEST(ScaleSimLayer, OsCountsTheShapeOfEveryFoldIntoOfmapWrites) {
  // The layer of github.com/scalesim-project/SCALE-Sim/issues/125: 4x4 OS, ifmap 1x4 with 4
  // channels, 4 1x1 filters: M = 4 pixels, K = 4, N = 4: one fold of R + C + T - 2 = 10 rows ->
  // Total Cycles 9.
  const LayerReport r = simulate_layer(gemm("Conv5", 4, 4, 4, 16), array(4, 4, Dataflow::OS));
  EXPECT_EQ(r.total_cycles, 9u);
  // SCALE-Sim's OS ofmap count adds R + C per fold to the 16 outputs: 24.
  EXPECT_EQ(r.sram[kOfmap].words, 24u);
  // ofmap rows: T-1 = 3 empty, then the fold flipped (all 4 rows used) and skewed: 3 .. 3+3+3.
  EXPECT_EQ(r.sram[kOfmap].start, 3);
  EXPECT_EQ(r.sram[kOfmap].stop, 9);
}

struct Golden {
  std::int64_t spatial_rows, spatial_cols, temporal;
  std::uint64_t total;
  const char *overall, *mapping, *compute;
};

// Rows of COMPUTE_REPORT.csv produced by SCALE-Sim v2 on a 128x128 array, CALC mode, from the
// public repository yutation/SCALE-SIM_Validation (data/data_matmul3/COMPUTE_REPORT.csv rows 0,
// 26, 34 and data/data_matmul5/COMPUTE_REPORT_is.csv rows 3, 50). With R = C the WS and IS
// mappings are symmetric, so each row is checked in both dataflows.
const Golden kGolden[] = {
    {128, 128, 128, 509, "25.147347740667975", "100.0", "20.09419152276295"},
    {144, 128, 128, 1019, "14.131501472031402", "56.25", "11.302982731554161"},
    {272, 128, 128, 1529, "17.78940483976455", "70.83333333333334", "14.23338566195709"},
    {320, 128, 128, 1529, "20.928711576193592", "83.33333333333334", "16.74515960230246"},
    {192, 192, 128, 2039, "14.124570868072585", "56.25", "11.302982731554161"},
};

TEST(ScaleSimLayer, MatchesScaleSimV2OutputDigitForDigit) {
  for (const Golden& g : kGolden) {
    // WS: Sr = K, Sc = N, T = M.  IS: Sr = K, Sc = M, T = N.
    const Layer ws = gemm("ws", g.temporal, g.spatial_rows, g.spatial_cols, 0);
    const Layer is = gemm("is", g.spatial_cols, g.spatial_rows, g.temporal, 0);
    for (const auto& [layer, d] : {std::pair{ws, Dataflow::WS}, std::pair{is, Dataflow::IS}}) {
      const LayerReport r = simulate_layer(layer, array(128, 128, d));
      EXPECT_EQ(r.total_cycles, g.total) << g.spatial_rows << " " << to_string(d);
      EXPECT_EQ(python_float(r.overall_util), g.overall);
      EXPECT_EQ(python_float(r.mapping_efficiency), g.mapping);
      EXPECT_EQ(python_float(r.compute_util), g.compute);
    }
  }
}

TEST(ScaleSimLayer, DepthwiseRowsExpandToOneLayerPerChannel) {
  const auto g = workloads::load_scalesim_topology(kData + "conv.csv", {});
  const std::vector<Layer> layers = layers_from_graph(g);
  // Conv1, Conv2_dw, 4 x Conv3DP, Conv4, FC
  ASSERT_EQ(layers.size(), 8u);
  EXPECT_EQ(layers[2].name, "Conv3DPChannel_0");
  EXPECT_EQ(layers[5].name, "Conv3DPChannel_3");
  EXPECT_EQ(layers[3].m, 16);  // 4x4 outputs
  EXPECT_EQ(layers[3].k, 9);   // 3x3 x 1 channel
  EXPECT_EQ(layers[3].n, 1);
  // Conv1 at stride 2 with a 3x3 filter touches every input pixel: (4-1)*2 + 3 = 9 -> 9*9*3.
  EXPECT_EQ(layers[0].ifmap_words, 243u);
  // Conv4 at column stride 2 with a 1x2 filter also touches all: 6 * 8 * 4 channels.
  EXPECT_EQ(layers[6].ifmap_words, 192u);
}

TEST(ScaleSimReports, PythonFloatFormatting) {
  EXPECT_EQ(python_float(100.0), "100.0");
  EXPECT_EQ(python_float(0.0), "0.0");
  EXPECT_EQ(python_float(56.25), "56.25");
  EXPECT_EQ(python_float(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(python_float(0.0001), "0.0001");
  EXPECT_EQ(python_float(0.00001), "1e-05");
  EXPECT_EQ(python_float(1.5e-7), "1.5e-07");
  EXPECT_EQ(python_float(1e16), "1e+16");
  EXPECT_EQ(python_float(123456789012345.6), "123456789012345.6");
  EXPECT_EQ(python_float(1e15), "1000000000000000.0");
}

TEST(ScaleSimReports, RowsFollowScaleSimsLayout) {
  const LayerReport r = simulate_layer(gemm("l", 3, 3, 2, 9), array(2, 2, Dataflow::WS));
  EXPECT_EQ(compute_report({r}),
            "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,\n"
            "0, 13, 0, 34.61538461538461, 75.0, 28.125,\n");
  const std::string detail = detailed_access_report({r});
  // cycles print as floats, counts as integers, as SCALE-Sim's numpy values do
  EXPECT_NE(detail.find("\n0, 3.0, 12.0, 9, 1.0, 9.0, 6, 3.0, 13.0, 12, "), std::string::npos) << detail;
  EXPECT_EQ(detail.substr(0, detail.find('\n')),
            "LayerID, SRAM IFMAP Start Cycle, SRAM IFMAP Stop Cycle, SRAM IFMAP Reads, "
            "SRAM Filter Start Cycle, SRAM Filter Stop Cycle, SRAM Filter Reads, "
            "SRAM OFMAP Start Cycle, SRAM OFMAP Stop Cycle, SRAM OFMAP Writes, "
            "DRAM IFMAP Start Cycle, DRAM IFMAP Stop Cycle, DRAM IFMAP Reads, "
            "DRAM Filter Start Cycle, DRAM Filter Stop Cycle, DRAM Filter Reads, "
            "DRAM OFMAP Start Cycle, DRAM OFMAP Stop Cycle, DRAM OFMAP Writes,");
}

}  // namespace
}  // namespace npusim::scalesim

namespace npusim::scalesim {
namespace {

/// One layer's COMPUTE_REPORT row and the SRAM columns of its DETAILED_ACCESS_REPORT row
/// (without the layer id), as SCALE-Sim v2 (scalesim-project/scale-sim-v2, commit 22f88b1)
/// printed them for that dataflow and array size, CALC mode, 64 KiB SRAMs:
///   PYTHONPATH=. python3 scalesim/scale.py -c CFG -t tests/data/scalesim/strided.csv -p OUT
/// (the .cfg is tests/data/scalesim/calc_ws_8x8.cfg with Dataflow and the array size changed).
struct StridedGolden {
  Dataflow dataflow;
  std::uint32_t array;
  const char* compute;
  const char* sram;
};

// S2 = 16,16,3,3,8,16,2: (16 - 3) is odd, so SCALE-Sim's ofmap is ceil((16 - 3 + 2) / 2) = 8,
// not the floor form's 7: M = 64, K = 72, N = 16. WS 8x8: 9 x 2 folds of 2*8 + 8 + 64 - 2 = 86
// rows: 1548 - 1 = 1547 (the floor form would give 18 * 71 - 1 = 1277).
const StridedGolden kStrided[] = {
    {Dataflow::WS, 8, "1547, 0, 74.46670976082741, 100.0, 68.81720430107525",
     "9.0, 1532.0, 9216, 1.0, 1470.0, 1152, 15.0, 1547.0, 9216"},
    {Dataflow::OS, 8, "1375, 0, 83.78181818181818, 100.0, 83.72093023255812",
     "1.0, 1344.0, 9216, 1.0, 1369.0, 9216, 71.0, 1375.0, 1280"},
    {Dataflow::IS, 8, "2735, 0, 42.120658135283364, 100.0, 35.555555555555515",
     "1.0, 2592.0, 4608, 9.0, 2729.0, 9216, 15.0, 2735.0, 9216"},
    {Dataflow::WS, 16, "549, 0, 52.459016393442624, 90.0, 46.080000000000005",
     "17.0, 518.0, 4608, 1.0, 456.0, 1152, 31.0, 549.0, 5120"},
    {Dataflow::OS, 16, "407, 0, 70.76167076167076, 100.0, 70.58823529411765",
     "1.0, 384.0, 4608, 1.0, 393.0, 4608, 71.0, 407.0, 1152"},
    {Dataflow::IS, 16, "1239, 0, 23.24455205811138, 90.0, 18.701298701298704",
     "1.0, 1194.0, 4608, 17.0, 1217.0, 4608, 31.0, 1239.0, 5120"},
};

/// The row of `report` for layer 0, without the id and the trailing comma.
std::string row_of(const std::string& report) {
  const std::size_t begin = report.find("\n0, ") + 4;
  return report.substr(begin, report.find(",\n", begin) - begin);
}

TEST(ScaleSimStrided, OfmapRuleAndOverhangingWindowMatchScaleSimDigitForDigit) {
  const auto g = workloads::load_scalesim_topology(kData + "strided.csv", {});
  const std::vector<Layer> layers = layers_from_graph(g);
  ASSERT_EQ(layers.size(), 1u);
  EXPECT_EQ(layers[0].m, 64);  // 8 x 8 ofmap pixels
  EXPECT_EQ(layers[0].k, 72);
  for (const StridedGolden& gold : kStrided) {
    const LayerReport r = simulate_layer(layers[0], array(gold.array, gold.array, gold.dataflow));
    EXPECT_EQ(row_of(compute_report({r})), gold.compute) << to_string(gold.dataflow) << gold.array;
    // The SRAM columns: the last window hangs over the ifmap edge, so its outside entries are null
    // requests and the ifmap stop cycle comes earlier (WS 8x8: 1532, not the 1539 of a full window).
    EXPECT_EQ(row_of(detailed_access_report({r})).substr(0, std::string(gold.sram).size()), gold.sram)
        << to_string(gold.dataflow) << gold.array;
  }
}

TEST(ScaleSimStrided, Stride2Conv112x112On8x8WsTakesTheCeilOfmap) {
  // 112,112,3,3,32,32,2 on tests/data/scalesim/calc_ws_8x8.cfg, SCALE-Sim v2 as above:
  // ofmap ceil(111 / 2) = 56 -> M = 3136, K = 288 -> 36 x 4 folds of 16 + 8 + 3136 - 2 = 3158 rows:
  // 144 * 3158 - 1 = 454751 (the floor form, 55 x 55, gives 144 * 3047 - 1 = 438767: 3.5 % less).
  const auto g = workloads::load_scalesim_topology(kData + "strided_112.csv", {});
  const LayerReport r = simulate_layer(layers_from_graph(g)[0], load_scalesim_config(kData + "calc_ws_8x8.cfg"));
  EXPECT_EQ(row_of(compute_report({r})), "454751, 0, 99.30357492341963, 100.0, 99.08372827804075");
  const std::string sram = "9.0, 454688.0, 3612672, 1.0, 451602.0, 9216, 15.0, 454751.0, 3612672,";
  EXPECT_EQ(row_of(detailed_access_report({r})).substr(0, sram.size()), sram);
  // `npusim run` keeps the standard rule for the same row: the graph's conv output is 55 x 55.
  const auto& out = g.tensor(g.ops()[0].outputs[0]).shape;
  EXPECT_EQ(out, (workloads::Shape{1, 32, 55, 55}));
}

}  // namespace
}  // namespace npusim::scalesim
