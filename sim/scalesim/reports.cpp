#include "sim/scalesim/reports.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "sim/core/errors.h"
#include "sim/core/file_util.h"

namespace npusim::scalesim {
namespace {

/// Python prints floats in fixed notation while the decimal exponent is in [-4, 16).
constexpr int kMinFixedExponent = -4;
constexpr int kMaxFixedExponent = 16;

/// One report row: "<id>, <v1>, <v2>, ...,\n" as SCALE-Sim joins its items.
class Row {
 public:
  explicit Row(std::size_t id) : text_(std::to_string(id)) {}
  Row& add(const std::string& item) {
    text_ += ", " + item;
    return *this;
  }
  Row& add(std::uint64_t v) { return add(std::to_string(v)); }
  Row& add(double v) { return add(python_float(v)); }
  /// Cycles come out of numpy arrays in SCALE-Sim and print as floats ("129.0").
  Row& cycle(std::int64_t c) { return add(python_float(double(c))); }
  std::string str() const { return text_ + ",\n"; }

 private:
  std::string text_;
};

}  // namespace

std::string python_float(double v) {
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // e.g. "-2.5147347740667975e+01"
  const bool negative = sci[0] == '-';
  if (negative) sci.erase(0, 1);
  const auto e = sci.find('e');
  const int exponent = std::atoi(sci.c_str() + e + 1);
  std::string digits = sci.substr(0, e);
  if (digits.size() > 1) digits.erase(1, 1);  // drop the decimal point
  std::string out;
  if (exponent >= kMinFixedExponent && exponent < kMaxFixedExponent) {
    if (exponent < 0) {
      out = "0." + std::string(std::size_t(-exponent - 1), '0') + digits;
    } else if (std::size_t(exponent) + 1 >= digits.size()) {
      out = digits + std::string(std::size_t(exponent) + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, std::size_t(exponent) + 1) + "." + digits.substr(std::size_t(exponent) + 1);
    }
  } else {
    out = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "");
    const std::string mag = std::to_string(std::abs(exponent));
    out += std::string("e") + (exponent < 0 ? "-" : "+") + (mag.size() < 2 ? "0" : "") + mag;
  }
  return negative ? "-" + out : out;
}

std::string compute_report(const std::vector<LayerReport>& layers) {
  std::string s = "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,\n";
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const LayerReport& l = layers[i];
    s += Row(i)
             .add(l.total_cycles)
             .add(l.stall_cycles)
             .add(l.overall_util)
             .add(l.mapping_efficiency)
             .add(l.compute_util)
             .str();
  }
  return s;
}

std::string bandwidth_report(const std::vector<LayerReport>& layers) {
  std::string s =
      "LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg OFMAP SRAM BW, Avg IFMAP DRAM BW, "
      "Avg FILTER DRAM BW, Avg OFMAP DRAM BW,\n";
  for (std::size_t i = 0; i < layers.size(); ++i) {
    Row row(i);
    for (double bw : layers[i].sram_bw) row.add(bw);
    for (double bw : layers[i].dram_bw) row.add(bw);
    s += row.str();
  }
  return s;
}

std::string detailed_access_report(const std::vector<LayerReport>& layers) {
  std::string s = "LayerID, ";
  for (const char* level : {"SRAM", "DRAM"}) {
    const std::string l = level;
    s += l + " IFMAP Start Cycle, " + l + " IFMAP Stop Cycle, " + l + " IFMAP Reads, ";
    s += l + " Filter Start Cycle, " + l + " Filter Stop Cycle, " + l + " Filter Reads, ";
    s += l + " OFMAP Start Cycle, " + l + " OFMAP Stop Cycle, " + l + " OFMAP Writes, ";
  }
  s.replace(s.size() - 2, 2, ",\n");
  for (std::size_t i = 0; i < layers.size(); ++i) {
    Row row(i);
    for (const auto* level : {&layers[i].sram, &layers[i].dram}) {
      for (const Access& a : *level) row.cycle(a.start).cycle(a.stop).add(a.words);
    }
    s += row.str();
  }
  return s;
}

void write_reports(const std::string& dir, const std::vector<LayerReport>& layers) {
  // The folder is the command's OutputDir, made and registered before the run: creating it here
  // again would bring it (and its parents) back after a signal's clean-up removed them.
  const std::filesystem::path d(dir);
  write_file_atomic((d / "COMPUTE_REPORT.csv").string(), compute_report(layers));
  write_file_atomic((d / "BANDWIDTH_REPORT.csv").string(), bandwidth_report(layers));
  write_file_atomic((d / "DETAILED_ACCESS_REPORT.csv").string(), detailed_access_report(layers));
}

}  // namespace npusim::scalesim
