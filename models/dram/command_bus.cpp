#include "models/dram/command_bus.h"

#include <algorithm>

namespace npusim::models {

CommandLengths command_lengths(const std::string& standard) {
  if (standard == "LPDDR4") return {4, 2, 4, 2};
  if (standard == "LPDDR5") return {1, 1, 1, 1, true};
  return {};
}

std::uint32_t write_data_delay(const std::string& standard) {
  return standard == "LPDDR4" ? 1 : 0;
}

std::uint64_t CommandBus::search_free(std::uint64_t t, std::uint32_t length) const {
  for (std::uint64_t c = t;;) {
    c = next_free(c);
    const std::uint64_t busy = next_busy(c, c + length);
    if (busy == c + length) return c;
    c = busy + 1;  // no start from c to busy fits: each would hold the busy cycle
  }
}

std::uint64_t CommandBus::next_free(std::uint64_t c) const {
  // A word of the ring at a time (base_ and kWindow are multiples of 64, so a word never
  // straddles the window's edge); cycles outside the window are free.
  while (c >= base_ && c - base_ < kWindow) {
    const std::uint64_t free_bits = ~bits_[c % kWindow / 64] >> (c % 64);
    if (free_bits != 0) return c + static_cast<std::uint64_t>(__builtin_ctzll(free_bits));
    c = (c / 64 + 1) * 64;
  }
  return c;
}

std::uint64_t CommandBus::next_busy(std::uint64_t c, std::uint64_t end) const {
  c = std::max(c, base_);  // cycles before the window are free
  while (c < end && c - base_ < kWindow) {
    const std::uint64_t busy_bits = bits_[c % kWindow / 64] >> (c % 64);
    if (busy_bits != 0) return std::min(end, c + static_cast<std::uint64_t>(__builtin_ctzll(busy_bits)));
    c = (c / 64 + 1) * 64;
  }
  return end;
}

void CommandBus::slide(std::uint64_t end) {
  // By whole 64-cycle words: base_ stays a multiple of 64, so a stream clears a word every 64
  // cycles instead of a bit per cycle.
  const std::uint64_t base = (end - kWindow + 63) / 64 * 64;
  if (base <= base_) return;
  if (base - base_ >= kWindow) {
    std::fill(bits_.begin(), bits_.end(), 0);
  } else {
    for (std::uint64_t w = base_ / 64; w < base / 64; ++w) bits_[w % bits_.size()] = 0;
  }
  base_ = base;
}

}  // namespace npusim::models
