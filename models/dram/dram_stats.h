#pragma once
// Statistics of the DRAM engine: counters in DRAM cycles and bursts, a latency histogram for
// percentiles, and the IDD-based energy model. Plain C++; to_json reports base units and every
// name is defined in docs/dram.md.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/hardware_config.h"

namespace npusim::models {

/// Counts of latencies in cycles: exact below 1024, then 32 buckets per power of two (at most
/// 1/32 relative width), so percentiles need a few KiB whatever the number of samples.
class LatencyHistogram {
 public:
  LatencyHistogram();
  /// Inline: the DRAM engine adds one sample per read burst.
  void add(std::uint64_t cycles) {
    ++buckets_[bucket_of(cycles)];
    ++count_;
  }
  /// `n` samples of `cycles` (a batch of a stream's bursts of one latency).
  void add(std::uint64_t cycles, std::uint64_t n) {
    buckets_[bucket_of(cycles)] += n;
    count_ += n;
  }
  std::uint64_t count() const { return count_; }
  /// Nearest-rank percentile (`fraction` in (0, 1]): the smallest bucket holding at least
  /// fraction x count samples, reported as the bucket's midpoint. 0 when empty.
  std::uint64_t percentile(double fraction) const;

 private:
  static constexpr unsigned kLinearBits = 10;  // values below 2^10 get a bucket each
  static constexpr unsigned kSubBits = 5;      // then 2^5 buckets per power of two
  static constexpr std::size_t kLinear = std::size_t{1} << kLinearBits;
  static constexpr std::size_t kSub = std::size_t{1} << kSubBits;
  static constexpr std::size_t kBuckets = kLinear + (64 - kLinearBits) * kSub;
  static std::size_t bucket_of(std::uint64_t cycles) {
    if (cycles < kLinear) return static_cast<std::size_t>(cycles);
    const unsigned e = 63u - static_cast<unsigned>(__builtin_clzll(cycles));  // floor(log2)
    const std::size_t sub = (cycles >> (e - kSubBits)) & (kSub - 1);
    return kLinear + (e - kLinearBits) * kSub + sub;
  }
  static std::uint64_t midpoint_of(std::size_t bucket);
  std::vector<std::uint64_t> buckets_;
  std::uint64_t count_ = 0;
};

/// Counters of one DramEngine. Cycles are DRAM clock cycles; to_json converts to base units.
struct DramStats {
  std::uint64_t reads = 0;                  ///< read bursts
  std::uint64_t writes = 0;                 ///< write bursts
  std::uint64_t bytes_read = 0;             ///< bytes the data bus carried for reads (reads x burst bytes)
  std::uint64_t bytes_written = 0;          ///< bytes the data bus carried for writes
  std::uint64_t row_hits = 0;               ///< bursts whose row was already open
  std::uint64_t row_misses = 0;             ///< bursts to a closed (precharged) bank: ACT first
  std::uint64_t row_conflicts = 0;          ///< bursts to a bank with another row open: PRE, then ACT
  std::uint64_t activates = 0;              ///< ACT commands
  std::uint64_t precharges = 0;             ///< PRE, auto-precharges and PREA (a PREA counts once)
  std::uint64_t refreshes = 0;              ///< all-bank REF commands, summed over ranks
  std::uint64_t refreshes_per_bank = 0;     ///< per-bank REFpb commands
  std::uint64_t refreshes_postponed = 0;    ///< refresh ticks that found the rank (or bank) busy and waited
  std::uint64_t read_latency_sum = 0;       ///< sum over read bursts of (data end - arrival)
  std::uint64_t read_latency_count = 0;     ///< read bursts in that sum
  std::uint64_t read_latency_max = 0;       ///< largest (data end - arrival) of a read burst
  LatencyHistogram read_latency;            ///< the same latencies, for percentiles
  std::uint64_t write_latency_sum = 0;      ///< sum over write bursts of (data end - arrival)
  std::uint64_t data_bus_busy_cycles = 0;   ///< burst cycles summed over all channels
  std::uint64_t first_arrival_cycle = 0;    ///< earliest burst arrival (0 before any burst)
  std::uint64_t last_completion_cycle = 0;  ///< latest end of a burst's data transfer
  std::uint64_t read_queue_cycles = 0;      ///< sum over reads of cycles spent in the read queue
  std::uint64_t write_queue_cycles = 0;     ///< sum over writes of cycles spent in the write queue
  std::uint64_t read_queue_max = 0;         ///< most entries one read queue held
  std::uint64_t write_queue_max = 0;        ///< most entries one write queue held
  std::uint64_t backpressure_cycles = 0;    ///< sum over requests of cycles waiting for a queue slot
  std::uint64_t write_drains = 0;      ///< write batches: write bursts following a read burst (or first) on a channel
  std::uint64_t bank_open_cycles = 0;  ///< sum over banks of cycles with a row open

  std::uint64_t bursts() const { return reads + writes; }
  /// row_hits / bursts, 0 before any burst.
  double row_hit_rate() const;
  /// The stats in base units (bytes, ns, bytes/s, nJ) with the derived figures; names in docs/dram.md.
  nlohmann::json to_json(const DramConfig& config) const;
};

/// DRAM core energy of a run in pJ, split by cause (Micron TN-41-01 / DRAMsim3 formulas over
/// the config's IDD rails; all zero when the config has no rails).
struct DramEnergy {
  double activate = 0, read = 0, write = 0, refresh = 0, background = 0;
  double total() const { return activate + read + write + refresh + background; }
};
DramEnergy dram_energy(const DramStats& stats, const DramConfig& config);

}  // namespace npusim::models
