// SCALE-Sim's CALC-mode read buffer (read_buffer_estimate_bw.py, docs/scalesim.md section 3.2):
// estimate_reads walks one read operand's requests and counts as DRAM reads the words not entered
// since the window last moved on, with exact shortcuts for the passes that repeat.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/scalesim/buffer_model.h"
#include "sim/scalesim/buffer_model_internal.h"

namespace npusim::scalesim {
// The prefetch matrix and read patterns both buffer models stand on (buffer_model_internal.h).
using namespace detail;

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
