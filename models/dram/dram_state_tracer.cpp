#include "models/dram/dram_state_tracer.h"

#include <algorithm>
#include <optional>
#include <type_traits>

namespace npusim::models {
namespace {

std::uint64_t begin_of(const DramRowInterval& r) {
  return r.act;
}
std::uint64_t end_of(const DramRowInterval& r) {
  return r.pre;
}  // kOpen: not yet known
template <typename Interval>
std::uint64_t begin_of(const Interval& i) {
  return i.begin;
}
template <typename Interval>
std::uint64_t end_of(const Interval& i) {
  return i.end;
}

/// Moves `cursor` to the first interval of its list that is `relevant` and has not ended by
/// cycle `c`; returns it if it has begun (nothing otherwise). Lowers `next` to the list's next
/// boundary after `c`, and counts in `late` every boundary the waveform crosses after its time.
template <typename Cursor, typename Relevant>
auto step(Cursor& cursor, std::uint64_t c, Relevant relevant, std::uint64_t& next, std::uint64_t& late)
    -> std::optional<std::decay_t<decltype(cursor.reader.get())>> {
  auto& reader = cursor.reader;
  for (; !reader.done(); reader.next()) {
    const auto i = reader.get();
    if (!relevant(i)) continue;
    if (end_of(i) > c) break;
    if (end_of(i) < c || cursor.shown != reader.index()) ++late;  // ended (or came and went) before the replay knew
  }
  if (reader.done()) return std::nullopt;
  const auto i = reader.get();
  if (begin_of(i) > c) {
    next = std::min(next, begin_of(i));
    return std::nullopt;
  }
  next = std::min(next, end_of(i));
  if (cursor.shown != reader.index() && begin_of(i) < c) ++late;
  cursor.shown = reader.index();
  return i;
}

std::string bank_name(const DramActivity& a, std::uint32_t bank) {
  const std::uint32_t rank = bank / a.banks_per_rank();
  const std::uint32_t channel = rank / a.ranks_per_channel();
  std::string name = "dram_ch" + std::to_string(channel);
  if (a.ranks_per_channel() > 1) name += "_rank" + std::to_string(rank % a.ranks_per_channel());
  return name + "_bank" + std::to_string(bank % a.banks_per_rank());
}

}  // namespace

DramStateTracer::DramStateTracer(sc_core::sc_module_name name, DramController& dram, sc_core::sc_trace_file* tf)
    : sc_core::sc_module(name), dram_(dram) {
  dram_.record_activity(true);
  const DramActivity& a = *dram_.engine().activity();
  const std::size_t banks = std::size_t{a.ranks()} * a.banks_per_rank();
  state_.assign(banks, 0);
  row_.assign(banks, 0);
  for (std::uint32_t b = 0; b < banks; ++b) {
    row_cursor_.push_back({DramRowList::Reader(a.rows(b))});
    refresh_cursor_.push_back({RefreshReader(a.refreshes(b / a.banks_per_rank()))});
  }
  busy_ = std::make_unique<bool[]>(a.channels());
  for (std::uint32_t ch = 0; ch < a.channels(); ++ch) bus_cursor_.push_back({DramBusList::Reader(a.bus(ch))});
  // The variables never move from here on: sc_trace keeps their addresses.
  for (std::uint32_t b = 0; b < banks; ++b) {
    const std::string base = bank_name(a, b);
    sc_core::sc_trace(tf, state_[b], base + "_state", 2);
    sc_core::sc_trace(tf, row_[b], base + "_row");
  }
  for (std::uint32_t ch = 0; ch < a.channels(); ++ch) {
    busy_[ch] = false;
    sc_core::sc_trace(tf, busy_[ch], "dram_ch" + std::to_string(ch) + "_bus_busy");
  }
  SC_THREAD(replay);
}

std::uint64_t DramStateTracer::current_cycle() const {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const std::uint64_t c = dram_.to_cycle(now);
  return c > 0 && dram_.to_time(c) > now ? c - 1 : c;
}

std::uint64_t DramStateTracer::update(std::uint64_t c) {
  const DramActivity& a = *dram_.engine().activity();
  std::uint64_t next = DramEngine::kNever;
  const auto every = [](const auto&) { return true; };
  for (std::uint32_t b = 0; b < state_.size(); ++b) {
    const std::uint32_t in_rank = b % a.banks_per_rank();
    const auto covers_bank = [&](const DramRefreshInterval& r) { return a.covers(r, in_rank); };
    const auto open = step(row_cursor_[b], c, every, next, late_);
    const auto refresh = step(refresh_cursor_[b], c, covers_bank, next, late_);
    if (open) row_[b] = open->row;
    state_[b] = refresh ? 2 : open ? 1 : 0;
  }
  for (std::uint32_t ch = 0; ch < a.channels(); ++ch) {
    busy_[ch] = step(bus_cursor_[ch], c, every, next, late_).has_value();
  }
  return next;
}

void DramStateTracer::replay() {
  for (;;) {
    const std::uint64_t c = current_cycle();
    // Refresh ticks are otherwise processed when the next transfer arrives, after their time:
    // process those due by now (between transfers every rank is idle, so this serves them
    // exactly as the next transfer would; docs/dram.md, "Activity").
    dram_.advance_refresh_to(c);
    std::uint64_t next = update(c);
    // Wake for the next refresh tick too, but only while something else is still to happen:
    // ticks alone would keep the simulation running forever.
    const std::uint64_t tick = dram_.engine().next_refresh_cycle();
    if (tick != DramEngine::kNever && (next != DramEngine::kNever || sc_core::sc_pending_activity()))
      next = std::min(next, std::max(tick, c + 1));
    if (next == DramEngine::kNever) {
      sc_core::wait(dram_.activity_event());
      continue;
    }
    const sc_core::sc_time now = sc_core::sc_time_stamp(), at = dram_.to_time(next);
    sc_core::wait(at > now ? at - now : sc_core::sc_get_time_resolution(), dram_.activity_event());
  }
}

}  // namespace npusim::models
