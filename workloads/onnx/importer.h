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
  void import_node(const ::onnx::NodeProto& proto, int index);
  int subgraph_nodes_ = 0;  ///< nodes imported from If branches, for unique default names
  bool try_fold(const Node& n);
  bool bind_onnx_shapes_as_constants(const Node& n);
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
  std::string unique_op_name(const std::string& base) const;
  std::string unique_tensor_name(const std::string& base) const;

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
  void map_fused_conv(const Node& n);
  void map_fused_gemm(const Node& n);
  void map_fused_matmul(const Node& n);
  void map_bias_gelu(const Node& n);
  void map_skip_layer_norm(const Node& n);
  void map_bias_add(const Node& n);
  void map_quick_gelu(const Node& n);
  void map_qlinear_contrib(const Node& n);
  void map_attention(const Node& n);
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
  void read_stated_widths();
  std::uint8_t stated_width(const std::string& name) const;
};

/// ONNX Runtime's contrib operator domain.
inline const std::string kContribDomain = "com.microsoft";

/// `shape` as the IR holds it: rank 0 becomes [1] (the IR has no scalars).
Shape ir_shape(const Shape& shape);

}  // namespace npusim::workloads::onnx
