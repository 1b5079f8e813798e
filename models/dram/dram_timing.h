#pragma once
// The DRAM device's JEDEC timing state: which rows are open and the earliest cycle each command
// may issue, per bank, bank group, rank and channel. Plain C++, integer DRAM clock cycles (tCK),
// one plan/commit per burst and never a loop over cycles. The controller (DramEngine) decides
// which burst goes next; this class says when its commands can issue. See docs/dram.md.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "models/dram/address_mapping.h"
#include "models/dram/command_bus.h"
#include "models/dram/dram_activity.h"
#include "models/dram/dram_stats.h"
#include "sim/core/hardware_config.h"

namespace npusim::models {

enum class RowCase { Hit, Miss, Conflict };

/// Flat indices of the state one burst touches (rank, group and bank count across channels).
struct BurstTarget {
  std::uint32_t channel = 0, rank = 0, group = 0, bank = 0, row = 0;
};

/// The commands one burst needs and the cycles they issue at.
struct BurstSchedule {
  RowCase row_case = RowCase::Hit;
  std::uint64_t pre = 0, act = 0, col = 0, data_end = 0;
};

/// Per-bank, per-group, per-rank and per-channel timing of a set of DRAM channels. Commands
/// are committed in the controller's order: ACTs (tRRD, tFAW) and column commands (tCCD, the
/// data bus) follow that order, while an ACT may issue before column commands committed
/// earlier to other banks (the controller opens rows ahead while data streams).
class DramDevice {
 public:
  /// `config` must pass check_dram_config; counters go to `stats`.
  DramDevice(const DramConfig& config, DramStats& stats);

  /// Where the burst holding byte `addr` lives (the caller checks the capacity).
  BurstTarget locate(std::uint64_t addr) const;
  RowCase row_case(const BurstTarget& t) const {
    const Bank& b = banks_[t.bank];
    return !b.open ? RowCase::Miss : b.row == t.row ? RowCase::Hit : RowCase::Conflict;
  }
  /// The row open in flat bank `bank`, or kNoRow when it is closed.
  static constexpr std::uint32_t kNoRow = UINT32_MAX;
  std::uint32_t open_row(std::uint32_t bank) const { return banks_[bank].open ? banks_[bank].row : kNoRow; }
  /// Changes whenever flat bank `bank`'s state does (its row, or a cycle its commands wait for):
  /// a caller may keep what it derived from the bank while this stays the same.
  std::uint64_t bank_version(std::uint32_t bank) const { return banks_[bank].version; }
  bool is_hit(const BurstTarget& t) const {
    const Bank& b = banks_[t.bank];
    return b.open && b.row == t.row;
  }

  /// When the burst's commands can issue: row commands no earlier than `earliest`, the column
  /// command also no earlier than `column_floor` (the controller's decision cycle).
  BurstSchedule plan(const BurstTarget& t, bool is_write, std::uint64_t earliest, std::uint64_t column_floor) const;
  /// A lower bound on the column command of any burst of `channel` planned at `column_floor`:
  /// no plan() of a read (or write) there returns an earlier one.
  std::uint64_t earliest_column(std::uint32_t channel, bool is_write, std::uint64_t column_floor) const;
  /// The lesser of earliest_column for reads and for writes, in one pass over the ranks.
  std::uint64_t earliest_column_either(std::uint32_t channel, std::uint64_t column_floor) const;
  /// A lower bound on plan(t, ...).col without searching the CA bus (each command taken at the
  /// first cycle its timings allow): the definition bank_bound and shared_bound split, which
  /// DramTiming.SplitColumnBoundIsTheColumnBound checks them against.
  std::uint64_t column_bound(const BurstTarget& t, bool is_write, std::uint64_t earliest,
                             std::uint64_t column_floor) const;
  /// column_bound in two parts, max(bank_bound(t, earliest), shared_bound(t, ...)[row case]):
  /// every term of the bound is one state's cycle plus a constant (max-plus), so it splits into
  /// the terms of t's bank and arrival and the terms of its group, rank and channel. The shared
  /// part is the same for every burst of one group and direction with the same row case, so a
  /// scheduler weighing many banks computes it once per group and decision.
  using SharedBound = std::array<std::uint64_t, 3>;  // by RowCase: Hit, Miss, Conflict
  /// A lower bound on plan(t, ...).col of any burst of t's group and direction with row case
  /// `rc`: plan() with the bank's terms and the arrival at 0, the CA bus searched (plan grows
  /// with each of its terms).
  std::uint64_t shared_column(const BurstTarget& t, bool is_write, RowCase rc, std::uint64_t column_floor) const {
    const CommandBus& ca = ca_[t.channel];
    return plan_bank(t, Bank{}, rc, is_write, 0, column_floor,
                     [&](std::uint64_t at, std::uint32_t length) { return ca.first_free(at, length); })
        .col;
  }
  SharedBound shared_bound(const BurstTarget& t, bool is_write, std::uint64_t column_floor) const;
  /// The bank's and arrival's part of column_bound (see shared_bound); the direction adds no bank term.
  std::uint64_t bank_bound(const BurstTarget& t, std::uint64_t earliest) const;
  /// Applies a plan: issues its PRE/ACT and column command and updates every constraint.
  void commit(const BurstTarget& t, bool is_write, const BurstSchedule& s);
  /// plan() and commit() of a burst known to hit the open row (a stream's): the same plan and
  /// the same state, without looking at the row. commit_hit leaves the burst to the caller to
  /// record (the stream path hands its bursts to DramActivity::bursts joined).
  BurstSchedule plan_hit(const BurstTarget& t, bool is_write, std::uint64_t earliest, std::uint64_t column_floor) const;
  void commit_hit(const BurstTarget& t, bool is_write, const BurstSchedule& s);
  /// commit_hit in two parts, for a run of hits of one bank and direction: issue_hit puts each
  /// column command on the CA bus, settle_hit then applies the run's last one's timing (every
  /// constraint a hit sets is its last one's: tCCD and the data bus are set, the turnarounds and
  /// the bank's precharge only grow with the column command). Nothing may be planned between.
  void issue_hit(const BurstTarget& t, const BurstSchedule& s) { ca_[t.channel].reserve(s.col, lengths_.column); }
  /// issue_hit for `count` hits, the first's column command at `col` and each `pace` after.
  void issue_hits(const BurstTarget& t, std::uint64_t col, std::uint64_t pace, std::uint64_t count) {
    ca_[t.channel].reserve_every(col, pace, count, lengths_.column);
  }
  void settle_hit(const BurstTarget& t, bool is_write, const BurstSchedule& s) { commit_column_timing(t, is_write, s); }
  /// The closed form of a bus-bound stream: after a hit committed at `s`, the next hit of the
  /// same bank and direction, planned with its arrival and the decision at most `pace` later,
  /// issues exactly `pace` = max(tCCD_S, tCCD_L, burst) later, and so on while only such hits
  /// commit; 0 if that does not hold here (see hit_pace's definition).
  std::uint64_t hit_pace(const BurstTarget& t, const BurstSchedule& s) const;
  /// True if, in such a run, each hit's column command is also the earliest any request of the
  /// channel could have (earliest_column_either), so FR-FCFS's step 0 takes it whatever else waits.
  bool paced_hit_is_first(bool is_write) const { return paced_first_[is_write]; }
  /// Closes the burst's bank right after its column command (RDA/WRA: as soon as tRAS, tRTP
  /// or tWR allow).
  void auto_precharge(const BurstTarget& t);

  /// `count` all-bank refreshes of `rank` (flat index), the first no earlier than `at` (after a
  /// PREA if a row is open), the rest on time every `interval` cycles. Returns the last REF cycle.
  std::uint64_t refresh_all_bank(std::uint32_t rank, std::uint64_t at, std::uint64_t count, std::uint64_t interval);
  /// A per-bank refresh of refresh unit `unit` of `rank` no earlier than `at`. Returns its cycle.
  std::uint64_t refresh_per_bank(std::uint32_t rank, std::uint32_t unit, std::uint64_t at);
  /// First flat bank index of refresh unit `unit` of `rank`; the unit's banks are every
  /// refresh_units()-th bank from there.
  std::uint32_t unit_bank(std::uint32_t rank, std::uint32_t unit) const { return rank * banks_per_rank_ + unit; }

  /// Cycles rows have been open, counting rows still open up to `until`.
  std::uint64_t open_cycles(std::uint64_t until) const;

  /// Reports every ACT, PRE, burst and refresh to `activity` from now on (nullptr: stop).
  void set_activity(DramActivity* activity) { activity_ = activity; }
  DramActivity* activity() const { return activity_; }

  std::uint64_t burst_cycles() const { return burst_cycles_; }
  /// hit_pace's period when the closed form holds: max(tCCD_S, tCCD_L, burst).
  std::uint64_t stream_pace() const { return pace_; }
  std::uint32_t banks_per_rank() const { return banks_per_rank_; }
  const AddressMapper& mapper() const { return mapper_; }

 private:
  /// Earliest-allowed cycles ("ready") rather than last-event cycles, so no sentinel is needed.
  struct Bank {
    bool open = false;
    std::uint32_t row = 0;
    std::uint64_t opened = 0;     // ACT cycle of the open row
    std::uint64_t act_ready = 0;  // tRP after PRE, tRC after ACT, tRFC after REF
    std::uint64_t col_ready = 0;  // tRCD after ACT
    std::uint64_t pre_ready = 0;  // tRAS after ACT, tRTP after RD, tWR after write data
    std::uint64_t version = 1;    // bank_version: counts the changes
  };
  struct Group {                   // one bank group of one rank: the "_L" (same group) constraints
    std::uint64_t act_ready = 0;   // tRRD_L
    std::uint64_t col_ready = 0;   // tCCD_L
    std::uint64_t read_ready = 0;  // tWTR_L after write data
  };
  struct Rank {
    std::uint64_t act_ready = 0;         // tRRD_S (also after a REFpb)
    std::array<std::uint64_t, 4> faw{};  // ACT + tFAW of the last four ACTs, a ring
    std::size_t faw_oldest = 0;          // ring slot of the oldest of the four
    std::uint64_t pre_ready = 0;         // tPPD
    std::uint64_t col_ready = 0;         // tCCD_S
    std::uint64_t read_ready = 0;        // tWTR_S after write data
    std::uint64_t write_ready = 0;       // tRTW after a read command
    std::uint64_t refpb_ready = 0;       // tPBR2PBR after a REFpb
  };

  /// plan() with `place(at, length)` giving the cycle a command of `length` cycles takes at or
  /// after `at` (the CA bus search, or `at` itself for column_bound).
  template <typename Place>
  BurstSchedule plan_with(const BurstTarget& t, bool is_write, std::uint64_t earliest, std::uint64_t column_floor,
                          Place place) const {
    return plan_bank(t, banks_[t.bank], row_case(t), is_write, earliest, column_floor, place);
  }
  /// plan_with for bank state `b` and row case `rc` in place of t's bank's.
  template <typename Place>
  BurstSchedule plan_bank(const BurstTarget& t, const Bank& b, RowCase rc, bool is_write, std::uint64_t earliest,
                          std::uint64_t column_floor, Place place) const;
  /// Step 2 of plan_with: the column command no earlier than `earliest`, `column_floor`, the
  /// bank's `col_ready` and the rank's, group's, turnaround's and data bus's terms; its data end.
  template <typename Place>
  void place_column(const BurstTarget& t, bool is_write, std::uint64_t earliest, std::uint64_t column_floor,
                    std::uint64_t col_ready, BurstSchedule& s, Place place) const;
  /// commit()'s part after the commands are on the CA bus: the column command's constraints.
  void commit_column(const BurstTarget& t, bool is_write, const BurstSchedule& s);
  void commit_column_timing(const BurstTarget& t, bool is_write, const BurstSchedule& s);
  void precharge(Bank& bank, std::uint64_t at);
  void activate(const BurstTarget& t, std::uint64_t at);

  DramConfig config_;
  DramStats& stats_;
  AddressMapper mapper_;
  std::uint64_t burst_cycles_ = 0;
  std::uint64_t read_latency_ = 0;   // CL + tDQSCK: read command to first data
  std::uint64_t write_latency_ = 0;  // CWL (+ tDQSS on LPDDR4): write command to first data
  std::uint32_t banks_per_rank_ = 0;
  std::uint32_t refresh_units_ = 1;
  std::vector<Bank> banks_;
  std::vector<Group> groups_;
  std::vector<Rank> ranks_;
  std::vector<std::uint64_t> bus_free_;  // per channel: end of the last burst on the data bus
  std::vector<CommandBus> ca_;           // per channel: the command/address bus
  CommandLengths lengths_;
  std::uint64_t pace_ = 0;             // max(tCCD_S, tCCD_L, burst): hit_pace's period
  std::array<bool, 2> paced_first_{};  // paced_hit_is_first, for reads and writes
  DramActivity* activity_ = nullptr;   // optional recorder (see set_activity)
};

// The per-burst path, defined here so the engine's loop inlines it: the libraries are built with
// -fPIC and without link-time optimisation, where no call into another file is inlined
// (docs/performance.md).

inline BurstTarget DramDevice::locate(std::uint64_t addr) const {
  const DramAddress a = mapper_.decode(addr);
  BurstTarget t;
  t.channel = a.channel;
  t.rank = a.channel * config_.ranks + a.rank;
  t.group = t.rank * config_.bank_groups + a.bank_group;
  t.bank = t.group * config_.banks_per_group + a.bank;
  t.row = a.row;
  return t;
}

inline BurstSchedule DramDevice::plan(const BurstTarget& t, bool is_write, std::uint64_t earliest,
                                      std::uint64_t column_floor) const {
  // Each command also needs the CA bus free for its length.
  const CommandBus& ca = ca_[t.channel];
  return plan_with(t, is_write, earliest, column_floor,
                   [&](std::uint64_t at, std::uint32_t length) { return ca.first_free(at, length); });
}

template <typename Place>
inline BurstSchedule DramDevice::plan_bank(const BurstTarget& t, const Bank& b, RowCase rc, bool is_write,
                                           std::uint64_t earliest, std::uint64_t column_floor, Place place) const {
  const DramTiming& tm = config_.timing;
  const Group& g = groups_[t.group];
  const Rank& r = ranks_[t.rank];
  BurstSchedule s;
  s.row_case = rc;

  // 1. Row: a hit needs nothing; otherwise PRE (if another row is open), then ACT.
  std::uint64_t col_ready = b.col_ready;
  if (s.row_case != RowCase::Hit) {
    std::uint64_t act_ready = b.act_ready;
    if (s.row_case == RowCase::Conflict) {
      s.pre = place(std::max({earliest, b.pre_ready, r.pre_ready}), lengths_.pre);
      act_ready = std::max(act_ready, s.pre + tm.tRP);
    }
    s.act = place(std::max({earliest, act_ready, r.act_ready, g.act_ready, r.faw[r.faw_oldest]}), lengths_.act);
    col_ready = s.act + tm.tRCD;
  }

  // 2. Column command: bank ready, tCCD, read/write turnaround, and a free data bus when the
  //    data arrives (the bus carries bursts one at a time, in commit order).
  place_column(t, is_write, earliest, column_floor, col_ready, s, place);
  return s;
}

template <typename Place>
inline void DramDevice::place_column(const BurstTarget& t, bool is_write, std::uint64_t earliest,
                                     std::uint64_t column_floor, std::uint64_t col_ready, BurstSchedule& s,
                                     Place place) const {
  const Group& g = groups_[t.group];
  const Rank& r = ranks_[t.rank];
  const std::uint64_t latency = is_write ? write_latency_ : read_latency_;
  const std::uint64_t turnaround = is_write ? r.write_ready : std::max(r.read_ready, g.read_ready);
  const std::uint64_t bus = bus_free_[t.channel];
  s.col = place(std::max({earliest, column_floor, col_ready, r.col_ready, g.col_ready, turnaround,
                          bus > latency ? bus - latency : 0}),
                lengths_.column);
  s.data_end = s.col + latency + burst_cycles_;
}

inline BurstSchedule DramDevice::plan_hit(const BurstTarget& t, bool is_write, std::uint64_t earliest,
                                          std::uint64_t column_floor) const {
  const CommandBus& ca = ca_[t.channel];
  BurstSchedule s;
  place_column(t, is_write, earliest, column_floor, banks_[t.bank].col_ready, s,
               [&](std::uint64_t at, std::uint32_t length) { return ca.first_free(at, length); });
  return s;
}

inline std::uint64_t DramDevice::earliest_column(std::uint32_t channel, bool is_write,
                                                 std::uint64_t column_floor) const {
  // The terms of plan()'s column time that do not depend on the bank: the data bus, and per
  // rank tCCD_S and the turnaround (the least over the channel's ranks).
  const std::uint64_t latency = is_write ? write_latency_ : read_latency_;
  const std::uint64_t bus = bus_free_[channel];
  std::uint64_t rank_ready = std::numeric_limits<std::uint64_t>::max();
  for (std::uint32_t i = channel * config_.ranks; i < (channel + 1) * config_.ranks; ++i) {
    const Rank& r = ranks_[i];
    rank_ready = std::min(rank_ready, std::max(r.col_ready, is_write ? r.write_ready : r.read_ready));
  }
  return std::max({column_floor, rank_ready, bus > latency ? bus - latency : 0});
}

inline std::uint64_t DramDevice::earliest_column_either(std::uint32_t channel, std::uint64_t column_floor) const {
  const std::uint64_t bus = bus_free_[channel];
  std::uint64_t read_ready = std::numeric_limits<std::uint64_t>::max(), write_ready = read_ready;
  for (std::uint32_t i = channel * config_.ranks; i < (channel + 1) * config_.ranks; ++i) {
    const Rank& r = ranks_[i];
    read_ready = std::min(read_ready, std::max(r.col_ready, r.read_ready));
    write_ready = std::min(write_ready, std::max(r.col_ready, r.write_ready));
  }
  const auto floor_of = [&](std::uint64_t rank_ready, std::uint64_t latency) {
    return std::max({column_floor, rank_ready, bus > latency ? bus - latency : 0});
  };
  return std::min(floor_of(read_ready, read_latency_), floor_of(write_ready, write_latency_));
}

inline std::uint64_t DramDevice::column_bound(const BurstTarget& t, bool is_write, std::uint64_t earliest,
                                              std::uint64_t column_floor) const {
  // first_free(at, length) >= at and every later term grows with the earlier ones, so taking
  // each command at its `at` gives a lower bound on plan()'s column command.
  return plan_with(t, is_write, earliest, column_floor, [](std::uint64_t at, std::uint32_t) { return at; }).col;
}

inline DramDevice::SharedBound DramDevice::shared_bound(const BurstTarget& t, bool is_write,
                                                        std::uint64_t column_floor) const {
  // plan_with's terms that are not the bank's: column (tCCD, turnaround, data bus), ACT (tRRD,
  // tFAW) + tRCD for a row to open, PRE (tPPD) + tRP + tRCD for a row to close first.
  const DramTiming& tm = config_.timing;
  const Group& g = groups_[t.group];
  const Rank& r = ranks_[t.rank];
  const std::uint64_t latency = is_write ? write_latency_ : read_latency_;
  const std::uint64_t turnaround = is_write ? r.write_ready : std::max(r.read_ready, g.read_ready);
  const std::uint64_t bus = bus_free_[t.channel];
  SharedBound b;
  b[0] = std::max({column_floor, r.col_ready, g.col_ready, turnaround, bus > latency ? bus - latency : 0});
  b[1] = std::max({b[0], r.act_ready + tm.tRCD, g.act_ready + tm.tRCD, r.faw[r.faw_oldest] + tm.tRCD});
  b[2] = std::max(b[1], r.pre_ready + tm.tRP + tm.tRCD);
  return b;
}

inline std::uint64_t DramDevice::bank_bound(const BurstTarget& t, std::uint64_t earliest) const {
  const DramTiming& tm = config_.timing;
  const Bank& b = banks_[t.bank];
  if (!b.open) return std::max(earliest, b.act_ready) + tm.tRCD;
  if (b.row == t.row) return std::max(earliest, b.col_ready);
  return std::max({earliest + tm.tRP, b.pre_ready + tm.tRP, b.act_ready}) + tm.tRCD;
}

inline void DramDevice::precharge(Bank& bank, std::uint64_t at) {
  if (at > bank.opened) stats_.bank_open_cycles += at - bank.opened;
  if (activity_) activity_->close_row(static_cast<std::uint32_t>(&bank - banks_.data()), at);
  bank.open = false;
  bank.act_ready = std::max(bank.act_ready, at + config_.timing.tRP);
  ++bank.version;
}

inline void DramDevice::activate(const BurstTarget& t, std::uint64_t at) {
  const DramTiming& tm = config_.timing;
  Bank& b = banks_[t.bank];
  Group& g = groups_[t.group];
  Rank& r = ranks_[t.rank];
  b.open = true;
  b.row = t.row;
  b.opened = at;
  b.act_ready = at + tm.tRC;
  b.col_ready = at + tm.tRCD;
  b.pre_ready = at + tm.tRAS;
  ++b.version;
  r.act_ready = at + tm.tRRD_S;
  g.act_ready = at + tm.tRRD_L;
  r.faw[r.faw_oldest] = at + tm.tFAW;
  r.faw_oldest = (r.faw_oldest + 1) % r.faw.size();
  ++stats_.activates;
  if (activity_) activity_->open_row(t.bank, t.row, at);
}

inline void DramDevice::commit(const BurstTarget& t, bool is_write, const BurstSchedule& s) {
  const DramTiming& tm = config_.timing;
  Bank& b = banks_[t.bank];
  Rank& r = ranks_[t.rank];
  CommandBus& ca = ca_[t.channel];
  if (s.row_case == RowCase::Conflict) {
    precharge(b, s.pre);
    r.pre_ready = std::max(r.pre_ready, s.pre + tm.tPPD);
    ca.reserve(s.pre, lengths_.pre);
    ++stats_.precharges;
  }
  if (s.row_case != RowCase::Hit) {
    activate(t, s.act);
    ca.reserve(s.act, lengths_.act);
  }
  ca.reserve(s.col, lengths_.column);
  // LPDDR5's ACT-2: the next free cycle after ACT-1 (the column command keeps its place).
  if (s.row_case != RowCase::Hit && lengths_.split_act) ca.reserve(ca.first_free(s.act + 1, 1), 1);
  commit_column(t, is_write, s);
}

inline std::uint64_t DramDevice::hit_pace(const BurstTarget& t, const BurstSchedule& s) const {
  // After the hit at col c, the next hit's plan is first_free(max(arrival, decision, the bank's
  // col_ready, c + tCCD_S, c + tCCD_L, the turnaround, c + burst (the data bus less the latency
  // of the same direction))). The bank's col_ready (set by its ACT) and the turnaround (set by
  // the other direction) do not change over the run and c is already past them; with the
  // arrival and the decision at most c + pace, that is first_free(c + pace). The CA bus holds
  // nothing from c + column length on (only the run commits, one column command each pace)
  // when it holds nothing past c + pace now. One rank: the others' terms are not tracked.
  const bool one_rank = config_.ranks == 1;
  return one_rank && lengths_.column <= pace_ && ca_[t.channel].end() <= s.col + pace_ ? pace_ : 0;
}

inline void DramDevice::commit_hit(const BurstTarget& t, bool is_write, const BurstSchedule& s) {
  ca_[t.channel].reserve(s.col, lengths_.column);
  commit_column_timing(t, is_write, s);
}

inline void DramDevice::commit_column(const BurstTarget& t, bool is_write, const BurstSchedule& s) {
  commit_column_timing(t, is_write, s);
  if (activity_) activity_->burst(t.channel, t.bank, is_write, s.data_end - burst_cycles_, s.data_end);
}

inline void DramDevice::commit_column_timing(const BurstTarget& t, bool is_write, const BurstSchedule& s) {
  const DramTiming& tm = config_.timing;
  Bank& b = banks_[t.bank];
  Group& g = groups_[t.group];
  Rank& r = ranks_[t.rank];
  r.col_ready = s.col + tm.tCCD_S;
  g.col_ready = s.col + tm.tCCD_L;
  if (is_write) {
    // tWTR and tWR count from the end of the write data.
    r.read_ready = std::max(r.read_ready, s.data_end + tm.tWTR_S);
    g.read_ready = std::max(g.read_ready, s.data_end + tm.tWTR_L);
    b.pre_ready = std::max(b.pre_ready, s.data_end + tm.tWR);
  } else {
    r.write_ready = std::max(r.write_ready, s.col + tm.tRTW);
    b.pre_ready = std::max(b.pre_ready, s.col + tm.tRTP);
  }
  ++b.version;
  bus_free_[t.channel] = s.data_end;
}

}  // namespace npusim::models
