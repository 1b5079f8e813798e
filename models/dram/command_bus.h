#pragma once
// The command/address (CA) bus of one DRAM channel: one command at a time, each holding it for
// its length in clock cycles (LPDDR4: ACT, RD, WR 4 tCK, PRE and REF 2; DDR4: 1 each). Commands
// are placed out of time order (the controller opens rows ahead), so the bus keeps the cycles
// it carries a command in a ring of bits over the latest kWindow cycles. See docs/dram.md.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace npusim::models {

/// Cycles each command holds the CA bus, by standard.
struct CommandLengths {
  std::uint32_t act = 1, pre = 1, column = 1, refresh = 1;
  /// LPDDR5: ACT is two 1-cycle commands (ACT-1, ACT-2) that other commands may separate; the
  /// second takes the next free cycle after the first (tAAD, their 8-cycle limit, not checked).
  bool split_act = false;
};
/// JESD209-4 (LPDDR4, as DRAMSys' MemSpecLPDDR4), JESD209-5 (LPDDR5), JESD79-4 (DDR4).
CommandLengths command_lengths(const std::string& standard);
/// Cycles between WL and the first write data, by standard: LPDDR4 1 (tDQSS, nominally 1 tCK:
/// JESD209-4 counts it in write-to-read, WL + 1 + BL/2 + tWTR, and write-to-precharge,
/// WL + BL/2 + tWR + 1); DDR4 0 (JESD79-4: CWL + BL/2 + tWTR and CWL + BL/2 + tWR); LPDDR5 0.
std::uint32_t write_data_delay(const std::string& standard);

class CommandBus {
 public:
  /// Cycles tracked behind the latest reservation; older ones count as free (the controller
  /// never places a command that far back, except across runs whose arrivals go back in time).
  static constexpr std::uint64_t kWindow = std::uint64_t{1} << 14;

  CommandBus() : bits_(kWindow / 64, 0) {}
  /// The first cycle c >= t with cycles [c, c + length) free.
  std::uint64_t first_free(std::uint64_t t, std::uint32_t length) const {
    // A stream's next column command, asked first: at or past the end of every reservation.
    if (t >= end_) return t;
    // Then [t, t + length) free within one word of the window.
    if (t >= base_ && t - base_ < kWindow && t % 64 + length <= 64 && length < 64) {
      const std::uint64_t mask = ((std::uint64_t{1} << length) - 1) << (t % 64);
      if ((bits_[t % kWindow / 64] & mask) == 0) return t;
    }
    return search_free(t, length);
  }
  /// Marks [t, t + length) as carrying a command.
  void reserve(std::uint64_t t, std::uint32_t length);
  /// reserve(t + k * step, length) for k = 0..count-1 (a paced stream's column commands), with
  /// the window moved once and, where `step` divides 64, a 64-cycle word at a time.
  void reserve_every(std::uint64_t t, std::uint64_t step, std::uint64_t count, std::uint32_t length);
  /// The end of the latest reservation: every cycle from here on is free.
  std::uint64_t end() const { return end_; }

 private:
  /// first_free past its one-word check: word by word through the window.
  std::uint64_t search_free(std::uint64_t t, std::uint32_t length) const;
  /// The first free cycle at or after c.
  std::uint64_t next_free(std::uint64_t c) const;
  /// The first busy cycle in [c, end), or end.
  std::uint64_t next_busy(std::uint64_t c, std::uint64_t end) const;
  /// Moves the window so it reaches `end`, forgetting the cycles it leaves.
  void slide(std::uint64_t end);

  std::vector<std::uint64_t> bits_;
  std::uint64_t base_ = 0;  // first cycle of the window, a multiple of 64
  std::uint64_t end_ = 0;   // no reservation reaches this cycle or any later one
};

// Inline (every burst reserves a command or three; see dram_timing.h's per-burst path).
inline void CommandBus::reserve(std::uint64_t t, std::uint32_t length) {
  end_ = std::max(end_, t + length);
  if (t >= base_ && t + length <= base_ + kWindow && t % 64 + length <= 64 && length < 64) {
    bits_[t % kWindow / 64] |= ((std::uint64_t{1} << length) - 1) << (t % 64);  // the usual case: one word
    return;
  }
  if (t + length > base_ + kWindow) slide(t + length);
  // A word at a time: the cycles of [max(t, base_), t + length) that fall in each word.
  for (std::uint64_t c = std::max(t, base_), end = t + length; c < end;) {
    const std::uint64_t in_word = std::min<std::uint64_t>(end - c, 64 - c % 64);
    const std::uint64_t ones = in_word == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << in_word) - 1;
    bits_[c % kWindow / 64] |= ones << (c % 64);
    c += in_word;
  }
}

inline void CommandBus::reserve_every(std::uint64_t t, std::uint64_t step, std::uint64_t count, std::uint32_t length) {
  if (count == 0) return;
  // Moving the window to the last one's end first leaves what reserving them in turn would: the
  // cycles it forgets are forgotten either way.
  const std::uint64_t last_end = t + (count - 1) * step + length;
  if (last_end > base_ + kWindow) slide(last_end);
  // A step that divides 64 puts the commands at the same offsets in every 64-cycle word: each
  // word takes that mask, cut to the run's cycles [t, last_end) at either end.
  if (step > 0 && 64 % step == 0 && length >= 1 && length <= step && length < 64) {
    const std::uint64_t phase = t % step;
    std::uint64_t mask = 0;
    for (std::uint64_t off = phase; off < 64; off += step) mask |= ((std::uint64_t{1} << length) - 1) << off;
    if (phase + length > step) mask |= (std::uint64_t{1} << (phase + length - step)) - 1;  // the word before's last
    for (std::uint64_t w = std::max(t / 64, base_ / 64); w <= (last_end - 1) / 64; ++w) {
      std::uint64_t m = mask;
      if (64 * w < t) m &= ~std::uint64_t{0} << (t - 64 * w);
      if (64 * w + 64 > last_end) m &= (std::uint64_t{1} << (last_end - 64 * w)) - 1;
      bits_[w % (kWindow / 64)] |= m;
    }
  } else {
    for (std::uint64_t k = 0, c = t; k < count; ++k, c += step) reserve(c, length);
  }
  end_ = std::max(end_, last_end);
}

}  // namespace npusim::models
