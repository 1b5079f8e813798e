#include "sim/serve/timeline.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "traces/trace_tracks.h"

namespace npusim::serve {

namespace {

struct Track {
  std::vector<double> busy_ps;               // per bin
  std::vector<std::map<int, double>> by_op;  // per bin: op -> ps
};

/// Adds [b, e) of `op` to the bins it overlaps.
void add_interval(Track& tr, std::uint64_t b, std::uint64_t e, int op, std::uint64_t w0, double bin_ps,
                  std::size_t bins) {
  if (e <= b) return;
  const double lo = double(b) - double(w0), hi = double(e) - double(w0);
  if (hi <= 0 || lo >= bin_ps * double(bins)) return;
  const std::size_t first = std::size_t(std::max(0.0, lo / bin_ps));
  const std::size_t last = std::min(bins - 1, std::size_t(hi / bin_ps));
  for (std::size_t i = first; i <= last; ++i) {
    const double part = std::min(hi, bin_ps * double(i + 1)) - std::max(lo, bin_ps * double(i));
    if (part <= 0) continue;
    tr.busy_ps[i] += part;
    if (op >= 0) tr.by_op[i][op] += part;
  }
}

}  // namespace

nlohmann::json make_timeline(const traces::Trace& t, const TimelineWindow& w) {
  const std::uint64_t end = w.end_ps == 0 ? t.end_ps : std::min(w.end_ps, t.end_ps);
  const std::uint64_t begin = std::min(w.begin_ps, end);
  const std::size_t bins = std::clamp<std::uint32_t>(w.bins, kMinTimelineBins, kMaxTimelineBins);
  const double bin_ps = std::max(1.0, double(end - begin) / double(bins));

  std::map<std::string, Track> tracks;  // by name; `order` keeps MAC array, vector unit, then first seen
  std::vector<std::string> order;
  auto track = [&](const std::string& name) -> Track& {
    auto it = tracks.find(name);
    if (it == tracks.end()) {
      order.push_back(name);
      it = tracks.emplace(name, Track{std::vector<double>(bins, 0.0), std::vector<std::map<int, double>>(bins)}).first;
    }
    return it->second;
  };
  const bool multi = t.cores > 1;  // one track per core's unit (docs/multicore.md)
  track(traces::tracks::unit_track_name(traces::Unit::MacArray, 0, 0, multi));
  track(traces::tracks::unit_track_name(traces::Unit::VectorUnit, 0, 0, multi));
  for (const auto& c : t.commands)
    add_interval(track(traces::tracks::unit_track_name(c.unit, c.lane, c.core, multi)), c.begin_ps, c.end_ps, c.op,
                 begin, bin_ps, bins);
  for (const auto& s : t.dram_activity.bus)
    add_interval(track("DRAM ch" + std::to_string(s.channel) + " bus"), s.begin_ps, s.end_ps, -1, begin, bin_ps, bins);

  nlohmann::json out_tracks = nlohmann::json::array();
  std::vector<int> used_ops;
  std::map<int, int> op_index;  // trace op -> index in the answer's ops
  for (const auto& name : order) {
    const Track& tr = tracks.at(name);
    nlohmann::json busy = nlohmann::json::array(), ops = nlohmann::json::array();
    for (std::size_t i = 0; i < bins; ++i) {
      busy.push_back(std::round(std::min(1.0, tr.busy_ps[i] / bin_ps) * 1000) / 1000);
      int top = -1;
      double most = 0;
      for (const auto& [op, ps] : tr.by_op[i])
        if (ps > most) most = ps, top = op;
      if (top >= 0 && !op_index.count(top)) op_index[top] = int(used_ops.size()), used_ops.push_back(top);
      ops.push_back(top >= 0 ? op_index[top] : -1);
    }
    out_tracks.push_back({{"name", name}, {"busy", busy}, {"op", ops}});
  }
  nlohmann::json names = nlohmann::json::array();
  for (int op : used_ops) names.push_back(op < int(t.ops.size()) ? t.ops[std::size_t(op)].name : "?");
  return {{"begin_ps", begin}, {"end_ps", end}, {"bin_ps", bin_ps},
          {"bins", bins},      {"ops", names},  {"tracks", out_tracks}};
}

}  // namespace npusim::serve
