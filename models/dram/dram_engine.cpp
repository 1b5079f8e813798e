#include "models/dram/dram_engine.h"

#include <algorithm>
#include <type_traits>
#include <sstream>
#include <string>

#include "models/dram/dram_config_check.h"
#include "sim/core/errors.h"

namespace npusim::models {
namespace {

std::string where_of(const DramConfig& c) {
  return "dram (" + c.preset + ")";
}

/// `c`, once it has passed the rules (so members built from it can rely on them).
const DramConfig& checked(const DramConfig& c) {
  check_dram_config(c, where_of(c));
  return c;
}

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

/// A column command's cycle and its request's arrival as one number, ordered as the scheduler
/// orders candidates: the earlier cycle first, ties to the older request (arrivals are unique in
/// a channel). One compare instead of two dependent branches: on random requests which
/// candidate wins is random, and its branches were the engine's most mispredicted
/// (cachegrind --branch-sim=yes on bench_dram's random pattern).
using OrderKey = unsigned __int128;
inline OrderKey order_key(std::uint64_t col, std::uint64_t arrival) {
  return static_cast<OrderKey>(col) << 64 | arrival;
}

/// One request at a given cycle.
class SingleRequest final : public DramRequestSource {
 public:
  SingleRequest(std::uint64_t addr, bool is_write, std::uint64_t cycle) : request_{addr, cycle, is_write} {}
  Status next(DramRequest& r) override {
    if (given_) return Status::Done;
    given_ = true;
    r = request_;
    return Status::Ready;
  }

 private:
  DramRequest request_;
  bool given_ = false;
};

/// The bursts of a strided transfer with at most `max_outstanding` of them incomplete.
class TransferSource final : public DramRequestSource {
 public:
  TransferSource(std::uint64_t addr, std::uint64_t run_bytes, std::uint64_t stride, std::uint64_t runs, bool is_write,
                 std::uint64_t arrival, std::uint64_t max_outstanding, std::uint64_t burst_bytes)
      : addr_(addr),
        run_bytes_(run_bytes),
        stride_(stride),
        runs_(runs),
        is_write_(is_write),
        arrival_(arrival),
        burst_bytes_(burst_bytes),
        last_(arrival) {
    // A ring of completions, slot i & mask: a power of two at least the window (so a slot is
    // not reused before burst i + window, which waits for it), never much larger than the
    // transfer's bursts. (A modulo by the window was a division per burst, twice.)
    const std::uint64_t bursts_bound = runs * (run_bytes / burst_bytes + 2);
    window_ = std::min(max_outstanding, bursts_bound);
    std::uint64_t slots = 1;
    while (slots < window_) slots *= 2;
    done_.assign(static_cast<std::size_t>(slots), Slot{});
    mask_ = slots - 1;
    start_run();
  }

  Status next(DramRequest& r) override {
    if (run_ >= runs_) return Status::Done;
    std::uint64_t cycle = arrival_;
    const std::uint64_t k = window_;
    if (issued_ >= k) {
      const Slot& s = done_[(issued_ - k) & mask_];
      if (s.index_plus_one != issued_ - k + 1) return Status::Blocked;  // burst i - k still in flight
      cycle = std::max(cycle, s.cycle);
    }
    r = {burst_, cycle, is_write_};
    ++issued_;
    burst_ += burst_bytes_;
    if (burst_ >= run_end_) {
      ++run_;
      start_run();
    }
    return Status::Ready;
  }

  void completed(std::uint64_t index, std::uint64_t data_end) override {
    done_[index & mask_] = {index + 1, data_end};
    last_ = std::max(last_, data_end);
  }

  std::uint64_t last() const { return last_; }

  /// Bursts the source issues from its current run after the one it issued last, before the run
  /// ends (0 when the run or the transfer ends with that one).
  std::uint64_t left_in_run() const {
    return run_ < runs_ && burst_ < run_end_ ? (run_end_ - burst_ - 1) / burst_bytes_ : 0;
  }
  /// The last index b <= `last` such that requests `first`..b have completed, each `pace` after
  /// the one before (`first` itself when the next has not; kNever when `first` has not).
  std::uint64_t paced_through(std::uint64_t first, std::uint64_t last, std::uint64_t pace) const {
    const Slot& s = done_[first & mask_];
    if (s.index_plus_one != first + 1) return ~std::uint64_t{0};
    std::uint64_t b = first, cycle = s.cycle;
    while (b < last) {
      const Slot& next = done_[(b + 1) & mask_];
      if (next.index_plus_one != b + 2 || next.cycle != cycle + pace) break;
      ++b;
      cycle = next.cycle;
    }
    return b;
  }
  std::uint64_t window() const { return window_; }
  std::uint64_t issued() const { return issued_; }
  /// The address next() issues next (the transfer is not done).
  std::uint64_t next_addr() const { return burst_; }
  bool done() const { return run_ >= runs_; }
  /// As `n` more next() calls within the current run (left_in_run() >= n), after completions of
  /// requests `last_done - n + 1 .. last_done` whose data ends are `data_end` - (last_done - i) x
  /// `pace`, reported in that order (the stream path's batch, DramEngine::serve_stream).
  void skip(std::uint64_t n, std::uint64_t last_done, std::uint64_t data_end, std::uint64_t pace) {
    issued_ += n;
    burst_ += n * burst_bytes_;
    const std::uint64_t kept = std::min(n, window_);
    for (std::uint64_t i = last_done + 1 - kept; i <= last_done; ++i)
      done_[i & mask_] = {i + 1, data_end - (last_done - i) * pace};
    last_ = std::max(last_, data_end);
  }

 private:
  struct Slot {
    std::uint64_t index_plus_one = 0;  // 0: empty
    std::uint64_t cycle = 0;
  };
  void start_run() {
    if (run_ >= runs_) return;
    const std::uint64_t start = addr_ + run_ * stride_;
    burst_ = start - start % burst_bytes_;
    run_end_ = start + run_bytes_;
  }

  std::uint64_t addr_, run_bytes_, stride_, runs_;
  bool is_write_;
  std::uint64_t arrival_, burst_bytes_;
  std::uint64_t run_ = 0, burst_ = 0, run_end_ = 0, issued_ = 0, last_;
  std::uint64_t window_ = 0, mask_ = 0;
  std::vector<Slot> done_;
};

}  // namespace

DramEngine::DramEngine(const DramConfig& config) : config_(checked(config)), device_(config_, stats_) {
  capacity_ = config_.capacity_bytes();
  burst_bytes_ = config_.bytes_per_burst();
  units_ = refresh_units(config_);
  refresh_interval_ = config_.timing.tREFI / units_;
  max_owed_ = std::uint64_t{config_.refresh_max_postponed} * units_;
  channels_.resize(config_.channels);
  for (Channel& ch : channels_) {
    ch.reads.depth = config_.read_queue_depth;
    ch.writes.depth = config_.write_queue_depth;
  }
  ranks_.resize(std::size_t{config_.channels} * config_.ranks);
  // The first refresh falls due one interval after reset.
  for (RankRefresh& r : ranks_) {
    if (refresh_interval_ != 0) r.next_due = refresh_interval_;
    r.round_left = full_round();
  }
  bank_queues_.resize(ranks_.size() * config_.banks());
  row_columns_.assign(bank_queues_.size(), 0);
  banks_per_channel_ = config_.ranks * config_.banks();
  candidates_.resize(banks_per_channel_);
  window_banks_.assign(std::size_t{config_.channels} * ((banks_per_channel_ + 63) / 64), 0);
  window_count_.assign(config_.channels, 0);
  shared_bounds_.assign(2 * ranks_.size() * config_.bank_groups, SharedBoundSlot{});
  update_next_refresh();
}

// ---------------------------------------------------------------- the event loop

// flatten: every call in the loop (admission, decision, choice, record) is inlined into it. The
// library is built with -fPIC, where GCC never inlines an out-of-line member function (it could be
// interposed), and each burst made about fifteen such calls: 16 % of a stream's instructions
// (bench_dram sequential pattern), 11 % of ResNet-50's whole run (callgrind; docs/performance.md).
template <class Source>
__attribute__((flatten)) std::uint64_t DramEngine::run_source(Source& source) {
  run_index_ = 0;
  run_last_ = now_;
  Pending p;
  pull(source, p);
  // The next decision changes only with a decision, or when an admission fills an empty
  // channel: it is kept here rather than looked for at every step.
  std::uint32_t channel = 0;
  std::uint64_t t_decide = next_decision(channel);
  for (;;) {
    // 1. The next admission and the next decision; refresh ticks due by then go first.
    const std::uint64_t t_admit = p.status == DramRequestSource::Status::Ready ? admission_time(p) : kNever;
    const std::uint64_t t_next = std::min(t_admit, t_decide);
    if (t_next == kNever) {
      if (p.status == DramRequestSource::Status::Blocked)
        throw SimulationError(where_of(config_) + ": request source blocked with no request in flight");
      break;
    }
    if (next_refresh_ <= t_next) {
      refresh_tick(t_next);
      continue;
    }
    // 2. A request entering at cycle t is a candidate for a decision at t.
    if (t_admit <= t_decide) {
      const std::uint32_t c = p.target.channel;
      const Channel& ch = channels_[c];
      const bool was_empty = ch.reads.arrivals.empty() && ch.writes.arrivals.empty();
      admit(p, t_admit);
      const std::uint64_t t = std::max(ch.clock, t_admit);                  // its next decision, if it had none
      if (was_empty && (t < t_decide || (t == t_decide && c < channel))) {  // ties: the lowest channel
        t_decide = t;
        channel = c;
      }
      pull(source, p);
      continue;
    }
    if (stream(source, p, channel, t_decide)) {
      t_decide = next_decision(channel);
      continue;
    }
    const Served served = decide(channel, t_decide);
    source.completed(served.index, served.data_end);
    t_decide = next_decision(channel);
    if (p.status == DramRequestSource::Status::Blocked) pull(source, p);
  }
  repay_refreshes();
  return run_last_;
}

// After run_source's definition: an instantiation asked for before it did not get its flatten.
std::uint64_t DramEngine::run(DramRequestSource& source) {
  return run_source(source);
}

void DramEngine::advance_to(std::uint64_t cycle) {
  while (next_refresh_ <= cycle) refresh_tick(cycle);
}

template <class Source>
inline void DramEngine::pull(Source& source, Pending& p) {
  p.status = source.next(p.request);
  if (p.status != DramRequestSource::Status::Ready) return;
  check_request(p);
  p.target = device_.locate(p.request.addr);
}

inline void DramEngine::check_request(const Pending& p) const {
  if (p.request.addr >= capacity_)
    throw InputError(where_of(config_), "expected an address below the capacity " + std::to_string(capacity_) + " B (" +
                                            hex(capacity_) + "), found " + hex(p.request.addr));
  if (p.request.cycle > kMaxCycle)
    throw InputError(where_of(config_), "expected a request cycle of at most 2^62 = " + std::to_string(kMaxCycle) +
                                            ", found " + std::to_string(p.request.cycle));
}

inline std::uint64_t DramEngine::admission_time(const Pending& p) {
  Channel& ch = channels_[p.target.channel];
  Queue& q = p.request.is_write ? ch.writes : ch.reads;
  // In issue order, one a cycle into each channel. A new run's requests may enter before the
  // previous run's last decision (overlapping TLM transfers), so this is not clamped to now_.
  const std::uint64_t t = std::max(p.request.cycle, admit_floor(p.target.channel));
  // Slots are held by queued entries and by chosen ones whose column command is after t (and
  // after now_: slots freed by then are dropped before counting, below; dropping them first
  // would only make this count smaller).
  if (q.waiting + q.leaving.size() < q.depth) return t;  // room even if every one still held
  while (!q.leaving.empty() && q.leaving.front() <= now_) q.leaving.pop_front();
  if (q.waiting + q.leaving.size() < q.depth) return t;
  std::size_t first_after = 0;  // leaving is ascending and short: t is usually near its front
  while (first_after < q.leaving.size() && q.leaving[first_after] <= t) ++first_after;
  const std::size_t holding = q.waiting + (q.leaving.size() - first_after);
  if (holding < q.depth) return t;
  return first_after == q.leaving.size() ? kNever : q.leaving[first_after];  // full: wait for a departure or a decision
}

inline void DramEngine::count_admission(const Pending& p, std::uint64_t at) {
  const std::uint64_t ready = std::max(p.request.cycle, admit_floor(p.target.channel));
  if (at > ready) stats_.backpressure_cycles += at - ready;
  if (!any_arrival_) stats_.first_arrival_cycle = at;
  any_arrival_ = true;
  now_ = std::max(now_, at);
  last_admit_ = at;
  channels_[p.target.channel].next_admit = at + 1;
}

inline void DramEngine::admit(const Pending& p, std::uint64_t at) {
  count_admission(p, at);
  Channel& ch = channels_[p.target.channel];
  Queue& q = p.request.is_write ? ch.writes : ch.reads;
  // The request takes a channel-queue slot, and moves on at once into its bank's window if
  // that has room (the slot is then free again).
  const Entry e{run_index_++, at, p.target, p.request.is_write};
  q.arrivals.push_back({at, p.target.bank});
  BankQueue& bank = bank_queues_[p.target.bank];
  const bool behind = config_.write_policy == DramWritePolicy::Shared
                          ? !bank.waiting.empty()
                          : bank.waiting.any_of([&](const Entry& w) { return w.is_write == e.is_write; });
  if (!behind && window_has_room(bank, e)) {
    if (bank.window.empty()) mark_window(p.target.bank, true);
    bank.window.push_back(e);
    bank.view_valid = false;
  } else {
    bank.waiting.push_back(e);
    ++q.waiting;
  }
  std::uint64_t& max = p.request.is_write ? stats_.write_queue_max : stats_.read_queue_max;
  max = std::max<std::uint64_t>(max, q.arrivals.size());
  ++ranks_[p.target.rank].queued;
}

inline std::uint64_t DramEngine::next_decision(std::uint32_t& channel) const {
  std::uint64_t best = kNever;
  for (std::uint32_t c = 0; c < channels_.size(); ++c) {
    const Channel& ch = channels_[c];
    std::uint64_t oldest = kNever;
    if (!ch.reads.arrivals.empty()) oldest = ch.reads.arrivals.front().arrival;
    if (!ch.writes.arrivals.empty()) oldest = std::min(oldest, ch.writes.arrivals.front().arrival);
    if (oldest == kNever) continue;
    const std::uint64_t t = std::max(ch.clock, oldest);
    if (t < best) {
      best = t;
      channel = c;
    }
  }
  return best;
}

// ---------------------------------------------------------------- the stream path

inline bool DramEngine::stream_bank(std::uint32_t channel, std::uint32_t& bank) const {
  if (plain_choice_ || config_.page_policy != PagePolicy::Open || config_.write_policy != DramWritePolicy::Shared)
    return false;
  // The channel's oldest request, at the front of its bank's window and a row hit, starts it.
  if (!oldest_is_candidate(channel, Serve::Both, bank) || !device_.is_hit(bank_queues_[bank].window.front().target))
    return false;
  const BankQueue& bq = bank_queues_[bank];
  const Entry& front = bq.window.front();
  if (ranks_[front.target.rank].owed != 0) return false;
  // Not worth starting when the channel's next request is another bank's: requests of two banks
  // taking turns would end the stream after one burst, its setup costing more than it saves.
  const Channel& ch = channels_[channel];
  const RingQueue<Queued>& same = front.is_write ? ch.writes.arrivals : ch.reads.arrivals;
  const RingQueue<Queued>& opposite = front.is_write ? ch.reads.arrivals : ch.writes.arrivals;
  if (same.size() >= 2 && (same[1].bank != bank || (!opposite.empty() && opposite.front().arrival < same[1].arrival)))
    return false;
  const auto other = [&](const Entry& e) { return e.target.row != front.target.row || e.is_write != front.is_write; };
  // The youngest first: where two rows or directions share the bank they are usually mixed.
  if (other(bq.window[bq.window.size() - 1]) || (!bq.waiting.empty() && other(bq.waiting[bq.waiting.size() - 1])))
    return false;
  if (bq.window.any_of(other) || bq.waiting.any_of(other)) return false;
  for (std::uint32_t c = 0; c < channels_.size(); ++c)  // the run loop's next decision is this channel's
    if (c != channel && !(channels_[c].reads.arrivals.empty() && channels_[c].writes.arrivals.empty())) return false;
  return true;
}

inline void DramEngine::lift_stream(Queue& q, std::uint32_t bank) {
  BankQueue& bq = bank_queues_[bank];
  stream_.clear();
  for (std::size_t i = 0; i < bq.window.size(); ++i) stream_.push_back({bq.window[i].index, bq.window[i].arrival});
  for (std::size_t i = 0; i < bq.waiting.size(); ++i) stream_.push_back({bq.waiting[i].index, bq.waiting[i].arrival});
  bq.window.clear();
  bq.waiting.clear();
  if (q.arrivals.size() == stream_.size()) {  // the channel's queue held the stream alone
    q.arrivals.clear();
    return;
  }
  scratch_.clear();
  for (std::size_t i = 0; i < q.arrivals.size(); ++i)
    if (q.arrivals[i].bank != bank) scratch_.push_back(q.arrivals[i]);
  std::swap(q.arrivals, scratch_);
}

inline void DramEngine::land_stream(Queue& q, std::uint32_t bank, const BurstTarget& target, bool is_write) {
  BankQueue& bq = bank_queues_[bank];
  const std::size_t depth = config_.bank_queue_depth;
  for (std::size_t i = 0; i < stream_.size(); ++i)
    (i < depth ? bq.window : bq.waiting).push_back(Entry{stream_[i].index, stream_[i].arrival, target, is_write});
  bq.view_valid = false;
  if (stream_.empty()) return;
  if (q.arrivals.empty()) {
    for (std::size_t i = 0; i < stream_.size(); ++i) q.arrivals.push_back({stream_[i].arrival, bank});
    return;
  }
  // Both are in arrival order (arrivals are unique): merge.
  scratch_.clear();
  std::size_t i = 0, j = 0;
  while (i < stream_.size() || j < q.arrivals.size()) {
    if (j == q.arrivals.size() || (i < stream_.size() && stream_[i].arrival < q.arrivals[j].arrival))
      scratch_.push_back({stream_[i++].arrival, bank});
    else
      scratch_.push_back(q.arrivals[j++]);
  }
  std::swap(q.arrivals, scratch_);
}

// The stream's requests are row hits of one bank and one direction: while its oldest is the
// channel's oldest request and the scheduler takes it (choose's step 0: FCFS, the only bank with
// requests, or its column command at the earliest any could issue), no row opens or closes in
// its bank and the bank's window is its oldest bank_queue_depth requests (shared policy). So the
// stream's queued requests are held here as (index, arrival), and its bank's window and waiting
// rings and its place in the channel queue are written back only when the stream ends: when its
// oldest is not the choice, a request of its bank with another row or direction, or of another
// channel, is about to enter, a refresh falls due, or nothing is left. Requests of other banks
// enter their queues as in the queued path. Every step is the queued path's (run_source, admit,
// decide, take) in the same order; DramEngine.StreamPathIsTheQueuedPath compares the two.
template <class Source>
inline bool DramEngine::stream(Source& source, Pending& p, std::uint32_t channel, std::uint64_t& t_decide) {
  // Where streams do not form (requests of several banks or rows taking turns) the look costs
  // more than it saves: after a second look in a row that finds none the next decision does not
  // look, after a third the next two, twice as many each time (up to 64), until a stream is served.
  Channel& ch = channels_[channel];
  if (ch.stream_skip > 0) {
    --ch.stream_skip;
    return false;
  }
  std::uint32_t bank = 0;
  if (stream_bank(channel, bank) && (device_.activity() ? serve_stream<true>(source, p, channel, bank, t_decide)
                                                        : serve_stream<false>(source, p, channel, bank, t_decide))) {
    ch.stream_backoff = 0;
    return true;
  }
  ch.stream_backoff = std::min<std::uint32_t>(std::max<std::uint32_t>(1, 2 * ch.stream_backoff), 128);
  ch.stream_skip = ch.stream_backoff / 2;
  return false;
}

// Out of run_source's flattened loop (noinline), itself flattened: inlined into the loop, its
// code cost the queued path about 8 % on a read+write pattern whose streams are rarely served here.
template <bool Record, class Source>
__attribute__((noinline, flatten)) bool DramEngine::serve_stream(Source& source, Pending& p, std::uint32_t channel,
                                                                 std::uint32_t bank, std::uint64_t& t_decide) {
  Channel& ch = channels_[channel];
  BurstTarget target = bank_queues_[bank].window.front().target;
  const bool is_write = bank_queues_[bank].window.front().is_write;
  Queue& q = is_write ? ch.writes : ch.reads;
  const std::size_t depth = config_.bank_queue_depth;
  NearTargets near{~device_.mapper().column_bits(), ~std::uint64_t{0}, target, ~std::uint64_t{0}, {}};
  if (p.status == DramRequestSource::Status::Ready && p.target.bank == target.bank && p.target.row == target.row)
    near.stream_addr = p.request.addr;
  lift_stream(q, bank);
  std::uint32_t* columns = &row_columns_[bank];
  RankRefresh* rank = &ranks_[target.rank];
  std::uint64_t& queue_max = is_write ? stats_.write_queue_max : stats_.read_queue_max;
  // The oldest request of the channel outside the stream (kNever: none). Decisions here take
  // only the stream's, and requests enter in arrival order, so only the first to enter sets it.
  std::uint64_t other = ch.reads.arrivals.empty() ? kNever : ch.reads.arrivals.front().arrival;
  if (!ch.writes.arrivals.empty()) other = std::min(other, ch.writes.arrivals.front().arrival);
  // Counters that only add up are added once, when the stream ends (record() does the rest).
  std::uint64_t served = 0, admitted = 0, last_end = 0;
  // The bursts, joined as DramActivity::burst joins them and recorded once per joined run
  // (nothing else is recorded on this channel while the stream runs).
  DramActivity* const activity = device_.activity();
  const std::uint64_t burst_cycles = device_.burst_cycles();
  std::uint64_t run_begin = 0, run_end = 0, run_bursts = 0;
  const auto record_run = [&] {
    if (Record && run_bursts > 0) activity->bursts(channel, target.bank, is_write, run_begin, run_end, run_bursts);
    run_bursts = 0;
  };
  // A decision's bookkeeping once the stream's oldest `item` is served at `s` and taken off
  // stream_: its window slot and any waiting request's moving in, the bus record, its latency.
  const auto served_hit = [&](const StreamItem& item, const BurstSchedule& s) {
    if (stream_.size() >= depth) {  // a waiting request moves into the window
      --q.waiting;
      q.leaving.push_back(s.col);
    }
    if constexpr (Record) {
      const std::uint64_t data_begin = s.data_end - burst_cycles;
      if (run_bursts == 0 || !activity->joins(run_end, data_begin)) {
        record_run();
        run_begin = data_begin;
      }
      run_end = s.data_end;
      ++run_bursts;
    }
    q.leaving.push_back(s.col);
    record_latency(is_write, item.arrival, s);
  };
  BurstTarget sequel;             // the target of the requests in sequel_
  StreamShape shape, last_shape;  // this decision's step and the one before (batch_stream)
  std::uint64_t same_steps = 0;   // decisions in a row whose step had last_shape
  // Requests completed in a row, each the next index after the one before and a pace after its
  // data end (across a roll into a sequel too: all the source reads of them is their data
  // ends), and the latest one's index and data end.
  std::uint64_t paced_steps = 0, last_index = kNever, last_completion = 0;
  const std::uint64_t pace = device_.stream_pace();
  const auto note_completion = [&](std::uint64_t index, std::uint64_t data_end) {
    const bool paced = last_index != kNever && index == last_index + 1 && data_end == last_completion + pace;
    paced_steps = paced ? paced_steps + 1 : 0;
    last_index = index;
    last_completion = data_end;
  };
  PacedRun run;
  run.first = config_.scheduler == DramScheduler::Fcfs || device_.paced_hit_is_first(is_write);
  // Ends the stream: its requests back into the queues, its counts added (also when a request
  // is refused, so the engine is left as the queued path would leave it).
  bool rolled = false;  // the stream went on into a sequel (see below)
  const auto close = [&] {
    settle(run, target, is_write);
    record_run();
    land_stream(q, bank, target, is_write);
    rank->queued = rank->queued + admitted - served;
    *columns = static_cast<std::uint32_t>(std::min<std::uint64_t>(std::uint64_t{*columns} + served, UINT32_MAX));
    stats_.row_hits += served;
    if (served > 0) record_counts(ch, is_write, served, last_end);
    stream_bursts_ += served;
    paced_bursts_ += run.count;
    return served > 0 || rolled;
  };
  const auto end = [&] {
    land_sequel(q, sequel, is_write);  // before the stream's, which merges into the channel queue
    return close();
  };
  try {
    for (;;) {
      // The stream is done and the channel's only requests are the sequel's: the queued path
      // would decide its oldest (the only bank with requests: FR-FCFS's one candidate, FCFS's
      // oldest), opening its row, and serve the rest as a stream. So here, without their
      // queues; the rank owes no refresh (else the decision would catch up).
      if (stream_.empty() && !sequel_.empty() && other == sequel_.front().arrival && ranks_[sequel.rank].owed == 0) {
        close();
        BurstSchedule head_schedule;
        const Served head = decide_sequel(ch, q, sequel, is_write, t_decide, head_schedule);
        rolled = true;
        ++stream_bursts_;
        served = admitted = last_end = 0;
        run = PacedRun{0, 0, {}, false, run.first};
        // The head is the new row's first hit: the closed form holds from it as from a planned
        // hit (its row's ACT is behind it), and the step's shape is taken as a decision's.
        if (paced_hits_) {
          run.last = head_schedule;
          run.pace = device_.hit_pace(sequel, head_schedule);
        }
        same_steps = 0;
        last_shape = StreamShape{};  // "alike" compares two steps in a row, never across a gap
        if constexpr (std::is_same_v<Source, TransferSource>) {
          shape = StreamShape{};
          shape.backpressure = stats_.backpressure_cycles;
        }
        if constexpr (std::is_same_v<Source, TransferSource>) note_completion(head.index, head.data_end);
        bank = sequel.bank;
        target = sequel;
        columns = &row_columns_[bank];
        rank = &ranks_[target.rank];
        const bool known = near.other.bank == target.bank && near.other.row == target.row;
        near.stream_addr = known ? near.other_addr : ~std::uint64_t{0};
        near.stream = target;
        std::swap(stream_, sequel_);
        other = kNever;
        source.completed(head.index, head.data_end);
        t_decide = stream_.empty() ? kNever : std::max(ch.clock, stream_.front().arrival);
        if (p.status == DramRequestSource::Status::Blocked) pull_near(source, p, near);
      } else {
        // A decision (decide, choose's step 0, take): the stream's oldest, if it is the choice.
        if (stream_.empty() || other < stream_.front().arrival) break;
        const StreamItem oldest = stream_.front();
        if (!stream_hit(run, target, is_write, oldest.arrival, t_decide)) break;
        if constexpr (std::is_same_v<Source, TransferSource>) note_completion(oldest.index, run.last.data_end);
        const BurstSchedule& s = run.last;
        ++served;
        now_ = t_decide;
        stream_.pop_front();
        if (stream_.empty()) mark_window(bank, false);
        served_hit(oldest, s);
        ch.clock = s.col;
        if constexpr (std::is_same_v<Source, TransferSource>) {
          shape = StreamShape{};
          shape.backpressure = stats_.backpressure_cycles;
        }
        last_end = s.data_end;  // column commands, so data ends, only grow
        source.completed(oldest.index, s.data_end);
        const std::uint64_t first = std::min(stream_.empty() ? kNever : stream_.front().arrival, other);
        t_decide = first == kNever ? kNever : std::max(ch.clock, first);
        if (p.status == DramRequestSource::Status::Blocked) pull_near(source, p, near);
      }
      // Admissions (run_source, admit) until the next decision.
      bool more = true;
      for (;;) {
        const std::uint64_t t_admit = p.status == DramRequestSource::Status::Ready ? admission_time(p) : kNever;
        const std::uint64_t t_next = std::min(t_admit, t_decide);
        if (t_next == kNever || next_refresh_ <= t_next) {
          more = false;
          break;
        }
        if (t_admit > t_decide) break;
        if (p.target.channel != channel) {
          more = false;
          break;
        }
        if (p.target.bank != bank) {  // another bank's: queued as the queued path queues it
          const bool was_empty = stream_.empty() && other == kNever;
          if (!hold_sequel(p, t_admit, q, sequel, is_write, other)) {
            land_sequel(q, sequel, is_write);
            admit(p, t_admit);
          }
          if (other == kNever) other = t_admit;
          if (p.request.is_write == is_write)  // admit counted its queue without the stream
            queue_max = std::max<std::uint64_t>(queue_max, q.arrivals.size() + sequel_.size() + stream_.size());
          if (was_empty) t_decide = std::max(ch.clock, t_admit);
          pull_near(source, p, near);
          continue;
        }
        if (p.target.row != target.row || p.request.is_write != is_write) {
          more = false;
          break;
        }
        count_admission(p, t_admit);
        if (stream_.empty()) {
          if (other == kNever) t_decide = std::max(ch.clock, t_admit);
          mark_window(bank, true);
        }
        if (stream_.size() >= depth) ++q.waiting;  // behind a full window
        stream_.push_back({run_index_++, t_admit});
        queue_max = std::max<std::uint64_t>(queue_max, q.arrivals.size() + sequel_.size() + stream_.size());
        ++admitted;
        if constexpr (std::is_same_v<Source, TransferSource>) ++shape.admitted;
        pull_near(source, p, near);
      }
      if (!more) break;
      // The source is done and the stream holds the channel's last requests (no sequel, no other
      // bank's): each decision takes the oldest, a paced hit a pace after the one before, until
      // none is left, unless a refresh tick falls due first. Served here at once, as those steps.
      if (batched_ && p.status == DramRequestSource::Status::Done && sequel_.empty() && other == kNever &&
          drain(run, t_decide, channel)) {
        const std::uint64_t m = stream_.size(), first_col = run.last.col;
        const std::uint64_t latency = run.last.data_end - run.last.col;
        device_.issue_hits(target, first_col + run.pace, run.pace, m);
        BurstSchedule s = run.last;
        now_ = t_decide;
        for (std::uint64_t k = 1; k <= m; ++k) {
          const StreamItem item = stream_.front();
          stream_.pop_front();
          // Each decision after the first comes at the column command before its own, or its
          // request's arrival if later.
          if (k > 1) now_ = std::max(s.col, item.arrival);
          s.col += run.pace;
          s.data_end = s.col + latency;
          served_hit(item, s);
          source.completed(item.index, s.data_end);
        }
        run.last = s;
        run.unsettled = true;
        run.count += m;
        served += m;
        batched_bursts_ += m;
        mark_window(bank, false);
        ch.clock = s.col;
        last_end = s.data_end;
        break;
      }
      if constexpr (std::is_same_v<Source, TransferSource>) {
        if (batched_ && !stream_.empty() && sequel_.empty() && other == kNever &&
            p.status == DramRequestSource::Status::Ready) {
          shape.backpressure = stats_.backpressure_cycles - shape.backpressure;
          shape.settle(run.last.col, stream_, q, p, admit_floor(channel), now_, t_decide);
          same_steps = shape == last_shape ? same_steps + 1 : 0;
          last_shape = shape;
          // Two steps alike, and the completions the source reads from next (request issued - window
          // onwards; the last one done is the stream's oldest's predecessor) all a pace apart.
          const std::uint64_t last_done = stream_.front().index - 1;
          const std::uint64_t most = same_steps >= 1 ? batch_limit(source, last_done, paced_steps, pace) : 0;
          if (most > 0) {
            const bool joins =
                !Record || activity->joins(run.last.data_end, run.last.data_end + run.pace - burst_cycles);
            const Batch batch = batch_steps(source, p, near.same_target, run, target, is_write, shape, joins, most);
            const std::uint64_t n = batch.steps;
            if (n > 0) {
              apply_batch(source, p, q, run, target, is_write, shape, batch);
              paced_steps += n;
              last_index += n;
              last_completion = run.last.data_end;
              served += n;
              admitted += n - batch.tail;
              last_end = run.last.data_end;
              ch.clock = run.last.col;
              t_decide += n * run.pace;
              if (batch.tail > 0) {
                sequel = batch.next;
                other = sequel_.front().arrival;
              }
              if (batch.next_pending) {
                near.other = batch.next;
                near.other_addr = p.request.addr;
              } else {
                near.stream_addr = p.request.addr;
              }
              if constexpr (Record) {
                run_end = run.last.data_end;
                run_bursts += n;
              }
            }
          }
        } else {
          same_steps = 0;
          last_shape = StreamShape{};  // the next step checked is compared with none before it
        }
      }
    }
  } catch (...) {
    end();
    throw;
  }
  return end();
}

inline bool DramEngine::hold_sequel(const Pending& p, std::uint64_t at, Queue& q, BurstTarget& sequel, bool is_write,
                                    std::uint64_t other) {
  // As admit() would queue it: nothing else of the channel is queued (the first) or it shares the
  // others' bank and row, so it joins its bank's window while that has room, and takes a slot
  // of the channel queue behind it (every entry's target and direction are the sequel's).
  if (p.request.is_write != is_write) return false;
  if (sequel_.empty() ? other != kNever : p.target.bank != sequel.bank || p.target.row != sequel.row) return false;
  count_admission(p, at);
  if (sequel_.empty()) {
    sequel = p.target;
    mark_window(sequel.bank, true);
  }
  if (sequel_.size() >= config_.bank_queue_depth) ++q.waiting;
  sequel_.push_back({run_index_++, at});
  ++ranks_[sequel.rank].queued;
  return true;
}

inline DramEngine::Served DramEngine::decide_sequel(Channel& ch, Queue& q, const BurstTarget& t, bool is_write,
                                                    std::uint64_t at, BurstSchedule& schedule) {
  // decide() with the sequel's bank the channel's only one with requests: choose() plans the
  // oldest (FR-FCFS's only candidate, with no hit before it; FCFS's oldest), take() moves the
  // next one waiting into the window, no row closes (open page), the rank owes no refresh.
  now_ = at;
  const StreamItem head = sequel_.front();
  const BurstSchedule s = device_.plan(t, is_write, head.arrival, at);
  sequel_.pop_front();
  --ranks_[t.rank].queued;
  if (sequel_.size() >= config_.bank_queue_depth) {
    --q.waiting;
    q.leaving.push_back(s.col);
  }
  if (sequel_.empty()) mark_window(t.bank, false);
  std::uint32_t& columns = row_columns_[t.bank];
  columns = s.row_case != RowCase::Hit ? 1 : columns + (columns < UINT32_MAX ? 1 : 0);
  device_.commit(t, is_write, s);
  q.leaving.push_back(s.col);
  ch.clock = s.col;
  record(ch, Entry{head.index, head.arrival, t, is_write}, s);
  schedule = s;
  return {head.index, s.data_end};
}

inline void DramEngine::land_sequel(Queue& q, const BurstTarget& sequel, bool is_write) {
  // The channel queue held nothing else of the stream's direction since the first (hold_sequel).
  if (sequel_.empty()) return;
  BankQueue& bq = bank_queues_[sequel.bank];
  const std::size_t depth = config_.bank_queue_depth;
  for (std::size_t i = 0; i < sequel_.size(); ++i) {
    (i < depth ? bq.window : bq.waiting).push_back(Entry{sequel_[i].index, sequel_[i].arrival, sequel, is_write});
    q.arrivals.push_back({sequel_[i].arrival, sequel.bank});
  }
  bq.view_valid = false;
  sequel_.clear();
}

inline bool DramEngine::stream_hit(PacedRun& run, const BurstTarget& target, bool is_write, std::uint64_t arrival,
                                   std::uint64_t t_decide) {
  // The decision is at max(the last column command, the arrival): within a pace of the last,
  // the hit issues a pace after it and is the choice (run.first, or no other bank has requests).
  if (run.pace != 0 && t_decide <= run.last.col + run.pace && (run.first || window_count_[target.channel] == 1)) {
    const std::uint64_t latency = run.last.data_end - run.last.col;
    run.last.col += run.pace;
    run.last.data_end = run.last.col + latency;
    device_.issue_hit(target, run.last);
    run.unsettled = true;
    ++run.count;
    return true;
  }
  settle(run, target, is_write);
  const BurstSchedule s = device_.plan_hit(target, is_write, arrival, t_decide);
  const bool fcfs = config_.scheduler == DramScheduler::Fcfs;
  if (!fcfs && window_count_[target.channel] != 1 && s.col != device_.earliest_column_either(target.channel, t_decide))
    return false;
  device_.commit_hit(target, is_write, s);
  run.last = s;
  run.pace = paced_hits_ ? device_.hit_pace(target, s) : 0;
  return true;
}

inline bool DramEngine::drain(const PacedRun& run, std::uint64_t t_decide, std::uint32_t channel) const {
  // stream_hit's paced case for every decision left: the next within a pace of the last column
  // command (the later ones come at the column command before theirs, their requests having
  // arrived by the first), and no refresh tick due by the last decision, at the column command
  // before the last.
  if (stream_.empty() || run.pace == 0 || t_decide > run.last.col + run.pace) return false;
  if (!run.first && window_count_[channel] != 1) return false;
  return next_refresh_ > run.last.col + (stream_.size() - 1) * run.pace;
}

inline void DramEngine::settle(PacedRun& run, const BurstTarget& target, bool is_write) {
  if (run.unsettled) device_.settle_hit(target, is_write, run.last);
  run.unsettled = false;
}

void DramEngine::StreamShape::settle(std::uint64_t col, const RingQueue<StreamItem>& stream, const Queue& q,
                                     const Pending& p, std::uint64_t next_admit_cycle, std::uint64_t now_cycle,
                                     std::uint64_t decide_cycle) {
  const auto rel = [col](std::uint64_t t) { return static_cast<std::int64_t>(t - col); };
  this->stream = stream.size();
  waiting = q.waiting;
  pending = rel(p.request.cycle);
  next_admit = rel(next_admit_cycle);
  now = rel(now_cycle);
  decide = rel(decide_cycle);
  back = rel(stream[stream.size() - 1].arrival);
  // The slots still held (column commands after now): what admission_time reads.
  live = 0;
  while (live < q.leaving.size() && q.leaving[q.leaving.size() - 1 - live] > now_cycle) ++live;
  leaving = live > 0 ? rel(q.leaving[q.leaving.size() - 1]) : 0;
}

bool DramEngine::StreamShape::operator==(const StreamShape& o) const {
  return backpressure == o.backpressure && admitted == o.admitted && stream == o.stream && waiting == o.waiting &&
         live == o.live && pending == o.pending && next_admit == o.next_admit && now == o.now && decide == o.decide &&
         back == o.back && leaving == o.leaving;
}

// The completions the batch's admissions read must go on a pace apart. Those past the stream's
// oldest (last_done) are the batch's own, so when every one from the pending request's on is
// paced there is no limit. After a step that came late (a row opened after the stream's last
// hit) the requests issued from the completions before it still come a pace apart, and arrive
// as the steps before them did: a batch may take those steps, up to the last paced completion.
template <class Source>
std::uint64_t DramEngine::batch_limit(const Source& source, std::uint64_t last_done, std::uint64_t paced_steps,
                                      std::uint64_t pace) const {
  const std::uint64_t issued = source.issued(), window = source.window();
  if (issued < window) return 0;
  const std::uint64_t read_from = issued - window;  // the completion the next request waits for
  if (read_from + paced_steps > last_done) return kNever;
  if (read_from == 0) return 0;  // the pending request waited for none
  const std::uint64_t b = source.paced_through(read_from - 1, last_done, pace);
  return b == kNever ? 0 : b - (read_from - 1);
}

// The steps of a paced stream fed by a transfer repeat once the transfer's outstanding window is
// full of the stream's completions: each decision serves the oldest a pace after the last, and
// the request it completes releases the next of the transfer, admitted a pace after the last
// one. Alike for more steps than the window holds (every completion the source reads from one of
// them), the next steps are those shifted by the pace while the requests stay in the source's run
// and no refresh tick falls due: taken at once here, as their sums. Past the stream's row the
// source walks into another bank's row (its sequel, hold_sequel): those requests are held, not
// served, while the stream serves its own on; the steps keep their timing if a paced hit is the
// choice whatever else waits (run.first: the sequel's bank now has a window too) and no admission
// waited for a slot (the stream and its sequel together hold no more of the channel queue than the
// stream did: each step frees a slot and takes one). The batch leaves the stream a request, so
// the stream's end and the roll into the sequel are stepped.
template <class Source>
DramEngine::Batch DramEngine::batch_steps(const Source& source, const Pending& p, std::uint64_t same_target,
                                          const PacedRun& run, const BurstTarget& target, bool is_write,
                                          const StreamShape& shape, bool joins, std::uint64_t most) const {
  Batch b;
  const std::uint64_t pace = run.pace;
  if (pace == 0 || !run.unsettled || !joins || shape.admitted != 1) return b;
  if (p.request.is_write != is_write) return b;
  if (source.done() || p.request.addr + burst_bytes_ != source.next_addr()) return b;
  for (std::size_t i = 1; i < stream_.size(); ++i)
    if (stream_[i].index != stream_[i - 1].index + 1) return b;
  // Each step decides at the column command before its own (the clock), so its request arrived
  // by then: the steps up to the first held request that did not, or all of them if the newest
  // did by the step before its turn (those the steps admit arrive a pace apart after it). How long
  // each request waited is its own (apply_batch).
  std::uint64_t arrived = 0;
  while (arrived < stream_.size() && stream_[arrived].arrival <= run.last.col + arrived * pace) ++arrived;
  const bool all_arrived = arrived == stream_.size();
  // Steps k = 1..n - 1 admit p and the n - 2 after it and leave the next pending: all in the
  // source's run (p and the `left` after it), in the stream's row (the `in_row` first from p on)
  // and then (the tail) the next bank's row.
  const std::uint64_t requests = source.left_in_run() + 1;
  const auto addr = [&](std::uint64_t i) { return p.request.addr + i * burst_bytes_; };
  std::uint64_t in_row = 0;
  if (p.target.bank == target.bank && p.target.row == target.row)
    in_row = same_target_run(p.request.addr, same_target, requests);
  std::uint64_t n = in_row;
  if (in_row < requests && run.first && shape.backpressure == 0) {
    // requests from addr(in_row) in its row
    const std::uint64_t in_next = same_target_run(addr(in_row), same_target, requests - in_row);
    if (addr(in_row + in_next - 1) < capacity_) {
      b.next = device_.locate(addr(in_row));
      // The request left pending and the next in the two rows; tail admissions (steps - in_row)
      // at most the stream's requests but one.
      if (b.next.channel == target.channel && b.next.bank != target.bank &&
          (in_row > 0 || (p.target.bank == b.next.bank && p.target.row == b.next.row)))
        n = std::min(in_row + in_next - 1, in_row + stream_.size()) + 1;
    }
  }
  n = n > 0 ? n - 1 : 0;
  // Every cycle the steps reach stays before the next refresh tick (with a step to spare).
  const std::uint64_t latest = std::max({run.last.col, p.request.cycle, admit_floor(target.channel), now_}) + 2 * pace;
  if (next_refresh_ <= latest) return b;
  n = std::min(n, (next_refresh_ - latest) / pace);
  // And every request it admits within kMaxCycle, which the stepped path checks as each is pulled.
  n = std::min(n, (kMaxCycle - p.request.cycle) / pace);
  if (!all_arrived) n = std::min<std::uint64_t>(n, arrived + 1);
  n = std::min(n, most == kNever ? most : most + 1);
  if (n < 2) return b;
  b.steps = n - 1;
  b.next_pending = b.steps >= in_row;
  b.tail = b.next_pending ? b.steps - in_row : 0;
  return b;
}

std::uint64_t DramEngine::same_target_run(std::uint64_t addr, std::uint64_t same_target, std::uint64_t most) const {
  // A walk by bursts (a power of two, from an aligned address) keeps every bit of `same_target`
  // until it carries into the lowest one above the burst's offset bits: 2^low - (addr mod 2^low)
  // bytes on. (Other burst sizes: address by address.)
  const std::uint64_t moving = same_target & ~(burst_bytes_ - 1);
  if ((burst_bytes_ & (burst_bytes_ - 1)) == 0 && addr % burst_bytes_ == 0 && moving != 0) {
    const std::uint64_t span = std::uint64_t{1} << __builtin_ctzll(moving);
    return std::min(most, (span - (addr & (span - 1))) / burst_bytes_);
  }
  std::uint64_t n = 1;
  while (n < most && (((addr + n * burst_bytes_) ^ addr) & same_target) == 0) ++n;
  return std::min(n, most);
}

template <class Source>
void DramEngine::apply_batch(Source& source, Pending& p, Queue& q, PacedRun& run, const BurstTarget& target,
                             bool is_write, const StreamShape& shape, const Batch& batch) {
  const std::uint64_t n = batch.steps;
  const std::uint64_t shift = n * run.pace;
  const std::uint64_t first_col = run.last.col;
  device_.issue_hits(target, run.last.col + run.pace, run.pace, n);
  run.last.col += shift;
  run.last.data_end += shift;
  run.count += n;
  // Each served request's wait: the held ones' each their own, those the steps admit all alike
  // (each arrives a pace after the one before and is served a pace after it).
  const std::uint64_t held = stream_.size(), latency = run.last.data_end - run.last.col;
  const auto served = [&](std::uint64_t arrival, std::uint64_t step, std::uint64_t count) {
    const std::uint64_t col = first_col + step * run.pace;
    record_latencies(is_write, col - arrival, col + latency - arrival, count);
  };
  for (std::uint64_t k = 1; k <= std::min(n, held); ++k) served(stream_[k - 1].arrival, k, 1);
  if (n > held) served(stream_[held - 1].arrival + run.pace, held + 1, n - held);
  stats_.backpressure_cycles += n * shape.backpressure;
  const std::uint64_t last_done = stream_.front().index - 1 + n;
  run_index_ += n;
  now_ += shift;
  last_admit_ += shift;  // the batch's admissions were all of the stream's channel
  channels_[target.channel].next_admit += shift;
  advance_stream(batch, run.pace);
  if (batch.tail == 0) {
    // Only the slots still held matter to an admission (admission_time drops the others first).
    while (!q.leaving.empty() && q.leaving.front() <= now_ - shift) q.leaving.pop_front();
    for (std::size_t i = 0; i < q.leaving.size(); ++i) q.leaving[i] += shift;
  } else {
    apply_tail(q, batch, first_col, run.pace);
  }
  source.skip(n, last_done, run.last.data_end, run.pace);
  p.request.addr += n * burst_bytes_;
  p.request.cycle += shift;
  if (batch.next_pending) p.target = batch.next;
  batched_bursts_ += n;
}

inline void DramEngine::advance_stream(const Batch& batch, std::uint64_t pace) {
  // The requests in admission order: the stream's, then those the steps admit, each an index and
  // a pace after the one before. After `steps` decisions the stream holds the oldest not served
  // that are of its row, the sequel the tail's.
  const std::uint64_t n = batch.steps, held = stream_.size();
  const StreamItem newest = stream_[held - 1];
  const auto admitted = [&](std::uint64_t i) {  // the i-th request (i >= held)
    return StreamItem{newest.index + (i - held + 1), newest.arrival + (i - held + 1) * pace};
  };
  const std::uint64_t in_stream = held + n - batch.tail;  // requests before the sequel's
  for (std::uint64_t i = 0; i < std::min(n, held); ++i) stream_.pop_front();
  for (std::uint64_t i = std::max(n, held); i < in_stream; ++i) stream_.push_back(admitted(i));
  for (std::uint64_t i = in_stream; i < held + n; ++i) sequel_.push_back(admitted(i));
}

inline void DramEngine::apply_tail(Queue& q, const Batch& batch, std::uint64_t first_col, std::uint64_t pace) {
  const std::uint64_t n = batch.steps, depth = config_.bank_queue_depth;
  const std::uint64_t held = stream_.size() + batch.tail;  // the stream's requests before the batch
  mark_window(batch.next.bank, true);
  ranks_[batch.next.rank].queued += static_cast<std::uint32_t>(batch.tail);
  // The channel queue's slots, as each tail step's decision and admission leave them: a decision
  // frees the stream's window slot and moves a waiting request in (its slot leaves at the
  // column command), an admission takes a waiting slot behind a full sequel window. The steps
  // before the tail leave the stream as long and the waiting count as it was. Only the slots
  // still held after the batch are kept (admission_time drops the others first): the column
  // commands after the clock, which none before the tail's last two is (each step's decision
  // comes at the column command before it).
  q.leaving.clear();
  std::uint64_t stream_size = held, sequel_size = 0;
  for (std::uint64_t k = n - batch.tail + 1; k <= n; ++k) {
    const std::uint64_t col = first_col + k * pace;
    const bool moves = --stream_size >= depth;
    if (moves) --q.waiting;
    if (col > now_) {
      q.leaving.push_back(col);
      if (moves) q.leaving.push_back(col);
    }
    if (sequel_size++ >= depth) ++q.waiting;
  }
}

template <class Source>
inline void DramEngine::pull_near(Source& source, Pending& p, NearTargets& near) {
  // pull(), without decoding an address that differs from the stream's last, or from the last
  // other one decoded (the next bank's, on a sequential walk), only in its column.
  p.status = source.next(p.request);
  if (p.status != DramRequestSource::Status::Ready) return;
  const std::uint64_t addr = p.request.addr;
  if (addr < capacity_ && p.request.cycle <= kMaxCycle) {
    if (((addr ^ near.stream_addr) & near.same_target) == 0) {
      p.target = near.stream;
      return;
    }
    if (((addr ^ near.other_addr) & near.same_target) == 0) {
      p.target = near.other;
      return;
    }
  }
  check_request(p);
  p.target = device_.locate(addr);
  if (p.target.bank == near.stream.bank && p.target.row == near.stream.row) {
    near.stream_addr = addr;
  } else {
    near.other_addr = addr;
    near.other = p.target;
  }
}

// ---------------------------------------------------------------- one scheduling decision

inline DramEngine::Served DramEngine::decide(std::uint32_t channel, std::uint64_t at) {
  now_ = at;
  Channel& ch = channels_[channel];
  settle_adaptive_close(ch);

  // 1. Pick the request and plan its commands: row commands as early as the request and the
  //    device allow (the controller opens rows ahead while other data streams), the column
  //    command at or after this decision.
  const Choice c = choose(channel, direction(ch), at);
  const BurstSchedule& s = c.schedule;
  const Entry e = take(ch, c, s.col);
  std::uint32_t& columns = row_columns_[c.bank];  // row_hit_cap counts from the ACT
  columns = s.row_case != RowCase::Hit ? 1 : columns + (columns < UINT32_MAX ? 1 : 0);

  // 2. Issue them, and close the row if the page policy says so.
  device_.commit(e.target, e.is_write, s);
  if (config_.page_policy == PagePolicy::Closed) device_.auto_precharge(e.target);
  if (config_.page_policy == PagePolicy::Adaptive || config_.page_policy == PagePolicy::OpenAdaptive) {
    ch.close_pending = true;
    ch.close_target = e.target;
    ch.close_at = s.col;
  }

  // 3. The entry holds its slot until its column command, the next decision comes no earlier.
  (e.is_write ? ch.writes : ch.reads).leaving.push_back(s.col);
  ch.clock = s.col;
  record(ch, e, s);

  // 4. A rank that owes refreshes and just went idle catches up.
  RankRefresh& rr = ranks_[e.target.rank];
  if (rr.owed > 0 && rr.queued == 0 && s.col < rr.catch_up) {
    rr.catch_up = s.col;
    next_refresh_ = std::min(next_refresh_, s.col);
  }
  return {e.index, s.data_end};
}

inline DramEngine::Serve DramEngine::direction(Channel& ch) {
  if (config_.write_policy == DramWritePolicy::Shared) return Serve::Both;
  // Watermarks: start draining writes at the high watermark (or when no read waits), stop at
  // the low one once reads wait (or when no write is left).
  const std::size_t reads = ch.reads.arrivals.size(), writes = ch.writes.arrivals.size();
  if (ch.draining) {
    if (writes == 0 || (writes <= config_.write_drain_low && reads > 0)) ch.draining = false;
  } else if (writes > 0 && (writes >= config_.write_drain_high || reads == 0)) {
    ch.draining = true;
  }
  return ch.draining ? Serve::Writes : Serve::Reads;
}

template <bool Fcfs, bool Capped>
inline std::size_t DramEngine::gather(std::uint32_t channel, Serve serve, std::uint64_t at, std::size_t& least) const {
  ++bound_stamp_;
  Candidate* const candidates = candidates_.data();  // room for every bank of a channel
  std::size_t count = 0;
  OrderKey least_key = ~OrderKey{0};
  const std::uint32_t first = channel * banks_per_channel_;
  const std::uint32_t words = (banks_per_channel_ + 63) / 64;
  for (std::uint32_t w = 0; w < words; ++w) {
    for (std::uint64_t m = window_banks_[std::size_t{channel} * words + w]; m != 0; m &= m - 1) {
      const std::uint32_t bank = first + w * 64 + static_cast<std::uint32_t>(__builtin_ctzll(m));
      const BankQueue& bq = bank_queues_[bank];
      const CandidateView& cached = candidate_view(bq, bank, serve);
      if (cached.slot == bq.window.size()) continue;
      CandidateView capped;
      if constexpr (Capped) capped = capped_view(bq, bank, serve, cached, at);
      const CandidateView& v = Capped ? capped : cached;
      std::uint64_t bound = 0;
      if constexpr (!Fcfs) {
        SharedBoundSlot& shared = shared_bounds_[v.shared];
        if (shared.stamp != bound_stamp_) {
          const Entry& e = bq.window[v.slot];
          shared.stamp = bound_stamp_;
          shared.bound = device_.shared_bound(e.target, e.is_write, at);
        }
        bound = std::max(v.bank_part, shared.bound[static_cast<std::size_t>(v.row_case)]);
      }
      candidates[count] = {bound, v.arrival, bank, v.slot};
      // The least bound, ties to the oldest, by a select: which bank's is least is random on
      // random requests, and a branch on it was mispredicted about 4.7 times a decision.
      const OrderKey key = order_key(bound, v.arrival);
      const bool less = key < least_key;
      least = less ? count : least;
      least_key = less ? key : least_key;
      ++count;
    }
  }
  return count;
}

inline DramEngine::Choice DramEngine::choose(std::uint32_t channel, Serve serve, std::uint64_t at) const {
  // Each bank shows the scheduler its window: the oldest bank_queue_depth of its queued
  // requests (of the direction served). FR-FCFS takes per bank the oldest row hit in the
  // window, else the oldest request (a row with hits waiting is not closed for an older
  // conflict); across banks, the one whose column command can issue first (tCCD, tWTR/tRTW and
  // the data bus counted), ties to the oldest. So a busy bank or bank group does not hold up
  // the others and rows of other banks open while one streams, as a controller issuing the
  // first ready command each cycle (oldest first on a tie) behaves. FCFS: the oldest request.
  if (plain_choice_) return choose_plainly(channel, serve, at);
  const bool fcfs = config_.scheduler == DramScheduler::Fcfs;
  std::uint32_t oldest_bank = 0;
  const bool oldest_known = oldest_is_candidate(channel, serve, oldest_bank);
  Choice step0;
  const auto plan = [&](std::uint32_t bank, std::size_t slot) {
    if (oldest_known && bank == oldest_bank && slot == 0) return step0;  // planned already
    const Entry& e = bank_queues_[bank].window[slot];
    return Choice{bank, slot, device_.plan(e.target, e.is_write, e.arrival, at)};
  };
  // 0. A stream's next request, usually: the channel's oldest request (of the direction served)
  //    is its bank's candidate, so the oldest candidate of all. FCFS takes it; FR-FCFS takes it if
  //    it is the only candidate or issues at the earliest column cycle any request of the channel
  //    could have (data bus, tCCD_S, turnarounds): no younger one can beat it.
  if (oldest_known) {
    const Entry& e = bank_queues_[oldest_bank].window[0];
    step0 = Choice{oldest_bank, 0, device_.plan(e.target, e.is_write, e.arrival, at)};
    if (fcfs || window_count_[channel] == 1) return step0;
    const std::uint64_t floor = serve == Serve::Both ? device_.earliest_column_either(channel, at)
                                                     : device_.earliest_column(channel, serve == Serve::Writes, at);
    if (step0.schedule.col == floor) return step0;
  }
  // 1. Each bank's candidate, for the banks whose window holds requests, with (FR-FCFS) a lower
  //    bound on its column command: its bank's part, and its group's and direction's part,
  //    computed once a decision (DramDevice::shared_bound).
  std::size_t least = 0;
  const std::size_t count = fcfs                       ? gather<true, false>(channel, serve, at, least)
                            : config_.row_hit_cap != 0 ? gather<false, true>(channel, serve, at, least)
                                                       : gather<false, false>(channel, serve, at, least);
  const Candidate* const candidates = candidates_.data();
  if (count == 0) return Choice{};
  if (fcfs) {  // 2. FCFS: the oldest (every bound is 0: `least` is the oldest)
    return plan(candidates[least].bank, candidates[least].slot);
  }
  // 3. FR-FCFS: the earliest column command, ties to the oldest. The least bound (the oldest on
  //    equal bounds) planned first: if the CA bus does not move it, every other candidate issues
  //    no earlier, and on the same cycle is younger (random requests' next ready bank, a stream's
  //    next hit, usually).
  Choice best = plan(candidates[least].bank, candidates[least].slot);
  if (best.schedule.col == candidates[least].bound) return best;
  // 4. Else each other one unless a lower bound on its column command shows it loses: it would
  //    issue later than the best so far, or at the same cycle and younger. The best only
  //    improves, so any order finds the same choice; the least's plan is nearly always it (on
  //    random requests, where the CA bus moves the least in almost every decision, a second plan
  //    is needed once in 5,000 decisions), so the bounds are not sorted.
  OrderKey best_key = order_key(best.schedule.col, candidates[least].arrival);
  // Those whose bound does not lose to the least's plan are found first, 64 at a time into a
  // mask without a branch (which do is random on random requests), then looked at in turn.
  for (std::size_t base = 0; base < count; base += 64) {
    const std::size_t n = std::min<std::size_t>(64, count - base);
    std::uint64_t open = 0;
    for (std::size_t j = 0; j < n; ++j)
      open |= std::uint64_t{order_key(candidates[base + j].bound, candidates[base + j].arrival) <= best_key} << j;
    if (least >= base && least - base < 64) open &= ~(std::uint64_t{1} << (least - base));  // planned already
    for (; open != 0; open &= open - 1) {
      const Candidate& next = candidates[base + static_cast<std::size_t>(__builtin_ctzll(open))];
      if (order_key(next.bound, next.arrival) > best_key) continue;  // the best improved meanwhile
      const Entry& e = bank_queues_[next.bank].window[next.slot];
      const RowCase rc = device_.row_case(e.target);
      SharedBoundSlot& shared = shared_bounds_[shared_slot(e)];
      std::uint64_t& column = shared.column[static_cast<std::size_t>(rc)];
      if (shared.column_stamp[static_cast<std::size_t>(rc)] != bound_stamp_) {
        shared.column_stamp[static_cast<std::size_t>(rc)] = bound_stamp_;
        column = device_.shared_column(e.target, e.is_write, rc, at);
      }
      if (order_key(column, next.arrival) > best_key) continue;
      const Choice planned = plan(next.bank, next.slot);
      const OrderKey planned_key = order_key(planned.schedule.col, next.arrival);
      if (planned_key < best_key) {
        best = planned;
        best_key = planned_key;
      }
    }
  }
  return best;
}

DramEngine::Choice DramEngine::choose_plainly(std::uint32_t channel, Serve serve, std::uint64_t at) const {
  // The rule of choose() without its shortcuts: every bank of the channel, every request of its
  // window of the direction served, each bank's candidate planned.
  const bool fcfs = config_.scheduler == DramScheduler::Fcfs;
  Choice best;
  std::uint64_t best_arrival = kNever;
  for (std::uint32_t bank = channel * banks_per_channel_; bank < (channel + 1) * banks_per_channel_; ++bank) {
    const RingQueue<Entry>& q = bank_queues_[bank].window;
    std::size_t oldest = q.size(), oldest_hit = q.size();
    for (std::size_t i = 0; i < q.size(); ++i) {
      if (serve != Serve::Both && q[i].is_write != (serve == Serve::Writes)) continue;
      if (oldest == q.size()) oldest = i;
      if (oldest_hit == q.size() && device_.is_hit(q[i].target)) oldest_hit = i;
    }
    if (oldest == q.size()) continue;
    std::size_t pick = fcfs || oldest_hit == q.size() ? oldest : oldest_hit;
    if (!fcfs) pick = cap_row_hits(q, serve, bank, pick, at);
    const Entry& e = q[pick];
    const BurstSchedule s = device_.plan(e.target, e.is_write, e.arrival, at);
    const bool better = best_arrival == kNever ||
                        (fcfs ? e.arrival < best_arrival
                              : s.col < best.schedule.col || (s.col == best.schedule.col && e.arrival < best_arrival));
    if (better) {
      best = {bank, pick, s};
      best_arrival = e.arrival;
    }
  }
  return best;
}

inline bool DramEngine::oldest_is_candidate(std::uint32_t channel, Serve serve, std::uint32_t& bank) const {
  const Channel& ch = channels_[channel];
  const Queue* q = serve == Serve::Writes ? &ch.writes : &ch.reads;
  if (serve == Serve::Both &&
      (q->arrivals.empty() ||
       (!ch.writes.arrivals.empty() && ch.writes.arrivals.front().arrival < q->arrivals.front().arrival)))
    q = &ch.writes;
  if (q->arrivals.empty()) return false;
  // Every candidate is a queued request of the direction served: none is older than this one.
  // It is its bank's oldest request, so at the front of the bank's window (unless, under
  // watermarks, the window starts with the other direction). It is the bank's candidate under
  // FCFS, and under FR-FCFS if it hits the open row (then the row-hit cap keeps it too: no
  // older request of the bank waits).
  const Queued& oldest = q->arrivals.front();
  const RingQueue<Entry>& window = bank_queues_[oldest.bank].window;
  if (window.empty() || window[0].arrival != oldest.arrival) return false;
  if (config_.scheduler != DramScheduler::Fcfs && !device_.is_hit(window[0].target)) return false;
  bank = oldest.bank;
  return true;
}

inline const DramEngine::CandidateView& DramEngine::candidate_view(const BankQueue& queue, std::uint32_t bank,
                                                                   Serve serve) const {
  const std::uint64_t version = device_.bank_version(bank);  // its open row among the rest
  CandidateView& v = queue.view;
  if (queue.view_valid && queue.view_version == version && queue.view_serve == serve) return v;
  queue.view_valid = true;
  queue.view_version = version;
  queue.view_serve = serve;
  v.slot = scan_window(queue.window, device_.open_row(bank), serve);
  if (v.slot == queue.window.size()) return v;
  // view_of's fields, written in place: a view returned and copied here cost 0.5 % of the
  // random and read+write patterns' instructions.
  const Entry& e = queue.window[v.slot];
  v.arrival = e.arrival;
  v.bank_part = device_.bank_bound(e.target, e.arrival);
  v.shared = shared_slot(e);
  v.row_case = device_.row_case(e.target);
  return v;
}

inline DramEngine::CandidateView DramEngine::view_of(const RingQueue<Entry>& window, std::size_t slot) const {
  const Entry& e = window[slot];
  return CandidateView{slot, e.arrival, device_.bank_bound(e.target, e.arrival), shared_slot(e),
                       device_.row_case(e.target)};
}

inline DramEngine::CandidateView DramEngine::capped_view(const BankQueue& queue, std::uint32_t bank, Serve serve,
                                                         const CandidateView& view, std::uint64_t at) const {
  const std::size_t pick = cap_row_hits(queue.window, serve, bank, view.slot, at);
  return pick == view.slot ? view : view_of(queue.window, pick);
}

inline std::size_t DramEngine::scan_window(const RingQueue<Entry>& window, std::uint32_t open_row, Serve serve) const {
  std::size_t pick = window.size();
  for (std::size_t i = 0; i < window.size(); ++i) {
    const Entry& e = window[i];
    if (serve != Serve::Both && e.is_write != (serve == Serve::Writes)) continue;
    if (pick == window.size()) pick = i;  // the oldest
    if (config_.scheduler == DramScheduler::Fcfs) break;
    if (e.target.row == open_row) return i;  // the oldest row hit
  }
  return pick;
}

inline std::size_t DramEngine::cap_row_hits(const RingQueue<Entry>& window, Serve serve, std::uint32_t bank,
                                            std::size_t pick, std::uint64_t at) const {
  if (config_.row_hit_cap == 0 || row_columns_[bank] < config_.row_hit_cap) return pick;
  std::size_t oldest = 0;
  while (serve != Serve::Both && window[oldest].is_write != (serve == Serve::Writes)) ++oldest;
  if (oldest == pick) return pick;  // no older conflict waits
  // DRAMsim3 issues each cycle the first ready command in queue order, and lets the oldest
  // request precharge past waiting hits once the row has had 4: the PRE wins a tie.
  const Entry& c = window[oldest];
  const Entry& h = window[pick];
  const BurstSchedule conflict = device_.plan(c.target, c.is_write, c.arrival, at);
  return device_.plan(h.target, h.is_write, h.arrival, at).col < conflict.pre ? pick : oldest;
}

inline void DramEngine::mark_window(std::uint32_t bank, bool busy) {
  const std::uint32_t channel = bank / banks_per_channel_, i = bank % banks_per_channel_;
  std::uint64_t& word = window_banks_[std::size_t{channel} * ((banks_per_channel_ + 63) / 64) + i / 64];
  const std::uint64_t bit = std::uint64_t{1} << (i % 64);
  if (((word & bit) != 0) == busy) return;
  word ^= bit;
  window_count_[channel] += busy ? 1 : -1;
}

inline bool DramEngine::window_has_room(const BankQueue& bank, const Entry& e) const {
  if (config_.write_policy == DramWritePolicy::Shared) return bank.window.size() < config_.bank_queue_depth;
  // Watermarks: reads and writes have a window each (their queues are served apart).
  const std::size_t same = bank.window.count_if([&](const Entry& w) { return w.is_write == e.is_write; });
  return static_cast<std::uint32_t>(same) < config_.bank_queue_depth;
}

inline DramEngine::Entry DramEngine::take(Channel& ch, const Choice& c, std::uint64_t col) {
  BankQueue& bank = bank_queues_[c.bank];
  const Entry e = bank.window[c.slot];
  if (c.slot == 0)
    bank.window.pop_front();  // the usual case: the oldest
  else
    bank.window.erase(c.slot);
  bank.view_valid = false;  // (a request moving in below changes the window too)
  RingQueue<Queued>& arrivals = (e.is_write ? ch.writes : ch.reads).arrivals;
  if (arrivals.front().arrival == e.arrival) {  // the usual case: the oldest goes
    arrivals.pop_front();
  } else {
    std::size_t lo = 0, hi = arrivals.size();  // ascending and unique: binary search
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (arrivals[mid].arrival < e.arrival)
        lo = mid + 1;
      else
        hi = mid;
    }
    arrivals.erase(lo);
  }
  --ranks_[e.target.rank].queued;
  // The oldest waiting request that fits moves into the window; its channel slot frees when
  // the chosen column command issues (the window's place is free then).
  for (std::size_t i = 0; i < bank.waiting.size(); ++i) {
    const Entry& w = bank.waiting[i];
    if (!window_has_room(bank, w)) continue;
    Queue& q = w.is_write ? ch.writes : ch.reads;
    bank.window.push_back(w);
    --q.waiting;
    q.leaving.push_back(col);
    if (i == 0)
      bank.waiting.pop_front();  // always so under the shared policy
    else
      bank.waiting.erase(i);
    break;
  }
  if (bank.window.empty()) mark_window(c.bank, false);
  return e;
}

inline bool DramEngine::queued_hit(const BurstTarget& t, std::uint64_t until) const {
  const BankQueue& bank = bank_queues_[t.bank];
  const auto hit = [&](const Entry& e) { return e.target.row == t.row && e.arrival <= until; };
  return bank.window.any_of(hit) || bank.waiting.any_of(hit);
}

inline bool DramEngine::queued_for_bank(const BurstTarget& t, std::uint64_t until) const {
  const BankQueue& bank = bank_queues_[t.bank];
  const auto queued = [&](const Entry& e) { return e.arrival <= until; };
  return bank.window.any_of(queued) || bank.waiting.any_of(queued);
}

inline void DramEngine::settle_adaptive_close(Channel& ch) {
  if (!ch.close_pending) return;
  ch.close_pending = false;
  // A refresh may have closed the row meanwhile; the precharge is timed from the column command.
  // Close-adaptive: close unless a queued request hits the row. Open-adaptive (DRAMSys'
  // BankMachineOpenAdaptive): close only if a queued request wants the bank and none hits.
  if (!device_.is_hit(ch.close_target) || queued_hit(ch.close_target, ch.close_at)) return;
  if (config_.page_policy == PagePolicy::OpenAdaptive && !queued_for_bank(ch.close_target, ch.close_at)) return;
  device_.auto_precharge(ch.close_target);
}

inline void DramEngine::record_latency(bool is_write, std::uint64_t arrival, const BurstSchedule& s) {
  record_latencies(is_write, s.col - arrival, s.data_end - arrival, 1);
}

inline void DramEngine::record_latencies(bool is_write, std::uint64_t queueing, std::uint64_t latency,
                                         std::uint64_t count) {
  if (is_write) {
    stats_.write_latency_sum += count * latency;
    stats_.write_queue_cycles += count * queueing;
    return;
  }
  stats_.read_queue_cycles += count * queueing;
  stats_.read_latency_sum += count * latency;
  stats_.read_latency_max = std::max(stats_.read_latency_max, latency);
  stats_.read_latency.add(latency, count);
}

inline void DramEngine::record_counts(Channel& ch, bool is_write, std::uint64_t n, std::uint64_t last_end) {
  if (is_write && !ch.last_write) ++stats_.write_drains;  // a write batch begins
  ch.last_write = is_write;
  stats_.last_completion_cycle = std::max(stats_.last_completion_cycle, last_end);
  run_last_ = std::max(run_last_, last_end);
  stats_.data_bus_busy_cycles += n * device_.burst_cycles();
  (is_write ? stats_.writes : stats_.reads) += n;
  (is_write ? stats_.bytes_written : stats_.bytes_read) += n * burst_bytes_;
  if (!is_write) stats_.read_latency_count += n;
}

inline void DramEngine::record(Channel& ch, const Entry& e, const BurstSchedule& s) {
  switch (s.row_case) {
    case RowCase::Hit:
      ++stats_.row_hits;
      break;
    case RowCase::Miss:
      ++stats_.row_misses;
      break;
    case RowCase::Conflict:
      ++stats_.row_conflicts;
      break;
  }
  record_counts(ch, e.is_write, 1, s.data_end);
  record_latency(e.is_write, e.arrival, s);
}

// ---------------------------------------------------------------- refresh

void DramEngine::update_next_refresh() {
  next_refresh_ = kNever;
  for (const RankRefresh& r : ranks_) next_refresh_ = std::min({next_refresh_, r.next_due, r.catch_up});
}

void DramEngine::refresh_tick(std::uint64_t horizon) {
  for (std::uint32_t i = 0; i < ranks_.size(); ++i) {
    RankRefresh& r = ranks_[i];
    if (r.catch_up == next_refresh_ && r.catch_up <= r.next_due) {
      const std::uint64_t at = r.catch_up;
      r.catch_up = kNever;
      serve_refresh(i, at, false, horizon);
      break;
    }
    if (r.next_due == next_refresh_) {
      const std::uint64_t at = r.next_due;
      r.next_due += refresh_interval_;
      ++r.owed;
      serve_refresh(i, at, true, horizon);
      break;
    }
  }
  update_next_refresh();
}

void DramEngine::repay_refreshes() {
  // Every rank is idle now: one that owes refreshes catches up (decide, step 4, scheduled it),
  // one tRFC after the other (per bank: all at once), so no refresh is left unpaid.
  const auto owing = [&] {
    bool any = false;
    for (RankRefresh& r : ranks_)
      if (r.owed > 0) {
        any = true;
        r.catch_up = std::min(r.catch_up, std::max(now_, run_last_));
      }
    update_next_refresh();
    return any;
  };
  while (owing()) refresh_tick(kNever);
}

bool DramEngine::unit_idle(std::uint32_t rank, std::uint32_t unit) const {
  const std::uint32_t end = (rank + 1) * device_.banks_per_rank();
  for (std::uint32_t b = device_.unit_bank(rank, unit); b < end; b += units_)
    if (!bank_queues_[b].window.empty()) return false;  // a bank with waiting requests has a window
  return true;
}

void DramEngine::serve_refresh(std::uint32_t rank, std::uint64_t at, bool due_tick, std::uint64_t horizon) {
  RankRefresh& r = ranks_[rank];
  // Ticks that fall due before the next request can arrive find the rank idle: serve them in
  // one step instead of one event each (only when nothing is owed, so each is on time).
  std::uint64_t extra = 0;
  if (due_tick && r.owed == 1 && r.queued == 0 && horizon != kNever && horizon >= r.next_due) {
    extra = (horizon - r.next_due) / refresh_interval_ + 1;
    r.next_due += extra * refresh_interval_;
    r.owed += extra;
  }

  if (config_.refresh == RefreshMode::AllBank) {
    // Serve one REF if the rank is idle or the postponement budget is spent (JEDEC: at most
    // eight REFs postponed); an idle rank catches up on the rest one tRFC after the other.
    const bool idle = r.queued == 0;
    if (idle && extra > 0) {
      device_.refresh_all_bank(rank, at, extra + 1, refresh_interval_);
      r.owed = 0;
      return;
    }
    if (idle || r.owed > max_owed_) {
      const std::uint64_t ref = device_.refresh_all_bank(rank, at, 1, refresh_interval_);
      --r.owed;
      if (idle && r.owed > 0) r.catch_up = ref + config_.timing.tRFC;
    } else if (due_tick) {
      ++stats_.refreshes_postponed;
    }
    return;
  }

  // Per bank (as DRAMSys): each round refreshes every unit once; a tick takes the first unit of
  // the round not yet refreshed whose banks have no queued request, else, when nothing more may
  // be postponed, the first unit left in the round.
  if (extra > units_) {  // a long idle gap: only the last round matters to the banks' state
    const std::uint64_t skipped = extra - units_;
    stats_.refreshes_per_bank += skipped;
    r.owed -= skipped;
    // The skipped REFpbs (every unit idle: lowest first) still went round the units.
    skip_units(r, skipped);
    at = r.next_due - (units_ + 1) * refresh_interval_;
  }
  std::uint64_t t = at;
  while (r.owed > 0) {
    std::uint32_t unit = units_;
    for (std::uint32_t u = 0; u < units_ && unit == units_; ++u)
      if ((r.round_left >> u & 1u) != 0 && unit_idle(rank, u)) unit = u;
    if (unit == units_) {
      if (r.owed <= max_owed_) break;
      unit = lowest_unit(r.round_left);
    }
    device_.refresh_per_bank(rank, unit, t);
    r.round_left &= ~(1u << unit);
    if (r.round_left == 0) r.round_left = full_round();
    --r.owed;
    if (extra > 0) t += refresh_interval_;  // idle gap: each on its own tick
  }
  if (r.owed > 0 && due_tick) ++stats_.refreshes_postponed;
}

std::uint32_t DramEngine::lowest_unit(std::uint32_t round_left) {
  std::uint32_t u = 0;
  while ((round_left >> u & 1u) == 0) ++u;
  return u;
}

void DramEngine::skip_units(RankRefresh& r, std::uint64_t n) {
  // n REFpbs taken lowest unit first: finish the round, whole rounds change nothing, then the
  // n mod units lowest of a new round.
  const auto left = static_cast<std::uint64_t>(__builtin_popcount(r.round_left));
  if (n < left) {
    for (; n > 0; --n) r.round_left &= ~(1u << lowest_unit(r.round_left));
    return;
  }
  r.round_left = full_round();
  for (n = (n - left) % units_; n > 0; --n) r.round_left &= ~(1u << lowest_unit(r.round_left));
}

// ---------------------------------------------------------------- convenience entry points

std::uint64_t DramEngine::access(std::uint64_t addr, bool is_write, std::uint64_t arrival_cycle) {
  SingleRequest one(addr, is_write, arrival_cycle);
  return run_source(one);
}

bool DramEngine::in_range(std::uint64_t addr, std::uint64_t run_bytes, std::uint64_t stride, std::uint64_t runs) const {
  if (run_bytes == 0 || runs == 0) return true;
  if (addr >= capacity_ || run_bytes > capacity_ - addr) return false;
  // The last run starts (runs - 1) * stride after the first; compare without overflowing.
  const std::uint64_t room = capacity_ - addr - run_bytes;
  return runs == 1 || stride <= room / (runs - 1);
}

std::uint64_t DramEngine::access_transfer(std::uint64_t addr, std::uint64_t run_bytes, std::uint64_t stride,
                                          std::uint64_t runs, bool is_write, std::uint64_t arrival_cycle,
                                          std::uint32_t max_outstanding) {
  if (max_outstanding == 0) throw InputError(where_of(config_), "expected max_outstanding >= 1 burst, found 0");
  if (run_bytes == 0 || runs == 0) return arrival_cycle;
  if (!in_range(addr, run_bytes, stride, runs))
    throw InputError(where_of(config_), "expected a transfer below the capacity " + std::to_string(capacity_) +
                                            " B, found " + std::to_string(runs) + " run(s) of " +
                                            std::to_string(run_bytes) + " B from " + hex(addr) + " every " +
                                            std::to_string(stride) + " B");
  TransferSource transfer(addr, run_bytes, stride, runs, is_write, arrival_cycle, max_outstanding, burst_bytes_);
  run_source(transfer);
  return transfer.last();
}

void DramEngine::record_activity(bool banks, std::uint64_t join_gap) {
  activity_ = std::make_unique<DramActivity>(config_.channels, static_cast<std::uint32_t>(ranks_.size()),
                                             device_.banks_per_rank(), units_, banks, join_gap);
  device_.set_activity(activity_.get());
}

std::unique_ptr<DramActivity> DramEngine::take_activity() {
  device_.set_activity(nullptr);
  return std::move(activity_);
}

DramStats DramEngine::stats() const {
  DramStats s = stats_;
  s.bank_open_cycles = device_.open_cycles(stats_.last_completion_cycle);
  return s;
}

}  // namespace npusim::models
