#include "models/sram/bank_timeline.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <vector>

namespace npusim::models {
namespace {

/// Promised fractions within this of 1 count as full: sums of rates like 1/3 + 2/3 must not
/// leave a sliver of bandwidth that an access would crawl through.
constexpr double kFull = 1e-9;

}  // namespace

std::map<std::uint64_t, double>::iterator BankTimeline::split(std::uint64_t t) {
  auto it = used_.lower_bound(t);
  if (it != used_.end() && it->first == t) return it;
  const double value = it == used_.begin() ? 0.0 : std::prev(it)->second;
  return used_.emplace_hint(it, t, value);
}

void BankTimeline::forget_before(std::uint64_t now) {
  if (used_.empty() || used_.begin()->first >= now) return;
  split(now);
  used_.erase(used_.begin(), used_.find(now));
}

std::uint64_t BankTimeline::reserve(std::uint64_t now, std::uint64_t at, std::uint64_t bank_time,
                                    std::uint64_t spread) {
  forget_before(now);
  if (bank_time == 0) return at;
  // The access's own rate: its bank time spread over its natural duration (at most 1: the
  // whole banks).
  const double rate = double(bank_time) / double(std::max(bank_time, spread));
  double left = double(bank_time);  // bank time still to serve
  struct Piece {
    std::uint64_t begin, end;
    double rate;
  };
  std::vector<Piece> pieces;
  std::uint64_t t = at;
  auto it = split(at);
  while (left > 0) {
    const auto next = std::next(it);
    const double free = 1.0 - it->second;
    double take = free > kFull ? std::min(rate, free) : 0.0;
    if (next == used_.end()) {  // nothing promised from here on (the last step is ~0)
      if (take <= 0) take = rate;
      const double span = std::ceil(left / take - 1e-9);
      pieces.push_back({t, t + std::uint64_t(span), take});
      t += std::uint64_t(span);
      break;
    }
    const std::uint64_t end = next->first;
    if (take > 0) {
      const double can = take * double(end - t);
      if (can >= left) {
        const std::uint64_t span = std::uint64_t(std::ceil(left / take - 1e-9));
        pieces.push_back({t, t + span, take});
        t += span;
        break;
      }
      pieces.push_back({t, end, take});
      left -= can;
    }
    t = end;
    it = next;
  }
  for (const Piece& p : pieces) {
    if (p.end <= p.begin) continue;
    const auto last = split(p.end);
    for (auto s = split(p.begin); s != last; ++s) s->second += p.rate;
  }
  return t;
}

}  // namespace npusim::models
