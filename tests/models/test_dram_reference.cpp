// The event-skipping DramEngine against a controller written for this test that walks time one
// DRAM cycle after the other and, each cycle, asks plainly what may happen: refresh ticks due,
// a request entering, a channel deciding. It keeps every queued request in one list and looks
// at all of them whenever it needs something (no per-bank rings, masks, release lists, floors
// or skipped candidates). Both drive the same DramDevice (the JEDEC timing, checked in closed
// form by test_dram_timing.cpp), so any difference is in when the engine acts and what it sees
// then. The rules are those of docs/dram.md section 2.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "models/dram/dram_activity.h"
#include "models/dram/dram_config_check.h"
#include "models/dram/dram_engine.h"
#include "models/dram/dram_timing.h"
#include "test_dram_support.h"

namespace npusim::models {
namespace {

using test::ddr4_3200_x8;
using test::lpddr4_3200;
using test::random_trace;
using test::render_commands;
using test::stream_trace;
using test::VectorSource;

constexpr std::uint64_t kNever = DramEngine::kNever;

class CycleWalk {
 public:
  explicit CycleWalk(const DramConfig& c)
      : c_(c),
        device_(c, stats_),
        units_(refresh_units(c)),
        activity_(c.channels, c.channels * c.ranks, c.banks(), units_, true) {
    device_.set_activity(&activity_);
    interval_ = c.timing.tREFI / units_;
    ranks_.resize(std::size_t{c.channels} * c.ranks);
    for (Rank& r : ranks_) {
      r.next_due = interval_ != 0 ? interval_ : kNever;
      r.round_left = full_round();
    }
    channels_.resize(c.channels);
    hits_in_row_.assign(ranks_.size() * c.banks(), 0);
  }

  /// Runs the trace; returns each request's data end.
  std::vector<std::uint64_t> run(const std::vector<DramRequest>& trace) {
    trace_ = &trace;
    ends_.assign(trace.size(), 0);
    std::uint64_t c = 0;
    for (;; ++c) {
      for (;;) {  // everything that happens at cycle c, in the engine's order of precedence
        if (refresh_due(c)) continue;
        if (try_admit(c)) continue;  // in issue order, at most one a cycle into each channel
        if (try_decide(c)) continue;
        break;
      }
      if (next_ == trace.size() && queued_.empty()) break;
    }
    // Every request served: owed refreshes are paid from the later of the last event and the
    // last data, one cycle after the other.
    const std::uint64_t repay_from = std::max(last_event_, last_end_);
    for (;; ++c) {
      bool owing = false;
      for (Rank& r : ranks_)
        if (r.owed > 0) {
          owing = true;
          r.catch_up = std::min(r.catch_up, repay_from);
        }
      if (!owing) break;
      while (refresh_due(c)) {}
    }
    return ends_;
  }

  std::string commands() const { return render_commands(ends_, activity_); }
  /// The counters both controllers keep, as text.
  std::string counters() const {
    const DramStats& s = stats_;
    const std::uint64_t open = device_.open_cycles(last_end_);
    return "reads " + std::to_string(reads_) + " writes " + std::to_string(writes_) + " hits " + std::to_string(hits_) +
           " misses " + std::to_string(misses_) + " conflicts " + std::to_string(conflicts_) + " acts " +
           std::to_string(s.activates) + " pres " + std::to_string(s.precharges) + " refs " +
           std::to_string(s.refreshes) + " refpbs " + std::to_string(s.refreshes_per_bank) + " postponed " +
           std::to_string(postponed_) + " backpressure " + std::to_string(backpressure_) + " drains " +
           std::to_string(drains_) + " open " + std::to_string(open);
  }

 private:
  struct Request {
    std::uint64_t index = 0, arrival = 0;
    BurstTarget target;
    bool write = false;
    bool in_window = false;  // false: waiting in the channel queue, holding a slot
  };
  struct Release {  // a channel-queue slot held until `at` by a request that moved into a window
    std::uint32_t channel = 0;
    bool write = false;
    std::uint64_t at = 0;
  };
  struct Channel {
    std::uint64_t clock = 0;  // the last column command: no decision before it
    bool draining = false, last_write = false;
    bool close_pending = false;
    BurstTarget close_target;
    std::uint64_t close_at = 0;
    std::uint64_t next_admit = 0;  // its controller takes one request a cycle
  };
  struct Rank {
    std::uint64_t next_due = kNever, catch_up = kNever, owed = 0;
    std::uint32_t round_left = 0;
  };

  std::uint32_t full_round() const { return (1u << units_) - 1; }
  bool watermarks() const { return c_.write_policy == DramWritePolicy::Watermarks; }
  /// Requests sharing `a`'s window: its bank's (and, under watermarks, its direction's).
  bool same_window(const Request& a, const BurstTarget& t, bool write) const {
    return a.target.bank == t.bank && (!watermarks() || a.write == write);
  }
  std::size_t window_size(const BurstTarget& t, bool write) const {
    return static_cast<std::size_t>(std::count_if(
        queued_.begin(), queued_.end(), [&](const Request& q) { return q.in_window && same_window(q, t, write); }));
  }
  std::size_t queued_for_rank(std::uint32_t rank) const {
    return static_cast<std::size_t>(
        std::count_if(queued_.begin(), queued_.end(), [&](const Request& q) { return q.target.rank == rank; }));
  }

  // ------------------------------------------------------------ a request entering

  bool try_admit(std::uint64_t c) {
    if (next_ == trace_->size()) return false;
    const DramRequest& r = (*trace_)[next_];
    const BurstTarget t = device_.locate(r.addr);
    const std::uint64_t ready = std::max({r.cycle, last_admit_, channels_[t.channel].next_admit});
    if (c < ready) return false;
    // Slots held at c: requests waiting outside a window, and releases not yet come. A request
    // that finds its queue full enters at the next release after that, even when the queue is
    // still full then (chosen requests hold a slot too, so more than depth may be held).
    std::size_t held = 0;
    bool release_now = false;
    for (const Request& q : queued_) held += !q.in_window && q.target.channel == t.channel && q.write == r.is_write;
    for (const Release& l : releases_)
      if (l.channel == t.channel && l.write == r.is_write) {
        held += l.at > c;
        release_now = release_now || (l.at == c && c > ready);
      }
    if (held >= (r.is_write ? c_.write_queue_depth : c_.read_queue_depth) && !release_now) return false;
    backpressure_ += c - ready;
    Request q{next_, c, t, r.is_write, false};
    const bool older_waits = std::any_of(queued_.begin(), queued_.end(), [&](const Request& o) {
      return !o.in_window && same_window(o, t, r.is_write);
    });
    q.in_window = !older_waits && window_size(t, r.is_write) < c_.bank_queue_depth;
    queued_.push_back(q);
    ++next_;
    last_admit_ = c;
    channels_[t.channel].next_admit = c + 1;
    last_event_ = c;
    return true;
  }

  // ------------------------------------------------------------ a decision

  bool try_decide(std::uint64_t c) {
    for (std::uint32_t ch = 0; ch < channels_.size(); ++ch) {
      const bool any =
          std::any_of(queued_.begin(), queued_.end(), [&](const Request& q) { return q.target.channel == ch; });
      if (any && channels_[ch].clock <= c) {
        decide(ch, c);
        return true;
      }
    }
    return false;
  }

  void decide(std::uint32_t ch_index, std::uint64_t c) {
    last_event_ = c;
    Channel& ch = channels_[ch_index];
    settle_close(ch);
    const auto [pick, s] = choose(ch_index, serve_writes(ch_index), c);
    const Request q = queued_[pick];
    queued_.erase(queued_.begin() + static_cast<std::ptrdiff_t>(pick));
    std::uint32_t& hits = hits_in_row_[q.target.bank];
    hits = s.row_case != RowCase::Hit ? 1 : hits + 1;

    device_.commit(q.target, q.write, s);
    if (c_.page_policy == PagePolicy::Closed) device_.auto_precharge(q.target);
    if (c_.page_policy == PagePolicy::Adaptive || c_.page_policy == PagePolicy::OpenAdaptive) {
      ch.close_pending = true;
      ch.close_target = q.target;
      ch.close_at = s.col;
    }
    // The chosen request holds a channel-queue slot until its column command; the place it
    // left in its window goes to the oldest request of its bank that fits, whose slot frees at
    // that column command too.
    releases_.push_back({ch_index, q.write, s.col});
    for (Request& w : queued_)
      if (!w.in_window && w.target.bank == q.target.bank && window_size(w.target, w.write) < c_.bank_queue_depth) {
        w.in_window = true;
        releases_.push_back({ch_index, w.write, s.col});
        break;
      }
    ch.clock = s.col;

    if (q.write && !ch.last_write) ++drains_;
    ch.last_write = q.write;
    (q.write ? writes_ : reads_) += 1;
    (s.row_case == RowCase::Hit ? hits_ : s.row_case == RowCase::Miss ? misses_ : conflicts_) += 1;
    ends_[q.index] = s.data_end;
    last_end_ = std::max(last_end_, s.data_end);
    // A rank that owes refreshes and has just gone idle catches up at this column command.
    Rank& r = ranks_[q.target.rank];
    if (r.owed > 0 && queued_for_rank(q.target.rank) == 0) r.catch_up = std::min(r.catch_up, s.col);
  }

  /// -1 both directions (shared policy), else 0 reads or 1 writes (watermarks).
  int serve_writes(std::uint32_t ch_index) {
    if (!watermarks()) return -1;
    Channel& ch = channels_[ch_index];
    std::size_t reads = 0, writes = 0;
    for (const Request& q : queued_)
      if (q.target.channel == ch_index) (q.write ? writes : reads) += 1;
    if (ch.draining) {
      if (writes == 0 || (writes <= c_.write_drain_low && reads > 0)) ch.draining = false;
    } else if (writes > 0 && (writes >= c_.write_drain_high || reads == 0)) {
      ch.draining = true;
    }
    return ch.draining ? 1 : 0;
  }

  /// Per bank of the channel, its window's candidate; of those, FR-FCFS the one whose column
  /// command issues first (ties: the oldest), FCFS the oldest. Returns its place in queued_.
  std::pair<std::size_t, BurstSchedule> choose(std::uint32_t ch_index, int serve, std::uint64_t c) const {
    const bool fcfs = c_.scheduler == DramScheduler::Fcfs;
    std::size_t best = queued_.size();
    BurstSchedule best_s;
    const std::uint32_t banks = c_.ranks * c_.banks();
    for (std::uint32_t bank = ch_index * banks; bank < (ch_index + 1) * banks; ++bank) {
      std::size_t oldest = queued_.size(), oldest_hit = queued_.size();
      for (std::size_t i = 0; i < queued_.size(); ++i) {  // queued_ is in arrival order
        const Request& q = queued_[i];
        if (!q.in_window || q.target.bank != bank || (serve >= 0 && q.write != (serve == 1))) continue;
        if (oldest == queued_.size()) oldest = i;
        if (oldest_hit == queued_.size() && device_.is_hit(q.target)) oldest_hit = i;
      }
      if (oldest == queued_.size()) continue;
      std::size_t pick = oldest;
      if (!fcfs && oldest_hit != queued_.size()) {
        pick = oldest_hit;
        // The row-hit cap: once the row has had row_hit_cap column commands, the oldest (a
        // conflict) goes unless the hit's column command comes strictly before its PRE could.
        if (c_.row_hit_cap != 0 && hits_in_row_[bank] >= c_.row_hit_cap && oldest != oldest_hit &&
            plan(oldest_hit, c).col >= plan(oldest, c).pre)
          pick = oldest;
      }
      const BurstSchedule s = plan(pick, c);
      const bool better = best == queued_.size() || queued_[pick].arrival < queued_[best].arrival;
      if (fcfs ? better : best == queued_.size() || s.col < best_s.col || (s.col == best_s.col && better)) {
        best = pick;
        best_s = s;
      }
    }
    return {best, best_s};
  }

  BurstSchedule plan(std::size_t i, std::uint64_t c) const {
    return device_.plan(queued_[i].target, queued_[i].write, queued_[i].arrival, c);
  }

  void settle_close(Channel& ch) {
    // Adaptive pages: the previous column command's row closes unless a request queued by
    // then hits it (open_adaptive: and only if one queued by then wants the bank).
    if (!ch.close_pending) return;
    ch.close_pending = false;
    const BurstTarget& t = ch.close_target;
    if (!device_.is_hit(t)) return;
    bool hit = false, wants = false;
    for (const Request& q : queued_)
      if (q.target.bank == t.bank && q.arrival <= ch.close_at) {
        wants = true;
        hit = hit || q.target.row == t.row;
      }
    if (hit || (c_.page_policy == PagePolicy::OpenAdaptive && !wants)) return;
    device_.auto_precharge(t);
  }

  // ------------------------------------------------------------ refresh

  /// Serves one refresh tick or catch-up due at or before c (lowest rank first; a rank's
  /// catch-up before its tick when not later). False if none is due.
  bool refresh_due(std::uint64_t c) {
    for (std::uint32_t i = 0; i < ranks_.size(); ++i) {
      Rank& r = ranks_[i];
      if (r.catch_up <= c && r.catch_up <= r.next_due) {
        const std::uint64_t at = r.catch_up;
        r.catch_up = kNever;
        serve(i, at, false);
        return true;
      }
      if (r.next_due <= c) {
        const std::uint64_t at = r.next_due;
        r.next_due += interval_;
        ++r.owed;
        serve(i, at, true);
        return true;
      }
    }
    return false;
  }

  bool unit_idle(std::uint32_t rank, std::uint32_t unit) const {
    return std::none_of(queued_.begin(), queued_.end(), [&](const Request& q) {
      return q.target.rank == rank && (q.target.bank - rank * c_.banks()) % units_ == unit;
    });
  }

  void serve(std::uint32_t rank, std::uint64_t at, bool due_tick) {
    Rank& r = ranks_[rank];
    const std::uint64_t max_owed = std::uint64_t{c_.refresh_max_postponed} * units_;
    if (c_.refresh == RefreshMode::AllBank) {
      // A REF when the rank is idle or nothing more may be postponed; an idle rank that still
      // owes catches up one tRFC later.
      const bool idle = queued_for_rank(rank) == 0;
      if (idle || r.owed > max_owed) {
        const std::uint64_t ref = device_.refresh_all_bank(rank, at, 1, interval_);
        --r.owed;
        if (idle && r.owed > 0) r.catch_up = ref + c_.timing.tRFC;
      } else if (due_tick) {
        ++postponed_;
      }
      return;
    }
    // Per bank: the first unit of the round whose banks have no queued request, else (nothing
    // more may be postponed) the first unit left in the round.
    while (r.owed > 0) {
      std::uint32_t unit = units_;
      for (std::uint32_t u = 0; u < units_ && unit == units_; ++u)
        if ((r.round_left >> u & 1u) != 0 && unit_idle(rank, u)) unit = u;
      if (unit == units_) {
        if (r.owed <= max_owed) break;
        for (unit = 0; (r.round_left >> unit & 1u) == 0; ++unit) {}
      }
      device_.refresh_per_bank(rank, unit, at);
      r.round_left &= ~(1u << unit);
      if (r.round_left == 0) r.round_left = full_round();
      --r.owed;
    }
    if (r.owed > 0 && due_tick) ++postponed_;
  }

  DramConfig c_;
  DramStats stats_;  // the device's counters (ACT, PRE, REF, open cycles)
  DramDevice device_;
  std::uint32_t units_ = 1;
  DramActivity activity_;
  std::uint64_t interval_ = 0;
  std::vector<Rank> ranks_;
  std::vector<Channel> channels_;
  std::vector<std::uint32_t> hits_in_row_;  // per flat bank: column commands since its ACT
  std::vector<Request> queued_;             // admitted and not yet served, in arrival order
  std::vector<Release> releases_;
  const std::vector<DramRequest>* trace_ = nullptr;
  std::size_t next_ = 0;  // the next request of the trace to enter
  std::uint64_t last_admit_ = 0, last_event_ = 0, last_end_ = 0;
  std::vector<std::uint64_t> ends_;
  std::uint64_t reads_ = 0, writes_ = 0, hits_ = 0, misses_ = 0, conflicts_ = 0;
  std::uint64_t postponed_ = 0, backpressure_ = 0, drains_ = 0;
};

/// The engine's record and counters on `trace`, as CycleWalk renders its own.
std::pair<std::string, std::string> engine_commands(const DramConfig& c, const std::vector<DramRequest>& trace) {
  DramEngine engine(c);
  engine.record_activity(true);
  VectorSource source(trace);
  engine.run(source);
  const DramStats s = engine.stats();
  const std::string counters = "reads " + std::to_string(s.reads) + " writes " + std::to_string(s.writes) + " hits " +
                               std::to_string(s.row_hits) + " misses " + std::to_string(s.row_misses) + " conflicts " +
                               std::to_string(s.row_conflicts) + " acts " + std::to_string(s.activates) + " pres " +
                               std::to_string(s.precharges) + " refs " + std::to_string(s.refreshes) + " refpbs " +
                               std::to_string(s.refreshes_per_bank) + " postponed " +
                               std::to_string(s.refreshes_postponed) + " backpressure " +
                               std::to_string(s.backpressure_cycles) + " drains " + std::to_string(s.write_drains) +
                               " open " + std::to_string(s.bank_open_cycles);
  return {render_commands(source.ends, *engine.activity()), counters};
}

TEST(DramEngine, SkipsTimeAsACycleByCycleWalk) {
  // Random traces (hits, misses and conflicts, a third writes, bursts of arrivals and gaps,
  // refresh several times per trace) on LPDDR4 (no bank groups) and DDR4 (bank groups), each
  // scheduler, write policy, page policy, refresh mode, small queues (back-pressure) and two
  // channels of two ranks, and streams (stream_trace: runs of row hits with refresh, competing
  // banks, direction switches and full queues): identical data ends, row intervals, bus
  // intervals, refreshes and counters. Long idle gaps (3 tREFI) only under all-bank refresh with one rank per channel:
  // there the engine serves an idle rank's ticks in one step. Per bank it records only the last
  // round of a long gap, and the REFs after the first of such a step leave the CA bus free (a
  // second rank's REF may take their cycles), so the walk would differ there by design.
  std::vector<std::pair<std::string, DramConfig>> configs = {{"lpddr4", lpddr4_3200()}, {"ddr4", ddr4_3200_x8()}};
  const auto variant = [&](const std::string& name, auto change) {
    for (std::size_t i = 0; i < 2; ++i) {
      DramConfig c = configs[i].second;
      change(c);
      configs.push_back({configs[i].first + " " + name, c});
    }
  };
  variant("fcfs", [](DramConfig& c) { c.scheduler = DramScheduler::Fcfs; });
  variant("watermarks", [](DramConfig& c) { c.write_policy = DramWritePolicy::Watermarks; });
  variant("row_hit_cap 4", [](DramConfig& c) { c.row_hit_cap = 4; });
  variant("closed", [](DramConfig& c) { c.page_policy = PagePolicy::Closed; });
  variant("adaptive", [](DramConfig& c) { c.page_policy = PagePolicy::Adaptive; });
  variant("open_adaptive", [](DramConfig& c) { c.page_policy = PagePolicy::OpenAdaptive; });
  variant("postponed refresh", [](DramConfig& c) { c.refresh_max_postponed = 8; });
  variant("small queues", [](DramConfig& c) {
    c.read_queue_depth = 4;
    c.write_queue_depth = 4;
    c.bank_queue_depth = 2;
    c.write_drain_high = 3;
    c.write_drain_low = 1;
  });
  variant("2 channels x 2 ranks", [](DramConfig& c) {
    c.channels = 2;
    c.ranks = 2;
    c.mapping = "rochrabacobg";
  });
  for (const int cap : {0, 4}) {
    DramConfig per_bank = lpddr4_3200();
    per_bank.refresh = RefreshMode::PerBank;
    per_bank.refresh_max_postponed = cap;
    configs.push_back({"lpddr4 per_bank refresh, postponed " + std::to_string(cap), per_bank});
  }
  for (const auto& [name, c] : configs)
    for (std::uint32_t seed : {1u, 2u}) {
      const bool long_gaps = c.refresh == RefreshMode::AllBank && c.ranks == 1;
      for (const bool streams : {false, true}) {
        const std::vector<DramRequest> trace =
            streams ? stream_trace(c, seed, 2000) : random_trace(c, seed, 2000, long_gaps);
        CycleWalk walk(c);
        walk.run(trace);
        const auto [commands, counters] = engine_commands(c, trace);
        const std::string which = std::string(", seed ") + std::to_string(seed) + (streams ? ", streams" : "");
        EXPECT_EQ(commands, walk.commands()) << name << which;
        EXPECT_EQ(counters, walk.counters()) << name << which;
        EXPECT_GT(commands.size(), 2000u * 4) << name;  // the record is not empty
      }
    }
}

}  // namespace
}  // namespace npusim::models
