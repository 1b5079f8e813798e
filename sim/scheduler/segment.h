#pragma once
// Internal to the scheduler: the geometry of a segment (what its tiles read and write) and
// its tiling. The planner (fusion.cpp) asks for tilings under a budget; the lowering
// (lowering.cpp) walks the same geometry to emit commands, so both count bytes one way.
#include <cstdint>
#include <functional>
#include <optional>
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
};

/// GEMM head geometry: conv (plain or grouped) or matmul, in block units.
struct GemmGeometry {
  bool conv = false;
  bool grouped = false;        // conv with groups > 1: blocks are whole groups, K is not split
  bool b_constant = true;      // second operand is a weight (else an activation per batch)
  bool transpose_b = false;
  std::int64_t batch = 1;
  std::int64_t out_rows = 0;   // conv OH, matmul M
  std::int64_t out_cols_px = 1;// conv OW (output pixels per row), matmul 1
  std::int64_t n_total = 0;    // Cout (plain), groups (grouped), N (matmul)
  std::int64_t c_total = 0;    // Cin (plain), 1 (grouped), K (matmul)
  // conv
  std::int64_t in_h = 0, in_w = 0, in_c = 0, kh = 1, kw = 1, stride_h = 1, dil_h = 1, pad_top = 0;
  std::int64_t cin_g = 1, cout_g = 1;
  std::int64_t out_channels = 0;  // total output channels (conv) or N (matmul)
  std::int64_t k_dim = 0;         // matmul K

  /// Input rows [first, last) of the input image a block of output rows needs (clipped).
  std::pair<std::int64_t, std::int64_t> input_rows(std::int64_t row0, std::int64_t rows) const;
  std::uint64_t a_elements(const GemmBlock& b) const;  // first operand tile
  std::uint64_t b_elements(const GemmBlock& b) const;  // second operand tile
  std::uint64_t out_elements(const GemmBlock& b) const;
  GemmWork work(const GemmBlock& b) const;
};

GemmGeometry gemm_geometry(const workloads::Graph& g, const workloads::Op& op);

/// Calls `visit` for every block of a tiling in loop order (see Tiling::weights_outer).
void for_each_block(const GemmGeometry& geo, const Tiling& t, const std::function<void(const GemmBlock&)>& visit);

/// The best tiling of `seg` whose working set fits `budget` bytes of SRAM, or nullopt.
std::optional<Tiling> tile_segment(const workloads::Graph& g, const HardwareConfig& hw, const Segment& seg,
                                   const Residency& where, std::uint64_t budget);

/// Inputs of the segment's ops that come from outside the segment (base tensor indices, in
/// op order), and the tensor the segment produces (base index of the last op's output).
std::vector<int> segment_inputs(const workloads::Graph& g, const Segment& seg);
int segment_output(const workloads::Graph& g, const Segment& seg);

/// True when the input tensor is cut into tiles with the output (same or more elements than
/// the output tile's tensor); false for small operands (bias, scale, gamma) loaded whole.
bool is_tiled_input(const workloads::Graph& g, int tensor, std::uint64_t out_elements);

}  // namespace npusim::sched
