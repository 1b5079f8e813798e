#include "sim/scalesim/buffer_model.h"

#include <algorithm>
#include <deque>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/core/math_util.h"

namespace npusim::scalesim {
namespace {

using i64 = std::int64_t;
using u128 = unsigned __int128;
/// Below every cycle, with room to subtract one without overflow.
constexpr i64 kNoWait = INT64_MIN / 2;
/// Cycle stamps the replay computes stay below this; beyond it the layer is refused.
constexpr i64 kCycleRange = i64(1) << 62;

/// sum over u in [0, b] of clamp(u, 0, cap); 0 for b < 0.
u128 clamped_prefix(i64 b, i64 cap) {
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
u128 clamped_sum(i64 lo, i64 hi, i64 v, i64 cap) {
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

/// The entries one demand row reads, in order: index() values [first_entry, first_entry +
/// entries), and the same as set-counting indices [lo, hi] (lo > hi: none).
struct Run {
  i64 lo = 1, hi = 0, first_entry = 0, entries = 0;
  bool empty() const { return lo > hi; }
};

/// SCALE-Sim's read_buffer: the valid prefetch entries grouped in sets of `per_set`, an active
/// window of `active` sets that moves by `step` sets (mod `sets`) on each miss; each move is a
/// prefetch that completes `cost` cycles after the previous one, whatever the demand's cycle.
class ReadBuffer {
 public:
  ReadBuffer(const PrefetchMatrix& m, std::uint64_t capacity, std::uint64_t bw) {
    const i64 total = i64(capacity);
    const i64 active_size = (total + 1) / 2, prefetch_size = total - active_size;
    per_set_ = std::max<i64>(1, ceil_div(total, i64(100)));
    sets_ = m.valid() / per_set_ + 1;  // a last, possibly empty, set
    active_ = std::min(ceil_div(active_size, per_set_), sets_);
    step_ = std::min(ceil_div(prefetch_size, per_set_), sets_ - active_);
    cost_ = ceil_div(prefetch_size, i64(bw)) + 1;
    // The first fill: ceil(active / bw) lines of bw words (no more lines than the matrix has),
    // timed to end at cycle -1, before the first demand.
    const i64 matrix_lines = ceil_div(m.blocks * m.rows * m.width, i64(bw));
    const i64 first_lines = std::min(ceil_div(active_size, i64(bw)), matrix_lines);
    words_ = std::uint64_t(first_lines) * bw;
    prefetch_words_ = std::uint64_t(ceil_div(prefetch_size, i64(bw))) * bw;
    start_ = -first_lines;
    last_ = -1;
  }

  /// Serves the valid entries [lo, hi] in order; returns the completion cycle of the last
  /// prefetch it waited for, or kNoWait when every entry was already in the window.
  /// `copies(i, f)` calls f(index) for the other entries holding the same word as entry lo + i,
  /// until f returns true: SCALE-Sim looks a word up by address, so any of them in the window
  /// is a hit.
  template <class Copies>
  i64 serve(const PrefetchMatrix& m, const Run& run, const Copies& copies) {
    i64 waited = kNoWait;
    lookups_ += std::uint64_t(run.hi / per_set_ - run.lo / per_set_ + 1);  // the sets checked below
    if (all_in_window(run.lo, run.hi)) return waited;
    for (i64 i = 0; i < run.entries; ++i) {
      if (!m.holes.empty() && m.is_hole(run.first_entry + i)) continue;  // a null request
      // SCALE-Sim prefetches one by one until the word is in the window: until the first of its
      // entries (its own, or a copy) comes in. That count is arithmetic, so a miss that sends
      // the window round the whole matrix costs O(1) here.
      i64 ahead = ahead_of_window(m.compact(run.first_entry + i));
      if (ahead < active_ * per_set_) continue;  // a hit
      ++lookups_;
      copies(i, [&](i64 index) {
        ahead = std::min(ahead, ahead_of_window(index));
        return ahead < active_ * per_set_;  // a copy in the window: a hit, no need to look further
      });
      if (ahead >= active_ * per_set_) advance((ahead / per_set_ - active_) / step_ + 1, waited);
    }
    return waited;
  }

  /// False once the prefetch times would pass 2^62 cycles: the replay's results are then void.
  bool in_range() const { return in_range_; }
  /// Prefetches so far: the window is the same as long as this is.
  i64 moves() const { return moves_; }
  /// Sets checked and reads looked up entry by entry so far (the replay's work).
  std::uint64_t lookups() const { return lookups_; }

  bool in_window_index(i64 index) const { return in_window(index / per_set_); }

  /// The last valid index that can be read going forward from `index` (in the window) without
  /// a miss: the window's end, or the matrix's when the window wraps past it.
  i64 last_hit_from(i64 index) const {
    const i64 s = index / per_set_;
    const i64 end = window_ + active_;  // one past the window, unwrapped
    const i64 last_set = s >= window_ ? std::min(end, sets_) - 1 : end - sets_ - 1;
    return (last_set + 1) * per_set_ - 1;
  }

  std::uint64_t words() const { return words_; }
  i64 start() const { return start_; }
  i64 stop() const { return last_; }

 private:
  bool in_window(i64 s) const { return (s >= window_ ? s - window_ : s - window_ + sets_) < active_; }

  bool all_in_window(i64 lo, i64 hi) const {
    for (i64 s = lo / per_set_; s <= hi / per_set_; ++s)
      if (!in_window(s)) return false;
    return true;
  }

  /// How far valid index `index` lies ahead of the window's first entry, cyclically, without a
  /// division (the hot path of a conv's copy lookups): its set is a = floor(ahead / per_set)
  /// sets ahead, in the window if a < active. The window moves forward by step <= active sets,
  /// so it takes floor((a - active) / step) + 1 prefetches to bring a set further ahead in.
  i64 ahead_of_window(i64 index) const {
    const i64 first = window_ * per_set_;
    return index >= first ? index - first : index - first + sets_ * per_set_;
  }

  /// `moves` prefetches: the window moves by `step_` sets each; each one's data is there
  /// `cost_` cycles after the previous one's.
  void advance(i64 moves, i64& waited) {
    window_ = i64((u128(window_) + u128(moves) * u128(step_)) % u128(sets_));
    moves_ += moves;
    i64 cycles = 0;
    std::uint64_t words = 0;
    if (__builtin_mul_overflow(moves, cost_, &cycles) || __builtin_add_overflow(last_, cycles, &last_) ||
        last_ > kCycleRange || __builtin_mul_overflow(std::uint64_t(moves), prefetch_words_, &words) ||
        __builtin_add_overflow(words_, words, &words_))
      in_range_ = false;
    waited = last_;
  }

  i64 per_set_ = 1, sets_ = 1, active_ = 1, step_ = 0, cost_ = 1;
  i64 window_ = 0, last_ = -1, start_ = 0;
  std::uint64_t words_ = 0, prefetch_words_ = 0;
  i64 moves_ = 0;
  std::uint64_t lookups_ = 0;
  bool in_range_ = true;
};

/// SCALE-Sim's write_buffer: words collect in lines of `bw`; once more than half the buffer is
/// held and no drain is running, a drain of ceil(half / bw) lines starts, one line per cycle; a
/// write finding the buffer full during a drain waits for the drain's end.
class WriteBuffer {
 public:
  WriteBuffer(std::uint64_t capacity, std::uint64_t bw) : bw_(i64(bw)) {
    total_ = i64(capacity);
    active_ = (total_ + 1) / 2;
    drain_lines_ = ceil_div(total_ - active_, bw_);
    free_ = total_;
  }

  /// Writes `n` words at `cycle`; returns the cycle the last one was accepted.
  i64 write(i64 n, i64 cycle) {
    while (n > 0) {
      i64 k = 1;
      if (cycle < drain_end_) {
        k = std::min(n, std::max<i64>(1, free_));
        store(k);
        if (free_ <= 0) cycle = drain_end_, ++events_;  // full: wait for the drain
      } else {
        k = std::min(n, std::max<i64>(1, free_ - active_ + 1));
        store(k);
        if (free_ < active_) drain_end_ = drain(cycle);
      }
      n -= k;
    }
    return cycle;
  }

  /// What SCALE-Sim does after the last row: drain everything, drain after drain.
  void flush(i64 cycle) {
    close_line();
    while (!lines_.empty()) cycle = drain(cycle) + 1;
  }

  /// Words that can be written at cycles before the drain's end without filling the buffer, and
  /// at cycles from it on without starting a drain (< 0: the first word does).
  i64 room_while_draining() const { return free_ - 1; }
  i64 room_after_drain() const { return free_ - active_; }
  i64 drain_end() const { return drain_end_; }
  /// Drains and waits so far: the room above changes only with the words written while this
  /// stays the same.
  std::uint64_t events() const { return events_; }

  /// Writes `n` words that trigger nothing (the caller checked the room above).
  void write_quietly(i64 n) { store(n); }

  std::uint64_t words() const { return std::uint64_t(drained_); }
  i64 start() const { return start_; }
  i64 stop() const { return stop_; }

 private:
  void store(i64 k) {
    free_ -= k;
    const i64 filled = line_fill_ + k;
    if (filled / bw_ > 0) push(filled / bw_, bw_);
    line_fill_ = filled % bw_;
  }
  void push(i64 count, i64 fill) {
    if (!lines_.empty() && lines_.back().second == fill)
      lines_.back().first += count;
    else
      lines_.emplace_back(count, fill);
  }
  void close_line() {
    if (line_fill_ > 0) push(1, line_fill_);
    line_fill_ = 0;
  }
  /// One drain from `cycle`; returns its last cycle. SCALE-Sim credits the buffer with every
  /// word of the drained lines but the last line's empty slots.
  i64 drain(i64 cycle) {
    close_line();
    i64 lines = 0, last_fill = 0;
    while (lines < drain_lines_ && !lines_.empty()) {
      auto& [count, fill] = lines_.front();
      const i64 take = std::min(count, drain_lines_ - lines);
      lines += take, last_fill = fill, count -= take;
      if (count == 0) lines_.pop_front();
    }
    if (lines == 0) return cycle;
    ++events_;
    const i64 words = (lines - 1) * bw_ + last_fill;
    free_ += words;
    drained_ += words;
    if (!drains_) start_ = cycle;
    drains_ = true;
    stop_ = cycle + lines - 1;
    return stop_;
  }

  i64 bw_ = 1, total_ = 0, active_ = 0, drain_lines_ = 1, free_ = 0;
  i64 line_fill_ = 0, drain_end_ = 0, drained_ = 0, start_ = 0, stop_ = 0;
  bool drains_ = false;
  std::uint64_t events_ = 0;
  std::deque<std::pair<i64, i64>> lines_;  // runs of (lines, words in each line)
};

/// How a read operand's demand rows walk its prefetch matrix, per dataflow (docs/scalesim.md 3.1).
struct ReadPattern {
  PrefetchMatrix matrix;
  bool by_row_fold = true;  ///< the block a fold reads: its row fold (else its column fold)
  i64 prefix = 0;           ///< rolled: empty demand rows before the skewed block
};

ReadPattern ifmap_pattern(const FoldGrid& g, Dataflow d) {
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

ReadPattern filter_pattern(const FoldGrid& g, Dataflow d) {
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

/// The prefetch entries demand row `r` of fold (fc, fr) asks for. Rolled: the row is one
/// anti-diagonal of its block (skewed demand). Row-major: the first R rows load the stationary
/// block's rows bottom first (flipped).
Run demand_run(const ReadPattern& p, const FoldGrid& g, std::uint64_t fc, std::uint64_t fr, i64 r) {
  const PrefetchMatrix& m = p.matrix;
  const i64 block = i64(p.by_row_fold ? fr : fc);
  const i64 width = block + 1 < m.blocks ? m.width : m.last_width;
  i64 first = 0, count = 0;
  if (m.rolled) {
    const i64 s = r - p.prefix;
    const i64 c_lo = std::max<i64>(0, s - m.rows + 1), c_hi = std::min(width - 1, s);
    if (s < 0 || c_lo > c_hi) return {};
    first = m.index(block * m.rows + s - c_lo, c_lo), count = c_hi - c_lo + 1;
  } else {
    const i64 R = i64(g.R);
    if (r >= R) return {};
    const i64 row = i64(fr) * R + R - 1 - r;  // the stationary block is one row fold of rows
    if (row >= m.rows) return {};             // padding rows of a partial fold
    first = m.index(block * m.rows + row, 0), count = width;
  }
  return {m.compact(first), m.compact(first + count) - 1, first, count};
}

/// Ofmap words demand row `r` of fold (fc, fr) writes: a skewed block with valid rows [a, b)
/// and `cols` valid columns, after `offset` empty rows.
i64 ofmap_writes(const FoldGrid& g, Dataflow d, std::uint64_t fc, std::uint64_t fr, i64 r) {
  const i64 R = i64(g.R), T = i64(g.t), cols = i64(g.cols_in(fc));
  i64 offset = 2 * R - 1, a = 0, b = T;
  if (d == Dataflow::OS) offset = T - 1, a = R - i64(g.rows_in(fr)), b = R;  // flipped R x C block
  const i64 lo = std::max<i64>(0, r - offset - b + 1), hi = std::min(cols - 1, r - offset - a);
  return std::max<i64>(0, hi - lo + 1);
}

/// index() of the ifmap operand entry (ofmap pixel, window element k) in its prefetch matrix.
i64 ifmap_entry(const PrefetchMatrix& m, const FoldGrid& g, Dataflow d, i64 pixel, i64 k) {
  const i64 R = i64(g.R), C = i64(g.C), T = i64(g.t);
  switch (d) {  // OS and IS stack blocks of K = m.rows window-element rows
    case Dataflow::WS:
      return m.index(k / R * T + pixel, k % R);
    case Dataflow::OS:
      return m.index(pixel / R * m.rows + k, pixel % R);
    case Dataflow::IS:
      return m.index(pixel / C * m.rows + k, pixel % C);
  }
  return 0;
}

/// The ifmap's read pattern, with the null entries of a conv whose last window row or column
/// hangs over the ifmap's edge (only the last ofmap row and column can: docs/scalesim.md 2).
ReadPattern ifmap_read_pattern(const FoldGrid& g, Dataflow d, const ConvWindow* conv) {
  ReadPattern p = ifmap_pattern(g, d);
  if (!conv) return p;
  const ConvWindow& w = *conv;
  const i64 K = w.filter_h * w.filter_w * w.channels;
  auto scan = [&](i64 pixel) {
    for (i64 k = 0; k < K; ++k)
      if (!w.inside(pixel, k)) p.matrix.holes.push_back(ifmap_entry(p.matrix, g, d, pixel, k));
  };
  const bool rows_over = (w.ofmap_h - 1) * w.stride_h + w.filter_h > w.ifmap_h;
  const bool cols_over = (w.ofmap_w - 1) * w.stride_w + w.filter_w > w.ifmap_w;
  if (rows_over)
    for (i64 col = 0; col < w.ofmap_w; ++col) scan((w.ofmap_h - 1) * w.ofmap_w + col);
  if (cols_over)
    for (i64 row = 0; row < w.ofmap_h - (rows_over ? 1 : 0); ++row) scan(row * w.ofmap_w + w.ofmap_w - 1);
  std::sort(p.matrix.holes.begin(), p.matrix.holes.end());
  return p;
}

/// Ofmap words demand rows [0, r] of fold (fc, fr) write (the sum of ofmap_writes).
i64 ofmap_writes_through(const FoldGrid& g, Dataflow d, std::uint64_t fc, std::uint64_t fr, i64 r) {
  const i64 R = i64(g.R), T = i64(g.t), cols = i64(g.cols_in(fc));
  i64 offset = 2 * R - 1, a = 0, b = T;
  if (d == Dataflow::OS) offset = T - 1, a = R - i64(g.rows_in(fr)), b = R;
  return i64(clamped_sum(0, cols, r - offset - a + 1, b - a));
}

/// First row in [lo, hi) for which `pred` holds (pred monotone: false then true), or hi.
template <class Pred>
i64 first_row(i64 lo, i64 hi, Pred pred) {
  while (lo < hi) {
    const i64 mid = lo + (hi - lo) / 2;
    if (pred(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/// The replay. Rows where no buffer misses, fills or starts a drain are skipped in bulk: a
/// streamed operand's demand walks its prefetch order forward within a fold, so its next miss
/// is the first row reaching past the window (a binary search); a stationary operand's loads
/// are its fold's first R rows, served one by one; the ofmap's next event is where its
/// cumulative writes reach the buffer's room (a binary search over a closed form).
class Replay {
 public:
  Replay(const FoldGrid& g, Dataflow d, const BufferSizes& sizes, const std::int64_t (&stamp_rows)[kStampRows],
         const ConvWindow* conv)
      : g_(g),
        d_(d),
        conv_(conv),
        in_p_(ifmap_read_pattern(g, d, conv)),
        w_p_(filter_pattern(g, d)),
        reads_(sizes.read_bandwidth > 0),
        in_(in_p_.matrix, sizes.ifmap_words, std::max<std::uint64_t>(1, sizes.read_bandwidth)),
        w_(w_p_.matrix, sizes.filter_words, std::max<std::uint64_t>(1, sizes.read_bandwidth)),
        out_(sizes.ofmap_words, sizes.write_bandwidth),
        stamp_rows_(stamp_rows) {}

  BufferReplay run() {
    const i64 per_fold = i64(g_.per_fold);
    for (std::uint64_t fc = 0; fc < g_.col_folds; ++fc) {
      for (std::uint64_t fr = 0; fr < g_.row_folds; ++fr) {
        fc_ = fc, fr_ = fr, base_ = i64(fc * g_.row_folds + fr) * per_fold;
        ++events_;
        last_[0] = last_[1] = -1;
        if (events_ > kMaxReplayEvents) return incomplete();
        for (i64 r = 0; r < per_fold;) {
          const i64 next =
              std::min({next_read(in_p_, in_, 0, r), next_read(w_p_, w_, 1, r), next_write(r), next_stamp(r)});
          if (next > r) out_.write_quietly(writes_between(r, next));  // rows [r, next): nothing happens
          if (next >= per_fold) break;
          serve_row(next);
          if (++events_ + in_.lookups() + w_.lookups() > kMaxReplayEvents || !in_.in_range() || !w_.in_range())
            return incomplete();
          r = next + 1;
        }
      }
    }
    out_.flush(served_);
    BufferReplay b;
    b.stall_cycles = std::uint64_t(stalls_);
    b.total_cycles = std::uint64_t(served_);
    std::copy(std::begin(stamps_), std::end(stamps_), std::begin(b.stamps));
    b.dram_words[0] = in_.words(), b.dram_words[1] = w_.words(), b.dram_words[2] = out_.words();
    b.dram_start[0] = in_.start(), b.dram_stop[0] = in_.stop();
    b.dram_start[1] = w_.start(), b.dram_stop[1] = w_.stop();
    b.dram_start[2] = out_.start(), b.dram_stop[2] = out_.stop();
    return b;
  }

 private:
  i64 end() const { return i64(g_.per_fold); }

  BufferReplay incomplete() const {
    BufferReplay b;
    b.complete = false;
    return b;
  }

  /// The next row from `r` at which read operand `op` may miss.
  i64 next_read(const ReadPattern& p, const ReadBuffer& buf, int op, i64 r) const {
    if (!reads_) return end();
    if (!p.matrix.rolled) {  // stationary: its loads, row by row
      for (i64 row = r; row < std::min(end(), i64(g_.R)); ++row) {
        if (!demand_run(p, g_, fc_, fr_, row).empty()) return row;
      }
      return end();
    }
    const i64 first = std::min(end(), p.prefix);
    // the fold's first request may jump anywhere; a row served by copies ends outside the window
    if (last_[op] < 0 || !buf.in_window_index(last_[op])) return std::max(r, first);
    // Within a fold the answer stands while the window does (the reads only move forward).
    Cached& c = read_cache_[op];
    if (c.fold == base_ && c.version == buf.moves() && r <= c.row) return c.row;
    const i64 safe = buf.last_hit_from(last_[op]);
    const i64 last_row =
        std::min(end(), p.prefix + p.matrix.rows + i64(p.by_row_fold ? g_.rows_in(fr_) : g_.cols_in(fc_)) - 1);
    c = {base_, buf.moves(), 0, first_row(r, last_row, [&](i64 row) {
           const Run run = demand_run(p, g_, fc_, fr_, row);
           return !run.empty() && run.hi > safe;
         })};
    return c.row;
  }

  /// The next row from `r` at which an ofmap write fills the buffer or starts a drain.
  i64 next_write(i64 r) const {
    // The answer stands while no drain or wait happens and the array does not stall: the rows
    // before it write exactly the words the search counted.
    if (write_cache_.fold == base_ && write_cache_.version == i64(out_.events()) && write_cache_.stalls == stalls_ &&
        r <= write_cache_.row)
      return write_cache_.row;
    write_cache_ = {base_, i64(out_.events()), stalls_, search_write(r)};
    return write_cache_.row;
  }

  i64 search_write(i64 r) const {
    const i64 before = r > 0 ? ofmap_writes_through(g_, d_, fc_, fr_, r - 1) : 0;
    auto written = [&](i64 row) { return ofmap_writes_through(g_, d_, fc_, fr_, row) - before; };
    // rows at cycles before the drain's end, then from it on
    const i64 drain_row = std::clamp(out_.drain_end() - base_ - stalls_, r, end());
    const i64 full = first_row(r, drain_row, [&](i64 row) { return written(row) > out_.room_while_draining(); });
    if (full < drain_row) return full;
    return first_row(drain_row, end(), [&](i64 row) { return written(row) > out_.room_after_drain(); });
  }

  /// The next row from `r` whose served cycle is reported: a stamp row, or the very last row
  /// (its ofmap service cycle is Total Cycles).
  i64 next_stamp(i64 r) const {
    const bool last_fold = fc_ + 1 == g_.col_folds && fr_ + 1 == g_.row_folds;
    i64 next = last_fold && r < end() ? end() - 1 : end();
    for (std::int64_t row : stamp_rows_) {
      if (row - base_ >= r && row - base_ < next) next = row - base_;
    }
    return next;
  }

  i64 writes_between(i64 r, i64 next) const {
    const i64 hi = std::min(next, end()) - 1;
    return ofmap_writes_through(g_, d_, fc_, fr_, hi) - (r > 0 ? ofmap_writes_through(g_, d_, fc_, fr_, r - 1) : 0);
  }

  /// For demand row r of the current fold: copies(i, f) calls f(index) for the prefetch index of
  /// every other entry holding the ifmap word of the row's i-th request.
  auto ifmap_copies(i64 r) const {
    return [this, r](i64 i, const auto& f) {
      const i64 R = i64(g_.R), C = i64(g_.C);
      i64 pixel = 0, k = 0;
      if (d_ == Dataflow::IS) {  // stationary: block row fr*R + R-1-r, its C pixel columns
        k = i64(fr_) * R + R - 1 - r, pixel = i64(fc_) * C + i;
      } else {  // skewed: entry c of anti-diagonal s
        const i64 s = r - in_p_.prefix, c = std::max<i64>(0, s - in_p_.matrix.rows + 1) + i;
        if (d_ == Dataflow::WS)
          pixel = s - c, k = i64(fr_) * R + c;
        else
          k = s - c, pixel = i64(fr_) * R + c;
      }
      conv_->for_each_copy(
          pixel, k, [&](i64 p, i64 kk) { return f(in_p_.matrix.compact(ifmap_entry(in_p_.matrix, g_, d_, p, kk))); },
          &copy_hint_);
    };
  }

  void serve_row(i64 r) {
    const i64 cycle = base_ + r + stalls_;
    i64 stall[3] = {0, 0, 0};
    const ReadPattern* patterns[2] = {&in_p_, &w_p_};
    ReadBuffer* buffers[2] = {&in_, &w_};
    auto no_copies = [](i64, const auto&) {};  // a GEMM's words are each in one entry
    for (int op = 0; op < 2 && reads_; ++op) {
      const Run run = demand_run(*patterns[op], g_, fc_, fr_, r);
      if (run.empty()) continue;
      const PrefetchMatrix& m = patterns[op]->matrix;
      const i64 done =
          op == 0 && conv_ ? buffers[op]->serve(m, run, ifmap_copies(r)) : buffers[op]->serve(m, run, no_copies);
      stall[op] = std::max<i64>(0, done - cycle - 1);
      last_[op] = run.hi;
    }
    const i64 n = ofmap_writes(g_, d_, fc_, fr_, r);
    served_ = n > 0 ? out_.write(n, cycle) : cycle;
    stall[2] = served_ - cycle;
    for (int i = 0; i < kStampRows; ++i) {
      if (stamp_rows_[i] == base_ + r) stamps_[i] = cycle + (i < 4 ? 1 + stall[i / 2] : i < 6 ? stall[2] : 0);
    }
    stalls_ += std::max({stall[0], stall[1], stall[2]});
  }

  const FoldGrid& g_;
  Dataflow d_;
  const ConvWindow* conv_;
  ReadPattern in_p_, w_p_;
  bool reads_;  ///< replay the read buffers (USER); CALC's estimate never stalls
  ReadBuffer in_, w_;
  WriteBuffer out_;
  const std::int64_t (&stamp_rows_)[kStampRows];
  std::uint64_t fc_ = 0, fr_ = 0;
  i64 base_ = 0, stalls_ = 0, served_ = 0;
  std::uint64_t events_ = 0;  // rows served one by one, and folds, against kMaxReplayEvents
  i64 last_[2] = {-1, -1};    // the last valid index each streamed operand read in this fold
  /// A next-event row, valid for the fold starting at demand row `fold`, while the buffer's
  /// version (and the stalls) are unchanged.
  struct Cached {
    i64 fold = -1, version = -1, stalls = -1, row = 0;
  };
  mutable Cached read_cache_[2], write_cache_;
  mutable ConvWindow::CopyHint copy_hint_;  // where the last ifmap copy lookup found its word
  i64 stamps_[kStampRows] = {};
};

}  // namespace

BufferReplay replay_buffers(const FoldGrid& g, Dataflow d, const BufferSizes& sizes,
                            const std::int64_t (&stamp_rows)[kStampRows], const ConvWindow* conv) {
  // Positions are 64-bit: both prefetch matrices, padding included, must stay below 2^62 entries.
  for (const ReadPattern& p : {ifmap_pattern(g, d), filter_pattern(g, d)}) {
    if (u128(p.matrix.blocks) * u128(p.matrix.rows) * u128(p.matrix.width) >= u128(kCycleRange)) {
      BufferReplay b;
      b.complete = false;
      return b;
    }
  }
  return Replay(g, d, sizes, stamp_rows, conv).run();
}

namespace {

/// Where one read operand's entries come from: entry (a, b) of the operand (ifmap: pixel, window
/// element; filter: window element, filter) for column x of its block and the other coordinate
/// o (a rolled block's row y, a stationary block's row).
struct EntryMap {
  bool x_is_a = false;  ///< x (plus the block's first) is a; else b
  i64 block_width = 1;  ///< a block's columns in a or b
};

EntryMap entry_map(Dataflow d, int operand, const FoldGrid& g) {
  const i64 R = i64(g.R), C = i64(g.C);
  if (operand == 0) {
    switch (d) {
      case Dataflow::WS:
        return {false, R};  // (pixel y, element fr*R + x)
      case Dataflow::OS:
        return {true, R};  // (pixel fr*R + x, element y)
      case Dataflow::IS:
        return {true, C};  // (pixel fc*C + x, element row)
    }
  }
  switch (d) {
    case Dataflow::WS:
      return {false, C};  // (element row, filter fc*C + x)
    case Dataflow::OS:
      return {false, C};  // (element y, filter fc*C + x)
    case Dataflow::IS:
      return {true, R};  // (element fr*R + x, filter y)
  }
  return {};
}

/// The word each operand entry reads, as SCALE-Sim addresses it, in O(1) per entry: a conv's
/// ifmap address splits into a pixel part and a window-element part, precomputed once.
class WordAddresses {
 public:
  WordAddresses(const FoldGrid& g, Dataflow d, int operand, const ConvWindow* conv)
      : conv_(operand == 0 ? conv : nullptr) {
    i64 M = 0, K = 0, N = 0;
    switch (d) {
      case Dataflow::WS:
        K = i64(g.sr), N = i64(g.sc), M = i64(g.t);
        break;
      case Dataflow::OS:
        M = i64(g.sr), N = i64(g.sc), K = i64(g.t);
        break;
      case Dataflow::IS:
        K = i64(g.sr), M = i64(g.sc), N = i64(g.t);
        break;
    }
    stride_ = operand == 0 ? K : N;
    space_ = u128(operand == 0 ? M : K) * u128(stride_);
    if (!conv_) return;
    const ConvWindow& w = *conv_;
    space_ = u128(w.ifmap_h) * u128(w.ifmap_w) * u128(w.channels);
    if (u128(M) != u128(w.ofmap_h) * u128(w.ofmap_w) || space_ > kMaxWords) return;  // refused by fits()
    pixel_.resize(std::size_t(M)), element_.resize(std::size_t(K));
    for (i64 p = 0; p < M; ++p) {
      const i64 row = p / w.ofmap_w * w.stride_h, col = p % w.ofmap_w * w.stride_w;
      pixel_[std::size_t(p)] = {(row * w.ifmap_w + col) * w.channels, row, col};
    }
    const i64 fwc = w.filter_w * w.channels;
    for (i64 k = 0; k < K; ++k) {
      const i64 row = k / fwc, col = k % fwc / w.channels;
      element_[std::size_t(k)] = {(row * w.ifmap_w + col) * w.channels + k % w.channels, row, col};
    }
    // the last window ends inside the ifmap: no entry is a null request
    inside_ = (w.ofmap_h - 1) * w.stride_h + w.filter_h <= w.ifmap_h &&
              (w.ofmap_w - 1) * w.stride_w + w.filter_w <= w.ifmap_w;
  }

  /// Blocks of pixels from `first` (a pixel) read the same words shifted by whole ifmap rows if
  /// their first pixels share an ofmap column and no window hangs over the ifmap's edge: this
  /// column then, else -1.
  i64 pixel_shape(i64 first) const { return conv_ && inside_ ? first % conv_->ofmap_w : -1; }
  /// The word of pixel p's window element 0.
  i64 pixel_offset(i64 p) const { return pixel_[std::size_t(p)].offset; }
  /// Whether two entries may read one word (only a conv's ifmap: a GEMM's entries are its words).
  bool repeats_anywhere() const { return conv_ != nullptr; }
  /// Whether two entries of a rolled block may read one word (a conv's overlapping windows):
  /// a block of pixels (`pixels`) sees every window element, a block of `width` window elements
  /// repeats a channel only if wider than the channels.
  bool repeats_in_block(bool pixels, i64 width) const {
    if (!conv_) return false;
    return pixels ? conv_->filter_h > conv_->stride_h || conv_->filter_w > conv_->stride_w : width > conv_->channels;
  }
  /// Whether the words fit the estimate's table (2^25 of them: a 128 MiB table).
  bool fits() const { return space_ <= kMaxWords && (!conv_ || !pixel_.empty()); }
  std::size_t space() const { return std::size_t(space_); }

  /// The word entry (a, b) reads; -1 for a null request (a window hanging over the edge).
  i64 operator()(i64 a, i64 b) const {
    if (!conv_) return a * stride_ + b;
    const Part& p = pixel_[std::size_t(a)];
    const Part& e = element_[std::size_t(b)];
    if (!inside_ && (p.row + e.row >= conv_->ifmap_h || p.col + e.col >= conv_->ifmap_w)) return -1;
    return p.offset + e.offset;
  }

 private:
  static constexpr u128 kMaxWords = u128(1) << 25;
  struct Part {
    i64 offset, row, col;
  };
  const ConvWindow* conv_;
  bool inside_ = false;
  i64 stride_ = 1;
  u128 space_ = 0;
  std::vector<Part> pixel_, element_;
};

/// An O(1) mix of a word for the order-free hash of a window's words (splitmix64's finalizer).
std::uint64_t mix_word(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Stamps are 32-bit: each is given at a step counted against kMaxEstimateAccesses.
static_assert(kMaxEstimateAccesses < UINT32_MAX, "stamps overflow");
/// Words a walk may copy into its window snapshots (4 bytes each: 32 MiB); past it, boundaries
/// are no longer recorded and the periods are walked.
constexpr std::size_t kMaxSnapshotWords = std::size_t(1) << 23;
/// First uses a walk may record (16 bytes each: 64 MiB); past it, passes are walked in full.
constexpr std::size_t kMaxFirstUses = std::size_t(1) << 22;
/// Blocks a walk keeps records for (about 50 bytes each); a layer with more is walked without
/// replays, and its periods without the probe that proves they miss throughout.
constexpr i64 kMaxTrackedBlocks = i64(1) << 22;

/// The CALC estimate buffer's walk over one operand's requests (docs/scalesim.md section 3.2).
/// A rolled operand is streamed pass after pass over the same blocks; a period is the fold
/// loop's stretch that streams one fixed request sequence, the next period the same sequence
/// one period's demand rows later. Four shortcuts, all exact:
/// - counts: without a conv's overlapping windows every entry is its own word, read once per
///   period, so past a window of them every request misses (count_stationary, periods);
/// - cycles: the walk's future at a period boundary depends only on the set of words entered
///   since the window last moved; when it equals the set at an earlier boundary of the same run
///   of periods, the periods in between repeat verbatim and whole cycles are added, not walked;
/// - misses throughout: one period that hits nothing, and the next one's first window of
///   requests, show every word's requests at least a window (per_move entries) apart, also
///   across the period's end: every later request misses, so the rest is arithmetic and only the
///   last window's words are walked back;
/// - first uses: until the window moves, a pass reads from DRAM exactly the words it uses that
///   are not in the window, so a block's later passes visit only its words' first uses (in
///   order, recorded on its first pass, or on a block of pixels laid out alike), walking
///   requests one by one only after a move.
class EstimateWalk {
 public:
  EstimateWalk(const FoldGrid& g, Dataflow d, int operand, const ReadPattern& p, const WordAddresses& word,
               std::uint64_t per_move)
      : g_(g),
        p_(p),
        m_(p.matrix),
        map_(entry_map(d, operand, g)),
        word_(word),
        per_move_(per_move),
        stamp_of_(word.space(), 0),
        // a window holds each word once: at most per_move entries (all of them when it never moves)
        window_(per_move > 0 ? std::min<std::uint64_t>(per_move, word.space()) : word.space()) {}

  EstimateReads run() {
    if (!m_.rolled) {
      walk_stationary();
    } else {
      // per-block records (first uses, twins) for a conv's ifmap, whose blocks are walked
      per_block_ = word_.repeats_anywhere() && m_.blocks <= kMaxTrackedBlocks;
      pass_valid_.assign(per_block_ ? std::size_t(m_.blocks) : 0, 0);
      if (per_block_) {
        firsts_.assign(std::size_t(m_.blocks), {});
        recorded_.assign(std::size_t(m_.blocks), false);
        find_twins();
      }
      if (p_.by_row_fold) {
        periods(0, g_.col_folds);  // a period: the row folds' sweep over every block, once per column fold
      } else {
        for (std::uint64_t fc = 0; fc < g_.col_folds && e_.complete; ++fc)
          periods(fc, g_.row_folds);  // block fc, once per row fold
      }
    }
    e_.walked = walked_;
    return e_;
  }

 private:
  struct Snapshot {
    std::uint64_t boundary, words, moves;
    i64 last_move_row;
    std::size_t first, size;  // its words in pool_
  };
  /// A word's first request in a pass over a block: anti-diagonal s, column c, and the valid
  /// requests of the pass before it.
  struct FirstUse {
    std::uint32_t word, s, c, ordinal;
  };

  /// The per-request state, copied into locals for the length of a loop (the table stores
  /// would otherwise make the compiler reload every member at every request).
  struct Hot {
    std::uint32_t* stamps;
    std::uint32_t* window;
    std::uint32_t stamp, last_move, floor;
    std::uint64_t per_move, valid, hits, in_window, words, moves, min_gap;
    i64 first_row, last_move_row;

    bool in(std::uint32_t s) const { return s > last_move; }
    /// Enters word w (a DRAM read) at demand row `row`; true if that moved the window on.
    bool enter(std::uint32_t& s, std::uint32_t w, i64 row) {
      if (s > floor) min_gap = std::min<std::uint64_t>(min_gap, stamp - s);
      s = ++stamp;
      ++words;
      window[in_window] = w;
      if (++in_window != per_move) return false;
      ++moves, last_move_row = row, in_window = 0, last_move = stamp;
      return true;
    }
    /// One request: a hit if the word entered since the window last moved, else a DRAM read.
    void request(std::uint32_t w, i64 row) {
      if (first_row < 0) first_row = row;
      ++valid;
      std::uint32_t& s = stamps[w];
      if (in(s))
        ++hits;
      else
        enter(s, w, row);
    }
  };
  Hot load() {
    return {stamp_of_.data(), window_.data(), stamp_,   last_move_stamp_, gap_floor_,   per_move_,       valid_, hits_,
            in_window_,       e_.words,       e_.moves, min_gap_,         e_.first_row, e_.last_move_row};
  }
  void store(const Hot& h) {
    stamp_ = h.stamp, last_move_stamp_ = h.last_move, valid_ = h.valid, hits_ = h.hits, in_window_ = h.in_window;
    e_.words = h.words, e_.moves = h.moves, min_gap_ = h.min_gap, e_.first_row = h.first_row;
    e_.last_move_row = h.last_move_row;
  }

  i64 fold_base(std::uint64_t fc, std::uint64_t fr) const { return i64(fc * g_.row_folds + fr) * i64(g_.per_fold); }
  i64 width_of(i64 block) const { return block + 1 < m_.blocks ? m_.width : m_.last_width; }
  i64 word_of(i64 block, i64 x, i64 o) const {
    const i64 first = block * map_.block_width + x;
    return map_.x_is_a ? word_(first, o) : word_(o, first);
  }
  /// The first column of anti-diagonal s (its last: min(width - 1, s)).
  i64 diagonal_lo(i64 s) const { return std::max<i64>(0, s - m_.rows + 1); }

  /// Walks the valid requests of a rolled pass over `block` from demand row `base` one by one
  /// (demand row base + prefix + s is anti-diagonal s, columns ascending), from the request
  /// after (s0, c0) when `resume`. kRecord: records the block's first uses too. Stops, returning
  /// false, where the period's valid requests reach `probe_at` with no hit and every gap at
  /// least a window wide.
  template <bool kRecord>
  bool walk_pass(i64 block, i64 base, std::uint64_t probe_at, bool resume = false, i64 s0 = 0, i64 c0 = 0) {
    Hot h = load();
    const std::uint32_t pass_start = h.stamp;
    const std::uint64_t valid_before = h.valid;
    std::vector<FirstUse>* firsts = kRecord ? &firsts_[std::size_t(block)] : nullptr;
    const i64 width = width_of(block), last = m_.rows + width - 2;
    for (i64 s = resume ? s0 : 0; s <= last; ++s) {
      const i64 row = base + p_.prefix + s, hi = std::min(width - 1, s);
      const i64 from = resume && s == s0 ? c0 + 1 : diagonal_lo(s);
      walked_ += std::uint64_t(std::max<i64>(0, hi - from + 1));
      for (i64 c = from; c <= hi; ++c) {
        const i64 w = word_of(block, c, s - c);
        if (w < 0) continue;
        if (!kRecord) {
          h.request(std::uint32_t(w), row);
        } else {
          std::uint32_t& st = h.stamps[w];
          if (st <= pass_start)
            firsts->push_back(
                {std::uint32_t(w), std::uint32_t(s), std::uint32_t(c), std::uint32_t(h.valid - valid_before)});
          if (h.first_row < 0) h.first_row = row;
          ++h.valid;
          if (!h.in(st))
            h.enter(st, std::uint32_t(w), row);
          else if (++h.hits, st <= pass_start)
            st = ++h.stamp;  // marks the word used in this pass
        }
        if (h.valid == probe_at && h.hits == 0 && h.min_gap >= h.per_move) {
          if (kRecord) firsts->clear();
          return store(h), false;
        }
      }
    }
    store(h);
    if (!resume && per_block_) pass_valid_[std::size_t(block)] = h.valid - valid_before;
    if (kRecord) recorded_[std::size_t(block)] = true, first_uses_ += firsts->size();
    return true;
  }

  /// A pass over a block whose twin's first uses are recorded (its own, or those of a block of
  /// pixels laid out alike, `delta` words away): they alone decide its reads until the window
  /// moves (later uses hit); after a move the rest of the pass is walked request by request.
  void replay_pass(i64 block, i64 base, std::size_t twin, i64 delta) {
    const std::vector<FirstUse>& firsts = firsts_[twin];
    pass_valid_[std::size_t(block)] = pass_valid_[twin];
    Hot h = load();
    std::uint64_t misses = 0;
    walked_ += firsts.size();
    for (const FirstUse& u : firsts) {
      const std::uint32_t w = std::uint32_t(i64(u.word) + delta);
      std::uint32_t& st = h.stamps[w];
      if (h.in(st)) continue;
      ++misses;
      if (h.enter(st, w, base + p_.prefix + i64(u.s))) {
        h.valid += u.ordinal + 1, h.hits += u.ordinal + 1 - misses;
        store(h);
        walk_pass<false>(block, base, UINT64_MAX, true, u.s, u.c);
        return;
      }
    }
    h.valid += pass_valid_[twin], h.hits += pass_valid_[twin] - misses;
    store(h);
  }

  /// Each block's twin, the first block of pixels laid out alike (itself if none before it).
  void find_twins() {
    twin_.resize(std::size_t(m_.blocks)), delta_.assign(std::size_t(m_.blocks), 0),
        shared_.assign(std::size_t(m_.blocks), false);
    std::unordered_map<i64, i64> first_of;  // (shape, width) -> the first block of it
    for (i64 b = 0; b < m_.blocks; ++b) {
      twin_[std::size_t(b)] = std::size_t(b);
      const i64 first = b * map_.block_width, shape = map_.x_is_a ? word_.pixel_shape(first) : -1;
      if (shape < 0) continue;
      const auto it = first_of.emplace(shape * (m_.width + 1) + width_of(b), b).first;
      const i64 t = it->second;
      twin_[std::size_t(b)] = std::size_t(t),
      delta_[std::size_t(b)] = word_.pixel_offset(first) - word_.pixel_offset(t * map_.block_width);
      if (t != b) shared_[std::size_t(t)] = true;
    }
  }

  /// The passes of period j of run `run` as f(block, base): by_row_fold, column fold j's sweep
  /// over the row folds (backwards when `reverse`); else row fold j's pass over block `run`.
  template <class F>
  bool period_passes(std::uint64_t run, std::uint64_t j, bool reverse, const F& f) {
    if (!p_.by_row_fold) return f(i64(run), fold_base(run, j));
    for (std::uint64_t i = 0; i < g_.row_folds; ++i) {
      const std::uint64_t fr = reverse ? g_.row_folds - 1 - i : i;
      if (!f(i64(fr), fold_base(j, fr))) return false;
    }
    return true;
  }

  /// Entries (null ones included) of one period.
  std::uint64_t period_entries(std::uint64_t run) const {
    if (!p_.by_row_fold) return std::uint64_t(m_.rows * width_of(i64(run)));
    return std::uint64_t(m_.rows) * std::uint64_t((m_.blocks - 1) * m_.width + m_.last_width);
  }

  /// Valid requests of one period (every pass of it walked once).
  std::uint64_t valid_of(std::uint64_t run) const {
    if (!p_.by_row_fold) return pass_valid_[std::size_t(run)];
    std::uint64_t n = 0;
    for (std::uint64_t v : pass_valid_) n += v;
    return n;
  }

  bool within_budget(std::uint64_t more) {
    if (walked_ + more > kMaxEstimateAccesses) e_.complete = false;
    return e_.complete;
  }

  /// A stationary operand: each fold loads its own rows once (demand row r loads stationary row
  /// fr*R + R-1-r, flipped); nothing repeats.
  void walk_stationary() {
    const i64 R = i64(g_.R);
    if (!word_.repeats_anywhere()) return count_stationary();
    for (std::uint64_t fc = 0; fc < g_.col_folds; ++fc) {
      for (std::uint64_t fr = 0; fr < g_.row_folds; ++fr) {
        const i64 block = i64(p_.by_row_fold ? fr : fc), width = width_of(block), base = fold_base(fc, fr);
        if (!within_budget(std::uint64_t(R * width))) return;
        walked_ += std::uint64_t(R * width);
        Hot h = load();
        for (i64 r = 0; r < R; ++r) {
          const i64 row = i64(fr) * R + R - 1 - r;
          if (row >= m_.rows) continue;
          for (i64 x = 0; x < width; ++x) {
            const i64 w = word_of(block, x, row);
            if (w >= 0) h.request(std::uint32_t(w), base + r);
          }
        }
        store(h);
      }
    }
  }

  /// A stationary operand whose entries are distinct words, all valid (no conv): each request
  /// misses, so the figures are counts; the last move's row is found fold by fold.
  void count_stationary() {
    const i64 R = i64(g_.R);
    // fold (fc, fr) loads rows r >= first_r(fr) (the others are a partial fold's padding), width entries each
    auto first_r = [&](std::uint64_t fr) { return std::max<i64>(0, i64(fr) * R + R - m_.rows); };
    auto fold_entries = [&](std::uint64_t fc, std::uint64_t fr) {
      return std::uint64_t(R - first_r(fr)) * std::uint64_t(width_of(i64(p_.by_row_fold ? fr : fc)));
    };
    if (!within_budget(2 * g_.folds)) return;
    std::uint64_t entries = 0;
    for (std::uint64_t fc = 0; fc < g_.col_folds; ++fc)
      for (std::uint64_t fr = 0; fr < g_.row_folds; ++fr) entries += fold_entries(fc, fr);
    walked_ += g_.folds;
    if (entries == 0) return;
    e_.first_row = fold_base(0, 0) + first_r(0);
    e_.words = entries;
    if (per_move_ == 0 || entries < per_move_) return;
    e_.moves = entries / per_move_;
    std::uint64_t before = e_.moves * per_move_ - 1;  // entries before the one that moved the window last
    for (std::uint64_t fc = 0; fc < g_.col_folds; ++fc) {
      for (std::uint64_t fr = 0; fr < g_.row_folds; ++fr) {
        const std::uint64_t n = fold_entries(fc, fr);
        if (before < n) {
          e_.last_move_row =
              fold_base(fc, fr) + first_r(fr) + i64(before / std::uint64_t(width_of(i64(p_.by_row_fold ? fr : fc))));
          return;
        }
        before -= n;
      }
    }
  }

  /// The n periods of one run (the same request sequence, one period's rows after the other).
  void periods(std::uint64_t run, std::uint64_t n) {
    if (!within_budget(0)) return;
    // Without a conv's overlapping windows a period reads each of its words once, none of them
    // in an earlier run's window (other blocks), so with more than a window of them every
    // request misses: entries W - 1 >= per_move apart.
    if (!word_.repeats_anywhere() && per_move_ > 0 && period_entries(run) > per_move_) {
      if (e_.first_row < 0) e_.first_row = (p_.by_row_fold ? fold_base(0, 0) : fold_base(run, 0)) + p_.prefix;
      skip_misses(run, u128(n) * period_entries(run), n - 1);
      return;
    }
    snapshots_.clear(), pool_.clear(), by_hash_.clear();
    bool detect = true;
    // the previous period: walked request by request and hit nothing (clean), and its every
    // word's requests a window apart (misses)
    bool last_misses = false, last_clean = false;
    std::uint32_t last_start = stamp_;
    for (std::uint64_t j = 0; j < n;) {
      if (detect && j + 2 <= n && skip_cycles(run, n, j)) {
        detect = false;  // the tail (fewer periods than a cycle) is walked
        continue;
      }
      if (!within_budget(period_entries(run))) return;
      const std::uint32_t start = stamp_;
      // gaps are measured back to the previous period's start only if that one is all entries
      gap_floor_ = last_clean ? last_start : start;
      hits_ = valid_ = 0, min_gap_ = UINT64_MAX;
      bool replayed = false;
      // after a period of misses only, a window of this one's requests may prove the rest miss too
      const bool probing = detect && last_misses && per_move_ > 0 && per_block_;
      const std::uint64_t probe_at = probing ? per_move_ : UINT64_MAX;
      // first uses pay only for a block streamed again whose words repeat in a pass (a conv's ifmap)
      const bool record = j + 1 < n;
      const bool all_walked = period_passes(
          run, j, false, [&](i64 block, i64 base) { return visit_pass(block, base, probe_at, record, replayed); });
      if (!all_walked) {
        skip_misses(run, u128(n - 1 - j) * valid_of(run) + (valid_of(run) - per_move_), n - 1);
        return;
      }
      ++j;
      last_clean = !replayed && hits_ == 0;
      last_misses = last_clean && min_gap_ >= per_move_;
      last_start = start;
    }
  }

  /// At boundary j of a run of n periods: if the window is one an earlier boundary had, adds
  /// the whole cycles of periods left (moving j on) and returns true; else records it.
  bool skip_cycles(std::uint64_t run, std::uint64_t n, std::uint64_t& j) {
    const bool hashed = in_window_ <= period_entries(run) && pool_.size() + in_window_ <= kMaxSnapshotWords;
    const std::uint64_t hash = hashed ? window_hash() : 0;
    if (hashed) walked_ += in_window_;
    const Snapshot* s = same_window(hashed, hash);
    if (!s) return record(j, hashed, hash), false;
    const std::uint64_t p = j - s->boundary, k = (n - j) / p;
    const std::uint64_t words = e_.words - s->words, moves = e_.moves - s->moves;
    e_.words += k * words, e_.moves += k * moves;
    const i64 period_rows = i64(p_.by_row_fold ? g_.row_folds : 1) * i64(g_.per_fold);
    if (moves > 0) e_.last_move_row += i64(k * p) * period_rows;  // the cycle's moves, k cycles on
    j += k * p;
    return true;
  }

  /// One pass of a period: replayed from its twin's first uses if recorded (not while
  /// `probe_at` is set: the probe needs every request's gap), else walked (recording its first
  /// uses if it repeats words, is streamed again (`record`) or has twins).
  bool visit_pass(i64 block, i64 base, std::uint64_t probe_at, bool record, bool& replayed) {
    if (!per_block_) return walk_pass<false>(block, base, probe_at);
    const std::size_t b = std::size_t(block), t = twin_[b];
    if (probe_at == UINT64_MAX && recorded_[t] && pass_valid_[t] > firsts_[t].size()) {
      replayed = true;
      replay_pass(block, base, t, delta_[b]);
      return true;
    }
    if ((record || shared_[b]) && t == b && !recorded_[b] && word_.repeats_in_block(map_.x_is_a, width_of(block)) &&
        first_uses_ + std::size_t(m_.rows * width_of(block)) <= kMaxFirstUses)
      return walk_pass<true>(block, base, probe_at);
    return walk_pass<false>(block, base, probe_at);
  }

  std::uint64_t window_hash() const {
    std::uint64_t h = 0;
    for (std::size_t i = 0; i < in_window_; ++i) h += mix_word(window_[i]);
    return h;
  }

  /// The state at the boundary, if an earlier boundary of this run had the same window: the
  /// previous one if nothing entered since (no move, no entry), else one whose words hash alike
  /// (`hash`, when `hashed`), compared word by word.
  const Snapshot* same_window(bool hashed, std::uint64_t hash) {
    if (!snapshots_.empty() && snapshots_.back().moves == e_.moves && snapshots_.back().words == e_.words)
      return &snapshots_.back();
    if (!hashed) return nullptr;
    auto it = by_hash_.find(hash);
    if (it == by_hash_.end()) return nullptr;
    for (std::size_t i : it->second) {
      const Snapshot& s = snapshots_[i];
      if (s.size != in_window_) continue;
      walked_ += s.size;
      bool same = true;
      for (std::size_t k = s.first; k < s.first + s.size && same; ++k) same = stamp_of_[pool_[k]] > last_move_stamp_;
      if (same) return &s;
    }
    return nullptr;
  }

  /// Records the boundary; its words too when `hashed` (a window no larger than a period, so
  /// hashing and copying it cost no more than walking the period).
  void record(std::uint64_t boundary, bool hashed, std::uint64_t hash) {
    snapshots_.push_back({boundary, e_.words, e_.moves, e_.last_move_row, pool_.size(), in_window_});
    if (!hashed) return;
    walked_ += in_window_;
    by_hash_[hash].push_back(snapshots_.size() - 1);
    pool_.insert(pool_.end(), window_.begin(), window_.begin() + std::ptrdiff_t(in_window_));
  }

  /// `entries` more requests, all misses, ending with period `last`: add their reads and
  /// moves, then set the window to the period's final entries, walking it backwards; the entry
  /// before them made the last move (if any did). They are distinct words: per_move entries apart.
  void skip_misses(std::uint64_t run, u128 entries, std::uint64_t last) {
    const u128 total = in_window_ + entries;
    e_.words += std::uint64_t(entries), e_.moves += std::uint64_t(total / per_move_);
    const std::uint64_t keep = std::uint64_t(total % per_move_);
    const bool moved = total >= per_move_;
    last_move_stamp_ = stamp_, in_window_ = 0;
    period_passes(run, last, true, [&](i64 block, i64 base) {
      const i64 width = width_of(block);
      for (i64 s = m_.rows + width - 2; s >= 0; --s) {
        for (i64 c = std::min(width - 1, s); c >= diagonal_lo(s); --c) {
          if (!within_budget(1)) return false;
          ++walked_;
          const i64 w = word_of(block, c, s - c);
          if (w < 0) continue;
          if (in_window_ == keep) {
            if (moved) e_.last_move_row = base + p_.prefix + s;
            return false;
          }
          stamp_of_[std::size_t(w)] = ++stamp_;
          window_[in_window_++] = std::uint32_t(w);
        }
      }
      return true;
    });
  }

  const FoldGrid& g_;
  const ReadPattern& p_;
  const PrefetchMatrix& m_;
  const EntryMap map_;
  const WordAddresses& word_;
  const std::uint64_t per_move_;
  EstimateReads e_;
  std::uint64_t walked_ = 0;  // EstimateReads::walked
  /// Per word: the stamp of its last entry (or of its first use in a pass being recorded); 0:
  /// never. A word is in the window iff stamped after the entry that last moved it.
  std::vector<std::uint32_t> stamp_of_;
  std::uint32_t stamp_ = 0, last_move_stamp_ = 0, gap_floor_ = 0;
  std::vector<std::uint32_t> window_;  // its first in_window_: the words entered since the window last moved
  std::uint64_t in_window_ = 0;
  /// Of the period being walked: valid requests, hits, and the fewest stamps between a word's
  /// entry and its previous one (stamped after gap_floor_).
  std::uint64_t valid_ = 0, hits_ = 0, min_gap_ = 0;
  std::vector<Snapshot> snapshots_;
  std::vector<std::uint32_t> pool_;
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> by_hash_;
  std::vector<std::vector<FirstUse>> firsts_;  // per block, once its first pass is walked
  std::vector<std::uint64_t> pass_valid_;      // per block: valid requests of a pass, once walked
  std::vector<bool> recorded_;                 // per block: its first uses are in firsts_
  /// Per block: the block whose first uses it replays (find_twins), their words' offset, and
  /// whether other blocks replay its own.
  std::vector<std::size_t> twin_;
  std::vector<i64> delta_;
  std::vector<bool> shared_;
  std::size_t first_uses_ = 0;
  bool per_block_ = false;  // the per-block records above are kept
};

}  // namespace

EstimateReads estimate_reads(const FoldGrid& g, Dataflow d, int operand, std::uint64_t capacity,
                             const ConvWindow* conv) {
  EstimateReads e;
  const ReadPattern p = operand == 0 ? ifmap_pattern(g, d) : filter_pattern(g, d);
  const PrefetchMatrix& m = p.matrix;
  // every fold streams its whole block; a stationary block is read once, a row fold per fold
  const u128 passes = !m.rolled ? 1 : p.by_row_fold ? g.col_folds : g.row_folds;
  // the counts and demand rows must stay in 64 bits (the walk itself is bounded by kMaxEstimateAccesses)
  e.complete = u128(m.blocks) * u128(m.rows) * u128(m.width) * passes < u128(kCycleRange) &&
               u128(g.folds) * u128(g.per_fold) < u128(kCycleRange);
  if (!e.complete) return e;
  const WordAddresses word(g, d, operand, conv);
  e.complete = word.fits();
  if (!e.complete) return e;
  // read_buffer_estimate_bw: sets of floor(S/100) words, an active window of 50 sets that moves
  // on by 50 (the prefetch half) when its 50th set fills: after a move the window holds no
  // finished set, so a word hits only if it entered since the last move.
  return EstimateWalk(g, d, operand, p, word, 50 * (capacity / 100)).run();
}

}  // namespace npusim::scalesim
