#pragma once
// The ONNX importer (internal to workloads/): walks the nodes in file order, folds what is known
// at import time, and maps every other node onto IR ops. Mapping functions live in
// map_compute.cpp (MAC-array and vector-unit operators) and map_data.cpp (data movement).
#include <onnx/onnx_pb.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "workloads/graph.h"
#include "workloads/loader.h"
#include "workloads/onnx/attributes.h"
#include "workloads/onnx/const_tensor.h"

namespace npusim::workloads::onnx {

/// An ONNX value while importing: an activation (an IR tensor) or a tensor known at import time.
struct Value {
  std::string name;                             ///< the ONNX value name
  Shape shape;                                  ///< ONNX shape (scalars have rank 0)
  int tensor = -1;                              ///< the IR tensor, once there is one
  std::shared_ptr<const ConstTensor> constant;  ///< set for tensors known at import time

  bool is_constant() const { return constant != nullptr; }
};

/// One node being mapped: its resolved inputs, its attributes and the name its IR ops take.
struct Node {
  const ::onnx::NodeProto& proto;
  std::string name;  ///< unique base name for the IR ops it creates
  NodeAttributes attrs;
  std::vector<Value*> inputs;  ///< nullptr for an absent optional input

  bool has(std::size_t i) const { return i < inputs.size() && inputs[i]; }
  const Value& in(std::size_t i) const;  ///< throws InputError when absent
  const std::string& out(std::size_t i = 0) const { return proto.output(static_cast<int>(i)); }
  const std::string& where() const { return attrs.where(); }
  [[noreturn]] void fail(const std::string& expected, const std::string& found) const;
  /// The integer values of input `i` (a shape, axes, pads...): it must be known at import time.
  std::vector<std::int64_t> ints(std::size_t i, const std::string& what) const;
  /// The floating-point values of input `i`, which must be known at import time.
  std::vector<double> reals(std::size_t i, const std::string& what) const;
};

/// The staged IR graph (not finalized) and the facts the rewrite passes need.
struct Staged {
  Graph graph;
  /// One-element constants with a known value, by IR tensor (a Pow's exponent, an epsilon).
  std::unordered_map<int, double> scalars;
};

class Importer {
 public:
  Importer(const ::onnx::ModelProto& model, std::unordered_map<std::string, Shape> onnx_shapes, std::string path,
           const LoadOptions& options);

  /// Maps every node. Throws InputError for unsupported operators (unless skipped) and for
  /// anything malformed, naming the node.
  Staged run();

  using Mapper = void (Importer::*)(const Node&);
  /// Supported operator types and the function mapping each (default domain only).
  static const std::unordered_map<std::string, Mapper>& mappers();
  /// ONNX Runtime's contrib operators (domain com.microsoft) read as their primitive ops
  /// (map_contrib.cpp); every op they give records the node in `Op::origin`.
  static const std::unordered_map<std::string, Mapper>& contrib_mappers();

 private:
  // ---- core (importer.cpp) ----
  void read_initializers();
  void read_inputs();
  void check_supported();
  /// Every --branch names an If node of the model; throws InputError listing them otherwise.
  void check_branch_names() const;
  void import_node(const ::onnx::NodeProto& proto, int index);
  int subgraph_nodes_ = 0;  ///< nodes imported from If branches, for unique default names
  bool try_fold(const Node& n);
  bool bind_onnx_shapes_as_constants(const Node& n);
  /// Whether `n` reads an empty tensor (a dim of 0) and an activation: it computes nothing.
  bool reads_empty(const Node& n) const;
  /// Binds the outputs of such a node as constants of the shapes ONNX infers for them.
  void bind_reading_empty(const Node& n);
  void pass_through(const Node& n);
  void declare_outputs();

  void bind(const std::string& name, Value v);
  /// The IR tensor for `v`, creating an IR constant the first time a constant is read by an op.
  int operand(const Value& v);
  /// Adds an IR op named `<node name><suffix>` reading `inputs`, whose output tensor is named
  /// `out_name`, and returns the value it produces (its shape inferred by the IR's rules).
  Value emit(const Node& n, OpKind kind, std::vector<int> inputs, OpAttrs attrs, const std::string& out_name,
             const std::string& suffix = "");
  /// `v` as `shape` (same element count), named `out_name`: a reshape view of an activation,
  /// or the constant re-shaped (a Conv1d weight seen as 2-D).
  Value reshaped(const Node& n, const Value& v, const Shape& shape, const std::string& out_name,
                 const std::string& op_suffix = ".reshape");
  /// A new graph input standing for an output npusim does not compute (a skipped operator's).
  Value new_input(const std::string& name, const Shape& shape);
  const Shape* onnx_shape(const std::string& name) const;
  /// `base`, or `base#K` with the least K not taken. The next K to try is kept per base, so
  /// naming the ops of N unrolled iterations (all with one base) is linear in N, not quadratic.
  std::string unique_op_name(const std::string& base);
  std::string unique_tensor_name(const std::string& base);
  std::unordered_map<std::string, int> next_op_suffix_, next_tensor_suffix_;

  // ---- the unrolling budget (importer.cpp) ----
  /// A Loop or recurrent cell being unrolled, for the budget's message.
  struct Unrolling {
    std::string node;  ///< "node 'inner' (Loop)"
    std::int64_t trips = 0;
    bool counts_ops = false;  ///< a recurrent cell: its IR ops count; a Loop: its body's nodes
  };
  std::vector<Unrolling> unrolling_;
  std::int64_t unrolled_ = 0;  ///< Loop body nodes imported per trip + recurrent cells' ops per step
  /// Counts `count` unrolled ops against kMaxUnrolledOps; throws InputError naming the nodes
  /// being unrolled, their trips and the budget when the total passes it.
  void count_unrolled(const Node& n, std::int64_t count);
  /// Refuses, before any work, an unrolling of `trips` x `per_trip` ops that cannot fit.
  void check_unroll_estimate(const Node& n, std::int64_t trips, std::int64_t per_trip, const std::string& what);
  /// The nodes a Loop body imports per trip, nested Loops with trip counts known now included
  /// (their trips x their bodies'), saturating at kMaxUnrolledOps + 1.
  std::int64_t body_ops(const ::onnx::GraphProto& body) const;

  // ---- MAC-array and vector-unit operators (map_compute.cpp) ----
  void map_conv(const Node& n);
  void map_conv_transpose(const Node& n);
  void map_gemm(const Node& n);
  void map_matmul(const Node& n);
  void map_batch_norm(const Node& n);
  void map_layer_norm(const Node& n);
  void map_binary(const Node& n);
  void map_unary(const Node& n);
  /// A chain of binary `kind` ops over the node's inputs (Max and Min are variadic).
  void map_binary_kind(const Node& n, OpKind kind);
  void map_unary_kind(const Node& n, OpKind kind);
  void map_clip(const Node& n);
  void map_softmax(const Node& n);
  void map_pool(const Node& n);
  void map_global_pool(const Node& n);
  void map_reduce(const Node& n);
  void map_where(const Node& n);
  void map_instance_norm(const Node& n);
  void map_group_norm(const Node& n);
  void map_lrn(const Node& n);
  void map_cum_sum(const Node& n);
  void map_arg_extreme(const Node& n);
  /// Einsum of the matmul shape (batch, row, column and summed indices): transposes and
  /// reshapes (views where no data moves) around one MatMul; one operand: a transpose and/or
  /// a reduce_sum.
  void map_einsum(const Node& n);
  /// Emits a conv/pool whose activation input is x (other inputs after it) and binds output 0.
  /// A 1-D one ([N, C, L]) runs as 2-D on [N, C, 1, L], so the IR's 2-D rules apply.
  void emit_windowed(const Node& n, OpKind kind, const Value& x, std::vector<const Value*> others, const OpAttrs& a);

  // ---- quantized operators (map_quant.cpp) ----
  /// QuantizeLinear / DequantizeLinear: a Q -> DQ pair on an activation only marks the integer
  /// type the tensor travels in (the simulator runs the config's dtype): both are free. A lone
  /// one converts on the vector unit.
  void map_quantize(const Node& n);
  /// QuantizeLinear / DequantizeLinear's scale and zero point against x and `axis` (folded or
  /// mapped alike): a per-axis scale has x's dim on the axis, the zero point the scale's shape,
  /// an integer type, and (DQ) x's type. Throws InputError naming the node.
  void check_qdq(const Node& n) const;
  /// Cast: the output is the input (map_alias); a Cast between a Q and its DQ (PyTorch's QDQ
  /// export casts the Q's output, Q -> Cast -> DQ) keeps the pair an annotation.
  void map_cast(const Node& n);
  /// Whether every reader of `value` is a DequantizeLinear, or a Cast whose output is so read.
  bool read_only_dequantized(const std::string& value) const;
  void map_qlinear_conv(const Node& n);
  void map_integer_conv(const Node& n);
  void map_qlinear_matmul(const Node& n);
  void map_integer_matmul(const Node& n);
  /// DynamicQuantizeLinear: min and max of x (two reductions), then one conversion.
  void map_dynamic_quantize(const Node& n);
  /// QLinearAdd / QLinearMul / QLinearSigmoid... (com.microsoft): the float op `kind` on the
  /// data inputs at `data`, scales and zero points dropped.
  void map_qlinear_as(const Node& n, OpKind kind, const std::vector<std::size_t>& data);
  /// `n` seen as another operator over a subset of its inputs (QLinearConv as Conv on x, w, B).
  Node as_node(const Node& n, const std::vector<std::size_t>& inputs) const;
  /// Bytes per element of the integer type a quantizing node writes: its zero point's (input
  /// `zero_point`), else the `output_dtype` attribute (opset 21), else uint8 (the ONNX default).
  std::uint8_t quantized_width(const Node& n, std::size_t zero_point) const;
  /// Element widths of the MAC-array ops mapped since op `first` (a QOperator node): activation
  /// inputs `act`, constant weights `weight`, the bias `bias`, outputs `out` (0 = leave as is).
  void set_gemm_widths(std::size_t first, std::uint8_t act, std::uint8_t weight, std::uint8_t bias, std::uint8_t out);
  /// A view shares its input's bytes, so both carry one width: each view's width goes back to
  /// its input when only the view has one (a QDQ pair after a Flatten), then forward to every view.
  void share_view_widths();

  // ---- ONNX Runtime contrib operators (map_contrib.cpp) ----
  /// The inputs ORT's schema requires of the node (ContribOperators.md), by position: an absent
  /// one is an InputError naming the node, each missing input and the count found.
  void check_contrib_inputs(const Node& n) const;
  void map_fused_conv(const Node& n);
  void map_fused_gemm(const Node& n);
  void map_fused_matmul(const Node& n);
  void map_bias_gelu(const Node& n);
  void map_skip_layer_norm(const Node& n);
  void map_bias_add(const Node& n);
  void map_quick_gelu(const Node& n);
  void map_qlinear_contrib(const Node& n);
  void map_attention(const Node& n);
  // ---- LLM decoder contrib operators (map_decoder.cpp) ----
  /// SimplifiedLayerNormalization: one rms_norm.
  void map_rms_norm(const Node& n);
  /// RotaryEmbedding: the cos/sin rows of the positions, then per rotated element two products
  /// and a sum (rotary_embedding_dim < head size: the rest passes through a slice and concat).
  void map_rotary_embedding(const Node& n);
  /// MultiHeadAttention (separate Q, K, V; past/present KV; attention_bias; bias).
  void map_multi_head_attention(const Node& n);
  /// GroupQueryAttention (separate or packed QKV; past/present KV; do_rotary; attention_bias).
  void map_group_query_attention(const Node& n);
  /// MatMulNBits (block-quantised weights): one matmul whose weight keeps the packed format
  /// (bits per element plus a scale, and a zero point, per block), then the bias.
  void map_matmul_nbits(const Node& n);
  /// A constant [size] standing for part of constant `of` (a projection bias split per Q, K, V).
  Value constant_part(const Value& of, std::int64_t size, const std::string& tag);
  /// The rows of a cos or sin cache for the positions: [B or 1, seq, r/2].
  Value cache_rows(const Node& n, const Value& cache, const Value* positions, std::int64_t batch, std::int64_t seq,
                   const std::string& tag);
  /// x [B, S, N, h] (bnsh: [B, N, S, h]) rotated by RoPE over its first `rotary_dim` (0: all).
  Value rotary(const Node& n, const Value& x, bool bnsh, const Value& cos, const Value& sin, std::int64_t rotary_dim,
               bool interleaved, const std::string& tag);
  /// A key or value [B, L, heads*h] as the cache holds it, [B, heads, L, h].
  Value kv_heads(const Node& n, const Value& kv, std::int64_t heads, const std::string& tag);
  /// Concat(past input, now) along the sequence, bound to output `present_output` when used.
  Value with_past(const Node& n, const Value& now, std::size_t past_input, std::size_t present_output,
                  const std::string& tag);
  /// q [B, S, N, h] as [B, Nk, G*S, h]: the G query heads of each KV head on its rows.
  Value query_rows(const Node& n, const Value& q4, std::int64_t kv_heads);
  /// softmax(q k^T + bias) v on the rows of query_rows; output `qk_output` gets the scores.
  Value attend(const Node& n, const Value& q, std::int64_t groups, const Value& k, const Value& v, const Value* bias,
               std::size_t qk_output);
  /// The context [B, Nk, G*S, hv] as output 0, [B, S, N*hv].
  void attention_output(const Node& n, const Value& context, std::int64_t groups);

  /// The `activation` attribute of FusedConv / FusedGemm applied to `y`, bound to output 0.
  void apply_activation(const Node& n, const Value& y);

  // ---- recurrent cells (map_recurrent.cpp) ----
  /// LSTM, GRU, RNN (forward, reverse, bidirectional) unrolled over the sequence.
  void map_recurrent(const Node& n);

  // ---- control flow (importer.cpp) ----
  /// If: the branch its condition (known at import time, or picked with --branch) selects,
  /// imported in place; its outputs become the If's.
  void map_if(const Node& n);
  /// Loop with a trip count known at import: the body imported once per iteration (carried
  /// values threaded through, scan outputs concatenated); its condition must stay known.
  void map_loop(const Node& n);
  /// Where value `name` comes from, for messages: "node 'x' (Greater)" or "graph input 'x'".
  std::string origin_of(const std::string& name) const;

  // ---- data movement and aliases (map_data.cpp) ----
  void map_alias(const Node& n);
  void map_reshape(const Node& n);
  void map_flatten(const Node& n);
  void map_squeeze(const Node& n);
  void map_transpose(const Node& n);
  void map_concat(const Node& n);
  void map_split(const Node& n);
  void map_slice(const Node& n);
  void map_gather(const Node& n);
  /// Opset 18's Pad axes input: the pads of those axes spread over every dim.
  std::vector<std::int64_t> pads_on_axes(const Node& n, const std::vector<std::int64_t>& pads,
                                         const std::vector<std::int64_t>& axes, std::size_t rank) const;
  void map_pad(const Node& n);
  void map_expand(const Node& n);
  void map_resize(const Node& n);
  void map_tile(const Node& n);
  /// DepthToSpace (DCR or CRD) and SpaceToDepth: a 6-D view, one transpose, a 4-D view.
  void map_depth_space(const Node& n);
  /// `v` permuted by `perm`: nothing when it is the identity, a view when no data moves, a
  /// re-laid-out constant for a weight, else a transpose op.
  Value permuted(const Node& n, const Value& v, const std::vector<std::int64_t>& perm, const std::string& out_name);
  /// A reshape view of activation `x` to `shape`, bound to output 0 (an alias when equal).
  void view_output(const Node& n, const Value& x, const Shape& shape);

  const ::onnx::ModelProto& model_;
  std::unordered_map<std::string, Shape> onnx_shapes_;
  std::string path_;
  LoadOptions options_;
  int opset_ = 1;
  Staged staged_;
  std::unordered_map<std::string, Value> values_;
  std::unordered_set<int> skipped_nodes_;
  /// The operator types reading each value (a Q whose readers are all DQ is an annotation).
  std::unordered_map<std::string, std::vector<std::string>> consumer_types_;
  /// The outputs of the Cast nodes reading each value.
  std::unordered_map<std::string, std::vector<std::string>> cast_outputs_;
  /// Outputs of QuantizeLinear nodes read only by DequantizeLinear ones (through Casts).
  std::unordered_set<std::string> quantized_;
  /// Bytes per element of the values the model types as 8-, 16- or 32-bit integers (declared,
  /// or inferred by ONNX's shape inference: a Relu of uint8 is uint8), by ONNX name.
  std::unordered_map<std::string, std::uint8_t> stated_widths_;
  /// The element type the model states for each value (graph inputs, value_info, outputs).
  std::unordered_map<std::string, int> stated_types_;
  void read_stated_widths();
  std::uint8_t stated_width(const std::string& name) const;
  /// A value's element type: a constant's own, else the one the model states; 0 when unknown.
  int elem_type_of(const Value& v) const;
  int elem_type_of(const std::string& name) const;
};

/// The most ops unrolling may produce in one import: the nodes of Loop bodies imported once per
/// trip, plus the IR ops of LSTM/GRU/RNN steps (docs/onnx.md, "Unrolling budget"). 2^17: a Loop
/// of 65,536 trips of 2 nodes, an LSTM of 5,700 steps; about 10 s of import (~80 us per op) and
/// under 1 GB.
constexpr std::int64_t kMaxUnrolledOps = std::int64_t{1} << 17;

/// ONNX Runtime's contrib operator domain.
inline const std::string kContribDomain = "com.microsoft";

/// `shape` as the IR holds it: rank 0 becomes [1] (the IR has no scalars).
Shape ir_shape(const Shape& shape);

}  // namespace npusim::workloads::onnx
