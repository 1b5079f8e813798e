// Builds the Graph of a prefill or decode step from an LlmConfig (docs/llm.md, "The graph").
#include "workloads/llm/llm_graph.h"

#include "sim/core/errors.h"

namespace npusim::workloads::llm {
namespace {

/// Adds tensors and ops with Hugging Face names; every op output is created here, its shape
/// left to Graph::finalize.
class Builder {
 public:
  Builder(const LlmConfig& c, const StepSpec& s) : c_(c), s_(s) {}

  Graph build() {
    g_.name = c_.name + (s_.past > 0 && s_.tokens == 1 ? "-decode" : "-prefill");
    const std::int64_t B = s_.batch, S = s_.tokens;
    const int ids = input("input_ids", {B, S});
    g_.set_elem_bytes(ids, 4);  // int32 token ids
    int x = op(OpKind::Gather, "model.embed_tokens", {embedding(), ids}, gather_attrs());
    if (c_.learned_positions) {
      const int pos_ids = input("position_ids", {B, S});
      g_.set_elem_bytes(pos_ids, 4);
      const int wpe = weight("transformer.wpe.weight", {c_.max_positions, c_.hidden}, head_format());
      x = op(OpKind::Add, "transformer.add_positions",
             {x, op(OpKind::Gather, "transformer.wpe", {wpe, pos_ids}, gather_attrs())});
    } else {
      // RoPE tables for the new tokens' positions, computed by the runtime (not weights).
      cos_ = input("rope.cos", {S, 1, 1, c_.head_dim});
      sin_ = input("rope.sin", {S, 1, 1, c_.head_dim});
    }
    scale_ = input("attention.scale", {1});
    for (std::int64_t l = 0; l < c_.layers; ++l) x = layer(x, "model.layers." + std::to_string(l) + ".");
    if (!s_.all_logits && S > 1) {
      OpAttrs a;
      a.starts = {S - 1};
      a.ends = {S};
      a.axes = {1};
      x = op(OpKind::Slice, "model.last_token", {x}, a);
    }
    x = norm("model.norm", x);
    OpAttrs head;
    int w = embedding_;
    if (c_.tied_embeddings) {
      head.transpose_b = true;  // the embedding table [vocab, hidden] read as the head's weight
    } else {
      w = weight("lm_head.weight", {c_.hidden, c_.vocab}, head_format());
    }
    op(OpKind::MatMul, "lm_head", {x, w}, head);
    g_.finalize(c_.source);
    return std::move(g_);
  }

 private:
  const ElemFormat& head_format() const { return s_.widths.wide_head ? wide_ : s_.widths.weights; }

  int embedding() {
    embedding_ = weight("model.embed_tokens.weight", {c_.vocab, c_.hidden}, head_format());
    return embedding_;
  }

  static OpAttrs gather_attrs() {
    OpAttrs a;
    a.axis = 0;
    return a;
  }

  int input(const std::string& name, Shape shape) {
    Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.format = s_.widths.activations;
    return g_.add_tensor(t);
  }

  int weight(const std::string& name, Shape shape, const ElemFormat& f) {
    Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.is_constant = true;
    t.format = f;
    return g_.add_tensor(t);
  }
  int small_param(const std::string& name, std::int64_t n) { return weight(name, {n}, s_.widths.activations); }

  int op(OpKind kind, const std::string& name, std::vector<int> inputs, OpAttrs attrs = {},
         const ElemFormat* out_format = nullptr) {
    Tensor out;
    out.name = name + ".out";
    out.format = out_format ? *out_format : s_.widths.activations;
    const int o = g_.add_tensor(out);
    Op p;
    p.name = name;
    p.kind = kind;
    p.attrs = std::move(attrs);
    p.inputs = std::move(inputs);
    p.outputs = {o};
    const int idx = g_.add_op(p);
    // Shapes are needed while building (reshape targets follow them): infer as we go.
    g_.set_shape(o, infer_output_shape(g_, g_.op(idx), c_.source));
    return o;
  }

  int reshape(const std::string& name, int x, Shape shape) {
    OpAttrs a;
    a.shape = std::move(shape);
    return op(OpKind::Reshape, name, {x}, a, &g_.tensor(x).format);
  }
  int transpose(const std::string& name, int x, std::vector<std::int64_t> perm, const ElemFormat* f = nullptr) {
    OpAttrs a;
    a.perm = std::move(perm);
    return op(OpKind::Transpose, name, {x}, a, f);
  }

  /// x W (+ b): W [in, out] at the weight format.
  int linear(const std::string& name, int x, std::int64_t in, std::int64_t out, bool bias) {
    std::vector<int> ins{x, weight(name + ".weight", {in, out}, s_.widths.weights)};
    if (bias) ins.push_back(small_param(name + ".bias", out));
    return op(OpKind::MatMul, name, ins);
  }

  int norm(const std::string& name, int x) {
    std::vector<int> ins{x, small_param(name + ".weight", c_.hidden)};
    if (c_.norm == NormKind::Layer) ins.push_back(small_param(name + ".bias", c_.hidden));
    OpAttrs a;
    a.axis = -1;
    return op(c_.norm == NormKind::Rms ? OpKind::RmsNorm : OpKind::LayerNorm, name, ins, a);
  }

  /// x cos + rotate_half(x) sin, over the last axis of a [B, S, heads, n, hd] tensor: two
  /// multiplies and an add per element (rotate_half is an index permutation inside the op).
  int rope(const std::string& name, int x) {
    if (c_.learned_positions) return x;
    const int a = op(OpKind::Mul, name + ".cos", {x, cos_});
    const int b = op(OpKind::Mul, name + ".sin", {x, sin_});
    return op(OpKind::Add, name, {a, b});
  }

  int layer(int x, const std::string& p) {
    const std::int64_t B = s_.batch, S = s_.tokens, T = s_.past + s_.tokens;
    const std::int64_t H = c_.hidden, hd = c_.head_dim, kvh = c_.kv_heads, g = c_.group();
    const std::string attn = p + "self_attn.";
    const int h = norm(p + "input_layernorm", x);
    // Q/K/V projections; a fused qkv_proj weight is read as its three row blocks (same bytes).
    const std::string qn = c_.fused_qkv ? attn + "qkv_proj.q" : attn + "q_proj";
    const std::string kn = c_.fused_qkv ? attn + "qkv_proj.k" : attn + "k_proj";
    const std::string vn = c_.fused_qkv ? attn + "qkv_proj.v" : attn + "v_proj";
    const int q = linear(qn, h, H, c_.heads * hd, c_.qkv_bias);
    const int k = linear(kn, h, H, kvh * hd, c_.qkv_bias);
    const int v = linear(vn, h, H, kvh * hd, c_.qkv_bias);
    // Q as [B, kv heads, S x group, hd]: the query heads of a GQA group are rows of one score
    // GEMM against their shared K, so each K/V head is read once.
    const int q5 = rope(attn + "q_rope", reshape(attn + "q_heads", q, {B, S, kvh, g, hd}));
    const int qg =
        reshape(attn + "q_groups", transpose(attn + "q_by_kv_head", q5, {0, 2, 1, 3, 4}), {B, kvh, S * g, hd});
    // The new tokens' K and V, written into the cache (persistent: stored, never copied whole).
    const int k5 = rope(attn + "k_rope", reshape(attn + "k_heads", k, {B, S, kvh, 1, hd}));
    const int k_new = reshape(attn + "k_cache.append",
                              transpose(attn + "k_by_head", k5, {0, 2, 1, 3, 4}, &s_.widths.kv), {B, kvh, S, hd});
    const int v_new =
        transpose(attn + "v_cache.append", reshape(attn + "v_heads", v, {B, S, kvh, hd}), {0, 2, 1, 3}, &s_.widths.kv);
    g_.set_persistent(k_new);
    g_.set_persistent(v_new);
    int keys = k_new, values = v_new;
    if (s_.past > 0) {
      // Decode: attention reads the whole cache (past tokens and the one just appended) in place.
      keys = cache(attn + "k_cache", {B, kvh, T, hd});
      values = cache(attn + "v_cache", {B, kvh, T, hd});
    }
    OpAttrs tb;
    tb.transpose_b = true;
    const int scores = op(OpKind::MatMul, attn + "scores", {qg, keys}, tb);
    // 1/sqrt(hd) and the causal mask (generated, not read): one multiply per score.
    const int scaled = op(OpKind::Mul, attn + "scale_mask", {scores, scale_});
    OpAttrs sm;
    sm.axis = -1;
    const int probs = op(OpKind::Softmax, attn + "softmax", {scaled}, sm);
    const int ctx = op(OpKind::MatMul, attn + "context", {probs, values});
    const int merged = reshape(
        attn + "merge",
        transpose(attn + "context_by_token", reshape(attn + "context_rows", ctx, {B, kvh, S, g, hd}), {0, 2, 1, 3, 4}),
        {B, S, c_.heads * hd});
    int o = linear(attn + "o_proj", merged, c_.heads * hd, H, c_.o_bias);
    if (c_.sandwich_norms) o = norm(p + "post_attention_layernorm", o);
    x = op(OpKind::Add, p + "attention_residual", {x, o});
    const int h2 = norm(p + (c_.sandwich_norms ? "pre_feedforward_layernorm" : "post_attention_layernorm"), x);
    int m = mlp(p + "mlp.", h2);
    if (c_.sandwich_norms) m = norm(p + "post_feedforward_layernorm", m);
    return op(OpKind::Add, p + "mlp_residual", {x, m});
  }

  int activation(const std::string& name, int x) {
    return op(c_.act == Activation::Silu ? OpKind::Silu : OpKind::Gelu, name, {x});
  }

  int mlp(const std::string& p, int h) {
    const std::int64_t H = c_.hidden, I = c_.intermediate;
    if (c_.mlp == MlpKind::Plain) {
      const int a = activation(p + "act", linear(p + "c_fc", h, H, I, c_.mlp_bias));
      return linear(p + "c_proj", a, I, H, c_.mlp_bias);
    }
    const std::string gn = c_.fused_gate_up ? p + "gate_up_proj.gate" : p + "gate_proj";
    const std::string un = c_.fused_gate_up ? p + "gate_up_proj.up" : p + "up_proj";
    const int gate = activation(p + "act", linear(gn, h, H, I, c_.mlp_bias));
    const int up = linear(un, h, H, I, c_.mlp_bias);
    return linear(p + "down_proj", op(OpKind::Mul, p + "gated", {gate, up}), I, H, c_.mlp_bias);
  }

  int cache(const std::string& name, Shape shape) {
    Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.format = s_.widths.kv;
    t.persistent = true;
    return g_.add_tensor(t);
  }

  const LlmConfig& c_;
  const StepSpec& s_;
  Graph g_;
  int cos_ = -1, sin_ = -1, scale_ = -1, embedding_ = -1;
  const ElemFormat wide_{16, 0, 0, 0};
};

}  // namespace

ElemFormat parse_format(const std::string& name, std::uint32_t group, bool zero_point, const std::string& flag) {
  if (name.empty() || name == "config") return {};
  if (name == "fp16" || name == "bf16") return {16, 0, 0, 0};
  if (name == "fp32") return {32, 0, 0, 0};
  if (name == "int8" || name == "int4") {
    const std::uint8_t bits = name == "int8" ? 8 : 4;
    if (bits == 4 && group == 0)
      throw InputError(flag + " int4", "expected a --group-size of at least 1 (int4 needs scales), found 0");
    return {bits, group, std::uint8_t(group ? 16 : 0), std::uint8_t(group && zero_point ? bits : 0)};
  }
  throw InputError(flag + " " + name, "expected int4, int8, fp16, bf16 or fp32, found '" + name + "'");
}

std::string format_name(const ElemFormat& f) {
  if (!f.bits) return "config";
  std::string s = (f.bits >= 16 ? "fp" : "int") + std::to_string(f.bits);
  if (f.group) s += "-g" + std::to_string(f.group) + (f.zero_bits ? "-zp" : "");
  return s;
}

Graph build_llm_step(const LlmConfig& c, const StepSpec& s) {
  check_context(c, s.past + s.tokens,
                s.past == 0 ? "a prompt of " + std::to_string(s.tokens) + " tokens"
                            : "a context of " + std::to_string(s.past + s.tokens) + " tokens");
  return Builder(c, s).build();
}

std::uint64_t parameter_count(const LlmConfig& c) {
  const std::uint64_t H = std::uint64_t(c.hidden), I = std::uint64_t(c.intermediate), hd = std::uint64_t(c.head_dim);
  const std::uint64_t q = std::uint64_t(c.heads) * hd, kv = std::uint64_t(c.kv_heads) * hd;
  std::uint64_t layer = H * (q + 2 * kv) + q * H;  // q, k, v, o
  if (c.qkv_bias) layer += q + 2 * kv;
  if (c.o_bias) layer += H;
  layer += (c.mlp == MlpKind::Gated ? 3 : 2) * H * I;  // gate, up, down | fc, proj
  if (c.mlp_bias) layer += (c.mlp == MlpKind::Gated ? 2 * I : I) + H;
  const std::uint64_t norm = c.norm == NormKind::Layer ? 2 * H : H;
  layer += (c.sandwich_norms ? 4 : 2) * norm;
  std::uint64_t total = std::uint64_t(c.layers) * layer + norm + std::uint64_t(c.vocab) * H;
  if (!c.tied_embeddings) total += std::uint64_t(c.vocab) * H;
  if (c.learned_positions) total += std::uint64_t(c.max_positions) * H;
  return total;
}

std::uint64_t kv_cache_bytes(const LlmConfig& c, const Widths& w, std::int64_t batch, std::int64_t context,
                             std::uint32_t default_eb) {
  Graph g;
  Tensor t;
  t.name = "kv";
  t.shape = {batch, c.kv_heads, context, c.head_dim};
  t.format = w.kv;
  const int i = g.add_tensor(t);
  return 2 * std::uint64_t(c.layers) * tensor_bytes(g, i, default_eb);
}

}  // namespace npusim::workloads::llm
