// Grouped-query attention as torch exports it (transformers' repeat_kv): the KV cache repeated per
// query head by Expand / Tile / Concat + Reshape is read once per KV head by grouped MatMuls, not
// copied; anything not provably such a repeat stays a copy. Bytes at 1 B per element (int8).
#include "tests/workloads/decoder_models.h"
#include "tests/workloads/onnx_builder.h"
#include "workloads/repeat_kv.h"

namespace npusim::workloads {
namespace {

using testing::count_ops;
using testing::KvRepeat;
using testing::OnnxBuilder;
using testing::repeat_kv_decode_step;
using testing::set_ints;

/// Bytes the ops write, each result stored once (as --fusion none stores them); views write nothing.
std::uint64_t written_bytes(const Graph& g) {
  std::uint64_t b = 0;
  for (const auto& op : g.ops())
    if (op_class(op.kind) != OpClass::View) b += op_cost(g, op, 1).output_bytes;
  return b;
}

// 4 query heads on 2 KV heads of 32, past 15 + 1 new token: T = 16, n_rep = 2.
// MACs: projections q 64 x 128 + k, v 2 x 64 x 64 + o 128 x 64 = 24576, scores 4 x 1 x 16 x 32 =
// 2048, context 2048: 28672, whether the cache is copied per query head or not.
constexpr std::uint64_t kStepMacs = 28672;

TEST(OnnxRepeatKv, ExpandAndReshapeOfTheCacheIsReadOncePerKvHead) {
  const Graph g = repeat_kv_decode_step(15).load();
  EXPECT_EQ(graph_totals(g, 1).macs, kStepMacs);
  EXPECT_EQ(count_ops(g, OpKind::Expand), 0);
  EXPECT_EQ(count_ops(g, OpKind::Transpose), 0);  // K^T is the MatMul's transpose_b: K as the cache stores it
  const Op& scores = g.op(g.find_op("scores"));
  EXPECT_TRUE(scores.attrs.transpose_b);
  // q [1, 4, 1, 32] as [1, kv heads 2, n_rep x S = 2, 32]: a view, the query heads of a group are rows.
  EXPECT_EQ(g.tensor(scores.inputs[0]).shape, (Shape{1, 2, 2, 32}));
  EXPECT_EQ(g.tensor(scores.inputs[1]).name, "present_k");
  // Each KV head read once: q 128 B + K 2 x 16 x 32 = 1024 B (the repeated copy is 2048 B).
  EXPECT_EQ(op_cost(g, scores, 1).input_bytes, 128u + 1024u);
  EXPECT_EQ(op_cost(g, scores, 1).macs, 2048u);
  const Op& context = g.op(g.find_op("context"));
  EXPECT_FALSE(context.attrs.transpose_b);
  EXPECT_EQ(g.tensor(context.inputs[1]).name, "present_v");
  EXPECT_EQ(op_cost(g, context, 1).input_bytes, 64u + 1024u);  // probs [1, 4, 1, 16] + V
  EXPECT_EQ(op_cost(g, context, 1).macs, 2048u);
  // The heads' layout after attention is unchanged: ctx [1, 4, 1, 32], scores [1, 4, 1, 16].
  EXPECT_EQ(g.tensor(g.find_tensor("ctx")).shape, (Shape{1, 4, 1, 32}));
  EXPECT_EQ(g.tensor(g.find_tensor("qk")).shape, (Shape{1, 4, 1, 16}));
  // Writes: q 128 + the new token's K and V 2 x (2 heads x 32) + scores, scaled, probs 3 x 64 +
  // ctx 128 + y 64 = 640 B. The copy adds 2048 B per Expand and 2048 B for K^T's transpose: 6784 B.
  EXPECT_EQ(written_bytes(g), 640u);
  for (const char* name : {"k_h", "v_h"}) EXPECT_TRUE(g.tensor(g.find_tensor(name)).persistent) << name;
}

TEST(OnnxRepeatKv, TileAndConcatOfTheUnsqueezedCacheAreTheSameRepeat) {
  for (KvRepeat form : {KvRepeat::Tile, KvRepeat::Concat}) {
    const Graph g = repeat_kv_decode_step(15, form).load();
    EXPECT_EQ(graph_totals(g, 1).macs, kStepMacs);
    EXPECT_EQ(count_ops(g, OpKind::Tile) + count_ops(g, OpKind::Concat) + count_ops(g, OpKind::Transpose), 0);
    EXPECT_EQ(written_bytes(g), 640u);
    EXPECT_EQ(g.tensor(g.op(g.find_op("context")).inputs[1]).name, "present_v");
  }
}

TEST(OnnxRepeatKv, ARepeatAlsoReadOutsideTheMatMulsStaysACopy) {
  // The repeated K is also a graph output: its copy must exist, so both K ops stay (Expand 2048 B,
  // Transpose 2048 B); V's repeat is still shared. Same MACs: 640 + 4096 B written.
  OnnxBuilder b = repeat_kv_decode_step(15);
  b.output("k_rep");
  const Graph g = b.load();
  EXPECT_EQ(graph_totals(g, 1).macs, kStepMacs);
  EXPECT_EQ(count_ops(g, OpKind::Expand), 1);
  EXPECT_EQ(count_ops(g, OpKind::Transpose), 1);
  EXPECT_EQ(written_bytes(g), 640u + 4096u);
  EXPECT_EQ(g.tensor(g.op(g.find_op("context")).inputs[1]).name, "present_v");
}

/// x [1, 2, 8, 4] (after a Relu: an activation) unsqueezed at axis 2, expanded 3x, reshaped to
/// `merged` = [1, a, b, 4], then read by `reader` (a MatMul: q [1, a, 5, 4] x the reshape's K^T).
OnnxBuilder expand_then(const std::vector<std::int64_t>& merged, const std::string& reader) {
  OnnxBuilder b;
  b.input("x", {1, 2, 8, 4}).input("q", {1, merged[1], 5, 4});
  b.ints("axis2", {2}).ints("expanded", {1, 2, 3, 8, 4}).ints("merged", merged);
  b.node("Relu", {"x"}, {"kx"}, "act");
  b.node("Unsqueeze", {"kx", "axis2"}, {"k5"}, "k5");
  b.node("Expand", {"k5", "expanded"}, {"copies"}, "copies");
  b.node("Reshape", {"copies", "merged"}, {"rep"}, "rep");
  if (reader == "MatMul") {
    set_ints(b.node("Transpose", {"rep"}, {"kt"}, "kt"), "perm", {0, 1, 3, 2});
    b.node("MatMul", {"q", "kt"}, {"y"}, "scores");
  } else {
    b.node(reader, {"rep"}, {"y"}, "reader");
  }
  b.output("y");
  return b;
}

TEST(OnnxRepeatKv, OnlyAProvableRepeatReadByMatMulsIsShared) {
  // The positive case: scores 6 x 5 x 8 x 4 = 960 MACs, K read once per KV head (2 x 8 x 4 = 64 B).
  const Graph shared = expand_then({1, 6, 8, 4}, "MatMul").load();
  EXPECT_EQ(count_ops(shared, OpKind::Expand), 0);
  EXPECT_EQ(graph_totals(shared, 1).macs, 960u);
  const Op& scores = shared.op(shared.find_op("scores"));
  EXPECT_EQ(shared.tensor(scores.inputs[1]).name, "kx");
  EXPECT_EQ(op_cost(shared, scores, 1).input_bytes, 120u + 64u);
  EXPECT_EQ(shared.tensor(shared.find_tensor("y")).shape, (Shape{1, 6, 5, 8}));
  // A reader that is no MatMul (Relu over the 192 copied elements): the Expand stays a copy.
  const Graph relu = expand_then({1, 6, 8, 4}, "Relu").load();
  EXPECT_EQ(count_ops(relu, OpKind::Expand), 1);
  EXPECT_EQ(graph_totals(relu, 1).vector_ops, 64u + 192u + 192u);  // act, the copy, the reader
  // A Reshape merging the repeated axis with the rows after it ([1, 2, 24, 4]: each KV head's 8
  // rows 3 times over) is no head repeat, even read by a MatMul: 2 x 5 x 24 x 4 = 960 MACs on a copy.
  const Graph rows = expand_then({1, 2, 24, 4}, "MatMul").load();
  EXPECT_EQ(count_ops(rows, OpKind::Expand), 1);
  EXPECT_EQ(graph_totals(rows, 1).macs, 960u);
  RepeatKvCounts counts;
  EXPECT_EQ(count_ops(share_repeated_kv(rows, "rows", &counts), OpKind::Expand), 1);
  EXPECT_EQ(counts.repeats, 0);
}

/// k [1, 1, 8, `cols`] (after a Relu) expanded to [1, 3, 8, 4] and read as K^T by q [1, 3, 5, 4].
OnnxBuilder multi_query(std::int64_t cols) {
  OnnxBuilder b;
  b.input("x", {1, 1, 8, cols}).input("q", {1, 3, 5, 4}).ints("heads", {1, 3, 8, 4});
  b.node("Relu", {"x"}, {"k"}, "act");
  b.node("Expand", {"k", "heads"}, {"copies"}, "copies");
  set_ints(b.node("Transpose", {"copies"}, {"kt"}, "kt"), "perm", {0, 1, 3, 2});
  b.node("MatMul", {"q", "kt"}, {"y"}, "scores");
  b.output("y");
  return b;
}

TEST(OnnxRepeatKv, OneKvHeadExpandedToEveryQueryHeadIsReadOnce) {
  // Multi-query attention: the one KV head's axis is the heads axis itself, no Reshape. q [1, 3,
  // 5, 4] as [1, 1, 15, 4] against k [1, 1, 8, 4]: 3 x 5 x 8 x 4 = 480 MACs, k read once (32 B).
  const Graph g = multi_query(4).load();
  EXPECT_EQ(count_ops(g, OpKind::Expand) + count_ops(g, OpKind::Transpose), 0);
  const Op& scores = g.op(g.find_op("scores"));
  EXPECT_EQ(g.tensor(scores.inputs[0]).shape, (Shape{1, 1, 15, 4}));
  EXPECT_EQ(g.tensor(scores.inputs[1]).name, "k");
  EXPECT_EQ(op_cost(g, scores, 1).input_bytes, 60u + 32u);
  EXPECT_EQ(graph_totals(g, 1).macs, 480u);
  EXPECT_EQ(g.tensor(g.find_tensor("y")).shape, (Shape{1, 3, 5, 8}));
  // Two axes enlarged ([1, 1, 8, 1] -> [1, 3, 8, 4]) is a broadcast, not a repeat of one axis:
  // the Expand (96 elements) and the transpose (96) stay.
  const Graph two = multi_query(1).load();
  EXPECT_EQ(count_ops(two, OpKind::Expand), 1);
  EXPECT_EQ(graph_totals(two, 1).macs, 480u);
  EXPECT_EQ(graph_totals(two, 1).vector_ops, 8u + 96u + 96u);
}

}  // namespace
}  // namespace npusim::workloads
