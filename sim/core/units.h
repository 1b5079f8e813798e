#pragma once
// Typed physical quantities and their text parser. A config says "1 GHz", "25.6 GB/s",
// "512 KiB", "18 ns" or "29 nCK"; code holds strong types so a bandwidth is never added to a size.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace npusim {

struct Frequency {
  double hz = 0;
  double period_seconds() const { return 1.0 / hz; }
};

struct Bandwidth {
  double bytes_per_second = 0;
};

struct Bytes {
  std::uint64_t value = 0;
};

/// A span of time in seconds (double: ps resolution over hours is not needed).
struct Duration {
  double seconds = 0;
};

/// An energy in joules: per event (a MAC, a vector op) or per byte moved (energy model).
struct Energy {
  double joules = 0;
};

/// A power in watts: standing power (static leakage, DRAM background).
struct Power {
  double watts = 0;
};

/// The longest DRAM timing accepted, in clock cycles: 2^24 (5 ms at 3.2 GHz, far beyond any
/// JEDEC value, tREFI included) keeps sums of timings far from 32-bit overflow.
constexpr std::uint32_t kMaxTimingCycles = 1u << 24;

/// A DRAM timing value as written: either an absolute time or a count of clock cycles (nCK).
struct TimingValue {
  double value = 0;
  bool in_clock_cycles = false;
  /// Cycles of a clock with period `tck_seconds`, rounded up as JEDEC requires
  /// (a small tolerance keeps 18 ns / 0.625 ns = 28.8 -> 29 and 15 ns / 1.25 ns = 12 -> 12).
  /// Throws InputError(where, ...) above kMaxTimingCycles.
  std::uint32_t to_cycles(double tck_seconds, const std::string& where = "") const;
};

// Parsers. Each throws InputError(where, ...) naming the expected form and the text found.
// A bare number is rejected where a unit is required, so "1000" is never silently Hz or MHz.
Frequency parse_frequency(std::string_view text, const std::string& where = "");
Bandwidth parse_bandwidth(std::string_view text, const std::string& where = "");
/// Sizes: B, KB/MB/GB/TB/PB (decimal) and KiB/MiB/GiB/TiB/PiB (binary); a bare integer is bytes.
/// A whole number of any unit is converted exactly ("9007199254740993 B" stays odd); a fraction
/// must come to whole bytes ("1.5 KiB"); the size must stay below 2^63 bytes.
Bytes parse_bytes(std::string_view text, const std::string& where = "");
Duration parse_duration(std::string_view text, const std::string& where = "");
/// Energies: "0.2 pJ", "1.5 nJ" (fJ, pJ, nJ, uJ, mJ, J); non-negative.
Energy parse_energy(std::string_view text, const std::string& where = "");
/// An energy per byte moved: "1.2 pJ/B" (the energy units above followed by "/B").
Energy parse_energy_per_byte(std::string_view text, const std::string& where = "");
/// Powers: "50 mW", "1.2 W" (uW, mW, W); non-negative.
Power parse_power(std::string_view text, const std::string& where = "");
/// The one parser of whole numbers written as text: every integer CLI option, --set value,
/// sweep-file number and query parameter goes through it. The text is digits with an optional
/// leading '-' and nothing else (no '+', space, fraction or exponent); a value that is not one,
/// or lies outside [lo, hi] (checked on its exact value: 2^64 never wraps to 0, "-1" never to
/// 2^64 - 1), throws InputError(where, "expected a whole number from LO to HI, found 'TEXT'").
std::int64_t parse_integer(std::string_view text, const std::string& where, std::int64_t lo, std::int64_t hi);
/// The same for an unsigned range.
std::uint64_t parse_unsigned(std::string_view text, const std::string& where, std::uint64_t lo = 0,
                             std::uint64_t hi = UINT64_MAX);
/// A whole number from 0 to 2^64 - 1 (parse_unsigned's full range).
std::uint64_t parse_count(std::string_view text, const std::string& where = "");
/// "18 ns", "18ns", "29 nCK", "29 tCK" or a bare integer (cycles).
TimingValue parse_timing(std::string_view text, const std::string& where = "");

/// The one splitter of comma-separated option values ("--configs edge-s,edge-m", "--fit a,b"):
/// items trimmed of spaces, an empty item (",,", a leading or trailing comma, an empty value)
/// refused with InputError(option, "expected a comma-separated list without empty items, found
/// an empty item N in 'TEXT'").
std::vector<std::string> split_list(std::string_view text, const std::string& option);

std::string format_frequency(Frequency f);
std::string format_bandwidth(Bandwidth b);
std::string format_bytes(Bytes b);
std::string format_duration(Duration d);

}  // namespace npusim
