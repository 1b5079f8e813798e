#include "sim/npu/dram_activity_trace.h"

#include <algorithm>
#include <cmath>

#include "models/dram/dram_config_check.h"

namespace npusim {

void append_bus_slices(const models::DramBusList& list, std::uint32_t channel, std::uint64_t burst_cycles,
                       const std::function<std::uint64_t(std::uint64_t)>& ps, PackedList<traces::DramBusSlice>& out) {
  bool first = true;
  models::DramBusInterval last;
  for (const models::DramBusInterval& b : list) {
    if (!first && models::DramActivity::extends(last, b.write, b.begin, burst_cycles)) {
      out.back().end_ps = ps(b.end);
      out.back().bursts += b.bursts;
    } else {
      out.push_back({channel, b.write, ps(b.begin), ps(b.end), b.bursts});
    }
    first = false;
    last = b;
  }
}

traces::DramActivityTrace dram_activity_trace(const models::DramController& dram,
                                              std::unique_ptr<models::DramActivity> activity) {
  models::DramActivity& a = *activity;
  // The same cycle -> time conversion as the controller's delays, so DRAM slices line up with
  // the DMA commands they serve.
  const auto ps = [&dram](std::uint64_t cycle) {
    return static_cast<std::uint64_t>(std::llround(dram.to_time(cycle).to_seconds() * 1e12));
  };
  const std::uint64_t last = dram.engine().stats().last_completion_cycle;
  traces::DramActivityTrace d;
  d.channels = a.channels();
  d.ranks = a.ranks_per_channel();
  d.banks = a.banks_per_rank();
  d.refresh_units = models::refresh_units(dram.config());
  d.has_rows = a.records_banks();
  d.bus_join_ps = ps(a.join_gap());
  for (std::uint32_t ch = 0; ch < a.channels(); ++ch) {
    append_bus_slices(a.bus(ch), ch, dram.config().burst_cycles(), ps, d.bus);
    a.release_bus(ch);
  }
  for (std::uint32_t rank = 0; rank < a.ranks(); ++rank) {
    const std::uint32_t channel = rank / d.ranks, in_channel = rank % d.ranks;
    for (const models::DramRefreshInterval& r : a.refreshes(rank)) {
      const int unit = r.unit == models::DramActivity::kAllBanks ? -1 : static_cast<int>(r.unit);
      d.refreshes.push_back({channel, in_channel, unit, ps(r.begin), ps(r.end)});
    }
  }
  if (!d.has_rows) return d;
  for (std::uint32_t bank = 0; bank < a.ranks() * a.banks_per_rank(); ++bank) {
    const std::uint32_t rank = bank / d.banks;
    for (const models::DramRowInterval& r : a.rows(bank)) {
      const std::uint64_t pre = r.pre == models::DramActivity::kOpen ? std::max(last, r.act) : r.pre;
      d.rows.push_back({rank / d.ranks, rank % d.ranks, bank % d.banks, r.row, ps(r.act), ps(pre), r.bursts});
    }
    a.release_rows(bank);
  }
  return d;
}

}  // namespace npusim
