#pragma once
// The operator-graph IR: tensors (shape, producer, consumers) and ops (kind, attributes,
// inputs, outputs). Shapes are NCHW for 4-D activations; weights are constant tensors.
// Every op can say its MACs, vector ops and minimum bytes in and out (see op_cost).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace npusim::workloads {

using Shape = std::vector<std::int64_t>;
/// The product of dims [from, to) of `s` (to clipped to its rank; 1 when the range is empty).
std::int64_t dims_product(const Shape& s, std::size_t from, std::size_t to);

enum class OpKind {
  // GEMM-like (MAC array)
  Conv2d,
  MatMul,
  ConvTranspose,
  // elementwise binary (vector unit)
  Add,
  Sub,
  Mul,
  Div,
  Max,
  Min,
  Pow,
  Equal,
  Greater,
  Less,
  GreaterOrEqual,
  LessOrEqual,
  And,
  Or,
  Xor,
  PRelu,
  Mod,
  Where,  // elementwise select of three broadcast operands (condition, then, else)
  // unary activations and math (vector unit)
  Relu,
  Clip,
  Sigmoid,
  Tanh,
  Gelu,
  HardSwish,
  HardSigmoid,
  LeakyRelu,
  Sqrt,
  Exp,
  Log,
  Erf,
  Neg,
  Abs,
  Not,
  Elu,
  Selu,
  Softplus,
  Softsign,
  Mish,
  Sign,
  Floor,
  Ceil,
  Round,
  Reciprocal,
  Sin,
  Cos,
  // pooling, reductions and normalisation (vector unit)
  MaxPool,
  AvgPool,
  GlobalAvgPool,
  GlobalMaxPool,
  Softmax,
  LogSoftmax,
  LayerNorm,
  BatchNorm,
  ReduceMean,
  ReduceSum,
  ReduceMax,
  ReduceMin,
  ReduceProd,
  ReduceL1,
  ReduceL2,
  ReduceSumSquare,
  ReduceLogSumExp,
  ArgMax,
  ArgMin,
  InstanceNorm,
  GroupNorm,
  Lrn,
  CumSum,
  // data movement
  Reshape,
  Flatten,
  Transpose,
  Concat,
  Slice,
  Resize,
  Pad,
  Gather,
  Expand,
  Tile,
  // element type conversions (vector unit): a lone ONNX QuantizeLinear / DequantizeLinear
  Quantize,
  Dequantize,
  // x * sigmoid(x) (SiLU), also standing for Swish x * sigmoid(beta * x): from the decomposed forms
  Silu,
  // x / sqrt(mean(x^2) + eps) * scale over the last axis: RMSNorm of LLMs, ONNX Runtime's
  // SimplifiedLayerNormalization (layer_norm without the mean; vector unit)
  RmsNorm,
};

/// How an op is executed: on the MAC array, on the vector unit, or as a view (no work:
/// reshape/flatten only reinterpret the same bytes).
enum class OpClass { Gemm, Vector, View };

OpClass op_class(OpKind k);
/// Lower-case name as written in workload files ("conv2d", "relu", "global_avg_pool").
std::string to_string(OpKind k);
std::optional<OpKind> op_kind_from_string(const std::string& s);
bool is_elementwise(OpKind k);  // output element i depends only on input element i (+ broadcast)
/// Every kind, in declaration order (for "expected one of ..." messages).
std::vector<OpKind> all_op_kinds();
/// "[1, 3, 224, 224]", as shapes appear in messages.
std::string format_shape(const Shape& s);

struct OpAttrs {
  // convolution / transposed convolution / pooling
  std::array<std::int64_t, 2> kernel{1, 1};
  std::array<std::int64_t, 2> stride{1, 1};
  std::array<std::int64_t, 2> dilation{1, 1};
  std::array<std::int64_t, 4> pads{0, 0, 0, 0};  // top, left, bottom, right
  std::int64_t groups = 1;
  std::int64_t out_channels = 0;
  bool bias = false;
  // conv_transpose: extra rows/columns added at the bottom/right of the output
  std::array<std::int64_t, 2> output_padding{0, 0};
  // matmul / gemm: the second operand is transposed ([N, K] instead of [K, N])
  bool transpose_b = false;
  // clip / relu6, leaky-relu alpha
  double min = 0, max = 6, alpha = 0.01;
  // softmax / concat / layer-norm / gather / arg_max / cum_sum axis (negative counts from the end)
  std::int64_t axis = -1;
  // reductions: keep each reduced dim as size 1
  bool keepdims = true;
  // reshape / expand target (reshape: one -1 allowed; tile: the repeats), transpose
  // permutation, slice ranges and reduction axes, resize scales (group_norm: `groups`;
  // lrn: the window `kernel[0]` channels)
  std::vector<std::int64_t> shape, perm, starts, ends, axes, steps;
  std::vector<double> scales;
  // pad: ONNX layout, the amount before each dim then after each dim (negative crops)
  std::vector<std::int64_t> paddings;
};

/// How a tensor's elements are stored when the format is not whole bytes per element: `bits`
/// per element (4 for int4 weights), and for group-quantised weights one scale (and, asymmetric,
/// one zero point) per `group` consecutive elements. Bytes of n elements:
/// ceil((n x bits + ceil(n / group) x (scale_bits + zero_bits)) / 8) (docs/workload-format.md,
/// "Element widths"): int4 with one fp16 scale per 128 is 0.515625 B per element.
struct ElemFormat {
  std::uint8_t bits = 0;        // 0: the tensor's elem_bytes rule (whole bytes)
  std::uint32_t group = 0;      // elements per scale (0: no scales)
  std::uint8_t scale_bits = 0;  // width of one scale (16: fp16)
  std::uint8_t zero_bits = 0;   // width of one zero point (0: symmetric, none stored)
  bool operator==(const ElemFormat& o) const {
    return bits == o.bits && group == o.group && scale_bits == o.scale_bits && zero_bits == o.zero_bits;
  }
};

struct Tensor {
  std::string name;
  Shape shape;
  bool is_constant = false;  // weights/biases/parameters: read from DRAM, never written
  int producer = -1;         // op index, -1 for graph inputs and constants
  std::vector<int> consumers;
  /// Bytes per element when the model states an integer type (int8 activations, int32
  /// biases); 0 = the hardware config's dtype (float tensors: docs/onnx.md, "Element widths").
  std::uint8_t elem_bytes = 0;
  /// A sub-byte or group-quantised format (bits != 0 overrides elem_bytes).
  ElemFormat format;
  /// Lives in DRAM across runs of the graph (a KV cache): written by its producer even when
  /// ops of the graph read it too, read in place by its consumers, never copied whole.
  bool persistent = false;
  std::int64_t elements() const;
  /// This tensor's own description (name, shape, widths, format, persistence) without its links
  /// to ops: what a pass that rebuilds a graph copies (it links the copy to its own ops).
  Tensor unlinked() const {
    Tensor c = *this;
    c.producer = -1;
    c.consumers.clear();
    return c;
  }
};

struct Op {
  std::string name;
  OpKind kind = OpKind::Relu;
  OpAttrs attrs;
  std::vector<int> inputs;   // tensor indices; activations first, then weights, then bias
  std::vector<int> outputs;  // tensor indices
  int source_line = 0;       // line in the workload file, for messages (0 = unknown)
  /// The fused node of the source model this op was read from (an ONNX Runtime contrib node
  /// such as com.microsoft.FusedConv 'conv1'), empty for a primitive one: lets a scheduler
  /// keep a compiler's own grouping.
  std::string origin;
  /// The core the op runs on when a parallel mode pinned it there (--parallel tensor,
  /// sim/scheduler/tensor_parallel.h), -1 for any: a fusion group never holds two cores' ops.
  int core = -1;
  /// Runs on the host CPU, not the NPU (its kind is in npu.host.ops; set by sched::mark_host_ops):
  /// the planner never groups it with another op (docs/runtime.md, "Host ops").
  bool host = false;
};

/// Per-op work and the least bytes it must move (each input and output touched once).
struct OpCost {
  std::uint64_t macs = 0;
  std::uint64_t vector_ops = 0;    // element operations on the vector unit
  std::uint64_t input_bytes = 0;   // non-constant inputs
  std::uint64_t weight_bytes = 0;  // constant inputs
  std::uint64_t output_bytes = 0;
};

/// An op seen as GEMM: `groups` independent GEMMs of (M x K) * (K x N).
/// Conv: M = batch*OH*OW, K = KH*KW*Cin/groups, N = Cout/groups.
/// MatMul: M = rows of A, K, N; batch dimensions multiply `groups`.
/// ConvTranspose: M = batch*H*W (input pixels), K = Cin/groups, N = Cout/groups*KH*KW (each
/// input pixel scatters a KH x KW patch of every output channel; col2im adds them up).
struct GemmView {
  std::int64_t groups = 1, m = 0, k = 0, n = 0;
  bool is_conv = false;
  // convolution geometry (is_conv only), activations NCHW
  std::int64_t batch = 1, in_c = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
};

/// A decision the loader made that changes what is simulated, e.g. the branch an ONNX If
/// takes: `node` 'cond_if', `choice` "else_branch", `reason` "--branch" or "condition known at
/// import time". Recorded in summary.json (`import_choices`).
struct ImportChoice {
  std::string node;
  std::string choice;
  std::string reason;
};

/// The most ops a workload may hold (2^18: two hundred ResNet-50s, a 7,000-layer decoder): every
/// op is planned, lowered and traced, so a run's memory and time grow with the count (a
/// 110,000-op step takes a minute and 3 GB). Graph::add_op refuses the next one.
constexpr std::size_t kMaxGraphOps = std::size_t{1} << 18;

class Graph {
 public:
  std::string name;
  /// The element type the source file declares ("float32", "int8"; empty when it has none).
  /// Recorded only: costs use each tensor's element_bytes (the config's dtype by default).
  std::string dtype;

  int add_tensor(Tensor t);  // throws InputError on a duplicate name
  int add_op(Op op);         // throws InputError on a duplicate name or past kMaxGraphOps
  /// Links producers/consumers, infers every output shape from its inputs and attributes,
  /// checks shapes agree and the graph is acyclic. Throws InputError naming the op (and its
  /// source line) with expected vs found. Must be called once after the last add_*.
  void finalize(const std::string& source_file = "");

  const std::vector<Tensor>& tensors() const { return tensors_; }
  const std::vector<Op>& ops() const { return ops_; }
  const Tensor& tensor(int i) const { return tensors_.at(i); }
  /// Sets tensor `i`'s own element width (a loader learning the type after creating it).
  void set_elem_bytes(int i, std::uint8_t bytes) { tensors_.at(i).elem_bytes = bytes; }
  /// Marks tensor `i` persistent (Tensor::persistent: a KV cache's rows).
  void set_persistent(int i) { tensors_.at(i).persistent = true; }
  /// Sets an op output's shape before finalize (a builder that needs it to size later ops;
  /// finalize infers it again and checks).
  void set_shape(int i, Shape s) { tensors_.at(i).shape = std::move(s); }
  const Op& op(int i) const { return ops_.at(i); }
  /// Marks op `i` as run by the host CPU (Op::host) or not.
  void set_host(int i, bool host) { ops_.at(i).host = host; }
  int find_tensor(const std::string& name) const;  // -1 if absent
  int find_op(const std::string& name) const;      // -1 if absent
  /// Op indices in a topological order (valid after finalize).
  const std::vector<int>& topological_order() const { return order_; }
  std::vector<int> graph_inputs() const;   // non-constant tensors with no producer
  std::vector<int> graph_outputs() const;  // tensors with no consumer
  /// Whether tensor `t` leaves the graph: an op result nobody consumes, or a persistent one (the
  /// new rows of a KV cache, stored whatever else reads them).
  bool is_output(int t) const {
    return tensor(t).producer >= 0 && (tensor(t).consumers.empty() || tensor(t).persistent);
  }
  /// Tensors whose name is listed as a declared output (empty = all dangling outputs).
  std::vector<std::string> declared_outputs;
  std::vector<ImportChoice> import_choices;
  /// A graph with this one's name, dtype, declared outputs and import choices and no tensors
  /// or ops: what a rewrite pass starts from.
  Graph empty_copy() const;

 private:
  std::vector<Tensor> tensors_;
  std::vector<Op> ops_;
  std::vector<int> order_;
  // Name -> index, so lookups and duplicate checks stay O(1) on graphs of thousands of ops.
  std::unordered_map<std::string, int> tensor_index_;
  std::unordered_map<std::string, int> op_index_;
};

/// The shape of `op`'s output inferred from its inputs' shapes and attributes: the rule
/// Graph::finalize applies, exposed so a loader can size weights of later ops while it reads
/// (a conv's weight needs its input's channel count). Throws InputError whose `where` is
/// "<source_file>:<op.source_line> (op '<name>')", message "expected ..., found ...".
Shape infer_output_shape(const Graph& g, const Op& op, const std::string& source_file = "");

/// Where a Slice's kept elements lie in its input, flattened: `runs` runs of `run` elements,
/// `stride` elements apart, the first at `offset`. One run is a contiguous slice.
struct SliceRuns {
  std::uint64_t offset = 0, run = 0, stride = 0, runs = 1;
};
/// The runs of a Slice that cuts one axis with step 1 (the axes after it whole; those before
/// it whole too, by being before the first cut): an LLM prefill's last token of [B, S, H] is B
/// runs of H elements, S x H apart. nullopt for steps and for several cut axes.
std::optional<SliceRuns> slice_runs(const Graph& g, const Op& slice);

/// Bytes per element of tensor `t`: its own width, else `default_eb` (the config's dtype). A
/// sub-byte format counts as 1 (alignment only; sizes use elements_bytes).
std::uint32_t element_bytes(const Graph& g, int t, std::uint32_t default_eb);
/// Bytes of `n` elements of tensor `t` (a tile, a gathered row set, the whole tensor), scales and
/// zero points of a group-quantised format included: the one byte rule every cost uses.
std::uint64_t elements_bytes(const Graph& g, int t, std::uint64_t n, std::uint32_t default_eb);
/// Bytes of the whole tensor `t`: elements_bytes of all its elements.
std::uint64_t tensor_bytes(const Graph& g, int t, std::uint32_t default_eb);

/// Work and minimum bytes of one op, each tensor at its element_bytes (`elem_bytes`: default).
OpCost op_cost(const Graph& g, const Op& op, std::uint32_t elem_bytes);
/// The GEMM mapping of a Conv2d, MatMul or ConvTranspose op (op_class == Gemm).
GemmView gemm_view(const Graph& g, const Op& op);

struct GraphTotals {
  std::uint64_t macs = 0, vector_ops = 0, weight_bytes = 0, params = 0;
};
GraphTotals graph_totals(const Graph& g, std::uint32_t elem_bytes);

}  // namespace npusim::workloads
