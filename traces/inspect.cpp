#include "traces/inspect.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <numeric>

#include "traces/analysis.h"
#include "traces/format.h"
#include "traces/roofline.h"
#include "traces/summary.h"

namespace npusim::traces {

namespace {

using nlohmann::json;

constexpr int kBarWidth = 24;

/// printf into a std::string.
std::string fmt(const char* format, ...) {
  char buf[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  return buf;
}

std::string percent(double fraction) {
  return fmt("%5.1f %%", 100.0 * fraction);
}

std::string bar(double fraction) {
  const int filled = static_cast<int>(std::lround(std::clamp(fraction, 0.0, 1.0) * kBarWidth));
  return "[" + std::string(filled, '#') + std::string(kBarWidth - filled, '.') + "]";
}

/// "1,234,567".
std::string grouped(std::uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string cut(const std::string& s, std::size_t width) {
  return s.size() <= width ? s : s.substr(0, width - 2) + "..";
}

double number(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

/// The highest fraction of roof among an entity's points (its bottleneck level), or -1.
std::map<std::pair<std::string, std::string>, double> roof_fractions(const Roofline& r) {
  std::map<std::pair<std::string, std::string>, double> out;
  for (const RooflinePoint& p : r.points) {
    double& f = out.try_emplace({p.scope, p.name}, -1.0).first->second;
    f = std::max(f, p.fraction_of_roof);
  }
  return out;
}

void headline(std::string& out, const Trace& t, const json& s, const Roofline& r) {
  const double seconds = number(s, "seconds");
  const double ops = 2 * number(s, "macs") + number(s, "vector_ops");
  const double dram = number(s, "dram_read_bytes") + number(s, "dram_write_bytes");
  out += fmt("  time       %s (%s cycles at %s)\n", si(seconds, "s").c_str(),
             grouped(s.value("cycles", std::uint64_t(0))).c_str(), si(t.roofs.core_clock_hz, "Hz").c_str());
  out += fmt("  work       %s MACs + %s vector ops = %s -> %s (%.1f %% of the MAC array's %s)\n",
             si(number(s, "macs"), "").c_str(), si(number(s, "vector_ops"), "").c_str(), si(ops, "ops").c_str(),
             si(number(s, "achieved_ops_per_second"), "ops/s").c_str(),
             100.0 * number(s, "achieved_ops_per_second") / t.roofs.mac_peak_ops,
             si(t.roofs.mac_peak_ops, "ops/s").c_str());
  out +=
      fmt("  DRAM       %s (read %s, write %s); intensity %.1f ops/B; MAC utilisation %.1f %%\n", si(dram, "B").c_str(),
          si(number(s, "dram_read_bytes"), "B").c_str(), si(number(s, "dram_write_bytes"), "B").c_str(),
          number(s, "arithmetic_intensity"), 100.0 * number(s, "mac_utilization"));
  const double sram = number(s, "sram_read_bytes") + number(s, "sram_write_bytes");
  out += fmt("  SRAM       %s (read %s, write %s); of it partial sums %s\n", si(sram, "B").c_str(),
             si(number(s, "sram_read_bytes"), "B").c_str(), si(number(s, "sram_write_bytes"), "B").c_str(),
             si(number(s, "sram_psum_bytes"), "B").c_str());
  if (s["energy"].is_object()) {
    const json& e = s["energy"];
    const double total = number(e, "total_j");
    out += fmt("  energy     %s (%s, %s average): DRAM %.0f %%, SRAM %.0f %%, MAC %.0f %%, standing %.0f %%\n",
               si(total, "J").c_str(), si(total > 0 ? ops / total : 0, "ops/J").c_str(),
               si(seconds > 0 ? total / seconds : 0, "W").c_str(), 100 * number(e, "dram_j") / total,
               100 * (number(e, "sram_read_j") + number(e, "sram_write_j")) / total, 100 * number(e, "mac_j") / total,
               100 * number(e, "standing_j") / total);
  } else {
    out += "  energy     - (no energy model in the trace's config: npu.energy)\n";
  }
  for (const RooflinePoint& p : r.points) {
    if (p.scope != "network" || !p.bottleneck) continue;
    // The same sentence as summary.json, report.html and the live page (docs/outputs.md).
    out += "  bound      " + p.bound_text + "; bottleneck level " + p.level + "\n";
  }
  for (const std::string& v : r.violations) out += "  ! " + v + "\n";
}

void units(std::string& out, const json& s) {
  out += "\nUnit utilisation (busy share of the run)\n";
  for (const json& u : s["units_busy"]) {
    const double f = number(u, "busy_fraction");
    out += fmt("  %-14s %s  %s  %s commands\n", u.value("name", "").c_str(), percent(f).c_str(), bar(f).c_str(),
               grouped(u.value("commands", std::uint64_t(0))).c_str());
  }
}

void bound_classes(std::string& out, const json& entries, const char* what) {
  struct Row {
    int count = 0;
    double share = 0;
    std::map<std::string, int> causes;
  };
  std::map<std::string, Row> rows;
  for (const json& e : entries) {
    const std::string bound = e.value("bound", "none");
    if (bound == "none") continue;
    Row& r = rows[bound];
    ++r.count;
    r.share += number(e, "time_share");
    if (e["latency_cause"].is_string()) ++r.causes[e["latency_cause"].get<std::string>()];
  }
  out += fmt("\nBound classes (%s with a roofline point)\n  %-10s %5s  %s\n", what, "class", what, "time share");
  for (const char* bound : {"compute", "memory", "latency"}) {
    const Row& r = rows[bound];
    std::string causes;
    for (const auto& [cause, n] : r.causes)
      causes += (causes.empty() ? "   dominant losses: " : ", ") + cause + " " + std::to_string(n);
    out += fmt("  %-10s %5d  %s%s\n", bound, r.count, percent(r.share).c_str(), causes.c_str());
  }
}

void stalls(std::string& out, const json& s) {
  const json& st = s["stalls"];
  if (!st.is_object() || !st["unit"].is_string()) return;
  const double span = number(st, "span_s");
  out +=
      fmt("\nWhere the %s's time went (whole run, %s)\n", st["unit"].get<std::string>().c_str(), si(span, "s").c_str());
  for (const auto& [key, label] :
       std::initializer_list<std::pair<const char*, const char*>>{{"compute_s", "work at peak"},
                                                                  {"fill_drain_s", "fill/drain"},
                                                                  {"sram_stall_s", "SRAM stall"},
                                                                  {"sram_bank_conflict_s", "bank conflict"},
                                                                  {"dma_wait_s", "DMA wait"},
                                                                  {"dma_sram_wait_s", "DMA SRAM wait"},
                                                                  {"dependency_s", "dependency"},
                                                                  {"queueing_s", "queueing"}}) {
    const double f = span > 0 ? number(st, key) / span : 0;
    out += fmt("  %-14s %s  %s  %s\n", label, percent(f).c_str(), bar(f).c_str(), si(number(st, key), "s").c_str());
  }
}

void top_table(std::string& out, const json& entries, const Roofline& r, const InspectOptions& o) {
  const char* scope = o.groups ? "group" : "op";
  std::vector<const json*> rows;
  for (const json& e : entries) {
    if (number(e, "time_share") > 0) rows.push_back(&e);
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const json* a, const json* b) { return number(*a, "time_share") > number(*b, "time_share"); });
  rows.resize(std::min(rows.size(), o.top));
  const auto fractions = roof_fractions(r);
  out += fmt("\nTop %zu %ss by time share\n  %3s  %-28s %-12s %7s %11s  %-22s %6s %9s %9s %9s\n", rows.size(), scope,
             "#", scope, o.groups ? "fusion" : "kind", "time", "cycles", "bound", "%roof", "ops/B", "DRAM", "energy");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json& e = *rows[i];
    const std::string name = e.value("name", "");
    std::string bound = e.value("bound", "none");
    if (e["latency_cause"].is_string()) bound += " (" + e["latency_cause"].get<std::string>() + ")";
    auto f = fractions.find({scope, name});
    const std::string roof = f == fractions.end() ? "-" : fmt("%.1f", 100 * f->second);
    const std::string intensity =
        e["arithmetic_intensity"].is_number() ? fmt("%.3g", number(e, "arithmetic_intensity")) : "-";
    const std::string energy = e["energy_j"].is_number() ? si(number(e, "energy_j"), "J") : "-";
    out += fmt("  %3zu  %-28s %-12s %s %11s  %-22s %6s %9s %9s %9s\n", i + 1, cut(name, 28).c_str(),
               cut(e.value(o.groups ? "fusion" : "kind", ""), 12).c_str(), percent(number(e, "time_share")).c_str(),
               grouped(e.value("cycles", std::uint64_t(0))).c_str(), cut(bound, 22).c_str(), roof.c_str(),
               intensity.c_str(), si(number(e, "dram_read_bytes") + number(e, "dram_write_bytes"), "B").c_str(),
               energy.c_str());
  }
  out +=
      "  (time: share of the run's time, shared among what is in flight; cycles: span; %roof: of the binding roof)\n";
}

}  // namespace

std::string inspect_report(const Trace& t, const InspectOptions& o) {
  const TraceAnalysis a = analyse_trace(t);
  const Roofline r = make_roofline(t, a);
  const json s = make_summary(t, r, a);
  std::string out = t.workload + " on " + t.config_name + ", fusion " + t.fusion +
                    (o.source.empty() ? "" : "  (" + o.source + ")") + "\n";
  headline(out, t, s, r);
  units(out, s);
  bound_classes(out, s["ops"], "ops");
  stalls(out, s);
  top_table(out, o.groups ? s["groups"] : s["ops"], r, o);
  return out;
}

}  // namespace npusim::traces
