#include "models/dram/dram_activity.h"

#include <algorithm>

namespace npusim::models {

DramActivity::DramActivity(std::uint32_t channels, std::uint32_t ranks, std::uint32_t banks_per_rank,
                           std::uint32_t units, bool banks, std::uint64_t join_gap)
    : banks_per_rank_(banks_per_rank), units_(units == 0 ? 1 : units), join_gap_(join_gap), banks_enabled_(banks) {
  bus_.resize(channels);
  refreshes_.resize(ranks);
  rows_.resize(std::size_t{ranks} * banks_per_rank);
}

void DramActivity::open_row(std::uint32_t bank, std::uint32_t row, std::uint64_t act) {
  if (banks_enabled_) rows_[bank].push_back({row, act, kOpen, 0});
}

void DramActivity::close_row(std::uint32_t bank, std::uint64_t pre) {
  if (!banks_enabled_ || rows_[bank].empty()) return;
  DramRowInterval& open = rows_[bank].back();
  if (open.pre == kOpen) open.pre = pre;
}

void DramActivity::bursts(std::uint32_t channel, std::uint32_t bank, bool write, std::uint64_t begin, std::uint64_t end,
                          std::uint64_t count) {
  if (banks_enabled_ && !rows_[bank].empty()) rows_[bank].back().bursts += count;
  DramBusList& list = bus_[channel];
  // Back-to-back bursts of one direction are one interval: a stream is one entry.
  if (!list.empty() && extends(list.back(), write, begin, join_gap_)) {
    list.back().end = end;
    list.back().bursts += count;
    return;
  }
  list.push_back({write, begin, end, count});
}

void DramActivity::refresh(std::uint32_t rank, std::uint32_t unit, std::uint64_t begin, std::uint64_t end) {
  refreshes_[rank].push_back({unit, begin, end});
}

}  // namespace npusim::models
