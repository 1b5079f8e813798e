#include "traces/aligned_groups.h"

#include <map>
#include <set>

namespace npusim::traces {
using nlohmann::json;

namespace {

/// Union-find over op names: ops that share a group in any run end in one block.
class Blocks {
 public:
  int id(const std::string& op) {
    const auto [it, fresh] = index_.emplace(op, int(parent_.size()));
    if (fresh) parent_.push_back(it->second);
    return it->second;
  }
  int root(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void join(int a, int b) { parent_[root(a)] = root(b); }

 private:
  std::map<std::string, int> index_;
  std::vector<int> parent_;
};

double number(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

const json& list(const json& summary, const char* key) {
  static const json empty = json::array();
  const auto it = summary.find(key);
  return it != summary.end() && it->is_array() ? *it : empty;
}

/// One run's side of a block: its groups there and their figures summed. Time is the groups'
/// `time_share` of the run (what is in flight shares the time, so the blocks of a run add up to
/// its seconds; their spans overlap where a group's loads prefetch during the previous one).
json side(const std::string& name, const std::vector<const json*>& groups, double run_seconds) {
  double seconds = 0, dram = 0, sram = 0, ops = 0;
  json names = json::array();
  std::set<std::string> bounds;
  for (const json* g : groups) {
    names.push_back(g->value("name", ""));
    seconds += number(*g, "time_share") * run_seconds;
    dram += number(*g, "dram_read_bytes") + number(*g, "dram_write_bytes");
    sram += number(*g, "sram_read_bytes") + number(*g, "sram_write_bytes");
    ops += 2 * number(*g, "macs") + number(*g, "vector_ops");
    bounds.insert(g->value("bound", std::string("?")));
  }
  std::string bound;
  for (const auto& b : bounds) bound += (bound.empty() ? "" : "/") + b;
  return {{"name", name},
          {"groups", names},
          {"seconds", seconds},
          {"dram_bytes", dram},
          {"sram_bytes", sram},
          {"ops", ops},
          {"arithmetic_intensity", dram > 0 ? json(ops / dram) : json()},
          {"bound", bound}};
}

}  // namespace

json align_groups(const std::vector<std::pair<std::string, const json*>>& runs) {
  json out = json::array();
  if (runs.empty()) return out;
  Blocks blocks;
  for (const auto& [name, summary] : runs)
    for (const json& g : list(*summary, "groups")) {
      const json& members = list(g, "members");
      for (const json& m : members)
        blocks.join(blocks.id(m.get<std::string>()), blocks.id(members[0].get<std::string>()));
    }
  // Blocks in the first run's op order.
  std::map<int, std::size_t> order;
  std::vector<std::size_t> op_count;
  std::vector<std::string> first_op;
  for (const json& op : list(*runs[0].second, "ops")) {
    const auto [it, fresh] = order.emplace(blocks.root(blocks.id(op.value("name", ""))), op_count.size());
    if (fresh) op_count.push_back(0), first_op.push_back(op.value("name", ""));
    ++op_count[it->second];
  }
  std::vector<std::vector<std::vector<const json*>>> groups(op_count.size(),
                                                            std::vector<std::vector<const json*>>(runs.size()));
  for (std::size_t r = 0; r < runs.size(); ++r)
    for (const json& g : list(*runs[r].second, "groups")) {
      const json& members = list(g, "members");
      if (members.empty()) continue;
      const auto it = order.find(blocks.root(blocks.id(members[0].get<std::string>())));
      if (it != order.end()) groups[it->second][r].push_back(&g);
    }
  for (std::size_t b = 0; b < op_count.size(); ++b) {
    json sides = json::array(), speedup = json::array();
    double busy = 0;
    for (std::size_t r = 0; r < runs.size(); ++r) {
      sides.push_back(side(runs[r].first, groups[b][r], number(*runs[r].second, "seconds")));
      busy += sides.back()["seconds"].get<double>();
    }
    if (busy == 0) continue;  // views only
    const double base = sides[0]["seconds"].get<double>();
    for (const json& s : sides)
      speedup.push_back(s["seconds"].get<double>() > 0 ? base / s["seconds"].get<double>() : 0.0);
    out.push_back({{"ops", op_count[b]}, {"first_op", first_op[b]}, {"runs", sides}, {"speedup", speedup}});
  }
  return out;
}

}  // namespace npusim::traces
