#pragma once
// SCALE-Sim's double-buffered scratchpad in USER mode (InterfaceBandwidth: USER), replayed from
// the fold structure: its two read buffers (ifmap, filter) and its write buffer (ofmap), with the
// stall rule SCALE-Sim counts by. The rule, stated from scalesim/memory/*.py, is in
// docs/scalesim.md section 3.1.
#include <cstdint>

#include "sim/core/hardware_config.h"

namespace npusim::scalesim {

/// The fold grid of one layer on the array, in SCALE-Sim's loop order (column folds outer).
struct FoldGrid {
  std::uint64_t R = 0, C = 0;           // array rows, columns
  std::uint64_t sr = 0, sc = 0, t = 0;  // spatial rows, spatial columns, temporal
  std::uint64_t row_folds = 0, col_folds = 0, folds = 0;
  std::uint64_t per_fold = 0;           // demand-matrix rows of one fold
  std::uint64_t rows_last = 0, cols_last = 0;  // PEs used by the last row / column fold
  std::uint64_t rows_in(std::uint64_t fr) const { return fr + 1 < row_folds ? R : rows_last; }
  std::uint64_t cols_in(std::uint64_t fc) const { return fc + 1 < col_folds ? C : cols_last; }
};

/// The memory side of one layer in USER mode: what SCALE-Sim reports from its buffers.
struct BufferReplay {
  std::uint64_t stall_cycles = 0;  ///< SCALE-Sim's Stall Cycles
  std::uint64_t total_cycles = 0;  ///< SCALE-Sim's Total Cycles: the last ofmap row's service cycle
  /// Cycle at which demand row `row` is served: row + stalls before it (+ its own stall for the
  /// operand), as SCALE-Sim stamps its SRAM traces. Filled for the rows asked for in `stamp_rows`.
  std::int64_t stamps[6] = {};
  std::uint64_t dram_words[3] = {};  ///< ifmap reads, filter reads, ofmap writes
  std::int64_t dram_start[3] = {}, dram_stop[3] = {};
};

struct BufferSizes {
  std::uint64_t ifmap_words = 0, filter_words = 0, ofmap_words = 0;  ///< buffer capacities
  std::uint64_t bandwidth = 1;  ///< words per cycle, every buffer (SCALE-Sim's first Bandwidth)
};

/// Replays SCALE-Sim's buffers over the layer's demand rows, fold by fold. `stamp_rows` are six
/// demand rows (ifmap start/stop, filter start/stop, ofmap start/stop) whose served cycles are
/// wanted; index i of `stamps` is for `stamp_rows[i]`, for operand i / 2.
BufferReplay replay_buffers(const FoldGrid& g, Dataflow d, const BufferSizes& sizes,
                            const std::int64_t (&stamp_rows)[6]);

}  // namespace npusim::scalesim
