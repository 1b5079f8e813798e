#include "models/dram/dram_timing.h"

#include <algorithm>
#include <limits>

#include "models/dram/dram_config_check.h"

namespace npusim::models {

DramDevice::DramDevice(const DramConfig& config, DramStats& stats) : config_(config), stats_(stats), mapper_(config) {
  const DramTiming& t = config_.timing;
  burst_cycles_ = config_.burst_cycles();
  read_latency_ = std::uint64_t{t.CL} + t.tDQSCK;
  write_latency_ = std::uint64_t{t.CWL} + write_data_delay(config_.standard);
  banks_per_rank_ = config_.banks();
  refresh_units_ = refresh_units(config_);
  const std::size_t ranks = std::size_t{config_.channels} * config_.ranks;
  banks_.resize(ranks * banks_per_rank_);
  groups_.resize(ranks * config_.bank_groups);
  ranks_.resize(ranks);
  bus_free_.assign(config_.channels, 0);
  ca_.resize(config_.channels);
  lengths_ = command_lengths(config_.standard);
  pace_ = std::max({std::uint64_t{t.tCCD_S}, std::uint64_t{t.tCCD_L}, burst_cycles_});
  // earliest_column_either after a hit at c (one rank): for its own direction max(decision,
  // c + tCCD_S, c + burst), pace on when tCCD_L does not exceed both; for the other direction
  // at least the turnaround the hit set: a read's c + tRTW, a write's data end + tWTR_S.
  const bool own = std::max(std::uint64_t{t.tCCD_S}, burst_cycles_) >= pace_;
  paced_first_[false] = own && t.tRTW >= pace_;
  paced_first_[true] = own && write_latency_ + burst_cycles_ + t.tWTR_S >= pace_;
}

void DramDevice::auto_precharge(const BurstTarget& t) {
  // Internal to the device, so tPPD on the command bus does not apply.
  Bank& b = banks_[t.bank];
  precharge(b, b.pre_ready);
  ++stats_.precharges;
}

std::uint64_t DramDevice::refresh_all_bank(std::uint32_t rank_index, std::uint64_t at, std::uint64_t count,
                                           std::uint64_t interval) {
  const DramTiming& tm = config_.timing;
  Rank& r = ranks_[rank_index];
  Bank* const first = &banks_[std::size_t{rank_index} * banks_per_rank_];
  Bank* const last = first + banks_per_rank_;

  // 1. REF needs every bank idle: open banks close with one PREA once tRAS/tRTP/tWR allow and
  //    REF follows tRPab later; every bank must also be past tRC, tRP or an earlier tRFC.
  CommandBus& ca = ca_[rank_index / config_.ranks];
  std::uint64_t ref = at;
  std::uint64_t prea = std::max(at, r.pre_ready);
  bool any_open = false;
  for (Bank* b = first; b != last; ++b) {
    ref = std::max(ref, b->act_ready);
    if (b->open) {
      any_open = true;
      prea = std::max(prea, b->pre_ready);
    }
  }
  if (any_open) {
    prea = ca.first_free(prea, lengths_.pre);
    ca.reserve(prea, lengths_.pre);
    for (Bank* b = first; b != last; ++b)
      if (b->open) precharge(*b, prea);
    ref = std::max(ref, prea + tm.tRPab);
    r.pre_ready = std::max(r.pre_ready, prea + tm.tPPD);
    ++stats_.precharges;
  }

  // 2. The k-th further refresh issues at max(ref + k tRFC, at + k interval): on time unless
  //    the first was pushed back by more than interval - tRFC. (Only the first holds the CA
  //    bus here: the others fall in an idle rank's gap.)
  ref = ca.first_free(ref, lengths_.refresh);
  ca.reserve(ref, lengths_.refresh);
  const auto ref_at = [&](std::uint64_t k) { return std::max(ref + k * tm.tRFC, at + k * interval); };
  const std::uint64_t last_ref = ref_at(count - 1);

  // 3. The last REF keeps every bank of the rank closed and busy for tRFC.
  for (Bank* b = first; b != last; ++b) {
    b->act_ready = std::max(b->act_ready, last_ref + tm.tRFC);
    ++b->version;
  }
  stats_.refreshes += count;
  for (std::uint64_t k = 0; activity_ && k < count; ++k)
    activity_->refresh(rank_index, DramActivity::kAllBanks, ref_at(k), ref_at(k) + tm.tRFC);
  return last_ref;
}

std::uint64_t DramDevice::refresh_per_bank(std::uint32_t rank_index, std::uint32_t unit, std::uint64_t at) {
  const DramTiming& tm = config_.timing;
  Rank& r = ranks_[rank_index];
  // REFpb waits tRRD after an ACT and tPBR2PBR after the previous REFpb; its banks must close.
  CommandBus& ca = ca_[rank_index / config_.ranks];
  std::uint64_t ref = std::max({at, r.act_ready, r.refpb_ready});
  const std::uint32_t base = unit_bank(rank_index, unit);
  const std::uint32_t end = rank_index * banks_per_rank_ + banks_per_rank_;
  for (std::uint32_t i = base; i < end; i += refresh_units_) {
    Bank& b = banks_[i];
    if (b.open) {
      const std::uint64_t pre = ca.first_free(std::max({at, b.pre_ready, r.pre_ready}), lengths_.pre);
      ca.reserve(pre, lengths_.pre);
      precharge(b, pre);
      r.pre_ready = pre + tm.tPPD;
      ++stats_.precharges;
    }
    ref = std::max(ref, b.act_ready);
  }
  ref = ca.first_free(ref, lengths_.refresh);
  ca.reserve(ref, lengths_.refresh);
  for (std::uint32_t i = base; i < end; i += refresh_units_) {
    banks_[i].act_ready = std::max(banks_[i].act_ready, ref + tm.tRFCpb);
    ++banks_[i].version;
  }
  r.refpb_ready = ref + (tm.tPBR2PBR != 0 ? tm.tPBR2PBR : tm.tRRD_S);
  r.act_ready = std::max(r.act_ready, ref + tm.tRRD_S);
  ++stats_.refreshes_per_bank;
  if (activity_) activity_->refresh(rank_index, unit, ref, ref + tm.tRFCpb);
  return ref;
}

std::uint64_t DramDevice::open_cycles(std::uint64_t until) const {
  std::uint64_t total = stats_.bank_open_cycles;
  for (const Bank& b : banks_)
    if (b.open && until > b.opened) total += until - b.opened;
  return total;
}

}  // namespace npusim::models
