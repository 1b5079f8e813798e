#pragma once
// Internal to the SCALE-Sim reference model's buffers: a read operand's prefetch matrix (the order
// SCALE-Sim fetches its words in) and how its demand rows walk it per dataflow, with the integer
// helpers they count with. Both models of the read buffers stand on them: the USER-mode replay
// (buffer_model.cpp) and the CALC-mode read estimate (read_estimate.cpp); only those files include
// this header.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/core/hardware_config.h"
#include "sim/scalesim/buffer_model.h"

namespace npusim::scalesim::detail {

using i64 = std::int64_t;
using u128 = unsigned __int128;
/// Cycle stamps the replay computes stay below this; beyond it the layer is refused.
constexpr i64 kCycleRange = i64(1) << 62;

/// sum over u in [0, b] of clamp(u, 0, cap); 0 for b < 0.
inline u128 clamped_prefix(i64 b, i64 cap) {
  if (b < 0) return 0;
  if (b < (i64(1) << 31)) {  // the common case, in 64 bits (the replay's hot path)
    const std::uint64_t c = std::uint64_t(std::min(b, cap));
    return c * (c + 1) / 2 + std::uint64_t(b - i64(c)) * c;
  }
  const u128 c = u128(cap);
  if (b <= cap) return u128(b) * u128(b + 1) / 2;
  return c * (c + 1) / 2 + u128(b - cap) * c;
}

/// sum over x in [lo, hi) of clamp(v - x, 0, cap).
inline u128 clamped_sum(i64 lo, i64 hi, i64 v, i64 cap) {
  if (hi <= lo) return 0;
  return clamped_prefix(v - lo, cap) - clamped_prefix(v - hi, cap);
}

/// One read operand's prefetch matrix: `blocks` blocks of `rows` x `width` entries stacked
/// vertically, the last block only `last_width` columns wide (the rest are null requests).
/// `rolled`: SCALE-Sim flattens it along anti-diagonals (rows descending within one), the
/// streamed operands; otherwise row-major, the stationary ones.
struct PrefetchMatrix {
  i64 blocks = 1, rows = 1, width = 1, last_width = 1;
  bool rolled = true;
  /// Null entries inside the used columns, by index(): a conv window hanging over the ifmap's
  /// edge (docs/scalesim.md section 2). Sorted.
  std::vector<i64> holes;

  i64 valid() const { return (blocks - 1) * rows * width + rows * last_width - i64(holes.size()); }
  bool is_hole(i64 i) const { return std::binary_search(holes.begin(), holes.end(), i); }
  /// The valid entries before index i: the set-counting index SCALE-Sim's hashed buffer uses.
  i64 compact(i64 i) const { return i - i64(std::lower_bound(holes.begin(), holes.end(), i) - holes.begin()); }
  i64 height() const { return blocks * rows; }

  /// Entries of the used columns (index() counts them; holes included) on anti-diagonals below d.
  i64 below_diagonal(i64 d) const {
    const i64 Y = height();
    u128 n = clamped_sum(0, width, d, Y);
    n -= clamped_sum(last_width, width, d - (Y - rows), rows);
    return i64(n);
  }

  /// Position, in prefetch order, of entry (row y of the stack, column x) among the entries of
  /// the used columns (a partial fold's padding columns do not count; holes do: see compact()).
  i64 index(i64 y, i64 x) const {
    const i64 last_block = height() - rows;
    if (!rolled) return y < last_block ? y * width + x : last_block * width + (y - last_block) * last_width + x;
    const i64 d = y + x, ymax = std::min(d, height() - 1);
    // valid entries of diagonal d in rows above y (they come first: rows descend)
    i64 above = ymax - y;
    const i64 hi = std::min(ymax, d - last_width), lo = std::max(y, last_block - 1);
    if (hi > lo) above -= hi - lo;
    return below_diagonal(d) + above;
  }
};

/// How a read operand's demand rows walk its prefetch matrix, per dataflow (docs/scalesim.md 3.1).
struct ReadPattern {
  PrefetchMatrix matrix;
  bool by_row_fold = true;  ///< the block a fold reads: its row fold (else its column fold)
  i64 prefix = 0;           ///< rolled: empty demand rows before the skewed block
};

inline ReadPattern ifmap_pattern(const FoldGrid& g, Dataflow d) {
  const i64 R = i64(g.R), C = i64(g.C);
  switch (d) {
    case Dataflow::WS:
      return {{i64(g.row_folds), i64(g.t), R, i64(g.rows_last), true, {}}, true, R};
    case Dataflow::OS:
      return {{i64(g.row_folds), i64(g.t), R, i64(g.rows_last), true, {}}, true, 0};
    case Dataflow::IS:
      return {{i64(g.col_folds), i64(g.sr), C, i64(g.cols_last), false, {}}, false, 0};
  }
  return {};
}

inline ReadPattern filter_pattern(const FoldGrid& g, Dataflow d) {
  const i64 R = i64(g.R), C = i64(g.C);
  switch (d) {
    case Dataflow::WS:
      return {{i64(g.col_folds), i64(g.sr), C, i64(g.cols_last), false, {}}, false, 0};
    case Dataflow::OS:
      return {{i64(g.col_folds), i64(g.t), C, i64(g.cols_last), true, {}}, false, 0};
    case Dataflow::IS:
      return {{i64(g.row_folds), i64(g.t), R, i64(g.rows_last), true, {}}, true, R};
  }
  return {};
}

}  // namespace npusim::scalesim::detail
