// Builds the Graph of a prefill or decode step from an LlmConfig (docs/llm.md, "The graph").
#include "workloads/llm/llm_graph.h"

#include <algorithm>
#include <cmath>

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
      // MLA rotates only the rope columns of a head (q_pe, k_pe).
      const std::int64_t rotated = c_.is_mla() ? c_.mla.rope : c_.head_dim;
      cos_ = input("rope.cos", {S, 1, 1, rotated});
      sin_ = input("rope.sin", {S, 1, 1, rotated});
    }
    scale_ = input("attention.scale", {1});
    for (std::int64_t l = 0; l < c_.layers; ++l) x = layer(x, "model.layers." + std::to_string(l) + ".", l);
    if (!s_.logits) {  // the last layer's hidden states are the step's output
      g_.finalize(c_.source);
      return std::move(g_);
    }
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

  /// The vision tower on its images (build_vision_encoder): x is [images x rows, E] throughout,
  /// the images (anyres tiling's base image and crops) one batch through every block.
  Graph build_vision(const VisionInput& image) {
    const VisionConfig& v = c_.vision;
    const bool hf_vit = v.hf_vit();
    const std::int64_t N = image.images, P = image.patches, R = v.rows(P), E = v.embed_dim, hd = v.head_dim();
    g_.name = c_.name + "-vision";
    // The processor's patches: each one in_channels x temporal_patch x patch x patch pixels.
    const int pixels = input("pixel_values", {N * P, v.patch_pixels()});
    const std::string embed = hf_vit ? "vision_tower.vision_model.embeddings." : "visual.patch_embed.";
    // CLIP's patch convolution has no bias; SigLIP's has.
    int x = linear(embed + (hf_vit ? "patch_embedding" : "proj"), pixels, v.patch_pixels(), E,
                   v.kind == VisionKind::Siglip);
    if (hf_vit) {
      // Several images: the rows as [images, rows, E] while each image gains its class row and positions.
      if (N > 1) x = reshape(embed + "by_image", x, {N, P, E});
      if (v.class_token) {
        // CLIP: the learned class row ahead of each image's patches.
        OpAttrs cat;
        cat.axis = N > 1 ? 1 : 0;
        int cls = weight(embed + "class_embedding", N > 1 ? Shape{1, 1, E} : Shape{1, E}, s_.widths.activations);
        if (N > 1) {
          OpAttrs each;
          each.shape = {N, 1, E};
          cls = op(OpKind::Expand, embed + "class_rows", {cls}, each);
        }
        x = op(OpKind::Concat, embed + "with_class", {cls, x}, cat);
      }
      // A learned position for every row, added (an image is always image_size square).
      x = op(OpKind::Add, embed + "add_positions",
             {x, weight(embed + "position_embedding.weight", {R, E}, s_.widths.activations)});
      if (v.class_token) x = norm_of(NormKind::Layer, "vision_tower.vision_model.pre_layrnorm", x, E, E);
      if (N > 1) x = reshape(embed + "rows", x, {N * R, E});
    } else {
      // 2-D RoPE tables (row and column halves of each head) for every patch, from the runtime.
      cos_ = input("visual.rope.cos", {P, 1, hd});
      sin_ = input("visual.rope.sin", {P, 1, hd});
    }
    scale_ = input("attention.scale", {1});
    if (v.window > 0) {
      // Qwen2.5-VL orders the patches window by window before the blocks (and back after the
      // merger): a gather of every patch's row. Windows of one shape are taken together, so
      // their attention is one batched product.
      const int order = input("visual.window_index", {P});
      g_.set_elem_bytes(order, 4);
      x = op(OpKind::Gather, "visual.window_order", {x, order}, gather_attrs());
    }
    std::vector<int> outputs;  // hidden_states[1 ..]: each block's output
    for (std::int64_t d = 0; d < v.depth; ++d) outputs.push_back(x = vision_block(x, image, d));
    switch (v.projector) {
      case VisionProjector::Gemma3Pool:
        gemma3_projector(norm_of(NormKind::Layer, "vision_tower.vision_model.post_layernorm", x, E, E), image);
        break;
      case VisionProjector::LlavaMlp: {
        const int tokens = llava_projector(llava_features(outputs), image);
        if (v.tiled()) pack_image_features(tokens, image);
        break;
      }
      case VisionProjector::Merger:
        patch_merger(x, image);
        break;
    }
    g_.finalize(c_.source);
    return std::move(g_);
  }

  /// The rows LLaVA's projector reads: the feature layer's output, or the listed layers' outputs
  /// concatenated along the width ([R, n x E]).
  int llava_features(const std::vector<int>& outputs) {
    const VisionConfig& v = c_.vision;
    if (v.feature_layers.empty()) return outputs.back();
    std::vector<int> picked;
    for (std::int64_t layer : v.feature_layers) picked.push_back(outputs[std::size_t(layer - 1)]);
    if (picked.size() == 1) return picked[0];
    OpAttrs cat;
    cat.axis = 1;
    return op(OpKind::Concat, "multi_modal_projector.feature_layers", picked, cat);
  }

  /// LlavaMultiModalProjector on the feature rows of every image (hidden_states, before any
  /// final norm): each image's class row dropped under the "default" selection, then Linear,
  /// GELU, Linear to the language model's width, one image token a row ([images x tokens, H]).
  int llava_projector(int x, const VisionInput& image) {
    const VisionConfig& v = c_.vision;
    const std::string p = "multi_modal_projector.";
    const std::int64_t N = image.images, R = v.rows(image.patches), F = v.feature_width();
    if (v.drop_first_row && N == 1) x = slice(p + "drop_class_row", x, 0, 1, R);
    if (v.drop_first_row && N > 1)
      x = reshape(p + "rows", slice(p + "drop_class_row", reshape(p + "by_image", x, {N, R, F}), 1, 1, R),
                  {N * (R - 1), F});
    const int a = op(OpKind::Gelu, p + "act", {linear(p + "linear_1", x, F, v.out_hidden, v.projector_bias)});
    return linear(p + "linear_2", a, v.out_hidden, v.out_hidden, v.projector_bias);
  }

  /// LLaVA-NeXT's pack_image_features on the projector's tokens ([images x T, H], the base image's
  /// T first): the crops' tokens laid out as one grid of (crop rows x side) by (crop columns x
  /// side) (a transpose: each crop's rows interleave with its neighbours'), unpad_image's slice
  /// of the rows or columns the resize padded, OneVision's bilinear downscale (a Resize) when the
  /// grid is over anyres_max, the learned image_newline after each row, and the base image's
  /// tokens ahead of all ([tokens, H]: the prompt's image tokens). image_newline is named as
  /// transformers' parameter (model.image_newline); the packing is data movement, no MACs.
  void pack_image_features(int x, const VisionInput& image) {
    const VisionConfig& v = c_.vision;
    const std::string p = "model.pack_image_features.";
    const std::int64_t T = image.base_tokens, H = v.out_hidden, side = v.image_size / v.patch;
    const std::int64_t rows = image.crop_rows * side, cols = image.crop_cols * side;
    const std::int64_t uh = image.unpadded_rows, uw = image.unpadded_cols, ph = image.packed_rows,
                       pw = image.packed_cols;
    const int newline = weight("model.image_newline", {1, 1, H}, s_.widths.activations);
    const int base = slice(p + "base", x, 0, 0, T);
    // No rows left after unpadding (an image far wider than high): the base image's tokens alone.
    if (ph == 0) return;
    std::vector<int> row_parts;
    if (pw > 0) {
      const int crops = reshape(p + "crops", slice(p + "crop_tokens", x, 0, T, image.images * T),
                                {image.crop_rows, image.crop_cols, side, side, H});
      int grid = reshape(p + "grid", transpose(p + "grid_order", crops, {0, 2, 1, 3, 4}), {rows, cols, H});
      if (uh < rows) grid = slice(p + "unpad_rows", grid, 0, (rows - uh) / 2, (rows - uh) / 2 + uh);
      if (uw < cols) grid = slice(p + "unpad_cols", grid, 1, (cols - uw) / 2, (cols - uw) / 2 + uw);
      if (ph != uh || pw != uw) {
        OpAttrs to;
        to.scales = {double(ph) / double(uh), double(pw) / double(uw), 1.0};
        grid = op(OpKind::Resize, p + "anyres_max_downscale", {grid}, to);
      }
      row_parts.push_back(grid);
    }
    OpAttrs each;
    each.shape = {ph, 1, H};
    row_parts.push_back(op(OpKind::Expand, p + "newlines", {newline}, each));
    OpAttrs across, down;
    across.axis = 1;
    down.axis = 0;
    const int with_newlines =
        row_parts.size() > 1 ? op(OpKind::Concat, p + "with_newlines", row_parts, across) : row_parts.front();
    op(OpKind::Concat, p + "image_tokens", {base, reshape(p + "grid_tokens", with_newlines, {ph * (pw + 1), H})}, down);
  }

  /// Qwen's PatchMerger: the norm, merge^2 neighbouring patches (consecutive rows: the processor
  /// orders the patches so) as one row of merge^2 x E, then Linear, GELU, Linear to the LM's width.
  void patch_merger(int x, const VisionInput& image) {
    const VisionConfig& v = c_.vision;
    const std::int64_t E = v.embed_dim, m2 = v.merge * v.merge;
    const int ln = norm_of(v.norm, "visual.merger.ln_q", x, E, E);
    const int rows = reshape("visual.merger.concat", ln, {image.tokens, m2 * E});
    const int a =
        op(OpKind::Gelu, "visual.merger.mlp.act", {linear("visual.merger.mlp.0", rows, m2 * E, m2 * E, true)});
    const int out = linear("visual.merger.mlp.2", a, m2 * E, v.out_hidden, true);
    if (v.window > 0) {
      const int back = input("visual.window_reverse_index", {image.tokens});
      g_.set_elem_bytes(back, 4);
      op(OpKind::Gather, "visual.window_restore", {out, back}, gather_attrs());
    }
  }

  /// Gemma3MultiModalProjector: the patch grid [E, side, side] average-pooled to tokens_per_side
  /// squared tokens, each RMS-normalised and projected (no bias) to the language model's width.
  void gemma3_projector(int x, const VisionInput& image) {
    const VisionConfig& v = c_.vision;
    const std::int64_t E = v.embed_dim, side = v.image_size / v.patch, T = image.tokens;
    const std::string p = "multi_modal_projector.";
    const int grid = reshape(p + "grid", transpose(p + "by_channel", x, {1, 0}), {1, E, side, side});
    OpAttrs pool;
    pool.kernel = {v.pool, v.pool};
    pool.stride = {v.pool, v.pool};
    const int pooled = reshape(p + "pooled_rows", op(OpKind::AvgPool, p + "avg_pool", {grid}, pool), {E, T});
    const int normed = norm_of(NormKind::Rms, p + "mm_soft_emb_norm", transpose(p + "by_token", pooled, {1, 0}), E, E);
    linear(p + "mm_input_projection", normed, E, v.out_hidden, false);
  }

  /// Vision block d: norm, attention (over every patch, or inside windows), residual; norm, MLP,
  /// residual. Names as Hugging Face's: Qwen's norm1, attn.qkv, attn.proj; SigLIP's layer_norm1,
  /// self_attn.q_proj ..., self_attn.out_proj (no RoPE: its positions were added to the patches).
  int vision_block(int x, const VisionInput& image, std::int64_t d) {
    const VisionConfig& v = c_.vision;
    const bool siglip = v.hf_vit();  // SigLIP's and CLIP's blocks are laid out alike
    // N images of P rows each (anyres tiling's batch): every row-wise op runs on N x P rows, each
    // image attends within itself.
    const std::int64_t N = image.images, P = v.rows(image.patches), E = v.embed_dim, M = v.mlp_width(), n = v.heads,
                       hd = v.head_dim();
    const std::string p = v.block_prefix() + std::to_string(d) + ".";
    const std::string attn = p + (siglip ? "self_attn." : "attn.");
    const int h = norm_of(v.norm, p + (siglip ? "layer_norm1" : "norm1"), x, E, E);
    // Qwen's qkv is one weight [E, 3E] read as its three column blocks (the same bytes and MACs).
    auto heads = [&](const std::string& name, const char* part) {
      const std::string w = siglip ? attn + part + "_proj" : attn + "qkv." + part;
      const int y = reshape(w + "_heads", linear(w, h, E, E, true), {N, P, n, hd});
      return name.empty() || siglip ? y : rope(attn + name, y);
    };
    // Over every patch of an image: each of q, k, v as [N, heads, P, hd]; in windows they are cut first.
    const bool windows = v.windowed(d);
    auto by_head = [&](const char* name, int t) { return windows ? t : transpose(attn + name, t, {0, 2, 1, 3}); };
    const int q = by_head("q_by_head", heads("q_rope", "q"));
    const int k = by_head("k_by_head", heads("k_rope", "k"));
    const int val = by_head("v_by_head", heads("", "v"));
    const int merged = windows ? attend_in_windows(attn, image, q, k, val) : attend_everywhere(attn, N * P, q, k, val);
    x = op(OpKind::Add, p + "attention_residual",
           {x, linear(attn + (siglip ? "out_proj" : "proj"), merged, E, E, true)});
    const int h2 = norm_of(v.norm, p + (siglip ? "layer_norm2" : "norm2"), x, E, E);
    int y = 0;
    if (v.gated_mlp) {
      // SwiGLU: silu(x W_gate) * (x W_up), then W_down, each with a bias.
      const int gate = op(OpKind::Silu, p + "mlp.act", {linear(p + "mlp.gate_proj", h2, E, M, true)});
      const int up = linear(p + "mlp.up_proj", h2, E, M, true);
      y = linear(p + "mlp.down_proj", op(OpKind::Mul, p + "mlp.gated", {gate, up}), M, E, true);
    } else {
      // Qwen2-VL's QuickGELU (x sigmoid(1.702 x)) and SigLIP's tanh GELU: one elementwise
      // activation, costed as a GELU.
      const int a = op(OpKind::Gelu, p + "mlp.act", {linear(p + "mlp.fc1", h2, E, M, true)});
      y = linear(p + "mlp.fc2", a, M, E, true);
    }
    return op(OpKind::Add, p + "mlp_residual", {x, y});
  }

  /// Every patch attends to every patch of its image (no mask); q, k, v are [images, heads, P,
  /// hd]; returns [rows, E], rows = images x P.
  int attend_everywhere(const std::string& attn, std::int64_t rows, int q, int k, int val) {
    const int ctx = attend_in_blocks(attn, q, k, val, 1);
    return reshape(attn + "merge", transpose(attn + "context_by_patch", ctx, {0, 2, 1, 3}),
                   {rows, c_.vision.embed_dim});
  }

  /// Each patch attends to the patches of its window (vision_windows): per window shape, the
  /// windows' q, k, v as [windows, heads, patches, hd] and one batched attention; returns [P, E].
  int attend_in_windows(const std::string& attn, const VisionInput& image, int q, int k, int val) {
    const VisionConfig& v = c_.vision;
    const std::int64_t E = v.embed_dim, n = v.heads, hd = v.head_dim();
    std::vector<int> parts;
    std::int64_t from = 0;
    for (const WindowClass& w : vision_windows(v, image)) {
      const std::string b = attn + "windows" + std::to_string(parts.size()) + ".";
      const std::int64_t to = from + w.count * w.patches;
      auto by_window = [&](const char* name, int t) {
        const int cut = reshape(b + name + "_windows", slice(b + name, t, 1, from, to), {w.count, w.patches, n, hd});
        return transpose(b + name + "_by_head", cut, {0, 2, 1, 3});
      };
      const int ctx = attend(b, by_window("q", q), by_window("k", k), by_window("v", val));
      parts.push_back(
          reshape(b + "merge", transpose(b + "context_by_patch", ctx, {0, 2, 1, 3}), {w.count * w.patches, E}));
      from = to;
    }
    if (parts.size() == 1) return parts.front();
    OpAttrs cat;
    cat.axis = 0;
    return op(OpKind::Concat, attn + "window_context", parts, cat);
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

  int norm(const std::string& name, int x, std::int64_t width = 0) {
    // A LayerNorm's shift is hidden wide (gpt2, the only decoder with LayerNorm, has no per-head norm).
    return norm_of(c_.norm, name, x, width ? width : c_.hidden, c_.hidden);
  }
  int norm_of(NormKind kind, const std::string& name, int x, std::int64_t width, std::int64_t bias_width) {
    std::vector<int> ins{x, small_param(name + ".weight", width)};
    if (kind == NormKind::Layer) ins.push_back(small_param(name + ".bias", bias_width));
    OpAttrs a;
    a.axis = -1;
    return op(kind == NormKind::Rms ? OpKind::RmsNorm : OpKind::LayerNorm, name, ins, a);
  }

  /// x cos + rotate_half(x) sin, over the last axis of a [B, S, heads, n, hd] tensor: two
  /// multiplies and an add per element (rotate_half is an index permutation inside the op).
  int rope(const std::string& name, int x) {
    if (c_.learned_positions) return x;
    const int a = op(OpKind::Mul, name + ".cos", {x, cos_});
    const int b = op(OpKind::Mul, name + ".sin", {x, sin_});
    return op(OpKind::Add, name, {a, b});
  }

  /// A per-head RMSNorm over head_dim (qwen3's and gemma3's q_norm, k_norm), before RoPE.
  int head_norm(const std::string& name, int x) { return c_.qk_norm ? norm(name, x, c_.head_dim) : x; }

  int layer(int x, const std::string& p, std::int64_t l) {
    const std::string attn = p + "self_attn.";
    const int h = norm(p + "input_layernorm", x);
    int o = c_.is_mla() ? latent_attention(attn, h) : attention(attn, h, c_.is_local(l));
    if (c_.sandwich_norms) o = norm(p + "post_attention_layernorm", o);
    x = op(OpKind::Add, p + "attention_residual", {x, o});
    const int h2 = norm(p + (c_.sandwich_norms ? "pre_feedforward_layernorm" : "post_attention_layernorm"), x);
    int m = c_.is_moe(l) ? moe_mlp(p + "mlp.", h2) : mlp(p + "mlp.", h2, c_.intermediate);
    if (c_.sandwich_norms) m = norm(p + "post_feedforward_layernorm", m);
    return op(OpKind::Add, p + "mlp_residual", {x, m});
  }

  /// Multi-head attention with grouped K/V heads: the normed input `h` to o_proj's output.
  int attention(const std::string& attn, int h, bool local) {
    const std::int64_t B = s_.batch, S = s_.tokens, T = s_.past + s_.tokens;
    const std::int64_t H = c_.hidden, hd = c_.head_dim, kvh = c_.kv_heads, g = c_.group();
    // Q/K/V projections; a fused qkv_proj weight is read as its three row blocks (same bytes).
    const std::string qn = c_.fused_qkv ? attn + "qkv_proj.q" : attn + "q_proj";
    const std::string kn = c_.fused_qkv ? attn + "qkv_proj.k" : attn + "k_proj";
    const std::string vn = c_.fused_qkv ? attn + "qkv_proj.v" : attn + "v_proj";
    const int q = linear(qn, h, H, c_.heads * hd, c_.qkv_bias);
    const int k = linear(kn, h, H, kvh * hd, c_.qkv_bias);
    const int v = linear(vn, h, H, kvh * hd, c_.qkv_bias);
    // Q as [B, kv heads, S x group, hd]: the query heads of a GQA group are rows of one score
    // GEMM against their shared K, so each K/V head is read once.
    const int q5 = rope(attn + "q_rope", head_norm(attn + "q_norm", reshape(attn + "q_heads", q, {B, S, kvh, g, hd})));
    const int qg =
        reshape(attn + "q_groups", transpose(attn + "q_by_kv_head", q5, {0, 2, 1, 3, 4}), {B, kvh, S * g, hd});
    // The new tokens' K and V, written into the cache (persistent: stored, never copied whole).
    const int k5 = rope(attn + "k_rope", head_norm(attn + "k_norm", reshape(attn + "k_heads", k, {B, S, kvh, 1, hd})));
    const int k_new = reshape(attn + "k_cache.append",
                              transpose(attn + "k_by_head", k5, {0, 2, 1, 3, 4}, &s_.widths.kv), {B, kvh, S, hd});
    const int v_new =
        transpose(attn + "v_cache.append", reshape(attn + "v_heads", v, {B, S, kvh, hd}), {0, 2, 1, 3}, &s_.widths.kv);
    const std::int64_t W = local ? c_.window(S) : S;
    if (s_.past == 0 && W < S) {
      // A local layer's cache keeps the last W tokens of the prompt: those rows are stored.
      g_.set_persistent(slice(attn + "k_cache.append_window", k_new, 2, S - W, S));
      g_.set_persistent(slice(attn + "v_cache.append_window", v_new, 2, S - W, S));
    } else {
      g_.set_persistent(k_new);
      g_.set_persistent(v_new);
    }
    int by_token = -1;  // the context, [B, S, kv heads, group, hd]
    if (s_.past > 0) {
      // Decode: attention reads the cache (past tokens and the one just appended) in place: all
      // of it, or a local layer's last sliding_window tokens.
      const std::int64_t keys = local ? c_.window(T) : T;
      by_token = attend_in_blocks(attn, qg, cache(attn + "k_cache", {B, kvh, keys, hd}),
                                  cache(attn + "v_cache", {B, kvh, keys, hd}), 0, true);
    } else if (W == S) {
      by_token = attend_in_blocks(attn, qg, k_new, v_new, 0, true);
    } else {
      // A prompt longer than a local layer's window: each block of W queries against the keys
      // its band spans, from W - 1 before the block's first query to its last (at most 2W - 1;
      // masked, not skipped, as the full attention's causal half).
      std::vector<int> blocks;
      for (std::int64_t b0 = 0; b0 < S; b0 += W) {
        const std::int64_t b1 = std::min(S, b0 + W), k0 = std::max<std::int64_t>(0, b0 - W + 1);
        const std::string w = attn + "window" + std::to_string(b0 / W) + ".";
        blocks.push_back(attend(w, slice(w + "q", qg, 2, b0 * g, b1 * g), slice(w + "k", k_new, 2, k0, b1),
                                slice(w + "v", v_new, 2, k0, b1)));
      }
      OpAttrs cat;
      cat.axis = 2;
      by_token = context_by_token(attn, op(OpKind::Concat, attn + "window_context", blocks, cat), g);
    }
    const int merged = reshape(attn + "merge", by_token, {B, S, c_.heads * hd});
    return linear(attn + "o_proj", merged, c_.heads * hd, H, c_.o_bias);
  }

  /// Multi-head latent attention (DeepSeek-V2/V3; docs/llm.md, "DeepSeek"), as inference
  /// runtimes (vLLM, SGLang, DeepSeek's own) deploy it. A token's cache row is its latent c_kv
  /// (kv_lora_rank) and its RoPE key k_pe (rope, one for every head), side by side in one
  /// tensor. A prefill decompresses the prompt's c_kv into per-head K and V (kv_b_proj) and
  /// attends as multi-head attention; a step with a cache (decode, a speculative verify, a
  /// prompt after --context) absorbs kv_b_proj into the query and the output instead, so that
  /// every head attends to the cache rows themselves: they are read once for all heads, never
  /// expanded per head. The weights split into row blocks (q's nope and pe columns,
  /// kv_a_proj_with_mqa's c_kv and k_pe, kv_b_proj's K and V parts) hold the same bytes and MACs
  /// as the fused ones.
  int latent_attention(const std::string& attn, int h) {
    const MlaConfig& a = c_.mla;
    const std::int64_t B = s_.batch, S = s_.tokens, T = s_.past + s_.tokens, H = c_.hidden, n = c_.heads;
    const std::int64_t r = a.kv_lora_rank, dn = a.nope, dr = a.rope, dv = a.v_head;
    int q_in = h;
    std::int64_t q_width = H;
    std::string qn = attn + "q_proj";
    if (a.q_lora_rank > 0) {
      q_in = norm(attn + "q_a_layernorm", linear(attn + "q_a_proj", h, H, a.q_lora_rank, a.bias), a.q_lora_rank);
      q_width = a.q_lora_rank;
      qn = attn + "q_b_proj";
    }
    const int q_nope =
        reshape(attn + "q_nope_heads", linear(qn + ".nope", q_in, q_width, n * dn, false), {B, S, n, dn});
    const int q_pe = rope(attn + "q_rope", reshape(attn + "q_pe_heads",
                                                   linear(qn + ".pe", q_in, q_width, n * dr, false), {B, S, n, 1, dr}));
    const int c_kv = norm(attn + "kv_a_layernorm", linear(attn + "kv_a_proj_with_mqa.kv", h, H, r, a.bias), r);
    const int k_pe =
        rope(attn + "k_rope",
             reshape(attn + "k_pe_heads", linear(attn + "kv_a_proj_with_mqa.pe", h, H, dr, a.bias), {B, S, 1, 1, dr}));
    OpAttrs last;  // the last axis of the rank-4 tensors concatenated below
    last.axis = 3;
    // The new tokens' cache rows, written into the cache (persistent: stored, never copied whole).
    g_.set_persistent(
        op(OpKind::Concat, attn + "kv_cache.append",
           {reshape(attn + "c_kv_rows", c_kv, {B, 1, S, r}), reshape(attn + "k_pe_rows", k_pe, {B, 1, S, dr})}, last,
           &s_.widths.kv));
    int merged = -1;
    if (s_.past > 0) {
      // Absorbed: q_nope of each head times its W_UK slice ([dn, r]) is a query of the latent's
      // width; with q_pe beside it, the S x heads query rows score the cache rows in one GEMM.
      const int q_by_head =
          transpose(attn + "q_nope_by_head", reshape(attn + "q_nope_rows", q_nope, {B * S, n, dn}), {1, 0, 2});
      const int q_abs = op(OpKind::MatMul, attn + "kv_b_proj.k_absorbed",
                           {q_by_head, weight(attn + "kv_b_proj.k.weight", {n, dn, r}, s_.widths.weights)});
      const int q_lat =
          reshape(attn + "q_latent", transpose(attn + "q_latent_by_token", q_abs, {1, 0, 2}), {B, 1, S * n, r});
      const int q =
          op(OpKind::Concat, attn + "q_cat", {q_lat, reshape(attn + "q_pe_rows", q_pe, {B, 1, S * n, dr})}, last);
      // The cache row serves as key and as value: the context GEMM runs over its r + rope
      // columns (the rope columns' products are dropped), and the attention reads the row once.
      const int kv = cache(attn + "kv_cache", {B, 1, T, r + dr});
      const int ctx = slice(attn + "context_latent", attend_in_blocks(attn, q, kv, kv), 3, 0, r);
      // Each head's latent context through its W_UV slice ([r, dv]).
      const int c_by_head =
          transpose(attn + "context_by_head", reshape(attn + "context_rows", ctx, {B * S, n, r}), {1, 0, 2});
      const int o = op(OpKind::MatMul, attn + "kv_b_proj.v_absorbed",
                       {c_by_head, weight(attn + "kv_b_proj.v.weight", {n, r, dv}, s_.widths.weights)});
      merged = reshape(attn + "merge", transpose(attn + "context_by_token", o, {1, 0, 2}), {B, S, n * dv});
    } else {
      // Decompressed: K_nope and V of every head from c_kv; K's rope part is k_pe, the same for
      // every head (expanded, as the runtimes' prefill kernels take K whole).
      const int k_nope =
          reshape(attn + "k_nope_heads", linear(attn + "kv_b_proj.k", c_kv, r, n * dn, false), {B, S, n, dn});
      const int v = reshape(attn + "v_heads", linear(attn + "kv_b_proj.v", c_kv, r, n * dv, false), {B, S, n, dv});
      OpAttrs heads;
      heads.shape = {B, S, n, dr};
      const int k_pe_heads =
          op(OpKind::Expand, attn + "k_pe_expand", {reshape(attn + "k_pe_by_token", k_pe, {B, S, 1, dr})}, heads);
      const int q =
          op(OpKind::Concat, attn + "q_cat", {q_nope, reshape(attn + "q_pe_by_token", q_pe, {B, S, n, dr})}, last);
      const int k = op(OpKind::Concat, attn + "k_cat", {k_nope, k_pe_heads}, last);
      const int ctx = attend_in_blocks(attn, transpose(attn + "q_by_head", q, {0, 2, 1, 3}),
                                       transpose(attn + "k_by_head", k, {0, 2, 1, 3}),
                                       transpose(attn + "v_by_head", v, {0, 2, 1, 3}));
      merged = reshape(attn + "merge", transpose(attn + "context_by_token", ctx, {0, 2, 1, 3}), {B, S, n * dv});
    }
    return linear(attn + "o_proj", merged, n * dv, H, a.bias);
  }

  int activation(const std::string& name, int x) {
    return op(c_.act == Activation::Silu ? OpKind::Silu : OpKind::Gelu, name, {x});
  }

  /// attend() of query rows `q` ([B, kv heads, rows, hd]) in blocks of whole tokens whose scores
  /// hold at most kAttentionBlockElements each, as a long prefill's attention is tiled by its
  /// runtime (FlashAttention's query blocks): each block reads every key and value, no tensor of
  /// the step holds the prompt's whole rows x keys scores, and the blocks' contexts are
  /// concatenated in place. The same MACs and vector work as one block; a short step is one block.
  /// `group`: query rows a token has per K/V head (0: the decoder's GQA group; 1 for the vision tower).
  /// `by_token`: each block's context by token (context_by_token) and the blocks concatenated
  /// along the tokens, as a runtime writes each query block's output rows in place: with one
  /// sequence the blocks are contiguous slabs of the context, so the concatenation moves no byte
  /// (sched::concat_in_place), where blocks of [B, kv heads, rows, dv] interleave by head.
  int attend_in_blocks(const std::string& a, int q, int keys, int values, std::int64_t group = 0,
                       bool by_token = false) {
    const Shape qs = g_.tensor(q).shape;  // a copy: the blocks below add tensors
    const std::int64_t B = qs[0], kvh = qs[1], rows = qs[2], g = group ? group : c_.group(), tokens = rows / g;
    const std::int64_t dv = g_.tensor(values).shape.back();
    const std::int64_t per_token = B * kvh * g * g_.tensor(keys).shape[2];  // score elements a token adds
    const std::int64_t block = std::max<std::int64_t>(1, kAttentionBlockElements / per_token);
    if (block >= tokens) {
      const int ctx = attend(a, q, keys, values);
      return by_token ? context_by_token(a, ctx, g) : ctx;
    }
    std::vector<int> blocks;
    const std::int64_t count = (tokens + block - 1) / block;
    for (std::int64_t t0 = 0; t0 < tokens; t0 += block) {
      const std::int64_t n = t0 / block, t1 = std::min(tokens, t0 + block);
      const std::string b = a + "block" + std::to_string(n) + ".";
      if (s_.sample_query_blocks && count > kSampledQueryBlocks && n >= kSampledQueryBlocks - 1 && n < count - 1) {
        // A full block like the last simulated one: its context stands in as an input.
        const Shape shape = by_token ? Shape{B, t1 - t0, kvh, g, dv} : Shape{B, kvh, (t1 - t0) * g, dv};
        blocks.push_back(input(a + "block" + std::to_string(n) + kStandInSuffix, shape));
        continue;
      }
      const int ctx = attend(b, slice(b + "q", q, 2, t0 * g, t1 * g), keys, values);
      blocks.push_back(by_token ? context_by_token(b, ctx, g) : ctx);
    }
    OpAttrs cat;
    cat.axis = by_token ? 1 : 2;
    return op(OpKind::Concat, a + "block_context", blocks, cat);
  }

  /// Context rows [B, kv heads, tokens x group, dv] by token: [B, tokens, kv heads, group, dv].
  int context_by_token(const std::string& a, int ctx, std::int64_t group) {
    const Shape s = g_.tensor(ctx).shape;  // a copy: the ops below add tensors
    return transpose(a + "context_by_token", reshape(a + "context_rows", ctx, {s[0], s[1], s[2] / group, group, s[3]}),
                     {0, 2, 1, 3, 4});
  }

  /// Scores, the scale and mask, softmax and context of query rows `q` against `keys`, `values`.
  int attend(const std::string& a, int q, int keys, int values) {
    OpAttrs tb;
    tb.transpose_b = true;
    const int scores = op(OpKind::MatMul, a + "scores", {q, keys}, tb);
    // 1/sqrt(hd) and the causal mask (generated, not read): one multiply per score.
    const int scaled = op(OpKind::Mul, a + "scale_mask", {scores, scale_});
    OpAttrs sm;
    sm.axis = -1;
    const int probs = op(OpKind::Softmax, a + "softmax", {scaled}, sm);
    return op(OpKind::MatMul, a + "context", {probs, values});
  }

  int slice(const std::string& name, int x, std::int64_t axis, std::int64_t from, std::int64_t to) {
    OpAttrs a;
    a.starts = {from};
    a.ends = {to};
    a.axes = {axis};
    return op(OpKind::Slice, name, {x}, a, &g_.tensor(x).format);
  }

  /// A MoE layer's MLP (docs/llm.md, "Mixture of experts"): the router GEMM and its softmax; the
  /// top-k weights of each token; each token's rows gathered to the experts it picked, the
  /// experts' gated MLPs as batched GEMMs over the D experts the step touches (D from the
  /// routing; D2 of them take one row more than the others so that the rows are exactly
  /// tokens x k); the rows weighted and summed back per token; the shared expert beside them.
  /// The experts the step does not touch are in the graph as constants nobody reads (they hold
  /// DRAM, and count in the parameters and weight bytes).
  int moe_mlp(const std::string& p, int h) {
    const MoeConfig& m = c_.moe;
    const std::int64_t B = s_.batch, S = s_.tokens, H = c_.hidden, I = m.expert_intermediate, k = m.top_k;
    const std::int64_t n = B * S;
    if (k > (std::int64_t{1} << 40) / n)
      throw InputError(c_.source + " (num_experts_per_tok)",
                       "expected at most 2^40 token-expert rows in a step, found " + std::to_string(n) + " tokens x " +
                           std::to_string(k) + " experts");
    const std::int64_t rows = n * k;
    const std::int64_t D = experts_touched(c_, n, s_.routing);
    const std::int64_t per = rows / D, D2 = rows - D * per, D1 = D - D2;
    const int tokens = reshape(p + "tokens", h, {n, H});
    OpAttrs sm;
    sm.axis = -1;
    const int logits = linear(p + "gate", tokens, H, m.experts, false);
    int probs = m.sigmoid_scores ? op(OpKind::Sigmoid, p + "router_sigmoid", {logits})
                                 : op(OpKind::Softmax, p + "router_softmax", {logits}, sm);
    // DeepSeek-V3's correction bias steers the choice (not the weights): an add per score.
    if (m.router_bias)
      probs = op(OpKind::Add, p + "gate.e_score_correction",
                 {probs, small_param(p + "gate.e_score_correction_bias", m.experts)});
    // The top-k selection (and its renormalisation, DeepSeek's group limit and scaling) as the
    // k weights each token keeps.
    const int weights = reshape(p + "topk_weights", slice(p + "topk", probs, 1, 0, k), {n, k, 1});
    std::vector<int> outs;
    auto experts = [&](const std::string& e, std::int64_t count, std::int64_t r) {
      if (count == 0) return;
      const int idx = input(e + "rows", {count, r});  // the tokens each expert runs (the router's choice)
      g_.set_elem_bytes(idx, 4);
      OpAttrs ax;
      ax.axis = 0;
      const int x = op(OpKind::Gather, e + "dispatch", {tokens, idx}, ax);
      auto w = [&](const std::string& name, std::int64_t in, std::int64_t out) {
        return weight(e + name + ".weight", {count, in, out}, s_.widths.weights);
      };
      const int gate = activation(e + "act", op(OpKind::MatMul, e + "gate_proj", {x, w("gate_proj", H, I)}));
      const int up = op(OpKind::MatMul, e + "up_proj", {x, w("up_proj", H, I)});
      const int down =
          op(OpKind::MatMul, e + "down_proj", {op(OpKind::Mul, e + "gated", {gate, up}), w("down_proj", I, H)});
      outs.push_back(reshape(e + "rows_out", down, {count * r, H}));
    };
    experts(p + "experts.", D1, per);
    experts(p + "experts_one_more_row.", D2, per + 1);
    if (D < m.experts) weight(p + "experts.unread.weight", {m.experts - D, 3 * H * I}, s_.widths.weights);
    int routed = outs[0];
    if (outs.size() > 1) {
      OpAttrs cat;
      cat.axis = 0;
      routed = op(OpKind::Concat, p + "experts.rows", outs, cat);
    }
    const int weighted =
        op(OpKind::Mul, p + "experts.weighted", {reshape(p + "experts.by_token", routed, {n, k, H}), weights});
    OpAttrs sum;
    sum.axes = {1};
    sum.keepdims = false;
    int out = reshape(p + "experts.out", op(OpKind::ReduceSum, p + "experts.combine", {weighted}, sum), {B, S, H});
    if (m.shared_intermediate > 0) {
      // DeepSeek's n_shared_experts run as one MLP n times as wide (HF's DeepseekV2MoE), ungated.
      int shared = mlp(p + (m.shared_experts > 0 ? "shared_experts." : "shared_expert."), h, m.shared_intermediate);
      if (m.shared_gate)
        shared = op(OpKind::Mul, p + "shared_expert_gate.mul",
                    {shared, op(OpKind::Sigmoid, p + "shared_expert_gate.act",
                                {linear(p + "shared_expert_gate", h, H, 1, false)})});
      out = op(OpKind::Add, p + "shared_expert.add", {out, shared});
    }
    return out;
  }

  int mlp(const std::string& p, int h, std::int64_t I) {
    const std::int64_t H = c_.hidden;
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

namespace {

/// The parameters of layer l; `active`: a MoE layer's top_k routed experts only.
std::uint64_t layer_parameters(const LlmConfig& c, std::int64_t l, bool active) {
  const std::uint64_t H = std::uint64_t(c.hidden), I = std::uint64_t(c.intermediate), hd = std::uint64_t(c.head_dim);
  const std::uint64_t q = std::uint64_t(c.heads) * hd, kv = std::uint64_t(c.kv_heads) * hd;
  std::uint64_t layer = 0;
  if (c.is_mla()) {
    const MlaConfig& a = c.mla;
    const std::uint64_t n = std::uint64_t(c.heads), r = std::uint64_t(a.kv_lora_rank),
                        rq = std::uint64_t(a.q_lora_rank);
    const std::uint64_t dr = std::uint64_t(a.rope), dv = std::uint64_t(a.v_head), dq = std::uint64_t(a.nope) + dr;
    layer += rq ? H * rq + rq + rq * n * dq : H * n * dq;        // q_a_proj, q_a_layernorm, q_b_proj | q_proj
    layer += H * (r + dr) + r;                                   // kv_a_proj_with_mqa, kv_a_layernorm
    layer += r * n * (std::uint64_t(a.nope) + dv) + n * dv * H;  // kv_b_proj, o_proj
    if (a.bias) layer += rq + r + dr + H;                        // q_a_proj's (none on q_proj), kv_a's, o's
  } else {
    layer += H * (q + 2 * kv) + q * H;  // q, k, v, o
    if (c.qkv_bias) layer += q + 2 * kv;
    if (c.o_bias) layer += H;
    if (c.qk_norm) layer += 2 * hd;  // q_norm, k_norm
  }
  if (c.is_moe(l)) {
    const MoeConfig& m = c.moe;
    const std::uint64_t experts = std::uint64_t(active ? m.top_k : m.experts);
    layer += H * std::uint64_t(m.experts);                            // router
    if (m.router_bias) layer += std::uint64_t(m.experts);             // its correction bias
    layer += experts * 3 * H * std::uint64_t(m.expert_intermediate);  // routed experts
    layer += 3 * H * std::uint64_t(m.shared_intermediate);            // shared expert
    if (m.shared_gate) layer += H;                                    // its gate
  } else {
    layer += (c.mlp == MlpKind::Gated ? 3 : 2) * H * I;  // gate, up, down | fc, proj
    if (c.mlp_bias) layer += (c.mlp == MlpKind::Gated ? 2 * I : I) + H;
  }
  const std::uint64_t norm = c.norm == NormKind::Layer ? 2 * H : H;
  return layer + (c.sandwich_norms ? 4 : 2) * norm;
}

std::uint64_t parameters(const LlmConfig& c, bool active) {
  const std::uint64_t H = std::uint64_t(c.hidden);
  std::uint64_t total = (c.norm == NormKind::Layer ? 2 * H : H) + std::uint64_t(c.vocab) * H;
  for (const LayerClass& k : layer_classes(c)) total += std::uint64_t(k.count) * layer_parameters(c, k.example, active);
  if (!c.tied_embeddings) total += std::uint64_t(c.vocab) * H;
  if (c.learned_positions) total += std::uint64_t(c.max_positions) * H;
  return total;
}

}  // namespace

Graph build_vision_encoder(const LlmConfig& c, const VisionInput& image, const Widths& widths) {
  StepSpec s;
  s.widths = widths;
  return Builder(c, s).build_vision(image);
}

std::uint64_t vision_parameter_count(const LlmConfig& c) {
  if (!c.has_vision()) return 0;
  const VisionConfig& v = c.vision;
  const std::uint64_t E = std::uint64_t(v.embed_dim), M = std::uint64_t(v.mlp_width()),
                      K = std::uint64_t(v.patch_pixels()), H = std::uint64_t(v.out_hidden),
                      m2 = std::uint64_t(v.merge * v.merge);
  const std::uint64_t norm = v.norm == NormKind::Layer ? 2 * E : E;  // weight (and bias)
  const std::uint64_t mlp = v.gated_mlp ? 3 * E * M + 2 * M + E      // gate, up, down
                                        : 2 * E * M + M + E;         // fc1, fc2
  const std::uint64_t block = 2 * norm                               // norm1, norm2
                              + 3 * E * E + 3 * E                    // qkv
                              + E * E + E                            // proj
                              + mlp;
  if (v.hf_vit()) {
    // The patch embedding (SigLIP's with a bias), CLIP's class row, a position per row, CLIP's
    // pre_layrnorm, every block of the checkpoint, post_layernorm, and the projector: Gemma 3's
    // RMSNorm and E x H weight, or LLaVA's E x H and H x H layers.
    const std::uint64_t R = std::uint64_t(v.rows((v.image_size / v.patch) * (v.image_size / v.patch)));
    const bool clip = v.kind == VisionKind::Clip;
    const std::uint64_t embeddings = K * E + (clip ? E + 2 * E : E) + R * E;
    const std::uint64_t blocks = std::uint64_t(v.stored_depth > 0 ? v.stored_depth : v.depth);
    const std::uint64_t bias = v.projector_bias ? 1 : 0;
    const std::uint64_t projector = v.projector == VisionProjector::LlavaMlp
                                        ? std::uint64_t(v.feature_width()) * H + bias * H + H * H + bias * H
                                        : E + E * H;
    const std::uint64_t newline = v.tiled() ? H : 0;  // LLaVA-NeXT's image_newline
    return embeddings + blocks * block + 2 * E + projector + newline;
  }
  const std::uint64_t merger = norm + (m2 * E) * (m2 * E) + m2 * E + m2 * E * H + H;
  return K * E + std::uint64_t(v.depth) * block + merger;
}

std::vector<WindowClass> vision_windows(const VisionConfig& v, const VisionInput& image) {
  if (v.window == 0) return {{1, image.patches}};
  // transformers' get_window_index: the grid of merged tokens padded at the bottom and the right
  // to whole windows, the padding dropped: full windows, then the right column's, the bottom
  // row's and the corner's, narrower by what the grid leaves.
  const std::int64_t rows = image.resized_height / v.patch / v.merge, cols = image.resized_width / v.patch / v.merge;
  const std::int64_t w = v.window, m2 = v.merge * v.merge;
  const std::int64_t full_rows = rows / w, left_rows = rows % w, full_cols = cols / w, left_cols = cols % w;
  std::vector<WindowClass> out;
  auto add = [&](std::int64_t count, std::int64_t h, std::int64_t wd) {
    if (count > 0 && h > 0 && wd > 0) out.push_back({count, h * wd * m2});
  };
  add(full_rows * full_cols, w, w);
  add(full_rows, w, left_cols);
  add(full_cols, left_rows, w);
  add(1, left_rows, left_cols);
  return out;
}

std::uint64_t parameter_count(const LlmConfig& c) {
  return parameters(c, false);
}

std::uint64_t active_parameter_count(const LlmConfig& c) {
  return parameters(c, true);
}

double expected_experts_touched(const LlmConfig& c, std::int64_t tokens) {
  const double E = double(c.moe.experts), k = double(c.moe.top_k);
  return E * (1.0 - std::pow(1.0 - k / E, double(tokens)));
}

std::int64_t experts_touched(const LlmConfig& c, std::int64_t tokens, ExpertRouting routing) {
  const std::int64_t k = c.moe.top_k;
  if (routing == ExpertRouting::Concentrated) return k;
  const std::int64_t most = tokens > c.moe.experts / k ? c.moe.experts : tokens * k;  // min(E, tokens x k)
  return std::clamp<std::int64_t>(std::llround(expected_experts_touched(c, tokens)), k, most);
}

ExpertRouting parse_expert_routing(const std::string& name, const std::string& flag) {
  if (name.empty() || name == "uniform") return ExpertRouting::Uniform;
  if (name == "concentrated") return ExpertRouting::Concentrated;
  throw InputError(flag + " " + name, "expected uniform or concentrated, found '" + name + "'");
}

std::string to_string(ExpertRouting r) {
  return r == ExpertRouting::Concentrated ? "concentrated" : "uniform";
}

std::uint64_t kv_cache_bytes(const LlmConfig& c, const Widths& w, std::int64_t batch, std::int64_t context,
                             std::uint32_t default_eb) {
  // A local layer's cache holds at most its sliding window. MLA's holds one row a token,
  // c_kv and k_pe (kv_lora_rank + rope), for all heads: no separate K and V.
  std::uint64_t total = 0;
  for (const LayerClass& k : layer_classes(c)) {
    Graph g;
    Tensor t;
    t.name = "kv";
    const std::int64_t tokens = c.is_local(k.example) ? c.window(context) : context;
    t.shape = c.is_mla() ? Shape{batch, 1, tokens, c.mla.kv_lora_rank + c.mla.rope}
                         : Shape{batch, c.kv_heads, tokens, c.head_dim};
    t.format = w.kv;
    const int i = g.add_tensor(t);
    total += (c.is_mla() ? 1 : 2) * std::uint64_t(k.count) * tensor_bytes(g, i, default_eb);
  }
  return total;
}

}  // namespace npusim::workloads::llm
