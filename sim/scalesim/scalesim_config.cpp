#include "sim/scalesim/scalesim_config.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "sim/core/errors.h"
#include "sim/core/file_util.h"

namespace npusim::scalesim {
namespace {

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

struct Value {
  std::string text;
  int line = 0;
};

/// The INI file as configparser sees it: sections of case-insensitive keys, `key: value` or
/// `key = value`, whole-line comments starting with '#' or ';'.
class IniFile {
 public:
  IniFile(const std::string& text, std::string source) : source_(std::move(source)) {
    std::istringstream in(text);
    std::string line, section;
    for (int number = 1; std::getline(in, line); ++number) {
      line = trim(line);
      if (line.empty() || line[0] == '#' || line[0] == ';') continue;
      if (line.front() == '[') {
        if (line.back() != ']') fail(number, "", "a section header '[name]'", "'" + line + "'");
        section = trim(line.substr(1, line.size() - 2));
        // Python's configparser (strict, as SCALE-Sim uses it) rejects a repeated section or key.
        if (const auto seen = section_lines_.find(section); seen != section_lines_.end())
          fail(number, "", "each section once",
               "a second [" + section + "] (first on line " + std::to_string(seen->second) + ")");
        section_lines_[section] = number;
        continue;
      }
      const auto sep = line.find_first_of(":=");
      if (sep == std::string::npos || sep == 0) fail(number, "", "'key: value' or 'key = value'", "'" + line + "'");
      if (section.empty()) fail(number, "", "a section header before the first key", "'" + line + "'");
      const std::string key = lower(trim(line.substr(0, sep)));
      if (const auto seen = values_[section].find(key); seen != values_[section].end())
        fail(number, "[" + section + "] " + key, "each key once per section",
             "a second '" + key + "' (first on line " + std::to_string(seen->second.line) + ")");
      values_[section][key] = {trim(line.substr(sep + 1)), number};
    }
  }

  [[noreturn]] void fail(int line, const std::string& key, const std::string& expected,
                         const std::string& found) const {
    std::string where = source_ + (line > 0 ? ":" + std::to_string(line) : "");
    if (!key.empty()) where += " (" + key + ")";
    throw InputError(where, "expected " + expected + ", found " + found);
  }

  const Value* find(const std::string& section, const std::string& key) const {
    const auto s = values_.find(section);
    if (s == values_.end()) return nullptr;
    const auto k = s->second.find(lower(key));
    return k == s->second.end() ? nullptr : &k->second;
  }

  Value require(const std::string& section, const std::string& key) const {
    const Value* v = find(section, key);
    if (!v) fail(0, "[" + section + "] " + key, "key '" + key + "' in section [" + section + "]", "none");
    return *v;
  }

  std::uint64_t positive(const std::string& section, const std::string& key, std::uint64_t max) const {
    const Value v = require(section, key);
    return to_positive(v, "[" + section + "] " + key, max);
  }

  /// A decimal integer in [1, max]; anything else (a sign, a fraction, 2^64) names the limit.
  std::uint64_t to_positive(const Value& v, const std::string& label, std::uint64_t max) const {
    const std::string expected = "an integer from 1 to " + std::to_string(max);
    const bool digits = !v.text.empty() && v.text.size() <= 20 &&
                        std::all_of(v.text.begin(), v.text.end(), [](unsigned char c) { return std::isdigit(c); });
    std::uint64_t n = 0;
    bool fits = digits;
    for (std::size_t i = 0; digits && i < v.text.size() && fits; ++i)
      fits = !__builtin_mul_overflow(n, 10u, &n) && !__builtin_add_overflow(n, unsigned(v.text[i] - '0'), &n);
    if (!fits || n < 1 || n > max) fail(v.line, label, expected, "'" + v.text + "'");
    return n;
  }

 private:
  std::string source_;
  std::map<std::string, std::map<std::string, Value>> values_;
  std::map<std::string, int> section_lines_;
};

constexpr const char* kArch = "architecture_presets";
// Declared limits (docs/scalesim.md section 1): an array side beyond 2^16 PEs or an SRAM beyond
// 2^32 KiB is no edge NPU, and keeps every product the model forms inside 64 bits.
constexpr std::uint64_t kMaxArraySide = std::uint64_t(1) << 16;
constexpr std::uint64_t kMaxSramKb = std::uint64_t(1) << 32;
constexpr std::uint64_t kMaxBandwidth = std::uint64_t(1) << 32;
constexpr const char* kRun = "run_presets";

Dataflow parse_dataflow(const IniFile& ini) {
  const Value v = ini.require(kArch, "Dataflow");
  if (const auto d = parse_dataflow_name(v.text)) return *d;
  ini.fail(v.line, std::string("[") + kArch + "] Dataflow", "ws, os or is", "'" + v.text + "'");
}

InterfaceBandwidth parse_interface(const IniFile& ini) {
  const Value v = ini.require(kRun, "InterfaceBandwidth");
  const std::string m = lower(v.text);
  if (m == "calc") return InterfaceBandwidth::Calc;
  if (m == "user") return InterfaceBandwidth::User;
  ini.fail(v.line, std::string("[") + kRun + "] InterfaceBandwidth", "CALC or USER", "'" + v.text + "'");
}

std::vector<std::uint64_t> parse_bandwidths(const IniFile& ini) {
  const Value v = ini.require(kArch, "Bandwidth");
  std::vector<std::uint64_t> out;
  std::stringstream ss(v.text);
  for (std::string part; std::getline(ss, part, ',');) {
    out.push_back(ini.to_positive({trim(part), v.line}, std::string("[") + kArch + "] Bandwidth", kMaxBandwidth));
  }
  if (out.empty()) ini.fail(v.line, std::string("[") + kArch + "] Bandwidth", "words per cycle", "nothing");
  return out;
}

}  // namespace

ScaleSimConfig parse_scalesim_config(const std::string& text, const std::string& source) {
  const IniFile ini(text, source);
  ScaleSimConfig c;
  c.source = source;
  if (const Value* name = ini.find("general", "run_name")) c.run_name = name->text;
  c.rows = std::uint32_t(ini.positive(kArch, "ArrayHeight", kMaxArraySide));
  c.cols = std::uint32_t(ini.positive(kArch, "ArrayWidth", kMaxArraySide));
  c.ifmap_kb = ini.positive(kArch, "IfmapSramSzkB", kMaxSramKb);
  c.filter_kb = ini.positive(kArch, "FilterSramSzkB", kMaxSramKb);
  c.ofmap_kb = ini.positive(kArch, "OfmapSramSzkB", kMaxSramKb);
  c.dataflow = parse_dataflow(ini);
  c.interface = parse_interface(ini);
  // SCALE-Sim reads Bandwidth only in USER mode; a CALC config may leave it out.
  if (c.interface == InterfaceBandwidth::User || ini.find(kArch, "Bandwidth")) c.bandwidths = parse_bandwidths(ini);
  return c;
}

ScaleSimConfig load_scalesim_config(const std::string& path) {
  return parse_scalesim_config(read_file(path), path);
}

}  // namespace npusim::scalesim
