#include "models/dram/command_bus.h"

#include <algorithm>

namespace npusim::models {

CommandLengths command_lengths(const std::string& standard) {
  if (standard == "LPDDR4") return {4, 2, 4, 2};
  if (standard == "LPDDR5") return {1, 1, 1, 1, true};
  return {};
}

std::uint32_t write_data_delay(const std::string& standard) { return standard == "LPDDR4" ? 1 : 0; }

std::uint64_t CommandBus::first_free(std::uint64_t t, std::uint32_t length) const {
  for (std::uint64_t c = t;;) {
    std::uint64_t k = 0;
    while (k < length && !busy(c + k)) ++k;
    if (k == length) return c;
    c += k + 1;  // past the busy cycle
  }
}

void CommandBus::reserve(std::uint64_t t, std::uint32_t length) {
  if (t + length > base_ + kWindow) slide(t + length);
  for (std::uint64_t c = std::max(t, base_); c < t + length; ++c) bits_[c % kWindow / 64] |= std::uint64_t{1} << (c % 64);
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
