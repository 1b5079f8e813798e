#pragma once
// The DRAM timing engine: JEDEC command timing worked out per burst with integer arithmetic on
// DRAM clock cycles (tCK). Plain C++, no SystemC: the TLM controller wraps it, and a later
// FR-FCFS scheduler can drive the same per-burst plan/commit steps. See docs/dram.md.
#include <array>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/dram/address_mapping.h"
#include "sim/core/hardware_config.h"

namespace npusim::models {

/// Counters of one DramTimingModel. Cycles are DRAM clock cycles; to_json converts to base units.
struct DramStats {
  std::uint64_t reads = 0;          ///< read bursts
  std::uint64_t writes = 0;         ///< write bursts
  std::uint64_t bytes_read = 0;     ///< bytes the data bus carried for reads (reads x burst bytes)
  std::uint64_t bytes_written = 0;  ///< bytes the data bus carried for writes
  std::uint64_t row_hits = 0;       ///< bursts whose row was already open
  std::uint64_t row_misses = 0;     ///< bursts to a closed (precharged) bank: ACT first
  std::uint64_t row_conflicts = 0;  ///< bursts to a bank with another row open: PRE, then ACT
  std::uint64_t activates = 0;      ///< ACT commands
  std::uint64_t precharges = 0;     ///< PRE, auto-precharges and PREA (a PREA counts once)
  std::uint64_t refreshes = 0;      ///< all-bank REF commands, summed over ranks
  std::uint64_t read_latency_sum = 0;    ///< sum over read bursts of (data end - arrival)
  std::uint64_t read_latency_count = 0;  ///< read bursts in that sum
  std::uint64_t read_latency_max = 0;    ///< largest (data end - arrival) of a read burst
  std::uint64_t data_bus_busy_cycles = 0;   ///< burst cycles summed over all channels
  std::uint64_t first_arrival_cycle = 0;    ///< earliest burst arrival (0 before any burst)
  std::uint64_t last_completion_cycle = 0;  ///< latest end of a burst's data transfer

  std::uint64_t bursts() const { return reads + writes; }
  /// row_hits / bursts, 0 before any burst.
  double row_hit_rate() const;
  /// The stats in base units (bytes, ns, bytes/s) with the derived figures; names in docs/dram.md.
  nlohmann::json to_json(const DramConfig& config) const;
};

/// Per-bank, per-rank and per-channel JEDEC timing state of a DRAM device set, advanced one burst
/// at a time in call order. Commands to different banks overlap (an ACT to one bank may issue
/// while another streams data); column commands and the data bus follow call order (FCFS).
class DramTimingModel {
 public:
  /// Throws InputError for a bad mapping or organisation (see AddressMapper), a non-positive
  /// clock, a burst shorter than one clock, or tRFC >= tREFI (which would never let work through).
  explicit DramTimingModel(const DramConfig& config);

  /// Schedules one burst (the one holding byte `addr`) that reaches the controller at
  /// `arrival_cycle`; returns the cycle its data transfer ends. Throws InputError if `addr` is
  /// beyond the device's capacity.
  std::uint64_t access(std::uint64_t addr, bool is_write, std::uint64_t arrival_cycle);

  /// A strided transfer: `runs` runs of `run_bytes` bytes, run r starting at addr + r * stride,
  /// each split into the bursts it touches. Burst i arrives no earlier than `arrival_cycle` and no
  /// earlier than the completion of burst i - max_outstanding. Returns the last completion cycle
  /// (`arrival_cycle` for an empty transfer). Throws InputError for max_outstanding == 0 or bytes
  /// beyond the capacity.
  std::uint64_t access_transfer(std::uint64_t addr, std::uint64_t run_bytes, std::uint64_t stride,
                                std::uint64_t runs, bool is_write, std::uint64_t arrival_cycle,
                                std::uint32_t max_outstanding);

  /// True if every byte of the strided transfer lies below capacity_bytes() (an empty one: true).
  bool in_range(std::uint64_t addr, std::uint64_t run_bytes, std::uint64_t stride, std::uint64_t runs) const;

  const DramStats& stats() const { return stats_; }
  const DramConfig& config() const { return config_; }
  const AddressMapper& mapper() const { return mapper_; }

 private:
  enum class RowCase { Hit, Miss, Conflict };

  /// Earliest-allowed cycles ("ready") rather than last-event cycles, so no sentinel is needed.
  struct Bank {
    bool open = false;
    std::uint32_t row = 0;
    std::uint64_t act_ready = 0;  // tRP after PRE, tRC after ACT, tRFC after REF
    std::uint64_t col_ready = 0;  // tRCD after ACT
    std::uint64_t pre_ready = 0;  // tRAS after ACT, tRTP after RD, tWR after write data
  };
  struct Group {  // one bank group of one rank: the "_L" (same group) constraints
    std::uint64_t act_ready = 0;   // tRRD_L
    std::uint64_t col_ready = 0;   // tCCD_L
    std::uint64_t read_ready = 0;  // tWTR_L after write data
  };
  struct Rank {
    std::uint64_t act_ready = 0;          // tRRD_S
    std::array<std::uint64_t, 4> faw{};   // ACT + tFAW of the last four ACTs, a ring
    std::size_t faw_oldest = 0;           // ring slot of the oldest of the four
    std::uint64_t pre_ready = 0;          // tPPD
    std::uint64_t col_ready = 0;          // tCCD_S
    std::uint64_t read_ready = 0;         // tWTR_S after write data
    std::uint64_t write_ready = 0;        // tRTW after a read command
    std::uint64_t next_refresh = 0;       // due cycle of the next all-bank refresh
  };
  /// Flat indices of the state one burst touches.
  struct Target {
    std::size_t channel, rank, group, bank;
    std::uint32_t row;
  };
  /// The commands one burst needs and when they issue, before the state is changed.
  struct Schedule {
    RowCase row_case = RowCase::Hit;
    std::uint64_t pre = 0, act = 0, col = 0, data_end = 0;
    std::uint64_t first_command() const {
      return row_case == RowCase::Hit ? col : row_case == RowCase::Miss ? act : pre;
    }
  };

  Target locate(std::uint64_t addr) const;
  Schedule plan(const Target& t, bool is_write, std::uint64_t arrival) const;
  void commit(const Target& t, bool is_write, const Schedule& s);
  void precharge(Bank& bank, Rank& rank, std::uint64_t at);
  void activate(const Target& t, std::uint64_t at);
  bool refresh_due(std::size_t rank, std::uint64_t at) const;
  void refresh(std::size_t rank, std::uint64_t before);
  void record(const Schedule& s, bool is_write, std::uint64_t arrival);

  DramConfig config_;
  AddressMapper mapper_;
  std::uint64_t capacity_ = 0;
  std::uint64_t burst_bytes_ = 0;
  std::uint64_t burst_cycles_ = 0;
  std::uint64_t read_latency_ = 0;   // CL + tDQSCK: read command to first data
  std::uint64_t write_latency_ = 0;  // CWL: write command to first data
  std::size_t banks_per_rank_ = 0;
  std::vector<Bank> banks_;
  std::vector<Group> groups_;
  std::vector<Rank> ranks_;
  std::vector<std::uint64_t> bus_free_;  // per channel: end of the last burst on the data bus
  DramStats stats_;
};

}  // namespace npusim::models
