// SCALE-Sim topology CSVs as npusim graphs: both formats, SCALE-Sim's row quirks (trailing
// commas, "#dw" remarks, an optional column stride) and its depthwise rule. Files are in
// tests/data/scalesim/; the arithmetic of each expected value is in the comment beside it.
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <gtest/gtest.h>

#include "sim/core/errors.h"
#include "workloads/loader.h"
#include "tests/support/test_paths.h"
#include "tests/support/scratch.h"

namespace npusim::workloads {
namespace {

const std::string kData = std::string(test_paths::data_dir()) + "/scalesim/";

const Op& op_named(const Graph& g, const std::string& name) {
  const int i = g.find_op(name);
  EXPECT_GE(i, 0) << name;
  return g.op(i);
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto p = test::scratch_path("npusim_topo", name);
  std::ofstream(p) << text;
  return p.string();
}

std::string error_of(const std::string& path) {
  try {
    load_scalesim_topology(path, {});
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ScaleSimTopology, ConvRowsBecomeUnpaddedConvolutions) {
  const Graph g = load_scalesim_topology(kData + "conv.csv", {});
  EXPECT_EQ(g.name, "conv");
  ASSERT_EQ(g.ops().size(), 5u);
  // Conv1: 9x9, 3x3, 3 -> 4 channels, stride 2: (9 - 3) / 2 + 1 = 4 -> output [1, 4, 4, 4];
  // as a GEMM M = 16 pixels, K = 3*3*3 = 27, N = 4.
  const Op& c1 = op_named(g, "Conv1");
  EXPECT_EQ(c1.kind, OpKind::Conv2d);
  EXPECT_EQ(g.tensor(c1.outputs[0]).shape, (Shape{1, 4, 4, 4}));
  const GemmView v1 = gemm_view(g, c1);
  EXPECT_EQ(v1.m, 16);
  EXPECT_EQ(v1.k, 27);
  EXPECT_EQ(v1.n, 4);
  EXPECT_EQ(c1.source_line, 3);  // the blank line 2 is skipped but counted
  // Conv2_dw has no "DP" in its name: SCALE-Sim runs it as a plain 1-channel conv; "#dw" after
  // the trailing comma is a remark.
  const Op& c2 = op_named(g, "Conv2_dw");
  EXPECT_EQ(c2.attrs.groups, 1);
  EXPECT_EQ(g.tensor(c2.outputs[0]).shape, (Shape{1, 1, 3, 3}));
  // The optional ninth column is the column stride: 6x8, filter 1x2, strides 1 and 2 ->
  // (6 - 1) / 1 + 1 = 6 rows, (8 - 2) / 2 + 1 = 4 columns.
  const Op& c4 = op_named(g, "Conv4");
  EXPECT_EQ(c4.attrs.stride[0], 1);
  EXPECT_EQ(c4.attrs.stride[1], 2);
  EXPECT_EQ(g.tensor(c4.outputs[0]).shape, (Shape{1, 5, 6, 4}));
  // FC has no trailing comma: its last value (stride 1) is kept, not dropped.
  const Op& fc = op_named(g, "FC");
  EXPECT_EQ(fc.attrs.stride[0], 1);
  EXPECT_EQ(gemm_view(g, fc).k, 16);
  // MACs: 16*27*4 + 9*9*1 + 4 groups * 16*9*1 + 24*8*5 + 1*16*10 = 1728 + 81 + 576 + 960 + 160
  EXPECT_EQ(graph_totals(g, 1).macs, 3505u);
}

TEST(ScaleSimTopology, DpInTheNameMakesADepthwiseConvolution) {
  const Graph g = load_scalesim_topology(kData + "conv.csv", {});
  // Conv3DP: 4 channels, Num Filter 1: SCALE-Sim runs 4 one-channel layers, i.e. a depthwise
  // conv with 4 groups of K = 3*3*1 = 9, N = 1, M = 4*4 = 16 each.
  const Op& dw = op_named(g, "Conv3DP");
  EXPECT_EQ(dw.attrs.groups, 4);
  EXPECT_EQ(dw.attrs.out_channels, 4);
  EXPECT_EQ(g.tensor(dw.inputs[1]).shape, (Shape{4, 1, 3, 3}));
  const GemmView v = gemm_view(g, dw);
  EXPECT_EQ(v.groups, 4);
  EXPECT_EQ(v.m, 16);
  EXPECT_EQ(v.k, 9);
  EXPECT_EQ(v.n, 1);
  // The rule is SCALE-Sim's: a case-sensitive "DP" anywhere in the name.
  const Graph lower = load_scalesim_topology(
      write_temp("dp.csv", "Layer name, H, W, FH, FW, C, F, S,\nconv_dp, 6, 6, 3, 3, 4, 1, 1,\n"), {});
  EXPECT_EQ(lower.op(0).attrs.groups, 1);
}

TEST(ScaleSimTopology, GemmRowsBecomeMatmuls) {
  const Graph g = load_scalesim_topology(kData + "gemm.csv", {});
  ASSERT_EQ(g.ops().size(), 2u);
  // "Layer, M, N, K": QKV is [16 x 32] * [32 x 48].
  const Op& qkv = op_named(g, "QKV");
  EXPECT_EQ(qkv.kind, OpKind::MatMul);
  EXPECT_EQ(g.tensor(qkv.inputs[0]).shape, (Shape{16, 32}));
  EXPECT_EQ(g.tensor(qkv.inputs[1]).shape, (Shape{32, 48}));
  EXPECT_TRUE(g.tensor(qkv.inputs[1]).is_constant);
  const GemmView v = gemm_view(g, qkv);
  EXPECT_EQ(v.m, 16);
  EXPECT_EQ(v.k, 32);
  EXPECT_EQ(v.n, 48);
  // 16*32*48 + 16*32*32 = 24576 + 16384
  EXPECT_EQ(graph_totals(g, 1).macs, 40960u);
}

TEST(ScaleSimTopology, RepeatedLayerNamesStayDistinct) {
  const Graph g = load_scalesim_topology(write_temp("dup.csv", "Layer, M, N, K,\nfc, 2, 2, 2,\nfc, 3, 3, 3,\n"), {});
  ASSERT_EQ(g.ops().size(), 2u);
  EXPECT_EQ(g.op(1).name, "fc_2");
}

TEST(ScaleSimTopology, BadRowsNameFileLineAndField) {
  const std::string bad = error_of(kData + "bad_field.csv");
  EXPECT_NE(bad.find("bad_field.csv:2"), std::string::npos) << bad;
  EXPECT_NE(bad.find("IFMAP Width"), std::string::npos) << bad;
  EXPECT_NE(bad.find("'nine'"), std::string::npos) << bad;
  const std::string short_row = error_of(write_temp("short.csv", "Layer, M, N, K,\nfc, 2, 2,\n"));
  EXPECT_NE(short_row.find(":2 (layer 'fc', field 'K')"), std::string::npos) << short_row;
  const std::string big_filter =
      error_of(write_temp("filter.csv", "Layer name, H, W, FH, FW, C, F, S,\nc, 2, 2, 3, 3, 1, 1, 1,\n"));
  EXPECT_NE(big_filter.find("Filter Height"), std::string::npos) << big_filter;
  const std::string zero = error_of(write_temp("zero.csv", "Layer, M, N, K,\nfc, 0, 2, 2,\n"));
  EXPECT_NE(zero.find("an integer from 1 to 2147483647, found '0'"), std::string::npos) << zero;
  const std::string header = error_of(write_temp("header.csv", "Layer, M, N,\nfc, 1, 2,\n"));
  EXPECT_NE(header.find("found 3 columns"), std::string::npos) << header;
}

}  // namespace
}  // namespace npusim::workloads
