#pragma once
// Names and time stamps shared by the trace writer and reader, so the two agree by
// construction: which thread name means which unit, and how picoseconds become the format's
// microseconds.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "traces/trace.h"

namespace npusim::traces::tracks {

/// The one process of the trace ("NPU"); counters hang off it, outside every thread.
inline constexpr int kPid = 1;
inline constexpr int kCounterTid = 0;
inline constexpr const char* kProcessName = "NPU";
inline constexpr const char* kGroupsTrack = "groups";
inline constexpr const char* kOpsTrack = "ops";

/// "MAC array", "vector unit", "DMA ch0", ...; a compute unit with lane > 0 is "<unit> lane N".
/// On a multi-core NPU (`multi_core`) each name starts with its core: "core 1 MAC array".
std::string unit_track_name(Unit u, std::uint32_t lane, std::uint32_t core = 0, bool multi_core = false);
/// Slices on one thread must nest, so overlapping ones spill to "<base> (2)", "<base> (3)", ...
std::string sublane_track_name(const std::string& base, std::size_t sublane);
/// Inverse of sublane_track_name: the base name.
std::string base_track_name(const std::string& name);

struct UnitLane {
  Unit unit = Unit::MacArray;
  std::uint32_t lane = 0;
  std::uint32_t core = 0;
};
/// Inverse of unit_track_name (after base_track_name); nullopt for "ops", "groups" or others.
std::optional<UnitLane> parse_unit_track_name(const std::string& base);

/// The DRAM's own process (present when the trace holds DRAM activity), after the NPU's.
inline constexpr int kDramPid = 2;
inline constexpr const char* kDramProcessName = "DRAM";

/// A DRAM track: a channel's data bus, a rank's refreshes, or one bank (`rank` and `bank` count
/// within their channel and rank).
struct DramTrack {
  enum class Kind { Bus, Refresh, Bank };
  Kind kind = Kind::Bus;
  std::uint32_t channel = 0, rank = 0, bank = 0;
};
/// "ch0 bus", "ch0 refresh", "ch0 bank 3"; with `show_rank` (several ranks per channel)
/// "ch0 rank1 refresh", "ch0 rank1 bank 3".
std::string dram_track_name(const DramTrack& track, bool show_rank);
/// Inverse of dram_track_name (after base_track_name); nullopt for any other name.
std::optional<DramTrack> parse_dram_track_name(const std::string& base);

/// Picoseconds as microseconds with exactly six decimals ("12.000345"): exact in decimal, and
/// the reader's llround(us * 1e6) recovers the picoseconds for any trace shorter than ~1000 s.
std::string format_us(std::uint64_t ps);
/// format_us(ps) appended to `out` (the trace writer's per-slice path: no temporary strings).
void append_us(std::string& out, std::uint64_t ps);
/// Inverse of format_us for a parsed number; nullopt for negative or non-finite values.
std::optional<std::uint64_t> us_to_ps(double us);

}  // namespace npusim::traces::tracks
