#pragma once
// Small ONNX decoder steps shared by the importer's tests (tests/workloads/) and the Python
// module's (tests/python/write_decoder_onnx.cpp writes one for pytest).
#include "tests/workloads/onnx_builder.h"

namespace npusim::workloads::testing {

/// Decomposed attention as torch exports a decoder step: x [1, 4, 16] projected to Q, K, V (2 heads
/// of 8), K and V appended to the caches past_k / past_v [1, 2, past, 8] (Concat), scores, softmax,
/// context.
inline OnnxBuilder cached_attention(const Dim& past) {
  OnnxBuilder b;
  b.input("x", {1, 4, 16}).input("past_k", {1, 2, past, 8}).input("past_v", {1, 2, past, 8});
  b.weight("Wq", {16, 16}).weight("Wk", {16, 16}).weight("Wv", {16, 16}).ints("heads", {1, 4, 2, 8});
  for (const char* p : {"q", "k", "v"}) {
    const std::string s(p);
    b.node("MatMul", {"x", "W" + s}, {s + "_proj"}, s + "_proj");
    b.node("Reshape", {s + "_proj", "heads"}, {s + "_4d"}, s + "_4d");
    set_ints(b.node("Transpose", {s + "_4d"}, {s + "_h"}, s + "_h"), "perm", {0, 2, 1, 3});
  }
  set_int(b.node("Concat", {"past_k", "k_h"}, {"present_k"}, "append_k"), "axis", 2);
  set_int(b.node("Concat", {"past_v", "v_h"}, {"present_v"}, "append_v"), "axis", 2);
  set_ints(b.node("Transpose", {"present_k"}, {"kt"}, "kt"), "perm", {0, 1, 3, 2});
  b.node("MatMul", {"q_h", "kt"}, {"scores"}, "scores");
  set_int(b.node("Softmax", {"scores"}, {"probs"}, "softmax"), "axis", -1);
  b.node("MatMul", {"probs", "present_v"}, {"ctx"}, "ctx");
  b.output("ctx").output("present_k").output("present_v");
  return b;
}

/// A projection x [1, 3, 32] x W [32, 64] (packed QKV) and com.microsoft GroupQueryAttention
/// (4 query heads on 2 KV heads of 8) over the caches past_k / past_v [1, 2, past, 8], `past`
/// symbolic.
inline OnnxBuilder grouped_query_attention() {
  OnnxBuilder b;
  auto* o = b.model.add_opset_import();
  o->set_domain("com.microsoft");
  o->set_version(1);
  b.input("x", {1, 3, 32}).input("seqlens_k", {1}).input("total", {1});
  b.input("pk", {1, 2, std::string("past"), 8}).input("pv", {1, 2, std::string("past"), 8});
  b.weight("W", {32, 64});
  b.node("MatMul", {"x", "W"}, {"qkv"}, "proj");
  auto& n = b.node("GroupQueryAttention", {"qkv", "", "", "pk", "pv", "seqlens_k", "total"},
                   {"y", "present_k", "present_v"}, "gqa");
  n.set_domain("com.microsoft");
  set_int(n, "num_heads", 4);
  set_int(n, "kv_num_heads", 2);
  b.output("y").output("present_k").output("present_v");
  return b;
}

/// How a GQA export repeats each KV head for its query heads (transformers' repeat_kv and the
/// equivalent forms): the cache [1, 2, T, 32] unsqueezed to [1, 2, 1, T, 32], copied 2x along the new
/// axis, merged into [1, 4, T, 32].
enum class KvRepeat { Expand, Tile, Concat };

/// A Llama-style decode step with grouped-query attention as torch exports it: x [1, 1, 64]
/// projected to Q (4 heads of 32) and K, V (2 KV heads of 32), K and V appended to the caches
/// past_k / past_v [1, 2, past, 32], each cache repeated to the 4 query heads (`repeat`), scores
/// Q x K^T / sqrt(32), softmax, context, output projection [128, 64].
inline OnnxBuilder repeat_kv_decode_step(std::int64_t past, KvRepeat repeat = KvRepeat::Expand) {
  OnnxBuilder b;
  const std::int64_t T = past + 1;
  b.input("x", {1, 1, 64}).input("past_k", {1, 2, past, 32}).input("past_v", {1, 2, past, 32});
  b.weight("Wq", {64, 128}).weight("Wk", {64, 64}).weight("Wv", {64, 64}).weight("Wo", {64 * 2, 64});
  b.ints("q_heads", {1, 1, 4, 32}).ints("kv_heads", {1, 1, 2, 32}).ints("axis2", {2});
  b.ints("expanded", {1, 2, 2, T, 32}).ints("repeats", {1, 1, 2, 1, 1}).ints("merged", {1, 4, T, 32});
  b.ints("hidden", {1, 1, 128}).scalar("sqrt_hd", 5.656854f);
  for (const char* p : {"q", "k", "v"}) {
    const std::string s(p);
    b.node("MatMul", {"x", "W" + s}, {s + "_proj"}, s + "_proj");
    b.node("Reshape", {s + "_proj", s == "q" ? "q_heads" : "kv_heads"}, {s + "_4d"}, s + "_4d");
    set_ints(b.node("Transpose", {s + "_4d"}, {s + "_h"}, s + "_h"), "perm", {0, 2, 1, 3});
  }
  for (const char* p : {"k", "v"}) {
    const std::string s(p);
    set_int(b.node("Concat", {"past_" + s, s + "_h"}, {"present_" + s}, "append_" + s), "axis", 2);
    b.node("Unsqueeze", {"present_" + s, "axis2"}, {s + "_5d"}, s + "_5d");
    const std::string copies = s + "_copies";
    if (repeat == KvRepeat::Expand) b.node("Expand", {s + "_5d", "expanded"}, {copies}, copies);
    if (repeat == KvRepeat::Tile) b.node("Tile", {s + "_5d", "repeats"}, {copies}, copies);
    if (repeat == KvRepeat::Concat) set_int(b.node("Concat", {s + "_5d", s + "_5d"}, {copies}, copies), "axis", 2);
    b.node("Reshape", {copies, "merged"}, {s + "_rep"}, s + "_rep");
  }
  set_ints(b.node("Transpose", {"k_rep"}, {"kt"}, "kt"), "perm", {0, 1, 3, 2});
  b.node("MatMul", {"q_h", "kt"}, {"qk"}, "scores");
  b.node("Div", {"qk", "sqrt_hd"}, {"scores"}, "scale");
  set_int(b.node("Softmax", {"scores"}, {"probs"}, "softmax"), "axis", -1);
  b.node("MatMul", {"probs", "v_rep"}, {"ctx"}, "context");
  set_ints(b.node("Transpose", {"ctx"}, {"ctx_t"}, "ctx_t"), "perm", {0, 2, 1, 3});
  b.node("Reshape", {"ctx_t", "hidden"}, {"ctx_rows"}, "ctx_rows");
  b.node("MatMul", {"ctx_rows", "Wo"}, {"y"}, "o_proj");
  b.output("y").output("present_k").output("present_v");
  return b;
}

}  // namespace npusim::workloads::testing
