#include "sim/core/units.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/errors.h"

namespace npusim {
namespace {

struct NumberAndUnit {
  double number = 0;
  std::string unit;  // as written, surrounding spaces removed
};

// Splits "25.6 GB/s" into 25.6 and "GB/s". The number must come first and be finite.
NumberAndUnit split(std::string_view text, const std::string& where, const char* expected) {
  std::string s(text);
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  if (b == std::string::npos) throw InputError(where, std::string("expected ") + expected + ", found an empty value");
  s = s.substr(b, e - b + 1);
  size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(s, &pos);
  } catch (const std::exception&) {
    throw InputError(where, std::string("expected ") + expected + ", found '" + s + "'");
  }
  if (!std::isfinite(v)) throw InputError(where, std::string("expected ") + expected + ", found '" + s + "'");
  std::string unit = s.substr(pos);
  size_t ub = unit.find_first_not_of(" \t");
  unit = ub == std::string::npos ? "" : unit.substr(ub);
  return {v, unit};
}

// Looks `unit` up in a table of (spelling, scale); throws naming the accepted spellings.
double scale_of(const NumberAndUnit& nu, const std::vector<std::pair<const char*, double>>& table,
                const std::string& where, const char* expected, std::string_view text) {
  for (const auto& [name, scale] : table)
    if (nu.unit == name) return scale;
  std::string names;
  for (const auto& [name, scale] : table) names += std::string(names.empty() ? "" : ", ") + (*name ? name : "(none)");
  throw InputError(
      where, std::string("expected ") + expected + " with a unit (" + names + "), found '" + std::string(text) + "'");
}

void require_non_negative(double v, const std::string& where, std::string_view text) {
  if (v < 0) throw InputError(where, "expected a non-negative value, found '" + std::string(text) + "'");
}

// number x scale, which must stay finite: "1e300 GHz" is not a frequency.
double scaled(const NumberAndUnit& nu, double scale, const std::string& where, std::string_view text) {
  const double v = nu.number * scale;
  if (!std::isfinite(v)) throw InputError(where, "expected a finite value, found '" + std::string(text) + "'");
  return v;
}

std::string fixed(double v, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g %s", v, unit);
  return buf;
}

}  // namespace

std::uint32_t TimingValue::to_cycles(double tck_seconds, const std::string& where) const {
  // JEDEC rounds up; the tolerance keeps exact multiples from being pushed up by float error.
  const double cycles = in_clock_cycles ? value : std::ceil(value / tck_seconds - 1e-3);
  // Checked before the conversion: 2^32 cycles must not wrap to 0 and run with tRCD 0.
  if (!(cycles <= double(kMaxTimingCycles)))
    throw InputError(where, "expected a timing of at most " + std::to_string(kMaxTimingCycles) +
                                " clock cycles, found " + fixed(cycles, "nCK"));
  return static_cast<std::uint32_t>(std::max(cycles, 0.0));
}

Frequency parse_frequency(std::string_view text, const std::string& where) {
  auto nu = split(text, where, "a frequency such as '1 GHz'");
  double s = scale_of(nu, {{"Hz", 1}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}}, where, "a frequency", text);
  if (nu.number <= 0) throw InputError(where, "expected a positive frequency, found '" + std::string(text) + "'");
  return {scaled(nu, s, where, text)};
}

Bandwidth parse_bandwidth(std::string_view text, const std::string& where) {
  auto nu = split(text, where, "a bandwidth such as '25.6 GB/s'");
  double s = scale_of(nu,
                      {{"B/s", 1},
                       {"KB/s", 1e3},
                       {"MB/s", 1e6},
                       {"GB/s", 1e9},
                       {"TB/s", 1e12},
                       {"KiB/s", 1024.0},
                       {"MiB/s", 1024.0 * 1024},
                       {"GiB/s", 1024.0 * 1024 * 1024}},
                      where, "a bandwidth", text);
  require_non_negative(nu.number, where, text);
  return {scaled(nu, s, where, text)};
}

Bytes parse_bytes(std::string_view text, const std::string& where) {
  auto nu = split(text, where, "a size such as '512 KiB'");
  static const std::vector<std::pair<const char*, double>> units = {{"", 1},
                                                                    {"B", 1},
                                                                    {"KB", 1e3},
                                                                    {"MB", 1e6},
                                                                    {"GB", 1e9},
                                                                    {"TB", 1e12},
                                                                    {"PB", 1e15},
                                                                    {"KiB", 1024.0},
                                                                    {"MiB", 1048576.0},
                                                                    {"GiB", 1073741824.0},
                                                                    {"TiB", 1099511627776.0},
                                                                    {"PiB", 1125899906842624.0}};
  const double s = scale_of(nu, units, where, "a size", text);
  require_non_negative(nu.number, where, text);
  // 2^63 is the first double that no longer fits an int64; sizes this big are never meant.
  const auto too_big = [&] {
    return InputError(where, "expected a size below 2^63 bytes, found '" + std::string(text) + "'");
  };
  // A number of digits alone is converted exactly: in a double, 2^53 + 1 bytes would become 2^53.
  std::string number(text);
  number = number.substr(number.find_first_not_of(" \t"));
  number = number.substr(0, number.find_last_not_of(" \t") + 1);
  number = number.substr(0, number.size() - nu.unit.size());
  number = number.substr(0, number.find_last_not_of(" \t") + 1);
  if (!number.empty() && number.find_first_not_of("0123456789") == std::string::npos) {
    std::uint64_t v = 0;
    for (const char c : number)
      if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, std::uint64_t(c - '0'), &v)) throw too_big();
    if (__builtin_mul_overflow(v, static_cast<std::uint64_t>(s), &v) || v >= (1ull << 63)) throw too_big();
    return {v};
  }
  const double bytes = scaled(nu, s, where, text);
  if (bytes != std::floor(bytes))
    throw InputError(where, "expected a whole number of bytes, found '" + std::string(text) + "'");
  if (bytes >= 9223372036854775808.0) throw too_big();
  return {static_cast<std::uint64_t>(bytes)};
}

Duration parse_duration(std::string_view text, const std::string& where) {
  auto nu = split(text, where, "a time such as '18 ns'");
  double s = scale_of(nu, {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"ps", 1e-12}}, where, "a time", text);
  require_non_negative(nu.number, where, text);
  return {scaled(nu, s, where, text)};
}

namespace {

// Energy spellings, shared by the per-event and the per-byte parser.
const std::vector<std::pair<std::string, double>>& energy_units() {
  static const std::vector<std::pair<std::string, double>> units = {{"fJ", 1e-15}, {"pJ", 1e-12}, {"nJ", 1e-9},
                                                                    {"uJ", 1e-6},  {"mJ", 1e-3},  {"J", 1}};
  return units;
}

Energy parse_energy_with_suffix(std::string_view text, const std::string& where, const std::string& suffix,
                                const char* example) {
  auto nu = split(text, where, example);
  std::vector<std::pair<std::string, double>> spelled;
  for (const auto& [unit, scale] : energy_units()) spelled.emplace_back(unit + suffix, scale);
  std::vector<std::pair<const char*, double>> table;
  for (const auto& [unit, scale] : spelled) table.emplace_back(unit.c_str(), scale);
  const double s = scale_of(nu, table, where, example, text);
  require_non_negative(nu.number, where, text);
  return {scaled(nu, s, where, text)};
}

}  // namespace

Energy parse_energy(std::string_view text, const std::string& where) {
  return parse_energy_with_suffix(text, where, "", "an energy such as '0.2 pJ'");
}

Energy parse_energy_per_byte(std::string_view text, const std::string& where) {
  return parse_energy_with_suffix(text, where, "/B", "an energy per byte such as '1.2 pJ/B'");
}

Power parse_power(std::string_view text, const std::string& where) {
  auto nu = split(text, where, "a power such as '50 mW'");
  const double s = scale_of(nu, {{"uW", 1e-6}, {"mW", 1e-3}, {"W", 1}}, where, "a power", text);
  require_non_negative(nu.number, where, text);
  return {scaled(nu, s, where, text)};
}

TimingValue parse_timing(std::string_view text, const std::string& where) {
  auto nu = split(text, where, "a timing such as '18 ns' or '29 nCK'");
  require_non_negative(nu.number, where, text);
  if (nu.unit.empty() || nu.unit == "nCK" || nu.unit == "tCK" || nu.unit == "cycles") {
    if (nu.number != std::floor(nu.number))
      throw InputError(where, "expected a whole number of clock cycles, found '" + std::string(text) + "'");
    return {nu.number, true};
  }
  double s = scale_of(nu, {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"ps", 1e-12}}, where,
                      "a timing in nCK or", text);
  return {scaled(nu, s, where, text), false};
}

std::string format_frequency(Frequency f) {
  if (f.hz >= 1e9) return fixed(f.hz / 1e9, "GHz");
  if (f.hz >= 1e6) return fixed(f.hz / 1e6, "MHz");
  return fixed(f.hz, "Hz");
}

std::string format_bandwidth(Bandwidth b) {
  if (b.bytes_per_second >= 1e9) return fixed(b.bytes_per_second / 1e9, "GB/s");
  return fixed(b.bytes_per_second / 1e6, "MB/s");
}

std::string format_bytes(Bytes b) {
  const double v = double(b.value);
  if (b.value >= (1ull << 40)) return fixed(v / (1ull << 40), "TiB");
  if (b.value >= (1ull << 30)) return fixed(v / (1ull << 30), "GiB");
  if (b.value >= (1ull << 20)) return fixed(v / (1ull << 20), "MiB");
  if (b.value >= (1ull << 10)) return fixed(v / (1ull << 10), "KiB");
  return std::to_string(b.value) + " B";
}

std::string format_duration(Duration d) {
  if (d.seconds >= 1) return fixed(d.seconds, "s");
  if (d.seconds >= 1e-3) return fixed(d.seconds * 1e3, "ms");
  if (d.seconds >= 1e-6) return fixed(d.seconds * 1e6, "us");
  return fixed(d.seconds * 1e9, "ns");
}

namespace {

/// A whole number as written: an optional '-' and 1 to 20 digits; `ok` false for anything else.
struct WholeNumber {
  bool ok = false, negative = false, overflow = false;
  std::uint64_t magnitude = 0;
};

WholeNumber read_whole(std::string_view text) {
  WholeNumber n;
  n.negative = !text.empty() && text[0] == '-';
  const std::string_view digits = text.substr(n.negative ? 1 : 0);
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }))
    return n;
  n.ok = true;
  for (const char c : digits) {
    const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
    if (n.magnitude > (UINT64_MAX - d) / 10) {
      n.overflow = true;
      break;
    }
    n.magnitude = n.magnitude * 10 + d;
  }
  return n;
}

/// The text as found, cut at 64 characters (a hostile value may be megabytes long).
std::string shown(std::string_view text) {
  return text.size() > 64 ? std::string(text.substr(0, 64)) + "..." : std::string(text);
}

[[noreturn]] void out_of_range(std::string_view text, const std::string& where, const std::string& lo,
                               const std::string& hi) {
  throw InputError(where, "expected a whole number from " + lo + " to " + hi + ", found '" + shown(text) + "'");
}

}  // namespace

std::int64_t parse_integer(std::string_view text, const std::string& where, std::int64_t lo, std::int64_t hi) {
  const WholeNumber n = read_whole(text);
  const std::uint64_t limit = n.negative ? std::uint64_t(INT64_MAX) + 1 : std::uint64_t(INT64_MAX);
  if (!n.ok || n.overflow || n.magnitude > limit) out_of_range(text, where, std::to_string(lo), std::to_string(hi));
  const std::int64_t v =
      n.negative ? static_cast<std::int64_t>(0 - n.magnitude) : static_cast<std::int64_t>(n.magnitude);
  if (v < lo || v > hi) out_of_range(text, where, std::to_string(lo), std::to_string(hi));
  return v;
}

std::uint64_t parse_unsigned(std::string_view text, const std::string& where, std::uint64_t lo, std::uint64_t hi) {
  const WholeNumber n = read_whole(text);
  const bool negative_zero = n.negative && n.magnitude == 0;
  if (!n.ok || n.overflow || (n.negative && !negative_zero) || n.magnitude < lo || n.magnitude > hi)
    out_of_range(text, where, std::to_string(lo), std::to_string(hi));
  return n.magnitude;
}

std::uint64_t parse_count(std::string_view text, const std::string& where) {
  return parse_unsigned(text, where);
}

std::vector<std::string> split_list(std::string_view text, const std::string& option) {
  std::vector<std::string> items;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    std::string_view item =
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const std::size_t b = item.find_first_not_of(" \t");
    item = b == std::string_view::npos ? std::string_view() : item.substr(b, item.find_last_not_of(" \t") - b + 1);
    if (item.empty())
      throw InputError(option, "expected a comma-separated list without empty items, found an empty item " +
                                   std::to_string(items.size() + 1) + " in '" + shown(text) + "'");
    items.emplace_back(item);
    if (comma == std::string_view::npos) return items;
    start = comma + 1;
  }
}

}  // namespace npusim
