#include "sim/scalesim/buffer_model.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <utility>

#include "sim/core/math_util.h"
#include "sim/scalesim/buffer_model_internal.h"

namespace npusim::scalesim {
// The prefetch matrix and read patterns both buffer models stand on (buffer_model_internal.h).
using namespace detail;

namespace {

/// Below every cycle, with room to subtract one without overflow.
constexpr i64 kNoWait = INT64_MIN / 2;

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

}  // namespace npusim::scalesim
