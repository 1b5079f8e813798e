#include "traces/trace_tracks.h"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <vector>

namespace npusim::traces::tracks {

namespace {

constexpr const char* kDmaPrefix = "DMA ch";
constexpr const char* kLaneInfix = " lane ";
constexpr const char* kCorePrefix = "core ";  // 5 characters

// Parses a whole string of decimal digits; nullopt when empty, not all digits or too large.
std::optional<std::uint32_t> parse_u32(const std::string& s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  for (char ch : s) {
    if (!std::isdigit(static_cast<unsigned char>(ch))) return std::nullopt;
  }
  return static_cast<std::uint32_t>(std::stoul(s));
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

std::optional<UnitLane> parse_core_unit(const std::string& base);

std::string unit_track_name(Unit u, std::uint32_t lane, std::uint32_t core, bool multi_core) {
  const std::string prefix = multi_core ? kCorePrefix + std::to_string(core) + " " : "";
  if (u == Unit::Dma) return prefix + kDmaPrefix + std::to_string(lane);
  return prefix + (lane == 0 ? to_string(u) : to_string(u) + kLaneInfix + std::to_string(lane));
}

std::string sublane_track_name(const std::string& base, std::size_t sublane) {
  return sublane == 0 ? base : base + " (" + std::to_string(sublane + 1) + ")";
}

std::string base_track_name(const std::string& name) {
  const std::size_t open = name.rfind(" (");
  if (open == std::string::npos || name.empty() || name.back() != ')') return name;
  const std::string digits = name.substr(open + 2, name.size() - open - 3);
  return parse_u32(digits) ? name.substr(0, open) : name;
}

std::optional<UnitLane> parse_unit_track_name(const std::string& name) {
  // "core K <unit>" on a multi-core NPU.
  std::string base = name;
  std::uint32_t core = 0;
  if (starts_with(base, kCorePrefix)) {
    const std::size_t space = base.find(' ', std::string(kCorePrefix).size());
    const auto k = space == std::string::npos ? std::nullopt : parse_u32(base.substr(5, space - 5));
    if (!k) return std::nullopt;
    core = *k;
    base = base.substr(space + 1);
  }
  auto unit = parse_core_unit(base);
  if (unit) unit->core = core;
  return unit;
}

std::optional<UnitLane> parse_core_unit(const std::string& base) {
  if (starts_with(base, kDmaPrefix)) {
    auto lane = parse_u32(base.substr(std::string(kDmaPrefix).size()));
    if (!lane) return std::nullopt;
    return UnitLane{Unit::Dma, *lane};
  }
  for (Unit u : {Unit::MacArray, Unit::VectorUnit, Unit::Runtime, Unit::Host}) {
    const std::string name = to_string(u);
    if (base == name) return UnitLane{u, 0};
    const std::string prefix = name + kLaneInfix;
    if (starts_with(base, prefix)) {
      auto lane = parse_u32(base.substr(prefix.size()));
      if (lane) return UnitLane{u, *lane};
    }
  }
  return std::nullopt;
}

std::string dram_track_name(const DramTrack& t, bool show_rank) {
  std::string name = "ch" + std::to_string(t.channel);
  if (show_rank) name += " rank" + std::to_string(t.rank);
  switch (t.kind) {
    case DramTrack::Kind::Bus:
      return name + " bus";
    case DramTrack::Kind::Refresh:
      return name + " refresh";
    case DramTrack::Kind::Bank:
      return name + " bank " + std::to_string(t.bank);
  }
  return name;
}

std::optional<DramTrack> parse_dram_track_name(const std::string& base) {
  // Words: "chC" ["rankR"] ("bus" | "refresh" | "bank" B).
  std::vector<std::string> words;
  for (std::size_t i = 0; i <= base.size();) {
    const std::size_t space = std::min(base.find(' ', i), base.size());
    words.push_back(base.substr(i, space - i));
    i = space + 1;
  }
  DramTrack t;
  std::size_t w = 0;
  auto numbered = [&](const char* prefix, std::uint32_t& out) {
    if (w >= words.size() || !starts_with(words[w], prefix)) return false;
    auto n = parse_u32(words[w].substr(std::string(prefix).size()));
    if (!n) return false;
    out = *n;
    ++w;
    return true;
  };
  if (!numbered("ch", t.channel)) return std::nullopt;
  numbered("rank", t.rank);
  if (w + 1 == words.size() && words[w] == "bus") return DramTrack{DramTrack::Kind::Bus, t.channel, t.rank, 0};
  if (w + 1 == words.size() && words[w] == "refresh") return DramTrack{DramTrack::Kind::Refresh, t.channel, t.rank, 0};
  if (w + 2 == words.size() && words[w] == "bank") {
    auto bank = parse_u32(words[w + 1]);
    if (bank) return DramTrack{DramTrack::Kind::Bank, t.channel, t.rank, *bank};
  }
  return std::nullopt;
}

void append_us(std::string& out, std::uint64_t ps) {
  char text[32];  // 20 digits of 2^64, '.', six decimals
  char* end = std::to_chars(text, text + 20, ps / 1000000).ptr;
  *end++ = '.';
  std::uint64_t frac = ps % 1000000;
  for (int i = 5; i >= 0; --i, frac /= 10) end[i] = static_cast<char>('0' + frac % 10);
  out.append(text, end + 6);
}

std::string format_us(std::uint64_t ps) {
  std::string out;
  append_us(out, ps);
  return out;
}

std::optional<std::uint64_t> us_to_ps(double us) {
  // Beyond 2^63 ps llround has no answer; no real trace comes near (that is 106 days).
  if (!std::isfinite(us) || us < 0 || us * 1e6 >= 9.2e18) return std::nullopt;
  return static_cast<std::uint64_t>(std::llround(us * 1e6));
}

}  // namespace npusim::traces::tracks
