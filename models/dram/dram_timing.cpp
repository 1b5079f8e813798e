#include "models/dram/dram_timing.h"

#include <algorithm>
#include <sstream>
#include <string>

#include "sim/core/errors.h"

namespace npusim::models {
namespace {

std::string where_of(const DramConfig& c) { return "dram (" + c.preset + ")"; }

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

}  // namespace

double DramStats::row_hit_rate() const {
  return bursts() == 0 ? 0.0 : double(row_hits) / double(bursts());
}

nlohmann::json DramStats::to_json(const DramConfig& c) const {
  const double ns = 1e9 / c.clock.hz;  // ns per DRAM cycle
  const std::uint64_t span = bursts() == 0 ? 0 : last_completion_cycle - first_arrival_cycle;
  const double span_seconds = double(span) / c.clock.hz;
  const double bytes = double(bytes_read + bytes_written);
  return {
      {"reads", reads},
      {"writes", writes},
      {"bytes_read", bytes_read},
      {"bytes_written", bytes_written},
      {"row_hits", row_hits},
      {"row_misses", row_misses},
      {"row_conflicts", row_conflicts},
      {"row_hit_rate", row_hit_rate()},
      {"activates", activates},
      {"precharges", precharges},
      {"refreshes", refreshes},
      {"read_latency_avg_ns", read_latency_count == 0 ? 0.0 : double(read_latency_sum) / read_latency_count * ns},
      {"read_latency_max_ns", double(read_latency_max) * ns},
      {"read_latency_count", read_latency_count},
      {"data_bus_busy_ns", double(data_bus_busy_cycles) * ns},
      {"data_bus_utilisation", span == 0 ? 0.0 : double(data_bus_busy_cycles) / (double(span) * c.channels)},
      {"first_arrival_ns", double(first_arrival_cycle) * ns},
      {"last_completion_ns", double(last_completion_cycle) * ns},
      {"active_ns", double(span) * ns},
      {"peak_bandwidth_bytes_per_s", c.peak_bandwidth().bytes_per_second},
      {"achieved_bandwidth_bytes_per_s", span == 0 ? 0.0 : bytes / span_seconds},
  };
}

DramTimingModel::DramTimingModel(const DramConfig& config) : config_(config), mapper_(config) {
  const DramTiming& t = config_.timing;
  if (!(config_.clock.hz > 0))
    throw InputError(where_of(config_) + ".clock",
                     "expected a positive clock, found " + std::to_string(config_.clock.hz) + " Hz");
  if (config_.burst_cycles() == 0)
    throw InputError(where_of(config_) + ".burst_length", "expected a burst of at least one clock cycle");
  if (t.tREFI != 0 && t.tRFC >= t.tREFI)
    throw InputError(where_of(config_) + ".timing.tRFC", "expected tRFC < tREFI, found tRFC = " +
                                                            std::to_string(t.tRFC) + " nCK, tREFI = " +
                                                            std::to_string(t.tREFI) + " nCK");
  capacity_ = config_.capacity_bytes();
  burst_bytes_ = config_.bytes_per_burst();
  burst_cycles_ = config_.burst_cycles();
  read_latency_ = std::uint64_t{t.CL} + t.tDQSCK;
  write_latency_ = t.CWL;
  banks_per_rank_ = config_.banks();
  const std::size_t ranks = std::size_t{config_.channels} * config_.ranks;
  banks_.resize(ranks * banks_per_rank_);
  groups_.resize(ranks * config_.bank_groups);
  Rank first;
  first.next_refresh = t.tREFI;  // the first refresh falls due one interval after reset
  ranks_.assign(ranks, first);
  bus_free_.assign(config_.channels, 0);
}

DramTimingModel::Target DramTimingModel::locate(std::uint64_t addr) const {
  if (addr >= capacity_)
    throw InputError(where_of(config_), "expected an address below the capacity " + std::to_string(capacity_) +
                                            " B (" + hex(capacity_) + "), found " + hex(addr));
  const DramAddress a = mapper_.decode(addr);
  Target t;
  t.channel = a.channel;
  t.rank = std::size_t{a.channel} * config_.ranks + a.rank;
  t.group = t.rank * config_.bank_groups + a.bank_group;
  t.bank = t.group * config_.banks_per_group + a.bank;
  t.row = a.row;
  return t;
}

DramTimingModel::Schedule DramTimingModel::plan(const Target& t, bool is_write, std::uint64_t arrival) const {
  const DramTiming& tm = config_.timing;
  const Bank& b = banks_[t.bank];
  const Group& g = groups_[t.group];
  const Rank& r = ranks_[t.rank];
  Schedule s;

  // 1. Row: a hit needs nothing; otherwise PRE (if another row is open), then ACT.
  std::uint64_t col_ready = b.col_ready;
  if (!b.open || b.row != t.row) {
    std::uint64_t act_ready = b.act_ready;
    if (b.open) {
      s.row_case = RowCase::Conflict;
      s.pre = std::max({arrival, b.pre_ready, r.pre_ready});
      act_ready = std::max(act_ready, s.pre + tm.tRP);
    } else {
      s.row_case = RowCase::Miss;
    }
    s.act = std::max({arrival, act_ready, r.act_ready, g.act_ready, r.faw[r.faw_oldest]});
    col_ready = s.act + tm.tRCD;
  }

  // 2. Column command: bank ready, tCCD, read/write turnaround, and a free data bus when the
  //    data arrives (the bus carries bursts one at a time, in call order).
  const std::uint64_t latency = is_write ? write_latency_ : read_latency_;
  const std::uint64_t turnaround = is_write ? r.write_ready : std::max(r.read_ready, g.read_ready);
  const std::uint64_t bus = bus_free_[t.channel];
  s.col = std::max({arrival, col_ready, r.col_ready, g.col_ready, turnaround, bus > latency ? bus - latency : 0});
  s.data_end = s.col + latency + burst_cycles_;
  return s;
}

void DramTimingModel::precharge(Bank& bank, Rank& rank, std::uint64_t at) {
  bank.open = false;
  bank.act_ready = std::max(bank.act_ready, at + config_.timing.tRP);
  rank.pre_ready = std::max(rank.pre_ready, at + config_.timing.tPPD);
  ++stats_.precharges;
}

void DramTimingModel::activate(const Target& t, std::uint64_t at) {
  const DramTiming& tm = config_.timing;
  Bank& b = banks_[t.bank];
  Group& g = groups_[t.group];
  Rank& r = ranks_[t.rank];
  b.open = true;
  b.row = t.row;
  b.act_ready = at + tm.tRC;
  b.col_ready = at + tm.tRCD;
  b.pre_ready = at + tm.tRAS;
  r.act_ready = at + tm.tRRD_S;
  g.act_ready = at + tm.tRRD_L;
  r.faw[r.faw_oldest] = at + tm.tFAW;
  r.faw_oldest = (r.faw_oldest + 1) % r.faw.size();
  ++stats_.activates;
}

void DramTimingModel::commit(const Target& t, bool is_write, const Schedule& s) {
  const DramTiming& tm = config_.timing;
  Bank& b = banks_[t.bank];
  Group& g = groups_[t.group];
  Rank& r = ranks_[t.rank];
  if (s.row_case == RowCase::Conflict) precharge(b, r, s.pre);
  if (s.row_case != RowCase::Hit) activate(t, s.act);

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
  bus_free_[t.channel] = s.data_end;

  // Closed page: the column command carries auto-precharge, which starts as soon as tRAS,
  // tRTP or tWR allow (it is internal, so tPPD on the command bus does not apply).
  if (config_.page_policy == PagePolicy::Closed) {
    b.open = false;
    b.act_ready = std::max(b.act_ready, b.pre_ready + tm.tRP);
    ++stats_.precharges;
  }
}

bool DramTimingModel::refresh_due(std::size_t rank, std::uint64_t at) const {
  return config_.timing.tREFI != 0 && at >= ranks_[rank].next_refresh;
}

void DramTimingModel::refresh(std::size_t rank_index, std::uint64_t before) {
  const DramTiming& tm = config_.timing;
  Rank& r = ranks_[rank_index];
  const auto first = banks_.begin() + static_cast<std::ptrdiff_t>(rank_index * banks_per_rank_);
  const auto last = first + static_cast<std::ptrdiff_t>(banks_per_rank_);

  // 1. REF needs every bank idle: open banks close with one PREA once tRAS/tRTP/tWR allow,
  //    and REF follows tRPab later; closed banks must have finished their own precharge.
  std::uint64_t ref = r.next_refresh;
  std::uint64_t prea = std::max(r.next_refresh, r.pre_ready);
  bool any_open = false;
  for (auto b = first; b != last; ++b) {
    if (b->open) {
      any_open = true;
      prea = std::max(prea, b->pre_ready);
    } else {
      ref = std::max(ref, b->act_ready);
    }
  }
  if (any_open) {
    ref = std::max(ref, prea + tm.tRPab);
    r.pre_ready = std::max(r.pre_ready, prea + tm.tPPD);
    ++stats_.precharges;
  }

  // 2. Refreshes falling due later but before the waiting command find the rank idle, so each
  //    issues on time: count them in one step instead of walking an idle gap interval by interval.
  std::uint64_t count = 1;
  std::uint64_t next_due = r.next_refresh + tm.tREFI;
  if (before >= next_due) {
    const std::uint64_t extra = (before - next_due) / tm.tREFI + 1;
    ref = std::max(next_due + (extra - 1) * tm.tREFI, ref + tm.tRFC);
    count += extra;
    next_due += extra * tm.tREFI;
  }

  // 3. The (last) REF closes every row and keeps the rank busy for tRFC.
  for (auto b = first; b != last; ++b) {
    b->open = false;
    b->act_ready = std::max(b->act_ready, ref + tm.tRFC);
  }
  r.next_refresh = next_due;
  stats_.refreshes += count;
}

void DramTimingModel::record(const Schedule& s, bool is_write, std::uint64_t arrival) {
  switch (s.row_case) {
    case RowCase::Hit: ++stats_.row_hits; break;
    case RowCase::Miss: ++stats_.row_misses; break;
    case RowCase::Conflict: ++stats_.row_conflicts; break;
  }
  stats_.first_arrival_cycle = stats_.bursts() == 0 ? arrival : std::min(stats_.first_arrival_cycle, arrival);
  stats_.last_completion_cycle = std::max(stats_.last_completion_cycle, s.data_end);
  stats_.data_bus_busy_cycles += burst_cycles_;
  if (is_write) {
    ++stats_.writes;
    stats_.bytes_written += burst_bytes_;
    return;
  }
  ++stats_.reads;
  stats_.bytes_read += burst_bytes_;
  const std::uint64_t latency = s.data_end - arrival;
  stats_.read_latency_sum += latency;
  ++stats_.read_latency_count;
  stats_.read_latency_max = std::max(stats_.read_latency_max, latency);
}

std::uint64_t DramTimingModel::access(std::uint64_t addr, bool is_write, std::uint64_t arrival_cycle) {
  const Target t = locate(addr);
  // A refresh that falls due before this burst's first command goes first, then the burst is
  // planned again against the refreshed (closed, busy) banks.
  Schedule s = plan(t, is_write, arrival_cycle);
  while (refresh_due(t.rank, s.first_command())) {
    refresh(t.rank, s.first_command());
    s = plan(t, is_write, arrival_cycle);
  }
  commit(t, is_write, s);
  record(s, is_write, arrival_cycle);
  return s.data_end;
}

bool DramTimingModel::in_range(std::uint64_t addr, std::uint64_t run_bytes, std::uint64_t stride,
                               std::uint64_t runs) const {
  if (run_bytes == 0 || runs == 0) return true;
  if (addr >= capacity_ || run_bytes > capacity_ - addr) return false;
  // The last run starts (runs - 1) * stride after the first; compare without overflowing.
  const std::uint64_t room = capacity_ - addr - run_bytes;
  return runs == 1 || stride <= room / (runs - 1);
}

std::uint64_t DramTimingModel::access_transfer(std::uint64_t addr, std::uint64_t run_bytes, std::uint64_t stride,
                                               std::uint64_t runs, bool is_write, std::uint64_t arrival_cycle,
                                               std::uint32_t max_outstanding) {
  if (max_outstanding == 0)
    throw InputError(where_of(config_), "expected max_outstanding >= 1 burst, found 0");
  if (run_bytes == 0 || runs == 0) return arrival_cycle;
  if (!in_range(addr, run_bytes, stride, runs))
    throw InputError(where_of(config_), "expected a transfer below the capacity " + std::to_string(capacity_) +
                                            " B, found " + std::to_string(runs) + " run(s) of " +
                                            std::to_string(run_bytes) + " B from " + hex(addr) + " every " +
                                            std::to_string(stride) + " B");
  // done[i % max_outstanding] holds the completion of the burst max_outstanding places back.
  std::vector<std::uint64_t> done(max_outstanding, 0);
  std::size_t slot = 0;
  std::uint64_t last = arrival_cycle;
  for (std::uint64_t run = 0; run < runs; ++run) {
    const std::uint64_t start = addr + run * stride;
    const std::uint64_t end = start + run_bytes;
    for (std::uint64_t burst = start - start % burst_bytes_; burst < end; burst += burst_bytes_) {
      done[slot] = access(burst, is_write, std::max(arrival_cycle, done[slot]));
      last = std::max(last, done[slot]);
      slot = slot + 1 == done.size() ? 0 : slot + 1;
    }
  }
  return last;
}

}  // namespace npusim::models
