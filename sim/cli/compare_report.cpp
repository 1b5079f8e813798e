#include "sim/cli/compare_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace npusim::cli {

namespace {

struct Totals {
  double seconds = 0, dram = 0, sram = 0, ops = 0;
};

/// Totals of the commands of `ops` (by name) in a trace; time is the union of their intervals.
Totals totals_of(const traces::Trace& t, const std::set<std::string>& ops) {
  std::set<int> idx;
  for (std::size_t i = 0; i < t.ops.size(); ++i)
    if (ops.count(t.ops[i].name)) idx.insert(int(i));
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
  Totals r;
  for (const auto& c : t.commands) {
    if (!idx.count(c.op)) continue;
    spans.emplace_back(c.begin_ps, c.end_ps);
    r.dram += double(c.dram_read_bytes + c.dram_write_bytes);
    r.sram += double(c.sram_read_bytes + c.sram_write_bytes);
    r.ops += 2.0 * double(c.macs) + double(c.vector_ops);
  }
  std::sort(spans.begin(), spans.end());
  std::uint64_t covered = 0, end = 0;
  for (const auto& [b, e] : spans) {
    if (e <= end) continue;
    covered += e - std::max(b, end);
    end = e;
  }
  r.seconds = double(covered) * 1e-12;
  return r;
}

nlohmann::json side(const Totals& t) {
  return {{"seconds", t.seconds},
          {"dram_bytes", t.dram},
          {"sram_bytes", t.sram},
          {"ops", t.ops},
          {"arithmetic_intensity", t.dram > 0 ? t.ops / t.dram : 0.0}};
}

std::string bound_of(const nlohmann::json& summary, const std::string& key, const std::string& name) {
  for (const auto& e : summary.value(key, nlohmann::json::array()))
    if (e.value("name", "") == name) return e.value("bound", std::string("?"));
  return "?";
}

}  // namespace

nlohmann::json compare_groups(const traces::Trace& a, const nlohmann::json& summary_a, const traces::Trace& b,
                              const nlohmann::json& summary_b) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& g : b.groups) {
    std::set<std::string> names;
    for (int o : g.ops) names.insert(b.ops[o].name);
    const Totals ta = totals_of(a, names), tb = totals_of(b, names);
    if (tb.seconds == 0 && ta.seconds == 0) continue;  // views only
    std::set<std::string> a_bounds;
    for (const auto& n : names) a_bounds.insert(bound_of(summary_a, "ops", n));
    std::string a_bound;
    for (const auto& x : a_bounds) a_bound += (a_bound.empty() ? "" : "/") + x;
    out.push_back({{"group", g.name},
                   {"fusion", g.fusion},
                   {"ops", names.size()},
                   {"a", side(ta)},
                   {"b", side(tb)},
                   {"a_bound", a_bound},
                   {"b_bound", bound_of(summary_b, "groups", g.name)},
                   {"speedup", tb.seconds > 0 ? ta.seconds / tb.seconds : 0.0}});
  }
  return out;
}

std::string group_table(const nlohmann::json& groups, const std::string& name_a, const std::string& name_b,
                        std::size_t top) {
  std::vector<const nlohmann::json*> rows;
  for (const auto& g : groups) rows.push_back(&g);
  auto saved = [](const nlohmann::json* g) {
    return (*g)["a"]["seconds"].get<double>() - (*g)["b"]["seconds"].get<double>();
  };
  std::sort(rows.begin(), rows.end(), [&](auto x, auto y) { return saved(x) > saved(y); });
  std::ostringstream os;
  char line[320];
  std::snprintf(line, sizeof line, "%-34s %4s %10s %10s %8s %10s %10s %9s %9s\n", "group (top by time saved)", "ops",
                (name_a + " us").c_str(), (name_b + " us").c_str(), "speedup", "DRAM KB a", "DRAM KB b", "AI a",
                "AI b");
  os << line;
  for (std::size_t i = 0; i < rows.size() && i < top; ++i) {
    const auto& g = *rows[i];
    std::string name = g["group"].get<std::string>();
    if (name.size() > 34) name = name.substr(0, 31) + "...";
    std::snprintf(line, sizeof line, "%-34s %4zu %10.1f %10.1f %7.2fx %10.1f %10.1f %9.1f %9.1f\n", name.c_str(),
                  g["ops"].get<std::size_t>(), g["a"]["seconds"].get<double>() * 1e6,
                  g["b"]["seconds"].get<double>() * 1e6, g["speedup"].get<double>(),
                  g["a"]["dram_bytes"].get<double>() / 1e3, g["b"]["dram_bytes"].get<double>() / 1e3,
                  g["a"]["arithmetic_intensity"].get<double>(), g["b"]["arithmetic_intensity"].get<double>());
    os << line;
  }
  return os.str();
}

std::string aligned_table(const nlohmann::json& blocks, const std::vector<std::string>& names, std::size_t top) {
  std::vector<const nlohmann::json*> rows;
  for (const auto& b : blocks) rows.push_back(&b);
  // Time saved against the first run by the best other run: the blocks where the runs differ most.
  auto saved = [](const nlohmann::json* b) {
    const auto& runs = (*b)["runs"];
    double best = 0;
    for (std::size_t r = 1; r < runs.size(); ++r)
      best = std::max(best, runs[0]["seconds"].get<double>() - runs[r]["seconds"].get<double>());
    return best;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](auto x, auto y) { return saved(x) > saved(y); });
  std::ostringstream os;
  char cell[128];
  std::snprintf(cell, sizeof cell, "%-34s %4s", "ops from (aligned by ops)", "ops");
  os << cell;
  for (const auto& n : names) {
    std::snprintf(cell, sizeof cell, " %14s", (n.substr(0, 11) + " us").c_str());
    os << cell;
  }
  for (const auto& n : names) {
    std::snprintf(cell, sizeof cell, " %14s", (n.substr(0, 8) + " DRAM KB").c_str());
    os << cell;
  }
  os << '\n';
  for (std::size_t i = 0; i < rows.size() && i < top; ++i) {
    const auto& b = *rows[i];
    std::string name = b["first_op"].get<std::string>();
    if (name.size() > 34) name = name.substr(0, 31) + "...";
    std::snprintf(cell, sizeof cell, "%-34s %4zu", name.c_str(), b["ops"].get<std::size_t>());
    os << cell;
    for (const auto& r : b["runs"]) {
      std::snprintf(cell, sizeof cell, " %14.1f", r["seconds"].get<double>() * 1e6);
      os << cell;
    }
    for (const auto& r : b["runs"]) {
      std::snprintf(cell, sizeof cell, " %14.1f", r["dram_bytes"].get<double>() / 1e3);
      os << cell;
    }
    os << '\n';
  }
  return os.str();
}

}  // namespace npusim::cli
