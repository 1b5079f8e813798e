// The SRAM banks' bandwidth over time, shared by every unit that reads or writes them.
#pragma once

#include <cstdint>
#include <map>

namespace npusim::models {

/// A step function of the fraction of the banks' bandwidth already promised, over simulated
/// time (in SystemC time-resolution units). An access asks for the whole banks' bandwidth for
/// `bank_time`, spread evenly over `spread` (a MAC array tile reads its operands
/// over its compute time, a DMA transfer writes as DRAM delivers), and gets what is left at each
/// moment, up to its own rate: alone it ends after max(bank_time, spread); beside
/// others it takes longer, and the units together never move more than the banks' bandwidth.
class BankTimeline {
 public:
  /// Promises the access starting at `at` its share of `bank_time` (the time it would hold the
  /// whole banks) spread over `spread` and returns when it has been served (>= at). `now`
  /// (<= at) is the current simulated time: everything before it is forgotten.
  std::uint64_t reserve(std::uint64_t now, std::uint64_t at, std::uint64_t bank_time, std::uint64_t spread);

  /// Number of steps kept (for tests: bounded by the accesses in flight).
  std::size_t steps() const { return used_.size(); }

 private:
  /// Ensures a step starts at `t` (with the value in force there) and returns it.
  std::map<std::uint64_t, double>::iterator split(std::uint64_t t);
  void forget_before(std::uint64_t now);

  std::map<std::uint64_t, double> used_;  // used_[t]: fraction promised from t to the next key
};

}  // namespace npusim::models
