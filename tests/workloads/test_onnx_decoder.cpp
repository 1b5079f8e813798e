// ONNX decoder exports: --dim binds a symbolic dim by name, empty (zero-size) tensors are legal (a
// prefill with an empty KV cache), and ONNX Runtime's LLM contrib operators read as their primitive
// ops. MACs and vector ops computed by hand in each test.
#include "tests/workloads/decoder_models.h"
#include "tests/workloads/onnx_builder.h"

namespace npusim::workloads {
namespace {

using testing::cached_attention;
using testing::contains;
using testing::count_ops;
using testing::input_error;
using testing::OnnxBuilder;

OnnxBuilder with_contrib(std::int64_t opset = 17) {
  OnnxBuilder b(opset);
  auto* o = b.model.add_opset_import();
  o->set_domain("com.microsoft");
  o->set_version(1);
  return b;
}

::onnx::NodeProto& contrib(OnnxBuilder& b, const std::string& op, const std::vector<std::string>& in,
                           const std::vector<std::string>& out, const std::string& name) {
  auto& n = b.node(op, in, out, name);
  n.set_domain("com.microsoft");
  return n;
}

/// a [1, S, 16] x W [16, 32] and q [1, S, 8] x kt [1, 8, T]: the dims symbolic (seq, total) or fixed.
OnnxBuilder two_matmuls(const testing::Dim& seq, const testing::Dim& total) {
  OnnxBuilder b;
  b.input("a", {1, seq, 16}).input("q", {1, seq, 8}).input("kt", {1, 8, total}).weight("W", {16, 32});
  b.node("MatMul", {"a", "W"}, {"y"}, "proj");
  b.node("MatMul", {"q", "kt"}, {"s"}, "scores");
  b.output("y").output("s");
  return b;
}

TEST(OnnxDims, DimBindsANamedDimInEveryInputAndGivesTheStaticMacs) {
  // seq = 12, total = 10: 12 * 16 * 32 + 12 * 8 * 10 = 6144 + 960 = 7104 MACs, one flag per name
  // where --input-shape needed one per input.
  LoadOptions o;
  o.dims = {{"seq", 12}, {"total", 10}};
  const Graph dynamic = two_matmuls(std::string("seq"), std::string("total")).load(o);
  const Graph fixed = two_matmuls(std::int64_t{12}, std::int64_t{10}).load();
  EXPECT_EQ(graph_totals(dynamic, 1).macs, 7104u);
  EXPECT_EQ(graph_totals(dynamic, 1).macs, graph_totals(fixed, 1).macs);
}

TEST(OnnxDims, AnUnknownNameListsTheSymbolicDimsOfTheInputs) {
  LoadOptions o;
  o.dims = {{"past_len", 3}};
  EXPECT_TRUE(contains(input_error([&] { two_matmuls(std::string("seq"), std::string("total")).load(o); }),
                       "--dim past_len=3: expected the name of a symbolic dimension of the inputs of "));
  EXPECT_TRUE(contains(input_error([&] { two_matmuls(std::string("seq"), std::string("total")).load(o); }),
                       "('seq', 'total'), found 'past_len'"));
}

TEST(OnnxDims, SymbolicDimsLeftOpenSuggestDim) {
  EXPECT_TRUE(contains(input_error([&] { two_matmuls(std::string("seq"), std::string("total")).load(); }),
                       "fix them with --dim seq=<seq> --dim total=<total> (or --input-shape a=1,<seq>,16"));
}

TEST(OnnxEmptyTensors, APrefillWithAnEmptyCacheImports) {
  // past = 0: projections 3 * 4 * 16 * 16 = 3072, scores 2 heads * 4 * 4 * 8 = 256, context 256:
  // 3584 MACs, and no Concat (the cache holds nothing to copy). Was refused as "symbolic or unknown".
  const Graph empty = cached_attention(std::int64_t{0}).load();
  EXPECT_EQ(graph_totals(empty, 1).macs, 3584u);
  EXPECT_EQ(count_ops(empty, OpKind::Concat), 0);
  // The same through --dim past=0 and --input-shape; past = 5 attends over 9 positions:
  // 3072 + 2 * (2 * 4 * 9 * 8) = 4224 MACs, with both Concats.
  LoadOptions dim;
  dim.dims["past"] = 0;
  EXPECT_EQ(graph_totals(cached_attention(std::string("past")).load(dim), 1).macs, 3584u);
  LoadOptions shapes;
  shapes.input_shapes = {{"past_k", {1, 2, 0, 8}}, {"past_v", {1, 2, 0, 8}}};
  EXPECT_EQ(graph_totals(cached_attention(std::string("past")).load(shapes), 1).macs, 3584u);
  LoadOptions copy;
  copy.kv_cache_copy = true;
  const Graph five = cached_attention(std::int64_t{5}).load(copy);
  EXPECT_EQ(graph_totals(five, 1).macs, 4224u);
  EXPECT_EQ(count_ops(five, OpKind::Concat), 2);
}

TEST(OnnxKvCache, ConcatOfPastAndNewIntoPresentIsAnAppend) {
  // past 5 + 4 new rows: by default the two Concats go; the new K and V [1, 2, 4, 8] are stored
  // into the cache (persistent, written by their producers) and attention reads present [1, 2,
  // 9, 8] in place (a persistent input): the step writes 2 x 64 elements, not the 2 x 144 of the
  // whole cache. The MACs do not change (4224, as above).
  const Graph g = cached_attention(std::int64_t{5}).load();
  EXPECT_EQ(count_ops(g, OpKind::Concat), 0);
  EXPECT_EQ(graph_totals(g, 1).macs, 4224u);
  for (const char* name : {"present_k", "present_v"}) {
    const Tensor& present = g.tensor(g.find_tensor(name));
    EXPECT_TRUE(present.persistent) << name;
    EXPECT_EQ(present.producer, -1) << name;
    EXPECT_EQ(present.shape, (Shape{1, 2, 9, 8})) << name;
  }
  for (const char* name : {"k_h", "v_h"}) {
    const int t = g.find_tensor(name);
    ASSERT_GE(t, 0) << name;
    EXPECT_TRUE(g.tensor(t).persistent) << name;
    EXPECT_TRUE(g.is_output(t)) << name << ": stored although attention reads the cache";
    EXPECT_EQ(g.tensor(t).elements(), 64) << name;
  }
  EXPECT_EQ(g.find_tensor("past_k"), -1);  // read by nothing now
}

TEST(OnnxEmptyTensors, AMatMulWithKZeroCostsNothing) {
  // a [4, 0] x b [0, 8] = zeros [4, 8] (known at import), added to x: one add of 32 elements.
  OnnxBuilder b;
  b.input("x", {4, 8}).input("a", {4, 0}).input("b", {0, 8});
  b.node("MatMul", {"a", "b"}, {"z"}, "empty_mm");
  b.node("Add", {"x", "z"}, {"y"}, "add");
  b.output("y");
  const Graph g = b.load();
  EXPECT_EQ(graph_totals(g, 1).macs, 0u);
  EXPECT_EQ(g.ops().size(), 1u);
  EXPECT_EQ(graph_totals(g, 1).vector_ops, 32u);
}

TEST(OnnxEmptyTensors, AnEmptyParameterListIsNotData) {
  // Resize's roi is often an empty 1-D initializer: the Resize still computes its output,
  // x [1, 2, 4, 4] x2 = 128 elements.
  OnnxBuilder b(13);
  b.input("x", {1, 2, 4, 4}).weight("roi", {0}).weight("scales", {4}, {1, 1, 2, 2});
  b.node("Resize", {"x", "roi", "scales"}, {"y"}, "up");
  b.output("y");
  const Graph g = b.load();
  EXPECT_EQ(count_ops(g, OpKind::Resize), 1);
  EXPECT_EQ(graph_totals(g, 1).vector_ops, 128u);
}

TEST(OnnxContribDecoder, SimplifiedLayerNormalizationIsOneRmsNorm) {
  // x [1, 4, 16], scale [16]: 64 elements * 5 (square, sum, normalise, scale, statistics) = 320.
  for (const std::string domain : {"", "com.microsoft"}) {
    OnnxBuilder b = with_contrib();
    b.input("x", {1, 4, 16}).weight("g", {16});
    b.node("SimplifiedLayerNormalization", {"x", "g"}, {"y"}, "norm").set_domain(domain);
    b.output("y");
    const Graph g = b.load();
    ASSERT_EQ(g.ops().size(), 1u) << domain;
    EXPECT_EQ(g.ops()[0].kind, OpKind::RmsNorm);
    EXPECT_EQ(to_string(OpKind::RmsNorm), "rms_norm");
    EXPECT_EQ(graph_totals(g, 1).vector_ops, 320u);
    EXPECT_EQ(graph_totals(g, 1).params, 16u);
  }
}

TEST(OnnxContribDecoder, SkipSimplifiedLayerNormalizationAddsThenNormalises) {
  // input + skip (64) + bias (64), rms_norm 5 * 64 = 320: 448 vector ops; output 3 is the sum.
  OnnxBuilder b = with_contrib();
  b.input("x", {1, 4, 16}).input("skip", {1, 4, 16}).weight("g", {16}).weight("bias", {16});
  contrib(b, "SkipSimplifiedLayerNormalization", {"x", "skip", "g", "bias"}, {"y", "", "", "sum"}, "sln");
  b.node("Relu", {"sum"}, {"r"}, "reads_sum");
  b.output("y").output("r");
  const Graph g = b.load();
  EXPECT_EQ(count_ops(g, OpKind::RmsNorm), 1);
  EXPECT_EQ(count_ops(g, OpKind::Add), 2);
  EXPECT_EQ(graph_totals(g, 1).vector_ops, 448u + 64u);  // + the Relu reading the sum
  for (const Op& op : g.ops()) {
    if (op.kind != OpKind::Relu) {
      EXPECT_EQ(op.origin, "com.microsoft.SkipSimplifiedLayerNormalization 'sln'");
    }
  }
}

TEST(OnnxContribDecoder, RotaryEmbeddingIsTwoProductsAndASumPerElement) {
  // x [1, 3, 16] as 2 heads of 8, all 8 rotated; caches [32, 4]; position_ids [1, 3]:
  // two gathers of [1, 3, 4] = 24, two products of 48 = 96, one sum of 48: 168 vector ops, 0 MACs.
  OnnxBuilder b = with_contrib();
  b.input("x", {1, 3, 16}).input("pos", {1, 3}).weight("cos", {32, 4}).weight("sin", {32, 4});
  testing::set_int(contrib(b, "RotaryEmbedding", {"x", "pos", "cos", "sin"}, {"y"}, "rope"), "num_heads", 2);
  b.output("y");
  const Graph g = b.load();
  EXPECT_EQ(graph_totals(g, 1).macs, 0u);
  EXPECT_EQ(graph_totals(g, 1).vector_ops, 168u);
  EXPECT_EQ(g.tensor(g.find_tensor("y")).shape, (Shape{1, 3, 16}));
  EXPECT_EQ(count_ops(g, OpKind::Gather), 2);
  // Half of each head rotated (rotary_embedding_dim 4, caches [32, 2], interleaved pairs):
  // gathers 2 * 6, products 2 * 24, sum 24, the rotated and passed slices 24 + 24, concat 48 = 180.
  OnnxBuilder p = with_contrib();
  p.input("x", {1, 3, 16}).input("pos", {1, 3}).weight("cos", {32, 2}).weight("sin", {32, 2});
  auto& n = contrib(p, "RotaryEmbedding", {"x", "pos", "cos", "sin"}, {"y"}, "rope");
  testing::set_int(n, "num_heads", 2);
  testing::set_int(n, "rotary_embedding_dim", 4);
  testing::set_int(n, "interleaved", 1);
  p.output("y");
  EXPECT_EQ(graph_totals(p.load(), 1).vector_ops, 180u);
}

TEST(OnnxContribDecoder, MultiHeadAttentionWithAPastCache) {
  // q, k, v [1, 3, 8] as 2 heads of 4; past [1, 2, 2, 4]: T = 5. Scores 2 * 3 * 5 * 4 = 120 MACs,
  // context 120: 240. present_key [1, 2, 5, 4].
  OnnxBuilder b = with_contrib();
  b.input("q", {1, 3, 8}).input("k", {1, 3, 8}).input("v", {1, 3, 8});
  b.input("pk", {1, 2, 2, 4}).input("pv", {1, 2, 2, 4});
  testing::set_int(
      contrib(b, "MultiHeadAttention", {"q", "k", "v", "", "", "", "pk", "pv"}, {"y", "present_k", "present_v"}, "mha"),
      "num_heads", 2);
  b.output("y").output("present_k").output("present_v");
  const Graph g = b.load();
  EXPECT_EQ(graph_totals(g, 1).macs, 240u);
  EXPECT_EQ(g.tensor(g.find_tensor("y")).shape, (Shape{1, 3, 8}));
  EXPECT_EQ(g.tensor(g.find_tensor("present_k")).shape, (Shape{1, 2, 5, 4}));
  for (const Op& op : g.ops()) EXPECT_EQ(op.origin, "com.microsoft.MultiHeadAttention 'mha'");
}

/// GroupQueryAttention with 4 query heads on 2 KV heads of 8 dims, 3 new tokens, `past` cached.
OnnxBuilder gqa(std::int64_t past, bool packed, bool rotary) {
  OnnxBuilder b = with_contrib();
  b.input("seqlens_k", {1}).input("total", {1});
  b.input("pk", {1, 2, past, 8}).input("pv", {1, 2, past, 8});
  std::vector<std::string> in = {"qkv", "", "", "pk", "pv", "seqlens_k", "total"};
  if (packed) {
    b.input("qkv", {1, 3, 64});  // (4 + 2 + 2) heads x 8
  } else {
    b.input("q", {1, 3, 32}).input("k", {1, 3, 16}).input("v", {1, 3, 16});
    in[0] = "q", in[1] = "k", in[2] = "v";
  }
  if (rotary) {
    b.weight("cos", {64, 4}).weight("sin", {64, 4});
    in.push_back("cos");
    in.push_back("sin");
  }
  auto& n = contrib(b, "GroupQueryAttention", in, {"y", "present_k", "present_v"}, "gqa");
  testing::set_int(n, "num_heads", 4);
  testing::set_int(n, "kv_num_heads", 2);
  if (rotary) testing::set_int(n, "do_rotary", 1);
  b.output("y").output("present_k").output("present_v");
  return b;
}

TEST(OnnxContribDecoder, GroupQueryAttentionReadsEachKvHeadOnce) {
  // past 5 + 3 new = T 8: scores 4 heads * 3 * 8 * 8 = 768 MACs, context 768: 1536. The score
  // matmul reads K [1, 2, 8, 8] once (the two query heads of a KV head on its rows: [1, 2, 6, 8]).
  const Graph g = gqa(5, false, false).load();
  EXPECT_EQ(graph_totals(g, 1).macs, 1536u);
  EXPECT_EQ(g.tensor(g.find_tensor("present_k")).shape, (Shape{1, 2, 8, 8}));
  EXPECT_EQ(g.tensor(g.find_tensor("y")).shape, (Shape{1, 3, 32}));
  int score_matmuls = 0;
  for (const Op& op : g.ops()) {
    EXPECT_EQ(op.origin, "com.microsoft.GroupQueryAttention 'gqa'");
    if (op.kind == OpKind::MatMul && op.attrs.transpose_b) {
      ++score_matmuls;
      EXPECT_EQ(g.tensor(op.inputs[0]).shape, (Shape{1, 2, 6, 8}));
      EXPECT_EQ(g.tensor(op.inputs[1]).shape, (Shape{1, 2, 8, 8}));
    }
  }
  EXPECT_EQ(score_matmuls, 1);
  // Packed QKV: the same MACs (three slices of the packed input instead of three inputs).
  EXPECT_EQ(graph_totals(gqa(5, true, false).load(), 1).macs, 1536u);
}

TEST(OnnxContribDecoder, GroupQueryAttentionPrefillWithAnEmptyCacheAndRotary) {
  // past 0: T = 3, 2 * 4 * 3 * 3 * 8 = 576 MACs and no Concat. do_rotary on q [1, 3, 4, 8] and
  // k [1, 3, 2, 8]: cos and sin rows [1, 3, 4] sliced from the caches (no position_ids): 2 * 12,
  // then 3 ops per element of q (96) and k (48): 24 + 288 + 144 = 456 vector ops for RoPE.
  const Graph plain = gqa(0, false, false).load();
  const Graph rope = gqa(0, false, true).load();
  EXPECT_EQ(graph_totals(plain, 1).macs, 576u);
  EXPECT_EQ(graph_totals(rope, 1).macs, 576u);
  EXPECT_EQ(count_ops(plain, OpKind::Concat), 0);
  EXPECT_EQ(graph_totals(rope, 1).vector_ops - graph_totals(plain, 1).vector_ops, 456u);
}

TEST(OnnxContribDecoder, GroupQueryAttentionNamesBadHeadCounts) {
  OnnxBuilder b = gqa(5, false, false);
  for (auto& a : *b.model.mutable_graph()->mutable_node(0)->mutable_attribute())
    if (a.name() == "kv_num_heads") a.set_i(3);
  EXPECT_TRUE(contains(input_error([&] { b.load(); }),
                       "(node 'gqa' GroupQueryAttention): expected num_heads a multiple of kv_num_heads (both >= 1), "
                       "found 4 and 3"));
}

}  // namespace
}  // namespace npusim::workloads

namespace npusim::workloads {
namespace {

/// MatMulNBits: A [1, 3, 64] x a 4-bit weight of K 64, N 32 in blocks of 32 (k_blocks 2, blob 16
/// bytes), fp16 scales, optional packed uint8 zero points and a float bias.
testing::OnnxBuilder nbits(bool zero_points, bool bias, std::vector<std::int64_t> b_dims = {32, 2, 16},
                           std::int64_t block = 32) {
  testing::OnnxBuilder b = with_contrib();
  b.input("a", {1, 3, 64});
  b.typed_weight("B", b_dims, ::onnx::TensorProto::UINT8).typed_weight("scales", {64}, ::onnx::TensorProto::FLOAT16);
  std::vector<std::string> in = {"a", "B", "scales"};
  if (zero_points || bias) {
    b.typed_weight("zp", {32}, ::onnx::TensorProto::UINT8);  // 32 rows x ceil(2 blocks x 4 bits / 8) = 1 byte
    in.push_back(zero_points ? "zp" : "");
  }
  if (bias) {
    b.weight("bias", {32});
    in.push_back("");  // g_idx
    in.push_back("bias");
  }
  auto& n = contrib(b, "MatMulNBits", in, {"y"}, "q4");
  testing::set_int(n, "K", 64);
  testing::set_int(n, "N", 32);
  testing::set_int(n, "bits", 4);
  testing::set_int(n, "block_size", block);
  b.output("y");
  return b;
}

TEST(OnnxContribDecoder, MatMulNBitsIsOneMatmulOnAPackedWeight) {
  // 3 x 64 x 32 = 6144 MACs. The weight [64, 32] = 2048 codes of 4 bits = 8192 bits, plus
  // 2048 / 32 = 64 blocks x (16-bit scale + 4-bit zero point) = 1280 bits: 9472 bits = 1184 B
  // (the packed B's 1024 B + 128 B of scales + 32 B of zero points, as the file stores them).
  const Graph g = nbits(true, false).load();
  EXPECT_EQ(graph_totals(g, 1).macs, 6144u);
  EXPECT_EQ(count_ops(g, OpKind::MatMul), 1);
  const Op& mm = g.op(0);
  const Tensor& w = g.tensor(mm.inputs[1]);
  EXPECT_EQ(w.shape, (Shape{64, 32}));
  EXPECT_TRUE(w.is_constant);
  EXPECT_EQ(tensor_bytes(g, mm.inputs[1], 2), 1184u);
  EXPECT_EQ(g.tensor(g.find_tensor("y")).shape, (Shape{1, 3, 32}));
  EXPECT_EQ(mm.origin, "com.microsoft.MatMulNBits 'q4'");
  // Symmetric (no zero points): 8192 + 64 x 16 = 9216 bits = 1152 B.
  const Graph sym = nbits(false, false).load();
  EXPECT_EQ(tensor_bytes(sym, sym.op(0).inputs[1], 2), 1152u);
  // With a bias: the matmul's third input, added to each of the 3 x 32 outputs (96 vector ops).
  const Graph biased = nbits(true, true).load();
  EXPECT_EQ(biased.ops().size(), 1u);
  EXPECT_EQ(biased.op(0).inputs.size(), 3u);
  EXPECT_EQ(graph_totals(biased, 1).macs, 6144u);
  EXPECT_EQ(graph_totals(biased, 1).vector_ops, 96u);
}

TEST(OnnxContribDecoder, MatMulNBitsRefusesAWeightThatDoesNotMatchItsAttributes) {
  EXPECT_TRUE(
      contains(input_error([] {
                 nbits(true, false, {32, 2, 32}).load();
               }),
               "expected input B [N, ceil(K / block_size), block_size * bits / 8] = [32, 2, 16], found [32, 2, 32]"));
  EXPECT_TRUE(contains(input_error([] {
                         nbits(true, false, {32, 2, 16}, 24).load();
                       }),
                       "expected attribute block_size a power of two from 16 to 65536, found 24"));
  testing::OnnxBuilder wrong_k = nbits(false, false);
  for (auto& attr : *wrong_k.model.mutable_graph()->mutable_node(0)->mutable_attribute())
    if (attr.name() == "K") attr.set_i(48);
  EXPECT_TRUE(
      contains(input_error([&] { wrong_k.load(); }), "expected input A [..., 48] (the last dim K), found [1, 3, 64]"));
}

}  // namespace
}  // namespace npusim::workloads
