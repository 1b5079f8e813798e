// ONNX Runtime's operators of LLM decoder exports (its transformer optimizer and the
// onnxruntime-genai builder write them): RMSNorm, rotary embeddings and the attention kernels
// with a KV cache, read as the primitive ops they compute. Every op a com.microsoft node gives
// records it in Op::origin (as map_contrib.cpp's), so `--fusion as-is` keeps ORT's grouping.
// Input, output and attribute names follow ORT's ContribOperators.md.
#include <memory>

#include "sim/core/errors.h"
#include "workloads/graph_internal.h"
#include "workloads/onnx/importer.h"

namespace npusim::workloads::onnx {
namespace {

using Ints = std::vector<std::int64_t>;

std::int64_t elements(const Shape& s) {
  return internal::product(s, 0, s.size());
}

}  // namespace

void Importer::map_rms_norm(const Node& n) {
  // SimplifiedLayerNormalization(X, scale; axis = -1): x / sqrt(mean(x^2) + eps) * scale.
  OpAttrs a;
  a.axis = n.attrs.integer("axis", -1);
  bind(n.out(), emit(n, OpKind::RmsNorm, {operand(n.in(0)), operand(n.in(1))}, a, n.out()));
}

Value Importer::constant_part(const Value& of, std::int64_t size, const std::string& tag) {
  // A slice of a weight is laid out at compile time: a constant of its own (values unread).
  const std::string name = of.name + "." + tag;
  if (!values_.count(name)) {
    auto c = std::make_shared<ConstTensor>(ConstTensor{Shape{size}, of.constant->elem_type, std::nullopt});
    c->stored_bytes = of.constant->stored_bytes;
    bind(name, Value{name, c->shape, -1, std::move(c)});
  }
  return values_.at(name);
}

Value Importer::cache_rows(const Node& n, const Value& cache, const Value* positions, std::int64_t batch,
                           std::int64_t seq, const std::string& tag) {
  // cos_cache / sin_cache [max_sequence_length, r/2]: the rows of the positions, [B or 1, S, r/2].
  if (cache.shape.size() != 2)
    n.fail("a 2-D " + tag + " cache [max_sequence_length, rotary_dim / 2]", format_shape(cache.shape));
  if (positions && positions->shape == Shape{batch, seq}) {
    OpAttrs g;
    g.axis = 0;
    return emit(n, OpKind::Gather, {operand(cache), operand(*positions)}, g, n.out() + "." + tag, "." + tag);
  }
  // No position ids, or one start offset [1]: S consecutive rows (where they start is a runtime
  // value; the rows read are as many).
  if (seq > cache.shape[0])
    n.fail(tag + " cache rows for " + std::to_string(seq) + " positions", format_shape(cache.shape));
  OpAttrs s;
  s.axes = {0};
  s.starts = {0};
  s.ends = {seq};
  const Value rows = emit(n, OpKind::Slice, {operand(cache)}, s, n.out() + "." + tag, "." + tag);
  return reshaped(n, rows, {1, seq, cache.shape[1]}, rows.name + ".b");
}

Value Importer::rotary(const Node& n, const Value& x, bool bnsh, const Value& cos, const Value& sin,
                       std::int64_t rotary_dim, bool interleaved, const std::string& tag) {
  // x [B, S, N, h] (or [B, N, S, h]); cos and sin [B or 1, S, r/2]. Each rotated pair (x1, x2)
  // becomes (x1 cos - x2 sin, x2 cos + x1 sin): two products and a sum per element. The partner
  // of each element (the other half, or the other of an interleaved pair) is an addressing
  // pattern of the second product's operand, not a copy, and the sign folds into sin.
  const std::int64_t B = x.shape[0], h = x.shape[3];
  const std::int64_t S = bnsh ? x.shape[2] : x.shape[1], N = bnsh ? x.shape[1] : x.shape[2];
  const std::int64_t r = rotary_dim > 0 ? rotary_dim : h;
  if (r % 2 != 0 || r > h)
    n.fail("an even rotary dimension of at most the head size " + std::to_string(h), std::to_string(r));
  if (cos.shape.back() != r / 2 || sin.shape != cos.shape)
    n.fail("cos and sin caches of " + std::to_string(r / 2) + " values per position (rotary dim " + std::to_string(r) +
               ")",
           format_shape(cos.shape) + " and " + format_shape(sin.shape));
  Value part = x;
  if (r < h) {
    OpAttrs s;
    s.axes = {3};
    s.starts = {0};
    s.ends = {r};
    part = emit(n, OpKind::Slice, {operand(x)}, s, x.name + "." + tag + ".rot", "." + tag + ".rot");
  }
  const Shape pairs = interleaved ? Shape{r / 2, 2} : Shape{2, r / 2};
  const Shape trig = interleaved ? Shape{r / 2, 1} : Shape{1, r / 2};
  const Shape x5 = bnsh ? Shape{B, N, S, pairs[0], pairs[1]} : Shape{B, S, N, pairs[0], pairs[1]};
  const std::int64_t cb = cos.shape[0];
  const Shape t5 = bnsh ? Shape{cb, 1, S, trig[0], trig[1]} : Shape{cb, S, 1, trig[0], trig[1]};
  const Value xv = reshaped(n, part, x5, part.name + ".pairs");
  const Value c = emit(n, OpKind::Mul, {operand(xv), operand(reshaped(n, cos, t5, cos.name + "." + tag + ".b"))}, {},
                       x.name + "." + tag + ".cos", "." + tag + ".cos");
  const Value s = emit(n, OpKind::Mul, {operand(xv), operand(reshaped(n, sin, t5, sin.name + "." + tag + ".b"))}, {},
                       x.name + "." + tag + ".sin", "." + tag + ".sin");
  const Value sum = emit(n, OpKind::Add, {c.tensor, s.tensor}, {}, x.name + "." + tag + ".rope", "." + tag + ".rope");
  Value y = reshaped(n, sum, part.shape, sum.name + ".v");
  if (r == h) return y;
  OpAttrs rest;
  rest.axes = {3};
  rest.starts = {r};
  rest.ends = {h};
  const Value pass = emit(n, OpKind::Slice, {operand(x)}, rest, x.name + "." + tag + ".pass", "." + tag + ".pass");
  OpAttrs cat;
  cat.axis = 3;
  return emit(n, OpKind::Concat, {y.tensor, pass.tensor}, cat, x.name + "." + tag + ".out", "." + tag + ".out");
}

void Importer::map_rotary_embedding(const Node& n) {
  // input [B, S, hidden] or [B, N, S, h], position_ids [B, S] or [1], cos_cache, sin_cache.
  const Value& x = n.in(0);
  const Value& cos_cache = n.in(2);
  const std::int64_t heads = n.attrs.integer("num_heads", 0), rotary_dim = n.attrs.integer("rotary_embedding_dim", 0);
  const bool interleaved = n.attrs.integer("interleaved", 0) != 0;
  if (cos_cache.shape.size() != 2)
    n.fail("a 2-D cos_cache [max_sequence_length, rotary_dim / 2]", format_shape(cos_cache.shape));
  Value x4 = x;
  const bool bnsh = x.shape.size() == 4;
  if (x.shape.size() == 3) {
    // ORT: without num_heads the head is the rotated part, 2 x the caches' width.
    const std::int64_t h = heads > 0 ? x.shape[2] / heads : 2 * cos_cache.shape[1];
    if (h < 1 || x.shape[2] % h != 0)
      n.fail("a hidden size divisible by the head size " + std::to_string(h), format_shape(x.shape));
    x4 = reshaped(n, x, {x.shape[0], x.shape[1], x.shape[2] / h, h}, x.name + ".heads");
  } else if (!bnsh) {
    n.fail("input [batch, sequence, hidden] or [batch, heads, sequence, head_size]", format_shape(x.shape));
  }
  const std::int64_t B = x.shape[0], S = bnsh ? x.shape[2] : x.shape[1];
  const Value cos = cache_rows(n, cos_cache, &n.in(1), B, S, "cos");
  const Value sin = cache_rows(n, n.in(3), &n.in(1), B, S, "sin");
  const Value y = rotary(n, x4, bnsh, cos, sin, rotary_dim, interleaved, "rope");
  bind(n.out(), reshaped(n, y, x.shape, n.out()));
}

Value Importer::kv_heads(const Node& n, const Value& kv, std::int64_t heads, const std::string& tag) {
  // [B, L, heads * h] -> [B, heads, L, h] (BNSH, the KV cache's layout); a 4-D one is already so.
  if (kv.shape.size() == 4) return kv;
  if (kv.shape.size() != 3 || kv.shape[2] % heads != 0)
    n.fail(tag + " [batch, sequence, " + std::to_string(heads) + " heads x head_size]", format_shape(kv.shape));
  const std::int64_t h = kv.shape[2] / heads;
  const Value v4 = reshaped(n, kv, {kv.shape[0], kv.shape[1], heads, h}, kv.name + ".heads");
  return permuted(n, v4, {0, 2, 1, 3}, kv.name + ".bnsh");
}

Value Importer::with_past(const Node& n, const Value& now, std::size_t past_input, std::size_t present_output,
                          const std::string& tag) {
  // present = Concat(past, new) along the sequence (an empty past adds nothing).
  const bool used = n.proto.output_size() > static_cast<int>(present_output) && !n.out(present_output).empty();
  Value all = now;
  if (n.has(past_input)) {
    const Value& past = n.in(past_input);
    if (past.shape.size() != 4 || past.shape[0] != now.shape[0] || past.shape[1] != now.shape[1] ||
        past.shape[3] != now.shape[3])
      n.fail(tag + " cache [" + std::to_string(now.shape[0]) + ", " + std::to_string(now.shape[1]) + ", past, " +
                 std::to_string(now.shape[3]) + "] (BNSH)",
             "'" + past.name + "' " + format_shape(past.shape));
    if (elements(past.shape) > 0) {
      OpAttrs cat;
      cat.axis = 2;
      all = emit(n, OpKind::Concat, {operand(past), operand(now)}, cat,
                 used ? n.out(present_output) : n.out() + "." + tag, "." + tag);
    }
  }
  if (used) bind(n.out(present_output), all);
  return all;
}

Value Importer::attend(const Node& n, const Value& q, std::int64_t groups, const Value& k, const Value& v,
                       const Value* bias, std::size_t qk_output) {
  // q [B, Nk, G*S, h] (the G query heads sharing a KV head stacked on the rows, so each KV head
  // is read once per step), k and v [B, Nk, T, h]: softmax(q k^T (+ bias)) v, scores [B, Nk, G*S, T].
  const std::int64_t B = q.shape[0], Nk = q.shape[1], S = q.shape[2] / groups, T = k.shape[2];
  OpAttrs kt;
  kt.transpose_b = true;  // K as the cache stores it, [T, h] per head
  Value scores = emit(n, OpKind::MatMul, {operand(q), operand(k)}, kt, n.out() + ".scores", ".scores");
  if (bias) {
    // attention_bias [B or 1, N or 1, S, T] added per (query head, KV head group).
    const Shape& b = bias->shape;
    if (b.size() != 4 || (b[0] != 1 && b[0] != B) || (b[1] != 1 && b[1] != Nk * groups) || b[2] != S || b[3] != T)
      n.fail("attention_bias [" + std::to_string(B) + " or 1, " + std::to_string(Nk * groups) + " or 1, " +
                 std::to_string(S) + ", " + std::to_string(T) + "]",
             "'" + bias->name + "' " + format_shape(b));
    const Value s5 = reshaped(n, scores, {B, Nk, groups, S, T}, scores.name + ".groups");
    const Value b5 =
        reshaped(n, *bias, {b[0], b[1] == 1 ? 1 : Nk, b[1] == 1 ? 1 : groups, S, T}, bias->name + ".groups");
    const Value biased = emit(n, OpKind::Add, {s5.tensor, operand(b5)}, {}, n.out() + ".biased", ".bias");
    scores = reshaped(n, biased, scores.shape, biased.name + ".rows");
  }
  OpAttrs sm;
  sm.axis = -1;
  const Value probs = emit(n, OpKind::Softmax, {scores.tensor}, sm, n.out() + ".probs", ".softmax");
  const std::int64_t qk = n.attrs.integer("qk_output", 1);
  if (n.proto.output_size() > static_cast<int>(qk_output) && !n.out(qk_output).empty()) {
    const Value& which = n.proto.op_type() == "GroupQueryAttention" && qk == 2 ? probs : scores;
    Value grouped = reshaped(n, which, {B, Nk * groups, S, T}, n.out(qk_output));
    bind(n.out(qk_output), grouped);
  }
  return emit(n, OpKind::MatMul, {probs.tensor, operand(v)}, {}, n.out() + ".context", ".context");
}

void Importer::attention_output(const Node& n, const Value& context, std::int64_t groups) {
  // [B, Nk, G*S, hv] -> [B, S, Nk*G*hv], the heads side by side as the output projection reads them.
  const std::int64_t B = context.shape[0], Nk = context.shape[1], S = context.shape[2] / groups, hv = context.shape[3];
  const Value c5 = reshaped(n, context, {B, Nk, groups, S, hv}, context.name + ".groups");
  const Value back = permuted(n, c5, {0, 3, 1, 2, 4}, n.out() + ".merge");
  bind(n.out(), reshaped(n, back, {B, S, Nk * groups * hv}, n.out()));
}

Value Importer::query_rows(const Node& n, const Value& q4, std::int64_t kv_heads) {
  // q [B, S, N, h] -> [B, Nk, G*S, h]: query head i reads KV head i / G (ORT's grouping).
  const std::int64_t B = q4.shape[0], S = q4.shape[1], N = q4.shape[2], h = q4.shape[3], G = N / kv_heads;
  const Value q5 = reshaped(n, q4, {B, S, kv_heads, G, h}, q4.name + ".groups");
  const Value t = permuted(n, q5, {0, 2, 3, 1, 4}, q4.name + ".bnsh");
  return reshaped(n, t, {B, kv_heads, G * S, h}, q4.name + ".rows");
}

void Importer::map_multi_head_attention(const Node& n) {
  // query [B, S, D], key [B, L, D] or [B, N, L, h], value [B, L, Dv] or [B, N, L, hv], bias [D + D + Dv],
  // key_padding_mask (not modelled), attention_bias, past_key / past_value [B, N, P, h]
  // -> output [B, S, Dv], present_key / present_value [B, N, P + L, h], qk.
  const Value& q = n.in(0);
  const std::int64_t heads = n.attrs.integer("num_heads", 0);
  if (q.shape.size() != 3) n.fail("query [batch, sequence, hidden] (packed QKV is not read)", format_shape(q.shape));
  if (!n.has(1) || !n.has(2)) n.fail("key and value inputs (packed QKV/KV are not read)", "none");
  if (heads < 1 || q.shape[2] % heads != 0)
    n.fail("num_heads dividing the hidden size " + std::to_string(q.shape[2]), std::to_string(heads));
  const std::int64_t B = q.shape[0], S = q.shape[1], D = q.shape[2], h = D / heads;
  Value qv = q, kv = n.in(1), vv = n.in(2);
  for (const Value* x : {&kv, &vv})
    if (x->shape.size() != 3 && x->shape.size() != 4)
      n.fail("key and value [batch, sequence, hidden] or [batch, heads, sequence, head_size]",
             "'" + x->name + "' " + format_shape(x->shape));
  if (n.has(3)) {  // the projections' biases, Q's then K's then V's
    const Value& b = n.in(3);
    const std::int64_t Dv = vv.shape.size() == 3 ? vv.shape[2] : heads * vv.shape.back();
    if (b.shape != Shape{2 * D + Dv} || !b.is_constant())
      n.fail("a constant bias [" + std::to_string(2 * D + Dv) + "]", "'" + b.name + "' " + format_shape(b.shape));
    qv = emit(n, OpKind::Add, {operand(qv), operand(constant_part(b, D, "q"))}, {}, n.out() + ".q", ".q_bias");
    if (kv.shape.size() == 3)
      kv = emit(n, OpKind::Add, {operand(kv), operand(constant_part(b, D, "k"))}, {}, n.out() + ".k", ".k_bias");
    if (vv.shape.size() == 3)
      vv = emit(n, OpKind::Add, {operand(vv), operand(constant_part(b, Dv, "v"))}, {}, n.out() + ".v", ".v_bias");
  }
  const Value k = with_past(n, kv_heads(n, kv, heads, "key"), 6, 1, "present_key");
  const Value v = with_past(n, kv_heads(n, vv, heads, "value"), 7, 2, "present_value");
  if (k.shape[1] != heads || k.shape[3] != h || v.shape[1] != heads || v.shape[2] != k.shape[2])
    n.fail("key [" + std::to_string(B) + ", " + std::to_string(heads) + ", T, " + std::to_string(h) +
               "] and value of the same T after the past",
           format_shape(k.shape) + " and " + format_shape(v.shape));
  const Value q4 = reshaped(n, qv, {B, S, heads, h}, qv.name + ".heads");
  const Value ctx = attend(n, query_rows(n, q4, heads), 1, k, v, n.has(5) ? &n.in(5) : nullptr, 3);
  attention_output(n, ctx, 1);
}

void Importer::map_group_query_attention(const Node& n) {
  // query [B, S, N*h] (or packed QKV [B, S, (N + 2 Nk) h] without key and value), key / value
  // [B, L, Nk*h], past_key / past_value [B, Nk, P, h], seqlens_k, total_sequence_length (runtime
  // values: not read), cos_cache / sin_cache (do_rotary), position_ids, attention_bias
  // -> output [B, S, N*h], present_key / present_value [B, Nk, P + L, h], output_qk.
  const Value& query = n.in(0);
  const std::int64_t N = n.attrs.integer("num_heads", 0), Nk = n.attrs.integer("kv_num_heads", 0);
  if (N < 1 || Nk < 1 || N % Nk != 0)
    n.fail("num_heads a multiple of kv_num_heads (both >= 1)", std::to_string(N) + " and " + std::to_string(Nk));
  if (query.shape.size() != 3) n.fail("query [batch, sequence, hidden]", format_shape(query.shape));
  const std::int64_t B = query.shape[0], S = query.shape[1];
  const bool packed = !n.has(1);
  const std::int64_t width = packed ? N + 2 * Nk : N;
  if (packed == n.has(2)) n.fail("key and value both present or both absent (packed QKV)", "one of them");
  if (query.shape[2] % width != 0)
    n.fail("a query width divisible by " + std::to_string(width) + " heads", format_shape(query.shape));
  const std::int64_t h = query.shape[2] / width;
  Value q = query, k = packed ? query : n.in(1), v = packed ? query : n.in(2);
  if (packed) {
    const auto part = [&](std::int64_t begin, std::int64_t size, const char* tag) {
      OpAttrs s;
      s.axes = {2};
      s.starts = {begin};
      s.ends = {begin + size};
      return emit(n, OpKind::Slice, {operand(query)}, s, n.out() + "." + tag, std::string(".") + tag);
    };
    q = part(0, N * h, "q");
    k = part(N * h, Nk * h, "k");
    v = part((N + Nk) * h, Nk * h, "v");
  }
  if (k.shape.size() != 3 || k.shape[2] != Nk * h || v.shape != k.shape)
    n.fail("key and value [batch, kv_sequence, " + std::to_string(Nk * h) + "]",
           format_shape(k.shape) + " and " + format_shape(v.shape));
  Value q4 = reshaped(n, q, {B, S, N, h}, q.name + ".heads");
  Value k4 = reshaped(n, k, {B, k.shape[1], Nk, h}, k.name + ".heads");
  if (n.attrs.integer("do_rotary", 0) != 0) {
    if (!n.has(7) || !n.has(8)) n.fail("cos_cache and sin_cache inputs (do_rotary = 1)", "none");
    const bool interleaved = n.attrs.integer("rotary_interleaved", 0) != 0;
    const Value* positions = n.has(9) ? &n.in(9) : nullptr;
    const Value cos = cache_rows(n, n.in(7), positions, B, S, "cos");
    const Value sin = cache_rows(n, n.in(8), positions, B, S, "sin");
    q4 = rotary(n, q4, false, cos, sin, 2 * cos.shape.back(), interleaved, "q_rope");
    k4 = rotary(n, k4, false, cos, sin, 2 * cos.shape.back(), interleaved, "k_rope");
  }
  const Value kp = with_past(n, permuted(n, k4, {0, 2, 1, 3}, k4.name + ".bnsh"), 3, 1, "present_key");
  const Value vp = with_past(n, kv_heads(n, v, Nk, "value"), 4, 2, "present_value");
  const Value ctx = attend(n, query_rows(n, q4, Nk), N / Nk, kp, vp, n.has(10) ? &n.in(10) : nullptr, 3);
  attention_output(n, ctx, N / Nk);
}

}  // namespace npusim::workloads::onnx

namespace npusim::workloads::onnx {
namespace {

/// Bits of one element of a float scale or zero point (ORT's T1: float, float16, bfloat16); 0
/// for any other type.
std::uint8_t float_bits(int elem_type) {
  if (elem_type == ::onnx::TensorProto::FLOAT) return 32;
  if (elem_type == ::onnx::TensorProto::FLOAT16 || elem_type == ::onnx::TensorProto::BFLOAT16) return 16;
  return 0;
}

}  // namespace

void Importer::map_matmul_nbits(const Node& n) {
  // Y = A x dequant(B)^T (+ bias). B: uint8 [N, k_blocks, blob] holding N x K codes of `bits`
  // bits, packed along K in blocks of block_size; scales [N * k_blocks] (or [N, k_blocks]) of
  // A's float type; zero_points either packed codes (uint8 [N * ceil(k_blocks * bits / 8)]) or
  // floats like the scales; g_idx (deprecated) and bias [N] optional. The weight becomes one IR
  // constant [K, N] whose format stores `bits` per element plus one scale (and zero point) per
  // block: DRAM and SRAM carry the packed bytes, the MAC array multiplies at the config's dtype.
  const std::int64_t K = n.attrs.integer("K", 0), N = n.attrs.integer("N", 0);
  const std::int64_t bits = n.attrs.integer("bits", 4), block = n.attrs.integer("block_size", 0);
  const std::int64_t kLimit = std::int64_t{1} << 24;
  if (K < 1 || K > kLimit || N < 1 || N > kLimit)
    n.fail("attributes K and N from 1 to 2^24", "K " + std::to_string(K) + ", N " + std::to_string(N));
  if (bits < 2 || bits > 8) n.fail("attribute bits from 2 to 8", std::to_string(bits));
  if (block < 16 || block > 65536 || (block & (block - 1)) != 0)
    n.fail("attribute block_size a power of two from 16 to 65536", std::to_string(block));
  const Value& a = n.in(0);
  if (a.shape.empty() || a.shape.back() != K)
    n.fail("input A [..., " + std::to_string(K) + "] (the last dim K)", format_shape(a.shape));
  const std::int64_t k_blocks = (K + block - 1) / block, blob = block * bits / 8;
  const Value& b = n.in(1);
  if (!b.is_constant() || b.constant->elem_type != ::onnx::TensorProto::UINT8)
    n.fail(
        "input B a uint8 initializer (the packed weight)",
        b.is_constant() ? dtype_name(b.constant->elem_type) + " '" + b.name + "'" : "an activation '" + b.name + "'");
  if (b.shape != Shape{N, k_blocks, blob})
    n.fail("input B [N, ceil(K / block_size), block_size * bits / 8] = " + format_shape({N, k_blocks, blob}),
           format_shape(b.shape));
  const auto count = [&](std::size_t i, const std::string& what, std::int64_t want) {
    const Value& v = n.in(i);
    if (!v.is_constant())
      n.fail("input " + std::to_string(i) + " (" + what + ") an initializer", "an activation '" + v.name + "'");
    if (v.constant->elements() != want)
      n.fail("input " + std::to_string(i) + " (" + what + ") of " + std::to_string(want) + " elements",
             format_shape(v.shape));
  };
  count(2, "scales", N * k_blocks);
  ElemFormat f;
  f.bits = std::uint8_t(bits);
  f.group = std::uint32_t(block);
  f.scale_bits = float_bits(n.in(2).constant->elem_type);
  if (f.scale_bits == 0)
    n.fail("scales of a float type (float, float16, bfloat16)", dtype_name(n.in(2).constant->elem_type));
  if (n.has(3)) {
    const int zt = n.in(3).is_constant() ? n.in(3).constant->elem_type : -1;
    const bool packed = zt == ::onnx::TensorProto::UINT8;
    count(3, packed ? "packed zero points" : "zero points", packed ? N * ((k_blocks * bits + 7) / 8) : N * k_blocks);
    f.zero_bits = packed ? std::uint8_t(bits) : float_bits(zt);
    if (f.zero_bits == 0) n.fail("zero_points of uint8 or the scales' float type", dtype_name(zt));
  }
  if (n.has(4) && !n.in(4).is_constant())
    n.fail("input 4 (g_idx) an initializer", "an activation '" + n.in(4).name + "'");
  Tensor w;
  w.name = unique_tensor_name(b.name);
  w.shape = {K, N};
  w.is_constant = true;
  w.format = f;
  const int weight = staged_.graph.add_tensor(std::move(w));
  std::vector<int> inputs = {operand(a), weight};
  if (n.has(5)) {
    count(5, "bias", N);
    inputs.push_back(operand(n.in(5)));  // the IR matmul's bias (as a Linear's MatMul + Add is read)
  }
  bind(n.out(), emit(n, OpKind::MatMul, inputs, {}, n.out()));
}

}  // namespace npusim::workloads::onnx
