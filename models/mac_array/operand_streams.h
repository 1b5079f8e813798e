#pragma once
// What a systolic array reads from and writes to the SRAM in one streamed cycle, given where a
// GEMM tile's operands sit in the scratchpad. The MAC array turns these vectors into bank-
// conflict stall cycles (docs/compute-models.md section 5, "Bank conflicts per streamed cycle").
#include <cstdint>
#include <vector>

#include "models/mac_array/fold_model.h"
#include "models/sram/sram.h"
#include "sim/core/hardware_config.h"

namespace npusim::models {

/// Where one GEMM tile's operands sit: dense buffers, ifmap M x K and filter K x N of
/// `element_bytes` elements, output/psum M x N of `accumulator_bytes` elements, each starting at
/// its base (a scratchpad byte offset). `order` RowMajor stores all three row-major; Streamed
/// stores each in the order the dataflow consumes it (fold slice by fold slice), as a compiler
/// lays out a tile for the array, so every stream walks its buffer sequentially.
struct OperandLayout {
  std::uint64_t ifmap_base = 0, filter_base = 0, output_base = 0;
  std::uint32_t element_bytes = 1, accumulator_bytes = 4;
  TileLayout order = TileLayout::RowMajor;
};

/// npusim's layout: every buffer starts on a bank boundary, the ifmap on bank 0, the filter on
/// bank banks/4 and the output on bank banks/2 (offsets modulo banks x bank_width), so that the
/// first rows of the three operands fall in different banks.
OperandLayout staggered_layout(const SramConfig& sram, const MacArrayConfig& mac);

/// One operand vector the array moves every streamed cycle: `first` in cycle 0, then its start
/// advances by `step` bytes per cycle.
struct OperandStream {
  StridedAccess first;
  std::uint64_t step = 0;
  bool write = false;
};

/// The streams of the GEMM's first fold (fold offsets 0), with r = min(R, Sr), c = min(C, Sc),
/// b = element bytes, a = accumulator bytes; cycle t streams temporal index t. Row-major:
///   WS: read ifmap row t, elements [0, r) (contiguous, step K*b);
///       write output row t, [0, c) (contiguous, step N*a)
///   OS: read ifmap column t, rows [0, r) (stride K*b, step b);
///       read filter row t, [0, c) (contiguous, step N*b)
///   IS: read filter column t, rows [0, r) (stride N*b, step b);
///       write output column t, rows [0, c) (stride N*a, step a)
/// Streamed: the same vectors, each following the previous one of its stream (step = the
/// vector's bytes: r*b for the ifmap (WS, OS) and the filter (IS), c*a for the output (WS, IS),
/// c*b for the filter (OS)). Empty for an empty GEMM.
std::vector<OperandStream> operand_streams(const GemmShape& s, std::uint32_t rows, std::uint32_t cols, Dataflow d,
                                           const OperandLayout& l);

/// The reads and the writes of streamed cycle t.
struct CycleVectors {
  std::vector<StridedAccess> reads, writes;
};
CycleVectors cycle_vectors(const std::vector<OperandStream>& streams, std::uint64_t t);
/// The reads and the writes of the `n` streamed cycles [t, t + n), all together (what the banks
/// may serve in any order when staging buffers hold `n` vectors per stream). A stream whose
/// vectors follow each other in memory (step = vector bytes) is one run of n vectors, gathered
/// into whole bank words; any other stream is n accesses.
CycleVectors window_vectors(const std::vector<OperandStream>& streams, std::uint64_t t, std::uint64_t n);

/// Cycles after which the streams' bank pattern repeats: the lcm over streams of
/// span / gcd(step mod span, span), where span = banks x bank_width; it divides span.
std::uint64_t stream_period(const std::vector<OperandStream>& streams, std::uint64_t span);

}  // namespace npusim::models
