#pragma once
// The DRAM controller engine: per-channel read and write queues over per-bank scheduling
// windows, FR-FCFS or FCFS scheduling of reads and writes by one rule (or write draining between
// watermarks), open/closed/adaptive page policy, refresh (all-bank or per-bank, optionally postponed), and
// back-pressure when a queue is full, over the JEDEC timing of DramDevice. Plain C++ and event-driven: it jumps from
// one decision, admission or refresh tick to the next, never through idle cycles. `npusim dram` runs it on a trace; the
// SystemC DramController runs it per TLM transfer. See docs/dram.md.
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "models/dram/address_mapping.h"
#include "models/dram/dram_activity.h"
#include "models/dram/dram_stats.h"
#include "models/dram/dram_timing.h"
#include "sim/core/hardware_config.h"

namespace npusim::models {

/// One burst-sized request as an initiator issues it.
struct DramRequest {
  std::uint64_t addr = 0;
  std::uint64_t cycle = 0;  ///< the earliest DRAM cycle it may enter the controller
  bool is_write = false;
};

/// Supplies requests in issue order. The engine pulls the next one when the previous has entered
/// a queue, and reports each request's completion (its index counts from 0 in one run()).
class DramRequestSource {
 public:
  enum class Status { Ready, Blocked, Done };
  virtual ~DramRequestSource() = default;
  /// Ready: `request` is the next one. Blocked: the next one depends on a completion not yet
  /// reported (e.g. a DMA's outstanding-burst limit). Done: no more requests.
  virtual Status next(DramRequest& request) = 0;
  /// Request `index` finished its data transfer at `data_end` (a DRAM cycle).
  virtual void completed(std::uint64_t index, std::uint64_t data_end) {
    (void)index;
    (void)data_end;
  }
};

/// A FIFO on a ring of power-of-two capacity that grows and never shrinks. The engine's queues
/// push and pop a few entries per burst; std::deque allocated and freed a block every few.
template <typename T>
class RingQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return items_[(head_ + i) & mask_]; }
  const T& operator[](std::size_t i) const { return items_[(head_ + i) & mask_]; }
  const T& front() const { return (*this)[0]; }
  void push_back(const T& v) {
    if (size_ == capacity_) grow();
    items_[(head_ + size_) & mask_] = v;
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) & mask_;
    --size_;
  }
  void clear() { head_ = size_ = 0; }
  /// Removes item `i`; the others keep their order (the shorter side moves, as std::deque).
  void erase(std::size_t i) {
    if (i < size_ / 2) {
      for (; i > 0; --i) (*this)[i] = (*this)[i - 1];
      pop_front();
      return;
    }
    for (; i + 1 < size_; ++i) (*this)[i] = (*this)[i + 1];
    --size_;
  }
  template <typename Pred>
  std::size_t count_if(Pred pred) const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < size_; ++i) n += pred((*this)[i]) ? 1 : 0;
    return n;
  }
  template <typename Pred>
  bool any_of(Pred pred) const {
    for (std::size_t i = 0; i < size_; ++i)
      if (pred((*this)[i])) return true;
    return false;
  }

 private:
  void grow() {
    const std::size_t capacity = capacity_ == 0 ? 8 : 2 * capacity_;
    std::unique_ptr<T[]> bigger(new T[capacity]);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = (*this)[i];
    items_ = std::move(bigger);
    capacity_ = capacity;
    head_ = 0;
    mask_ = capacity_ - 1;
  }
  // Capacity kept as a count: with a std::vector, every push computed size() (a subtraction
  // and a shift), and the engine pushes onto a few rings per burst.
  std::unique_ptr<T[]> items_;
  std::size_t capacity_ = 0, head_ = 0, size_ = 0, mask_ = 0;
};

class DramEngine {
 public:
  static constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();
  /// The latest cycle a request may arrive at (2^62, 73 years at 2 GHz): latencies and refresh
  /// ticks added to it stay far from overflow and from kNever.
  static constexpr std::uint64_t kMaxCycle = std::uint64_t{1} << 62;

  /// Throws InputError (see check_dram_config) for a config that breaks a rule.
  explicit DramEngine(const DramConfig& config);

  /// Admits `source`'s requests in order, each no earlier than its cycle, at most one per DRAM
  /// cycle into each channel and only while its queue has room, and schedules them until every
  /// one has completed. State (open rows, refresh, queues' clocks) carries over between runs; a
  /// run's requests queue behind the previous run's. Returns the last data end of this run (the engine's current
  /// cycle if it had no request). Throws InputError for an address beyond the capacity or a
  /// request cycle beyond kMaxCycle.
  std::uint64_t run(DramRequestSource& source);

  /// Processes refresh ticks due up to `cycle` (an idle rank refreshes on time).
  void advance_to(std::uint64_t cycle);

  /// One burst (the one holding byte `addr`) arriving at `arrival_cycle`; returns its data end.
  std::uint64_t access(std::uint64_t addr, bool is_write, std::uint64_t arrival_cycle);

  /// A strided transfer: `runs` runs of `run_bytes` bytes, run r at addr + r * stride, split into
  /// the bursts each run touches (partial bursts count whole). Every burst is ready at
  /// `arrival_cycle`, and burst i not before burst i - max_outstanding has completed. Returns
  /// the last completion (`arrival_cycle` for an empty transfer). Throws InputError for
  /// max_outstanding == 0 or bytes beyond the capacity.
  std::uint64_t access_transfer(std::uint64_t addr, std::uint64_t run_bytes, std::uint64_t stride, std::uint64_t runs,
                                bool is_write, std::uint64_t arrival_cycle, std::uint32_t max_outstanding);

  /// True if every byte of the strided transfer lies below capacity_bytes() (an empty one: true).
  bool in_range(std::uint64_t addr, std::uint64_t run_bytes, std::uint64_t stride, std::uint64_t runs) const;

  /// Records what the device does from now on (row-open intervals per bank only if `banks`);
  /// off by default, as it costs time per command. Calling it again starts a new record.
  /// `join_gap`: see DramActivity (0: exact bus intervals).
  void record_activity(bool banks, std::uint64_t join_gap = 0);
  /// The record, or nullptr when record_activity was not called.
  const DramActivity* activity() const { return activity_.get(); }
  /// Hands the record over (after the run) and stops recording; nullptr if none was kept.
  std::unique_ptr<DramActivity> take_activity();
  /// The cycle of the next refresh tick or catch-up not yet processed (kNever: none). Ticks are
  /// processed when a run's events reach them, or by advance_to.
  std::uint64_t next_refresh_cycle() const { return next_refresh_; }

  /// For tests: choose each request by the scheduling rule written plainly (every request of
  /// every bank's window looked at, every bank's candidate planned) instead of the fast path,
  /// and serve every burst through the queues (no stream path, see stream()). Every figure must
  /// be the same either way (DramEngine.FastChoiceIsThePlainRule, StreamPathIsTheQueuedPath).
  void set_plain_choice(bool plain) { plain_choice_ = plain; }
  /// For tests and benches: the bursts the stream path served (see stream()), since construction.
  std::uint64_t stream_bursts() const { return stream_bursts_; }
  /// For tests: place the stream path's bus-bound hits in closed form (DramDevice::hit_pace, the
  /// default) or plan and commit each one. Every figure must be the same either way
  /// (DramEngine.PacedHitsAreThePlannedHits).
  void set_paced_hits(bool paced) { paced_hits_ = paced; }
  /// For tests and benches: of stream_bursts(), those placed in closed form.
  std::uint64_t paced_bursts() const { return paced_bursts_; }
  /// For tests: take a paced stream's steps alike at once (the default) or one by one. Every
  /// figure must be the same either way (DramEngine.BatchedStepsAreTheSteppedSteps).
  void set_batched(bool batched) { batched_ = batched; }
  /// For tests and benches: of paced_bursts(), those taken in batches.
  std::uint64_t batched_bursts() const { return batched_bursts_; }

  /// The counters, with the open-row time of rows still open counted up to the last completion.
  DramStats stats() const;
  const DramConfig& config() const { return config_; }
  const AddressMapper& mapper() const { return device_.mapper(); }
  std::uint64_t capacity_bytes() const { return capacity_; }

 private:
  struct Entry {
    std::uint64_t index = 0;    // request index in its run
    std::uint64_t arrival = 0;  // cycle it entered the queue (unique in its channel: one admission a cycle)
    BurstTarget target;
    bool is_write = false;
  };
  /// One direction's channel queue: requests wait here until their bank's window has room.
  /// The entries themselves are kept per bank (BankQueue).
  struct Queued {
    std::uint64_t arrival = 0;
    std::uint32_t bank = 0;  // flat
  };
  struct Queue {
    RingQueue<Queued> arrivals;        // its queued requests (waiting or in a window), in arrival order
    std::uint32_t waiting = 0;         // of those, the ones holding a channel-queue slot
    RingQueue<std::uint64_t> leaving;  // cycles at which slots of requests moved to a window free, ascending
    std::uint32_t depth = 0;
  };
  /// What a decision of `ch` may serve: the write policy's choice of reads, writes or both.
  enum class Serve { Reads, Writes, Both };
  /// A bank's candidate as choose() weighs it: its place in the window (window.size(): none),
  /// its arrival, its row case, the bank's part of its column bound (DramDevice::bank_bound)
  /// and its slot in shared_bounds_ (its group's and direction's part).
  struct CandidateView {
    std::size_t slot = 0;
    std::uint64_t arrival = 0, bank_part = 0;
    std::uint32_t shared = 0;
    RowCase row_case = RowCase::Hit;
  };
  /// A bank's requests: the window the scheduler sees, and those queued behind it.
  struct BankQueue {
    RingQueue<Entry> window;   // at most bank_queue_depth (per direction under watermarks), arrival order
    RingQueue<Entry> waiting;  // in the channel queue, arrival order
    // candidate_view's last answer, valid while the window, the direction served and the
    // device's bank (DramDevice::bank_version) stay as they were: choose looks at a bank many
    // times between changes.
    mutable bool view_valid = false;
    mutable Serve view_serve = Serve::Both;
    mutable std::uint64_t view_version = 0;
    mutable CandidateView view;
  };
  struct Channel {
    Queue reads, writes;
    std::uint64_t clock = 0;  // no decision before this cycle (the last column command)
    bool draining = false;    // watermarks policy: serving the write queue
    bool last_write = false;  // direction of the last burst (write batches are counted)
    // Adaptive page: the row of the last column command closes unless a request queued by
    // that command's cycle hits it; settled at the next decision, when those have arrived.
    bool close_pending = false;
    BurstTarget close_target;
    std::uint64_t close_at = 0;
    // stream(): decisions not to look for a stream at, and the last such pause.
    std::uint32_t stream_skip = 0, stream_backoff = 0;
    // Each channel's controller takes one request a cycle (admit_floor).
    std::uint64_t next_admit = 0;
  };
  /// The request a decision serves: its bank, its place in the bank's queue, its commands.
  struct Choice {
    std::uint32_t bank = 0;
    std::size_t slot = 0;
    BurstSchedule schedule;
  };
  /// A bank's candidate in a decision, with a lower bound on its column command.
  struct Candidate {
    std::uint64_t bound = 0, arrival = 0;
    std::uint32_t bank = 0;
    std::size_t slot = 0;
  };
  /// choose()'s shared part of the column bound of one group and direction, computed at its
  /// decision `stamp` (the bound_stamp_ of the decision that first needed it).
  struct SharedBoundSlot {
    std::uint64_t stamp = 0;
    DramDevice::SharedBound bound{};
    std::array<std::uint64_t, 3> column_stamp{}, column{};
  };
  struct RankRefresh {
    std::uint64_t next_due = kNever;  // next tREFI (or tREFI / units) tick
    std::uint64_t catch_up = kNever;  // retry owed refreshes here (the rank went idle)
    std::uint64_t owed = 0;           // ticks not yet served by a REF
    std::uint32_t round_left = 0;     // per-bank: units not yet refreshed in the current round (bit mask)
    std::uint32_t queued = 0;         // requests queued for this rank
  };
  struct Pending {
    DramRequestSource::Status status = DramRequestSource::Status::Done;
    DramRequest request;
    BurstTarget target;
  };

  /// What a decision served: the request's index in its run and the end of its data.
  struct Served {
    std::uint64_t index = 0, data_end = 0;
  };
  /// A queued request of a stream while stream() serves it: the rest of its entry is the stream's.
  struct StreamItem {
    std::uint64_t index = 0, arrival = 0;
  };

  /// run() for a source of a known type: access_transfer's is called without a virtual call.
  template <class Source>
  std::uint64_t run_source(Source& source);
  template <class Source>
  void pull(Source& source, Pending& p);
  std::uint64_t admission_time(const Pending& p);
  /// The earliest cycle a request of `channel` may enter: not before the request issued before it
  /// (issue order), and one a cycle into each channel's controller (the channels' controllers
  /// take requests side by side: four x16 LPDDR5 channels at an 800 MHz CK need four a cycle).
  std::uint64_t admit_floor(std::uint32_t channel) const {
    return std::max(last_admit_, channels_[channel].next_admit);
  }
  void admit(const Pending& p, std::uint64_t at);
  /// admit()'s bookkeeping that does not depend on the queues: back-pressure, the first
  /// arrival, the clock, one admission a cycle into each channel (the stream path shares it).
  void count_admission(const Pending& p, std::uint64_t at);
  std::uint64_t next_decision(std::uint32_t& channel) const;
  /// The stream path: while every queued request is a row hit of one bank, of one direction, and
  /// the next to enter is one too, serves them as decide() and admit() would without the queues'
  /// bookkeeping (each decision takes the oldest). Called at a decision of `channel` at
  /// `t_decide`; returns false, having changed nothing, if the queues are not such a stream.
  template <class Source>
  bool stream(Source& source, Pending& p, std::uint32_t channel, std::uint64_t& t_decide);
  /// The bank of `channel`'s oldest request if it can start a stream: it is its bank's candidate,
  /// a row hit, and every request queued for the bank hits the same row in the same direction.
  bool stream_bank(std::uint32_t channel, std::uint32_t& bank) const;
  /// stream() once stream_bank found `bank`: true if it served a request. `Record`: the device
  /// has an activity record (two loops: its test in the loop cost ~18 instructions a burst
  /// without one, register pressure, measured on bench_dram's sequential pattern).
  template <bool Record, class Source>
  bool serve_stream(Source& source, Pending& p, std::uint32_t channel, std::uint32_t bank, std::uint64_t& t_decide);
  /// The stream path's closed form of a bus-bound run (DramDevice::hit_pace): while it holds,
  /// each hit is placed a pace after the last instead of planned, and the run's timing is
  /// applied once (settle) before anything else is planned or the stream ends.
  struct PacedRun {
    std::uint64_t pace = 0;   // 0: the closed form does not hold after `last`
    std::uint64_t count = 0;  // hits placed in closed form
    BurstSchedule last;       // the stream's latest hit
    bool unsettled = false;   // `last` is on the CA bus, its timing not yet applied
    bool first = false;       // a paced hit is the choice whatever else waits (FCFS, paced_hit_is_first)
  };
  /// A decision of the stream path at `t_decide` on its oldest request (arriving at `arrival`):
  /// if the scheduler takes it, commits it (in closed form when `run` allows) into run.last and
  /// returns true; else returns false having committed nothing.
  bool stream_hit(PacedRun& run, const BurstTarget& target, bool is_write, std::uint64_t arrival,
                  std::uint64_t t_decide);
  /// The stream path's requests of one other bank, row and direction (the stream's) that
  /// entered while nothing else of the channel was queued, held in sequel_ as (index, arrival)
  /// with the counts admit() keeps (the bank's window mark, the channel-queue slots of those behind
  /// a full window, the rank's queued requests): true if `p`, entering at `at`, is one (then
  /// `sequel` is its target). The stream's next bank, on a sequential walk.
  bool hold_sequel(const Pending& p, std::uint64_t at, Queue& q, BurstTarget& sequel, bool is_write,
                   std::uint64_t other);
  /// decide() at `at` on sequel_'s oldest request (target `t`) when the channel has no other;
  /// `schedule` gets its commands' plan.
  Served decide_sequel(Channel& ch, Queue& q, const BurstTarget& t, bool is_write, std::uint64_t at,
                       BurstSchedule& schedule);
  /// Writes sequel_ into its bank's window and waiting rings and into `q`, as admit() would
  /// have (before anything else enters, and when the stream ends).
  void land_sequel(Queue& q, const BurstTarget& sequel, bool is_write);
  /// True if every request left in the stream is served as a paced hit by the decisions from
  /// `t_decide` on (stream_hit's closed form) before a refresh tick, when nothing else enters
  /// `channel`: the stream's end served at once.
  bool drain(const PacedRun& run, std::uint64_t t_decide, std::uint32_t channel) const;
  /// Applies the timing of the run's last hit placed in closed form, if not done yet.
  void settle(PacedRun& run, const BurstTarget& target, bool is_write);
  /// One decision of the stream path and the admissions after it, relative to its column
  /// command: two in a row alike, with a request source of a known pattern, mean every later one
  /// is alike too, shifted by the pace, until a refresh, the row's or the source run's end (see
  /// batch_steps). How long the served request waited is not part of it: it changes nothing
  /// after, and apply_batch counts each request's own.
  struct StreamShape {
    std::uint64_t backpressure = 0, admitted = 0;
    std::uint64_t stream = 0, waiting = 0, live = 0;
    std::int64_t pending = 0, next_admit = 0, now = 0, decide = 0, back = 0, leaving = 0;
    /// Fills the relative fields from the state after the step's admissions (column command `col`).
    void settle(std::uint64_t col, const RingQueue<StreamItem>& stream, const Queue& q, const Pending& p,
                std::uint64_t next_admit_cycle, std::uint64_t now_cycle, std::uint64_t decide_cycle);
    bool operator==(const StreamShape& o) const;
  };
  /// Steps of the paced stream taken at once (batch_steps): `steps` decisions, each with one
  /// admission; the last `tail` admissions are requests of the row the source walks into after
  /// the stream's (`next`, another bank's), held as the stream's sequel (hold_sequel).
  struct Batch {
    std::uint64_t steps = 0, tail = 0;
    BurstTarget next;
    bool next_pending = false;  // the request left pending is of `next`'s row
  };
  /// How many more steps of the paced stream can be taken at once (none: steps 0): steps alike
  /// and within the source's run and the time before the next refresh tick, admitting requests
  /// of the stream's row and then, where the stream's hits stay the choice and the queue has
  /// room, of the next bank's row while the stream keeps a request (`joins`: the activity
  /// record joins the stream's bursts into one interval, or there is none), and at most `most`.
  template <class Source>
  Batch batch_steps(const Source& source, const Pending& p, std::uint64_t same_target, const PacedRun& run,
                    const BurstTarget& target, bool is_write, const StreamShape& shape, bool joins,
                    std::uint64_t most) const;
  /// The most steps a batch may take (kNever: any; 0: none) for the completions the source reads
  /// next: each a pace after the one before, from the one the pending request waited for
  /// (`paced_steps`: the completions up to the stream's oldest's predecessor `last_done` that are).
  template <class Source>
  std::uint64_t batch_limit(const Source& source, std::uint64_t last_done, std::uint64_t paced_steps,
                            std::uint64_t pace) const;
  /// Of the `most` bursts from `addr` on (burst-aligned, a burst apart), how many lead ones share
  /// `addr`'s bits under `same_target` (its channel, rank, bank and row): at least one.
  std::uint64_t same_target_run(std::uint64_t addr, std::uint64_t same_target, std::uint64_t most) const;
  /// Takes the batch's steps of shape `shape` at once: the CA bus's column commands, the
  /// counters, the stream's queue and its sequel's, the channel queue's slots, the clocks and
  /// the source, as its decisions and admissions would have left them.
  template <class Source>
  void apply_batch(Source& source, Pending& p, Queue& q, PacedRun& run, const BurstTarget& target, bool is_write,
                   const StreamShape& shape, const Batch& batch);
  /// apply_batch's stream and sequel: the batch's requests served, those it admits queued.
  void advance_stream(const Batch& batch, std::uint64_t pace);
  /// apply_batch's sequel mark and channel-queue slots for a batch with a tail (`first_col`:
  /// the column command before the batch's first).
  void apply_tail(Queue& q, const Batch& batch, std::uint64_t first_col, std::uint64_t pace);
  /// Moves `bank`'s queued requests into stream_ (and out of `q`, their channel queue).
  void lift_stream(Queue& q, std::uint32_t bank);
  /// Writes stream_ back into `bank`'s window and waiting rings and into `q` in arrival order.
  void land_stream(Queue& q, std::uint32_t bank, const BurstTarget& target, bool is_write);
  /// Targets the stream path knows with an address of each (all ones: none yet; no in-range
  /// address matches it): an address differing from one only in column bits (`same_target`
  /// masks the others) has its target.
  struct NearTargets {
    std::uint64_t same_target = 0;
    std::uint64_t stream_addr = 0;
    BurstTarget stream;  // the stream's
    std::uint64_t other_addr = 0;
    BurstTarget other;  // the last other one decoded
  };
  /// pull() for the stream, without decoding an address `near` knows the target of.
  template <class Source>
  void pull_near(Source& source, Pending& p, NearTargets& near);
  /// Throws InputError for a request beyond the capacity or beyond kMaxCycle.
  void check_request(const Pending& p) const;
  Served decide(std::uint32_t channel, std::uint64_t at);
  Serve direction(Channel& ch);
  /// The request of `channel` to serve at `at` (scheduler policy over the banks' windows).
  Choice choose(std::uint32_t channel, Serve serve, std::uint64_t at) const;
  /// choose()'s step 1: each bank's candidate of `channel` into candidates_ with a lower bound on
  /// its column command (0 under FCFS), `least` the least bound's (ties to the oldest); returns
  /// how many. Instantiated per scheduler and row-hit cap (`Capped`): their tests out of a loop
  /// that visits every bank with requests at every decision.
  template <bool Fcfs, bool Capped>
  std::size_t gather(std::uint32_t channel, Serve serve, std::uint64_t at, std::size_t& least) const;
  /// The same choice without shortcuts (set_plain_choice).
  Choice choose_plainly(std::uint32_t channel, Serve serve, std::uint64_t at) const;
  /// True if the channel's oldest request of the direction served is its bank's candidate (so the
  /// oldest candidate of all) at the front of its bank's window; sets `bank`. False if it is not,
  /// or may not be (then choose looks at every bank).
  bool oldest_is_candidate(std::uint32_t channel, Serve serve, std::uint32_t& bank) const;
  /// Removes the chosen entry from its bank's window and moves waiting requests in behind it;
  /// their channel-queue slots free at `col`, the chosen column command.
  Entry take(Channel& ch, const Choice& c, std::uint64_t col);
  /// The bank's candidate in `queue`'s window (of the direction served): FR-FCFS the oldest row
  /// hit, else the oldest; FCFS the oldest (slot window.size() if none), as choose() weighs it.
  const CandidateView& candidate_view(const BankQueue& queue, std::uint32_t bank, Serve serve) const;
  /// `e`'s slot in shared_bounds_: its group's and direction's.
  static std::uint32_t shared_slot(const Entry& e) { return 2 * e.target.group + (e.is_write ? 1 : 0); }
  /// The view of `window`'s request at `slot` (its bank's part of the bound as the device is now).
  CandidateView view_of(const RingQueue<Entry>& window, std::size_t slot) const;
  /// `view` with the row-hit cap applied (cap_row_hits at `at`): the bank's oldest
  /// request instead when the cap sends it.
  CandidateView capped_view(const BankQueue& queue, std::uint32_t bank, Serve serve, const CandidateView& view,
                            std::uint64_t at) const;
  /// The scan behind candidate_view, with `open_row` the bank's (DramDevice::kNoRow: closed).
  std::size_t scan_window(const RingQueue<Entry>& window, std::uint32_t open_row, Serve serve) const;
  /// DRAMsim3's row-hit cap on `bank`'s candidate `pick` (a row hit): once the open row has had
  /// row_hit_cap column commands, the bank's oldest request (a conflict) goes instead unless
  /// the hit's column command issues before that conflict's PRE could.
  std::size_t cap_row_hits(const RingQueue<Entry>& window, Serve serve, std::uint32_t bank, std::size_t pick,
                           std::uint64_t at) const;
  /// Notes whether flat bank `bank`'s window holds requests (choose visits only those).
  void mark_window(std::uint32_t bank, bool busy);
  /// True if `bank`'s window has room for a request of `e`'s direction.
  bool window_has_room(const BankQueue& bank, const Entry& e) const;
  /// Serves the refreshes still owed (postponed) once the run's requests are done.
  void repay_refreshes();
  /// True if a request queued by cycle `until` hits `t`'s bank and row.
  bool queued_hit(const BurstTarget& t, std::uint64_t until) const;
  /// True if any request queued by cycle `until` wants `t`'s bank.
  bool queued_for_bank(const BurstTarget& t, std::uint64_t until) const;
  void settle_adaptive_close(Channel& ch);
  void record(Channel& ch, const Entry& e, const BurstSchedule& s);
  /// The counters of one burst that are not plain counts (latency and queueing sums, the
  /// histogram): the stream path's per-burst share of record().
  void record_latency(bool is_write, std::uint64_t arrival, const BurstSchedule& s);
  /// `count` requests served alike: each `queueing` cycles to its column command, `latency` to its data end.
  void record_latencies(bool is_write, std::uint64_t queueing, std::uint64_t latency, std::uint64_t count);
  /// The counts of record() but the row case's for `n` bursts of one direction in a row, the
  /// last ending at `last_end` (the stream path adds a stream's once, when it ends).
  void record_counts(Channel& ch, bool is_write, std::uint64_t n, std::uint64_t last_end);
  void update_next_refresh();
  void refresh_tick(std::uint64_t horizon);
  void serve_refresh(std::uint32_t rank, std::uint64_t at, bool due_tick, std::uint64_t horizon);
  bool unit_idle(std::uint32_t rank, std::uint32_t unit) const;
  std::uint32_t full_round() const { return (1u << units_) - 1; }
  static std::uint32_t lowest_unit(std::uint32_t round_left);
  /// Takes `n` REFpbs of an idle rank off its round (lowest unit first, round after round).
  void skip_units(RankRefresh& r, std::uint64_t n);

  DramConfig config_;
  DramStats stats_;
  DramDevice device_;
  std::uint64_t capacity_ = 0;
  std::uint64_t burst_bytes_ = 0;
  std::uint32_t units_ = 1;             // refresh commands per tREFI
  std::uint64_t refresh_interval_ = 0;  // cycles between refresh ticks (0: no refresh)
  std::uint64_t max_owed_ = 0;          // ticks that may be postponed
  std::vector<Channel> channels_;
  std::vector<RankRefresh> ranks_;
  std::vector<BankQueue> bank_queues_;       // per flat bank
  std::vector<std::uint32_t> row_columns_;   // per flat bank: column commands to its row since the ACT
  std::vector<std::uint64_t> window_banks_;  // per channel, bit per bank: its window holds requests
  std::vector<std::int32_t> window_count_;   // per channel: banks whose window holds requests
  std::uint32_t banks_per_channel_ = 0;
  std::uint64_t next_refresh_ = kNever;  // earliest tick or catch-up over all ranks
  std::uint64_t now_ = 0;                // cycle of the last processed event
  std::uint64_t last_admit_ = 0;         // cycle of the latest admission: requests enter in issue order
  std::uint64_t run_index_ = 0;          // requests admitted in the current run
  std::uint64_t run_last_ = 0;           // last data end of the current run
  bool any_arrival_ = false;
  bool plain_choice_ = false;
  bool paced_hits_ = true;
  bool batched_ = true;
  std::uint64_t stream_bursts_ = 0, paced_bursts_ = 0, batched_bursts_ = 0;
  mutable std::vector<Candidate> candidates_;           // choose()'s scratch, one per bank of a channel
  mutable std::vector<SharedBoundSlot> shared_bounds_;  // per flat group: reads, writes
  mutable std::uint64_t bound_stamp_ = 0;               // choose()'s decisions that weighed bounds
  RingQueue<StreamItem> stream_;                        // stream()'s queue, kept to avoid an allocation per stream
  RingQueue<StreamItem> sequel_;                        // stream()'s requests held for another bank (hold_sequel)
  RingQueue<Queued> scratch_;                           // lift_stream's and land_stream's copy of a channel queue
  std::unique_ptr<DramActivity> activity_;              // optional record (record_activity)
};

}  // namespace npusim::models
