#pragma once
// SCALE-Sim's double-buffered scratchpad in USER mode (InterfaceBandwidth: USER), replayed from
// the fold structure: its two read buffers (ifmap, filter) and its write buffer (ofmap), with the
// stall rule SCALE-Sim counts by. The rule, stated from scalesim/memory/*.py, is in
// docs/scalesim.md section 3.1.
#include <cstdint>

#include "sim/core/hardware_config.h"

namespace npusim::scalesim {

/// A conv layer's geometry in SCALE-Sim's terms. SCALE-Sim sizes the ofmap as
/// ceil((ifmap - filter + stride) / stride), so when (ifmap - filter) is not a multiple of the
/// stride the last window hangs over the ifmap's edge: its outside entries are null (-1) requests
/// in the ifmap operand matrix, which moves the ifmap SRAM stop cycle (docs/scalesim.md).
struct ConvWindow {
  std::int64_t ifmap_h = 1, ifmap_w = 1, filter_h = 1, filter_w = 1, channels = 1;
  std::int64_t stride_h = 1, stride_w = 1, ofmap_h = 1, ofmap_w = 1;
  /// Whether ifmap operand entry (ofmap pixel `pixel`, window element `k`) lies inside the ifmap.
  bool inside(std::int64_t pixel, std::int64_t k) const;
  /// The last ofmap pixel whose window element `k` lies inside the ifmap.
  std::int64_t last_pixel_inside(std::int64_t k) const;
  /// The last window element of ofmap pixel `pixel` that lies inside the ifmap; -1 if none does.
  std::int64_t last_element_inside(std::int64_t pixel) const;

  /// The window offset (rows, columns) from an entry's own window element to the copy that
  /// last answered: neighbouring entries of a demand row usually find their word at the same
  /// offset, so for_each_copy tries it first. Only the order of the calls depends on it.
  struct CopyHint {
    std::int64_t dr = 0, dc = 0;
    bool set = false;
  };

  /// Calls f(pixel', k') for every ifmap operand entry other than (pixel, k) that holds the same
  /// ifmap word (overlapping windows read a word up to filter_h x filter_w times), until f
  /// returns true. With `hint`, the copy at the hinted offset comes first, and the offset of the
  /// copy that returned true is recorded there.
  template <class F>
  void for_each_copy(std::int64_t pixel, std::int64_t k, const F& f, CopyHint* hint = nullptr) const {
    const std::int64_t fwc = filter_w * channels;
    const std::int64_t own_wr = k / fwc, own_wc = k % fwc / channels, ch = k % channels;
    const std::int64_t in_row = pixel / ofmap_w * stride_h + own_wr;
    const std::int64_t in_col = pixel % ofmap_w * stride_w + own_wc;
    // the copy read through window element (wr, wc), if that element sees the word
    auto visit = [&](std::int64_t wr, std::int64_t wc) {
      // stride 1 skips the divisions: most layers have it, and this is the replay's hot path
      const std::int64_t out_row = stride_h == 1 ? in_row - wr : (in_row - wr) / stride_h;
      const std::int64_t out_col = stride_w == 1 ? in_col - wc : (in_col - wc) / stride_w;
      if (out_row >= ofmap_h || out_col >= ofmap_w) return false;
      return f(out_row * ofmap_w + out_col, (wr * filter_w + wc) * channels + ch);
    };
    std::int64_t skip_wr = -1, skip_wc = -1;
    if (hint && hint->set) {
      const std::int64_t wr = own_wr + hint->dr, wc = own_wc + hint->dc;
      // a valid offset is a multiple of the stride, so the element lines up with the word
      if (wr >= 0 && wr < filter_h && wr <= in_row && wc >= 0 && wc < filter_w && wc <= in_col) {
        if (visit(wr, wc)) return;
        skip_wr = wr, skip_wc = wc;
      }
    }
    for (std::int64_t wr = in_row % stride_h; wr < filter_h && wr <= in_row; wr += stride_h) {
      for (std::int64_t wc = in_col % stride_w; wc < filter_w && wc <= in_col; wc += stride_w) {
        if ((wr == own_wr && wc == own_wc) || (wr == skip_wr && wc == skip_wc)) continue;
        if (visit(wr, wc)) {
          if (hint) *hint = {wr - own_wr, wc - own_wc, true};
          return;
        }
      }
    }
  }
};

/// The fold grid of one layer on the array, in SCALE-Sim's loop order (column folds outer).
struct FoldGrid {
  std::uint64_t R = 0, C = 0;           // array rows, columns
  std::uint64_t sr = 0, sc = 0, t = 0;  // spatial rows, spatial columns, temporal
  std::uint64_t row_folds = 0, col_folds = 0, folds = 0;
  std::uint64_t per_fold = 0;                  // demand-matrix rows of one fold
  std::uint64_t rows_last = 0, cols_last = 0;  // PEs used by the last row / column fold
  std::uint64_t rows_in(std::uint64_t fr) const { return fr + 1 < row_folds ? R : rows_last; }
  std::uint64_t cols_in(std::uint64_t fc) const { return fc + 1 < col_folds ? C : cols_last; }
};

/// Demand rows whose served cycle the replay reports: ifmap SRAM start/stop, filter SRAM
/// start/stop, ofmap start/stop (the served cycle of the row: reads + 1 hit latency and the
/// row's stall, writes + the row's stall), then four rows whose plain cycle (row + stalls
/// before it) is wanted: the CALC read estimate's first request and last window move, ifmap and
/// filter (estimate_reads). A row of -1 is not asked for.
constexpr int kStampRows = 10;

/// The memory side of one layer in USER mode: what SCALE-Sim reports from its buffers.
struct BufferReplay {
  std::uint64_t stall_cycles = 0;  ///< SCALE-Sim's Stall Cycles
  std::uint64_t total_cycles = 0;  ///< SCALE-Sim's Total Cycles: the last ofmap row's service cycle
  /// Cycle at which demand row `row` is served: row + stalls before it (+ its own stall for the
  /// operand), as SCALE-Sim stamps its SRAM traces. Filled for the rows asked for in `stamp_rows`.
  std::int64_t stamps[kStampRows] = {};
  std::uint64_t dram_words[3] = {};  ///< ifmap reads, filter reads, ofmap writes
  std::int64_t dram_start[3] = {}, dram_stop[3] = {};
  /// False when the replay stopped at kMaxReplayEvents, or at a prefetch matrix or prefetch
  /// time past 2^62: the figures are then void.
  bool complete = true;
};

/// The replay's work bound per layer: folds, rows served one by one, window sets checked and
/// reads looked up entry by entry (about 10 s at worst). A layer needing more is far beyond what
/// SCALE-Sim itself can run (it builds every demand row in memory, and takes hours on ResNet-18).
constexpr std::uint64_t kMaxReplayEvents = std::uint64_t(1) << 23;

struct BufferSizes {
  std::uint64_t ifmap_words = 0, filter_words = 0, ofmap_words = 0;  ///< buffer capacities
  /// Words per cycle of the read buffers' and the write buffer's DRAM side. USER: SCALE-Sim's
  /// first Bandwidth for all three. CALC: the reads are SCALE-Sim's stall-free estimate (not
  /// replayed: read_bandwidth 0) and the write buffer drains ArrayWidth words per cycle.
  std::uint64_t read_bandwidth = 1, write_bandwidth = 1;
};

/// Replays SCALE-Sim's buffers over the layer's demand rows, fold by fold. `stamp_rows` are the
/// demand rows whose served cycles are wanted (kStampRows); index i of `stamps` is for
/// `stamp_rows[i]`.
/// `conv`: the layer's conv geometry, whose overlapping windows put one ifmap word in several
/// prefetch entries (a read hits if any of them is in the window); null for a GEMM.
BufferReplay replay_buffers(const FoldGrid& g, Dataflow d, const BufferSizes& sizes,
                            const std::int64_t (&stamp_rows)[kStampRows], const ConvWindow* conv = nullptr);

/// SCALE-Sim's CALC-mode read buffer (read_buffer_estimate_bw.py, docs/scalesim.md section
/// 3.2) over one read operand's demand stream: it never stalls, and counts as a DRAM read each
/// word that is not among the words entered since the window last moved on; the window moves
/// on every 50 x floor(S / 100) entered words (S the buffer's words).
struct EstimateReads {
  std::uint64_t words = 0;          ///< DRAM reads: the words entered
  std::uint64_t moves = 0;          ///< times the window moved on
  std::int64_t first_row = -1;      ///< demand row of the operand's first valid request
  std::int64_t last_move_row = -1;  ///< demand row of the request that moved it last
  /// The walk's work, counted against kMaxEstimateAccesses: requests walked one by one (null
  /// ones included), recorded first uses replayed, window words hashed, copied or compared.
  std::uint64_t walked = 0;
  /// False once the walk would pass kMaxEstimateAccesses, past 2^25 distinct words (its table
  /// of 4 bytes a word), or with counts or demand rows past 2^62: the figures are void.
  bool complete = true;
};

/// The estimate's work bound per operand (EstimateReads::walked): requests walked one by one
/// (passes that repeat are skipped, not walked), first uses replayed, window words hashed,
/// copied or compared; 1-3 ns each, up to about 10 ns where every request misses the cache,
/// so a layer that never repeats is stopped within about 2-10 s.
constexpr std::uint64_t kMaxEstimateAccesses = std::uint64_t(1) << 30;

/// `operand` 0: the ifmap (a conv's overlapping windows read a word through several entries:
/// `conv`, null for a GEMM), 1: the filter. `capacity`: the buffer's words. The figures are
/// those of the request-by-request walk; passes that repeat (the fold loop re-streams an operand
/// over the same blocks) are counted, not walked (docs/scalesim.md section 3.2).
EstimateReads estimate_reads(const FoldGrid& g, Dataflow d, int operand, std::uint64_t capacity,
                             const ConvWindow* conv = nullptr);

}  // namespace npusim::scalesim
