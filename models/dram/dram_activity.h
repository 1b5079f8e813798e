#pragma once
// What the DRAM did, recorded by DramDevice as it commits commands (optional: off unless
// DramEngine::record_activity is called, so `npusim dram` and the benchmarks keep their speed).
// Per bank the intervals a row is open (ACT .. PRE), per channel the data-bus intervals
// (back-to-back bursts of one direction coalesced into one interval, so a streaming transfer is
// one entry, not thousands), per rank the refreshes. Cycles are DRAM clock cycles. Memory grows
// with ACTs, bus idle gaps and refreshes, not with bursts. Plain C++. See docs/dram.md.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "sim/core/packed_list.h"

namespace npusim::models {

/// A row open in one bank: ACT at `act`, PRE at `pre` (kOpen while the row is still open).
struct DramRowInterval {
  std::uint32_t row = 0;
  std::uint64_t act = 0, pre = 0;
  std::uint64_t bursts = 0;  ///< column commands served while it was open (the first opened it)
};

/// Data on one channel's bus without a gap: [begin, end) cycles, all reads or all writes.
struct DramBusInterval {
  bool write = false;
  std::uint64_t begin = 0, end = 0;
  std::uint64_t bursts = 0;
};

/// One REF (all banks of the rank, unit == kAllBanks) or REFpb (the banks of refresh unit
/// `unit`): the banks are busy over [begin, end) = [REF, REF + tRFC or tRFCpb).
struct DramRefreshInterval {
  std::uint32_t unit = 0;
  std::uint64_t begin = 0, end = 0;
};

}  // namespace npusim::models

namespace npusim {
template <>
struct PackedFields<models::DramRowInterval> {
  static constexpr std::size_t kCount = 4;
  static void split(const models::DramRowInterval& r, std::uint64_t* f) {
    f[0] = r.row, f[1] = r.act, f[2] = r.pre - r.act, f[3] = r.bursts;
  }
  static models::DramRowInterval join(const std::uint64_t* f) {
    return {static_cast<std::uint32_t>(f[0]), f[1], f[1] + f[2], f[3]};
  }
};
template <>
struct PackedFields<models::DramBusInterval> {
  static constexpr std::size_t kCount = 4;
  static void split(const models::DramBusInterval& b, std::uint64_t* f) {
    f[0] = b.write, f[1] = b.begin, f[2] = b.end - b.begin, f[3] = b.bursts;
  }
  static models::DramBusInterval join(const std::uint64_t* f) { return {f[0] != 0, f[1], f[1] + f[2], f[3]}; }
};
}  // namespace npusim

namespace npusim::models {

/// The record, packed (a long run has millions of intervals: a few bytes each).
using DramRowList = PackedList<DramRowInterval>;
using DramBusList = PackedList<DramBusInterval>;

class DramActivity {
 public:
  static constexpr std::uint64_t kOpen = std::numeric_limits<std::uint64_t>::max();
  static constexpr std::uint32_t kAllBanks = std::numeric_limits<std::uint32_t>::max();

  /// Flat counts as DramDevice numbers them; `banks` false records channels and refreshes only.
  /// A burst of the last bus interval's direction starting less than `join_gap` cycles after
  /// its end extends it (0: only right at its end, an exact record as the VCD replay needs; the
  /// trace joins gaps under one burst, as its bus slices do: docs/trace-format.md).
  DramActivity(std::uint32_t channels, std::uint32_t ranks, std::uint32_t banks_per_rank, std::uint32_t units,
               bool banks, std::uint64_t join_gap = 0);

  // Called by DramDevice in commit order (per bank and per channel, times never go back).
  void open_row(std::uint32_t bank, std::uint32_t row, std::uint64_t act);
  void close_row(std::uint32_t bank, std::uint64_t pre);
  void burst(std::uint32_t channel, std::uint32_t bank, bool write, std::uint64_t begin, std::uint64_t end) {
    bursts(channel, bank, write, begin, end, 1);
  }
  /// `count` bursts of one direction from `begin` (the first one's start) to `end` (the last
  /// one's end), each after the first starting at or after the previous one's end and within
  /// the join gap of it: what `count` calls of burst() record (the engine's stream path joins
  /// its bursts so, nothing else being recorded on the channel while it runs).
  void bursts(std::uint32_t channel, std::uint32_t bank, bool write, std::uint64_t begin, std::uint64_t end,
              std::uint64_t count);
  /// Whether a burst starting at `begin` joins one that ended at `last_end` (same direction).
  bool joins(std::uint64_t last_end, std::uint64_t begin) const { return within_gap(last_end, begin, join_gap_); }
  void refresh(std::uint32_t rank, std::uint32_t unit, std::uint64_t begin, std::uint64_t end);

  /// Whether a burst of direction `write` starting at `begin` extends bus interval `last`: same
  /// direction, starting less than max(join_gap, 1) cycles after its end.
  static bool extends(const DramBusInterval& last, bool write, std::uint64_t begin, std::uint64_t join_gap) {
    return last.write == write && within_gap(last.end, begin, join_gap);
  }
  static bool within_gap(std::uint64_t last_end, std::uint64_t begin, std::uint64_t join_gap) {
    return begin >= last_end && begin - last_end < std::max<std::uint64_t>(join_gap, 1);
  }

  bool records_banks() const { return banks_enabled_; }
  /// Bursts less than this many cycles apart share a bus interval (at least 1).
  std::uint64_t join_gap() const { return std::max<std::uint64_t>(join_gap_, 1); }
  std::uint32_t channels() const { return static_cast<std::uint32_t>(bus_.size()); }
  std::uint32_t ranks() const { return static_cast<std::uint32_t>(refreshes_.size()); }
  std::uint32_t banks_per_rank() const { return banks_per_rank_; }
  std::uint32_t ranks_per_channel() const { return ranks() / channels(); }
  /// True if refresh `r` of a rank covers bank `bank_in_rank` (0 .. banks_per_rank - 1).
  bool covers(const DramRefreshInterval& r, std::uint32_t bank_in_rank) const {
    return r.unit == kAllBanks || bank_in_rank % units_ == r.unit;
  }

  /// In time order. The last interval of a list may still grow (a row still open, or a bus
  /// interval the next burst extends).
  const DramBusList& bus(std::uint32_t channel) const { return bus_[channel]; }
  const DramRowList& rows(std::uint32_t bank) const { return rows_[bank]; }
  const std::vector<DramRefreshInterval>& refreshes(std::uint32_t rank) const { return refreshes_[rank]; }

  /// Frees one list's memory once a reader has copied it (the trace's conversion: a long run's
  /// record is hundreds of MB, and holding it beside its converted copy doubles the peak).
  void release_bus(std::uint32_t channel) { bus_[channel].release(); }
  void release_rows(std::uint32_t bank) { rows_[bank].release(); }

 private:
  std::uint32_t banks_per_rank_ = 0, units_ = 1;
  std::uint64_t join_gap_ = 0;
  bool banks_enabled_ = false;
  std::vector<DramBusList> bus_;                             // per channel
  std::vector<DramRowList> rows_;                            // per flat bank (empty lists if !banks)
  std::vector<std::vector<DramRefreshInterval>> refreshes_;  // per flat rank
};

}  // namespace npusim::models
