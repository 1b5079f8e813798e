#include "traces/multicore.h"

#include <algorithm>
#include <limits>

#include "traces/analysis.h"
#include "traces/roofline.h"
#include "traces/tally.h"

namespace npusim::traces {

using nlohmann::json;

Trace core_trace(const Trace& t, std::uint32_t core) {
  Trace c;
  c.workload = t.workload;
  c.fusion = t.fusion;
  c.config_name = t.config_name;
  c.config = t.config;
  c.ops = t.ops;
  c.groups = t.groups;
  c.end_ps = t.end_ps;
  const double n = std::max(t.cores, 1u);
  c.roofs = t.roofs;
  c.roofs.mac_peak_ops /= n;
  c.roofs.vector_peak_ops /= n;
  c.roofs.sram_bandwidth /= n;
  c.roofs.sram_capacity = static_cast<std::uint64_t>(double(t.roofs.sram_capacity) / n);
  c.roofs.cores = 1;
  // As core 0 of a one-core NPU, so the one-core analysis names its units as usual.
  for (const auto& e : t.commands)
    if (e.core == core) {
      c.commands.push_back(e);
      c.commands.back().core = 0;
    }
  for (const auto& a : t.sram_allocations)
    if (a.core == core) {
      c.sram_allocations.push_back(a);
      c.sram_allocations.back().core = 0;
    }
  return c;
}

json cores_summary(const Trace& t) {
  json out = json::array();
  if (t.cores <= 1) return out;
  for (std::uint32_t k = 0; k < t.cores; ++k) {
    Trace c = core_trace(t, k);
    // Energy is the chip's (the DRAM is shared); the per-core analysis needs none.
    c.config.erase("energy");
    const TraceAnalysis a = analyse_trace(c);
    const Tally& n = a.tallies.network;
    std::uint64_t dma_ps = 0, contention_ps = 0;
    for (const auto& e : c.commands)
      if (e.unit == Unit::Dma) dma_ps += e.end_ps - e.begin_ps, contention_ps += e.contention_ps;
    const double cycles = double(ps_to_cycles(t.end_ps, t.roofs.core_clock_hz));
    const double slots = cycles * t.roofs.mac_rows * t.roofs.mac_cols;
    json units = json::array();
    for (const UnitBusy& u : a.units)
      units.push_back({{"name", u.name},
                       {"commands", u.commands},
                       {"busy_seconds", double(u.busy_ps) * 1e-12},
                       {"busy_fraction", t.end_ps > 0 ? double(u.busy_ps) / double(t.end_ps) : 0.0}});
    // The compute unit's waits for DMA, split by how much of the DMA time was contention.
    json stalls = to_json(a.stalls.network);
    const double share = dma_ps > 0 ? double(contention_ps) / double(dma_ps) : 0.0;
    stalls["dram_contention_s"] = a.stalls.network.dma_wait_s * share;
    stalls["dma_wait_s"] = a.stalls.network.dma_wait_s * (1 - share);
    // The core's own roofline point (one core's roofs): where it sits and what bounds it.
    const Roofline roof = make_roofline(c, a);
    json bound = nullptr;
    for (const RooflinePoint& p : roof.points)
      if (p.scope == "network" && p.bottleneck)
        bound = {{"bound", p.bound},
                 {"bound_roof", p.bound_roof},
                 {"achieved_ops_per_second", p.ops_per_second},
                 {"fraction_of_bound_roof", p.fraction_of_bound_roof},
                 {"bound_text", p.bound_text}};
    out.push_back({{"core", k},
                   {"roofline", bound},
                   {"commands", c.commands.size()},
                   {"units_busy", units},
                   {"mac_utilization", slots > 0 ? double(n.macs) / slots : 0.0},
                   {"macs", n.macs},
                   {"vector_ops", n.vector_ops},
                   {"dram_read_bytes", n.dram_read_bytes},
                   {"dram_write_bytes", n.dram_write_bytes},
                   {"sram_read_bytes", n.sram_read_bytes},
                   {"sram_write_bytes", n.sram_write_bytes},
                   {"dma_busy_seconds", double(dma_ps) * 1e-12},
                   {"dram_contention_seconds", double(contention_ps) * 1e-12},
                   {"stalls", stalls}});
    if (!t.l2.is_null()) {  // npu.l2: what the core moved to and from the shared L2
      out.back()["l2_read_bytes"] = n.l2_read_bytes;
      out.back()["l2_write_bytes"] = n.l2_write_bytes;
    }
  }
  return out;
}

json parallel_summary(const Trace& t) {
  if (t.parallel.is_null()) return json();
  json p = t.parallel;
  const std::uint64_t per = p.value("commands_per_replica", std::uint64_t(0));
  const std::uint64_t replicas = p.value("replicas", std::uint64_t(1));
  if (per == 0 || replicas == 0) return p;
  std::vector<std::uint64_t> begin(replicas, std::numeric_limits<std::uint64_t>::max()), end(replicas, 0);
  for (const auto& e : t.commands) {
    const std::uint64_t r = e.id / per;
    if (r >= replicas) continue;
    begin[r] = std::min(begin[r], e.begin_ps);
    end[r] = std::max(end[r], e.end_ps);
  }
  json spans = json::array();
  for (std::uint64_t r = 0; r < replicas; ++r)
    spans.push_back(
        {{"begin_s", begin[r] == std::numeric_limits<std::uint64_t>::max() ? 0.0 : double(begin[r]) * 1e-12},
         {"end_s", double(end[r]) * 1e-12}});
  p["copies"] = spans;
  const double run_s = double(t.end_ps) * 1e-12;
  const double batch = double(p.value("batch", std::int64_t(1)));
  const bool pipeline = p.value("mode", std::string()) == "pipeline";
  const double first_begin = begin[0] == std::numeric_limits<std::uint64_t>::max() ? 0.0 : double(begin[0]) * 1e-12;
  p["latency_s"] = pipeline ? double(end[0]) * 1e-12 - first_begin : run_s;
  if (pipeline && replicas > 1) {
    const double interval = (double(end[replicas - 1]) - double(end[0])) * 1e-12 / double(replicas - 1);
    p["interval_s"] = interval;
    p["throughput_inputs_per_s"] = interval > 0 ? 1.0 / interval : 0.0;
  } else {
    p["interval_s"] = nullptr;
    p["throughput_inputs_per_s"] = run_s > 0 ? batch / run_s : 0.0;
  }
  return p;
}

json l2_summary(const Trace& t, const Tally& network) {
  if (t.l2.is_null()) return nullptr;
  const json& c = t.config.at("l2");
  const double per_cycle = c.at("banks").get<double>() * c.at("width_bytes").get<double>();
  const double cycles = double(t.end_ps) * 1e-12 * t.roofs.core_clock_hz;
  const double moved = double(network.l2_read_bytes + network.l2_write_bytes);
  return {{"capacity_bytes", c.at("capacity_bytes")},
          {"banks", c.at("banks")},
          {"width_bytes", c.at("width_bytes")},
          {"latency_cycles", c.at("latency_cycles")},
          {"read_bytes", network.l2_read_bytes},
          {"written_bytes", network.l2_write_bytes},
          {"busy_share", cycles > 0 && per_cycle > 0 ? moved / (per_cycle * cycles) : 0.0},
          {"peak_occupancy_bytes", t.l2.at("peak_occupancy_bytes")},
          {"tensors", t.l2.at("tensors")},
          {"bytes_placed", t.l2.at("bytes_placed")},
          {"left_in_dram", t.l2.at("left_in_dram")},
          {"largest_transfer_bytes", t.l2.at("largest_transfer_bytes")}};
}

}  // namespace npusim::traces
