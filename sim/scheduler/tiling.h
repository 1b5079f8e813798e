#pragma once
// Internal to the scheduler: the geometry of a segment (what its tiles read and write) and
// its tiling (tiling.cpp). The planner (fusion.h) asks for tilings under a budget; the lowering
// (lowering_gemm.cpp, lowering_depth_first.cpp) walks the same geometry to emit commands, so both count bytes one way.
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "sim/scheduler/plan.h"
#include "sim/scheduler/program.h"

namespace npusim::sched {

/// Where the group keeps each base tensor: whole in SRAM (resident) or in DRAM, and whether
/// a tensor the segment produces must also be written to DRAM (a consumer outside the group).
struct Residency {
  std::vector<bool> resident;  // by base tensor index
  std::vector<bool> stored;    // by base tensor index
};

/// Follows view ops (reshape/flatten) back to the tensor that owns the bytes.
int base_tensor(const workloads::Graph& g, int t);

/// A row/column/channel block of a GEMM head's output, with the input rows it needs.
struct GemmBlock {
  std::int64_t batch = 0;
  std::int64_t row0 = 0, rows = 0;    // output rows (conv: of OH; matmul: of M)
  std::int64_t col0 = 0, cols = 0;    // output channels (groups==1) or groups (grouped conv)
  std::int64_t chan0 = 0, chans = 0;  // input channels (K block)
  std::int64_t px0 = 0, pxs = 0;      // conv: output columns; pxs 0 = the whole width
};

/// GEMM head geometry: conv (plain or grouped) or matmul, in block units.
struct GemmGeometry {
  bool conv = false;
  bool grouped = false;    // conv with groups > 1: blocks are whole groups, K is not split
  bool b_constant = true;  // second operand is a weight (else an activation per batch)
  bool transpose_b = false;
  std::int64_t batch = 1;
  std::int64_t out_rows = 0;     // conv OH, matmul M
  std::int64_t out_cols_px = 1;  // conv OW (output pixels per row), matmul 1
  std::int64_t n_total = 0;      // Cout (plain), groups (grouped), N (matmul)
  std::int64_t c_total = 0;      // Cin (plain), 1 (grouped), K (matmul)
  // conv
  std::int64_t in_h = 0, in_w = 0, in_c = 0, kh = 1, kw = 1, stride_h = 1, dil_h = 1, pad_top = 0;
  std::int64_t stride_w = 1, dil_w = 1, pad_left = 0;
  std::int64_t cin_g = 1, cout_g = 1;
  std::int64_t out_channels = 0;    // total output channels (conv) or N (matmul)
  std::int64_t k_dim = 0;           // matmul K
  std::uint32_t operand_bytes = 0;  // the activations' bytes per element (0: the array's dtype)

  /// Input rows [first, last) of the input image a block of output rows needs (clipped).
  std::pair<std::int64_t, std::int64_t> input_rows(std::int64_t row0, std::int64_t rows) const;
  /// Input columns [first, last) a block of output columns needs (clipped).
  std::pair<std::int64_t, std::int64_t> input_cols(std::int64_t px0, std::int64_t pxs) const;
  /// Output columns of a block (the whole width unless the block splits it).
  std::int64_t width(const GemmBlock& b) const { return b.pxs ? b.pxs : out_cols_px; }
  std::uint64_t a_elements(const GemmBlock& b) const;  // first operand tile
  std::uint64_t b_elements(const GemmBlock& b) const;  // second operand tile
  std::uint64_t out_elements(const GemmBlock& b) const;
  GemmWork work(const GemmBlock& b) const;
};

GemmGeometry gemm_geometry(const workloads::Graph& g, const workloads::Op& op);

/// What the MAC array spends on GEMM tiles: cycles as the array times a tile (the fold model
/// with the tile's dataflow, or its SRAM traffic at the banks' peak bandwidth when that is
/// longer) and that SRAM traffic (operand re-streaming and partial sums, gemm_sram_traffic).
struct GemmTileCost {
  double cycles = 0;
  std::uint64_t sram_read_bytes = 0, sram_write_bytes = 0;
};
GemmTileCost gemm_tile_cost(const GemmWork& w, const HardwareConfig& hw);
/// gemm_tile_cost remembered per tile shape: a depth-first group's tiles repeat a few shapes
/// thousands of times (every tile of a strip but the edges is alike), and the fold model is the
/// planner's most expensive call. Values are gemm_tile_cost's own, so sums come out identical.
class GemmTileCosts {
 public:
  explicit GemmTileCosts(const HardwareConfig& hw) : hw_(hw) {}
  const GemmTileCost& operator()(const GemmWork& w);

 private:
  using Shape = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, int, std::int64_t, std::uint32_t>;
  struct Recent {
    Shape shape;
    const GemmTileCost* cost = nullptr;
  };
  const HardwareConfig& hw_;
  std::map<Shape, GemmTileCost> costs_;  // (a map's values stay where they are as it grows)
  std::array<Recent, 64> recent_{};      // the shapes last looked up, by a hash of the shape
};
/// The sum over every block of a GEMM head cut into rows x cols x chans blocks (edge blocks
/// included), run with `dataflow` (nullopt: the config's).
GemmTileCost gemm_tiling_cost(const GemmGeometry& geo, std::int64_t rows, std::int64_t cols, std::int64_t chans,
                              std::optional<Dataflow> dataflow, const HardwareConfig& hw, std::int64_t width = 0);

/// While one exists (make_plan opens one), the array's cost of a GEMM head cut into a tile shape
/// (gemm_tiling_cost) is remembered per head geometry, shape and dataflow: the planners ask
/// tile_gemm about the same head under many residencies and budgets (ResNet-50 greedy: 72,072
/// shape costs, 4.2 k distinct), the cost depends on neither, and heads of one geometry (ResNet's
/// repeated blocks) share it. A GEMM segment's tiling (tile_segment) is
/// remembered per segment, the residency bits it reads and budget: a growing group asks again
/// about segments whose inputs did not change (ResNet-50 greedy: 927 calls, 178 distinct). One
/// graph and config per scope. Nested scopes share the outermost one's memory; the cache is per
/// thread and dropped with the scope.
class TilingCacheScope {
 public:
  TilingCacheScope();
  ~TilingCacheScope();
  TilingCacheScope(const TilingCacheScope&) = delete;
  TilingCacheScope& operator=(const TilingCacheScope&) = delete;

 private:
  bool owner_ = false;
};

/// gemm_tiling_cost as the planners ask for it: remembered while a TilingCacheScope is open.
GemmTileCost remembered_tiling_cost(const GemmGeometry& geo, std::int64_t rows, std::int64_t cols, std::int64_t chans,
                                    std::optional<Dataflow> dataflow, const HardwareConfig& hw, std::int64_t width = 0);

/// Calls `visit` for every block of a tiling in loop order (see Tiling::weights_outer).
void for_each_block(const GemmGeometry& geo, const Tiling& t, const std::function<void(const GemmBlock&)>& visit);

/// The best tiling of `seg` whose working set fits `budget` bytes of SRAM, or nullopt.
/// With `smallest`, the tiling with the least working set instead (for error messages).
/// A segment's `request` (user tile shape) restricts the candidates to that shape.
/// With `below_array`, a GEMM none of whose tiles of whole MAC-array widths (channel blocks of
/// the array's rows, column blocks of its columns) fits takes narrower blocks, leaving part of
/// the array idle, in at most kMaxNarrowedBlocks blocks: an op planned alone then runs on a
/// scratchpad too small for the array's tiles. (`smallest` stays with the array's widths: a
/// refusal names the smallest tile that uses the whole array.)
std::optional<Tiling> tile_segment(const workloads::Graph& g, const HardwareConfig& hw, const Segment& seg,
                                   const Residency& where, std::uint64_t budget, bool smallest = false,
                                   bool below_array = false);
/// The most blocks a GEMM narrowed below the MAC array is cut into (2^16): narrower blocks fit
/// almost any scratchpad, and a 1 KiB one would otherwise cut a conv into millions of tiles.
inline constexpr std::uint64_t kMaxNarrowedBlocks = std::uint64_t{1} << 16;

/// Per operand buffer (ifmap, filter, ofmap), the most any of the group's segments holds.
std::array<std::uint64_t, 3> group_buffer_bytes(const GroupPlan& p);

/// With separate operand buffers, which parts of `t` exceed their buffer ("" when none does, or
/// the operands share the scratchpad), e.g. "; separate operand buffers: ofmap tile 9216 B >
/// ofmap buffer 1024 B (npu.sram.ofmap_bytes)".
std::string buffer_shortfall(const HardwareConfig& hw, const std::optional<Tiling>& t);
/// By how many bytes the tile overflows its fullest operand buffer (0 when all hold it).
std::uint64_t buffer_excess(const HardwareConfig& hw, const Tiling& t);

/// Why a group that keeps intermediates resident cannot run ("" when it can): with separate
/// operand buffers an intermediate cannot stay whole across the ifmap, filter and ofmap buffers.
std::string resident_fusion_obstacle(const HardwareConfig& hw);

/// Estimated seconds of a piece of work: max(DRAM time, compute time) plus the first tile's
/// load that nothing hides plus a per-tile issue overhead (so tiny tiles lose).
double estimate_seconds(const HardwareConfig& hw, std::uint64_t dram_bytes, double ops, std::uint64_t first_tile_bytes,
                        std::uint64_t tiles, double peak_ops);

/// Whether the GEMM operand `tensor` is expanded by the vector unit before the array reads it: a
/// weight in a group-quantised format (scales per group) with npu.mac_array.dequant
/// `vector_unit`. Its tiles then also hold the expanded block (tile_gemm) and each loaded block
/// costs a dequantize command (the lowering).
bool dequantized_on_vector_unit(const workloads::Graph& g, const HardwareConfig& hw, int tensor);

/// Inputs of the segment's ops that come from outside the segment (base tensor indices, in
/// op order), and the tensor the segment produces (base index of the last op's output).
std::vector<int> segment_inputs(const workloads::Graph& g, const Segment& seg);
/// Every op of the segment in the order it runs: its prologue, then its head and tile region.
std::vector<int> segment_ops(const Segment& seg);
int segment_output(const workloads::Graph& g, const Segment& seg);

/// The tensors an epilogue op of a segment finds on the output tile in SRAM: those the
/// segment's ops produce and, for an elementwise head, its inputs of the output's shape (loaded
/// for the same tile: SiLU's x, read by the sigmoid and by the mul, is loaded once).
class TileTensors {
 public:
  TileTensors(const workloads::Graph& g, const Segment& seg);
  bool has(int tensor) const { return tensors_.count(tensor) > 0; }

 private:
  std::unordered_set<int> tensors_;
};

/// How a vector head is cut into tiles, by op class (docs/scheduling.md, "Vector heads"), so a
/// new op kind falls into a rule: elementwise ops (and expand) cut their output into contiguous
/// runs of flattened elements; data movement (concat, pad, slice, transpose, resize, gather,
/// local pools...) streams every input in the same fraction as the output; reductions and row
/// ops (softmax, layer-norm) cut their input into whole reduced blocks, or into chunks of one
/// block when a block alone does not fit (accumulated, or two passes for row ops).
enum class VectorClass { Elementwise, Movement, Reduction, RowOp };
VectorClass vector_class(workloads::OpKind k);

/// How one input of a vector head is read by the tiles.
enum class InputCut {
  Same,          // as many elements as the driver: the tile's own range
  Proportional,  // the same fraction of it as the tile is of the driver (streamed moves)
  Broadcast,     // numpy-broadcast against the driver: the range the tile's elements map to
  Gathered,      // gather's table: the rows the tile picks (as many elements as the tile writes)
  Sliced,        // a slice's input: the runs of it the tile's elements come from
  Whole,         // not broadcast-compatible (per-channel parameters): loaded whole once
};

/// The iteration space of a vector head: the tensor whose flattened elements the tiles cut
/// (its output, or its first input for reductions and row ops), and how each input follows.
struct VectorGeometry {
  VectorClass cls = VectorClass::Elementwise;
  workloads::Shape shape;       // the driver's shape
  std::uint64_t elems = 0;      // driver elements
  std::uint64_t out_elems = 0;  // output elements
  /// Reductions, row ops: driver elements of one reduced block; a slice of several runs: output
  /// elements of one run; 0 else.
  std::uint64_t block = 0;
  /// Driver elements after the last reduced axis (1: the reduced axes are innermost). With
  /// inner > 1 a tile can take every reduced position of a chunk of inner positions: `block /
  /// inner` runs of the chunk, `inner` elements apart (softmax over channels of NCHW).
  std::uint64_t inner = 1;
  std::uint64_t align = 1;     // tile starts (within a block) are multiples of this (a DRAM burst)
  std::vector<InputCut> cuts;  // per head input
  std::vector<workloads::Shape> in_shapes;
  std::vector<std::uint64_t> in_elems;
  std::vector<workloads::SliceRuns> in_slice;  // per head input: a Sliced cut's runs (default for the others)
  /// Per head input: a Sliced cut whose runs are read as the one span that covers them, gaps
  /// and all (slice_covers), rather than run by run.
  std::vector<bool> in_cover;
};
/// Whether a DMA reads a slice's runs more cheaply as the span that covers them: when the gap
/// between two runs is smaller than the bursts a run costs anyway (a run of 2 B every 9 B takes
/// a 64 B burst each, where the span takes 9 B of burst a run).
bool slice_covers(const workloads::SliceRuns& s, std::uint64_t element_bytes, std::uint64_t burst_bytes);
VectorGeometry vector_geometry(const workloads::Graph& g, const HardwareConfig& hw, const workloads::Op& op);

/// The elements a tile reads of one input: `runs` runs of [lo, hi), each `stride` elements after
/// the one before.
struct InputRange {
  std::uint64_t lo = 0, hi = 0;
  std::uint64_t runs = 1, stride = 0;
  std::uint64_t elements() const { return (hi - lo) * runs; }
  bool operator==(const InputRange& o) const {
    return lo == o.lo && hi == o.hi && runs == o.runs && (runs == 1 || stride == o.stride);
  }
  bool operator!=(const InputRange& o) const { return !(*this == o); }
};

/// One tile of a vector head: the driver elements it covers, the elements it reads of each
/// head input, the output elements it completes (a reduction's accumulators complete with
/// their block's last chunk; a statistics pass completes none), and its pass.
struct VectorTile {
  std::uint64_t d0 = 0, d1 = 0;
  std::uint64_t out0 = 0, out1 = 0;
  std::vector<InputRange> in;
  int pass = 0;  // 0: single pass; 1: statistics pass; 2: apply pass (a row op two-pass)
  /// A chunk of inner positions: the driver (and inputs cut Same; a row op's output) is `runs`
  /// runs of [d0, d1) shifted by `stride` elements each; a reduction's outputs stay one run.
  std::uint64_t runs = 1, stride = 0;
  std::uint64_t elements() const { return (d1 - d0) * runs; }  // driver elements of the tile
};

/// Driver elements per tile for a cut into `tiles` tiles (the count a schedule file's `rows`
/// gives), and back: the tiles a cut of `tile_elems` makes (per pass).
std::uint64_t vector_tile_elems(const VectorGeometry& geo, std::uint64_t tiles);
std::uint64_t vector_tile_count(const VectorGeometry& geo, std::uint64_t tile_elems);
/// Calls `visit` for every tile in order: `passes` 2 reads each block twice, statistics first.
void for_each_vector_tile(const VectorGeometry& geo, std::uint64_t tile_elems, int passes,
                          const std::function<void(const VectorTile&)>& visit);
/// The vector ops of a head's pass (`passes` 1: all of them in pass 0; 2: the statistics pass
/// and the apply pass, the work the apply pass redoes counted again, e.g. softmax's exponent).
std::uint64_t vector_pass_ops(const workloads::Graph& g, const workloads::Op& op, std::uint32_t eb, int passes,
                              int pass);

/// Whether `seg` is a concat that costs nothing because its producers store their outputs
/// straight into its slabs (as inference compilers place them): the concat alone in its
/// segment, nothing before its axis (each input a contiguous slab of the output), and every
/// input produced by an op (not a view or another concat) or a graph input (not a constant),
/// read by the concat only, stored to DRAM (not resident), the output not resident either. The
/// lowering then places each input inside the output's DRAM region.
bool concat_in_place(const workloads::Graph& g, const Segment& seg, const Residency& where);

/// A tiling's tile in words, for messages: "1 of 56 output rows x 8 of 64 output channels x 16
/// of 64 input channels" (GEMM heads), "64 of 4194304 elements of [1, 4194304]" (vector heads).
std::string describe_tile(const workloads::Graph& g, const Segment& seg, const Tiling& t);

/// True when the input tensor is cut into tiles with the output (same or more elements than
/// the output tile's tensor, a constant too: a position-embedding table is streamed with the
/// tiles, not held whole); false for small operands (bias, scale, gamma) loaded whole.
bool is_tiled_input(const workloads::Graph& g, int tensor, std::uint64_t out_elements);

}  // namespace npusim::sched
