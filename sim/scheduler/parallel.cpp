#include "sim/scheduler/parallel.h"

#include <algorithm>

#include "sim/core/errors.h"
#include "sim/scheduler/host_ops.h"
#include "sim/scheduler/tensor_parallel.h"

namespace npusim::sched {
namespace {

std::string where_of(ParallelMode m) {
  return "--parallel " + to_string(m);
}

/// The batch of `g`: the leading size shared by every non-constant input.
std::int64_t batch_of(const workloads::Graph& g, ParallelMode mode, std::string& example) {
  const auto inputs = g.graph_inputs();
  if (inputs.empty())
    throw InputError(where_of(mode),
                     "expected a workload with an input whose first dimension is the batch, found no inputs");
  std::int64_t batch = 0;
  for (int t : inputs) {
    const auto& tensor = g.tensor(t);
    const std::int64_t b = tensor.shape.empty() ? 0 : tensor.shape[0];
    const std::string here = "input '" + tensor.name + "', shape " + workloads::format_shape(tensor.shape);
    if (batch != 0 && b != batch)
      throw InputError(where_of(mode),
                       "expected every input to lead with the same batch, found " + example + " and " + here);
    batch = b;
    if (example.empty()) example = here;
  }
  return batch;
}

/// `g` with every input's batch set to `batch` and every other shape inferred again.
workloads::Graph rebatched(const workloads::Graph& g, std::int64_t batch, ParallelMode mode) {
  workloads::Graph out = g.empty_copy();
  for (const auto& t : g.tensors()) {
    workloads::Tensor c = t;
    if (t.producer >= 0)
      c.shape.clear();
    else if (!t.is_constant)
      c.shape[0] = batch;
    out.add_tensor(std::move(c));
  }
  for (const auto& op : g.ops()) out.add_op(op);
  try {
    out.finalize();
  } catch (const InputError& e) {
    // An attribute that spells out the batch (a reshape to [4, 2048]) does not follow the inputs.
    throw InputError(where_of(mode),
                     "expected the workload to run with batch " + std::to_string(batch) +
                         " per copy, found an op whose shape does not follow its inputs' batch: " + e.what());
  }
  return out;
}

/// Auto's per-segment choices and how many segments took each split (docs/outputs.md).
void add_choices(nlohmann::json& j, const ParallelPlan& pp) {
  const auto seconds = [](double s) { return s < 0 ? nlohmann::json(nullptr) : nlohmann::json(s); };
  nlohmann::json list = nlohmann::json::array();
  nlohmann::json counts = {{"serial", 0}, {"channels", 0}, {"batch", 0}};
  for (const auto& c : pp.choices) {
    list.push_back(
        {{"op", c.op},
         {"split", to_string(c.split)},
         {"estimated_s",
          {{"serial", seconds(c.serial_s)}, {"channels", seconds(c.channels_s)}, {"batch", seconds(c.batch_s)}}},
         {"reason", c.reason}});
    counts[to_string(c.split)] = counts[to_string(c.split)].get<int>() + 1;
  }
  j["choices"] = list;
  j["choice_counts"] = counts;
}

}  // namespace

std::string to_string(ParallelMode m) {
  switch (m) {
    case ParallelMode::None:
      return "none";
    case ParallelMode::Data:
      return "data";
    case ParallelMode::Pipeline:
      return "pipeline";
    case ParallelMode::Tensor:
      return "tensor";
    case ParallelMode::Auto:
      return "auto";
  }
  return "?";
}

std::string to_string(SplitKind k) {
  switch (k) {
    case SplitKind::Serial:
      return "serial";
    case SplitKind::Channels:
      return "channels";
    case SplitKind::Batch:
      return "batch";
  }
  return "?";
}

ParallelMode parse_parallel_mode(const std::string& text, const std::string& where) {
  for (ParallelMode m :
       {ParallelMode::None, ParallelMode::Data, ParallelMode::Pipeline, ParallelMode::Tensor, ParallelMode::Auto})
    if (text == to_string(m)) return m;
  throw InputError(where, "expected none, data, pipeline, tensor or auto, found '" + text + "'");
}

bool pins_ops_to_cores(ParallelMode m) {
  return m == ParallelMode::Tensor || m == ParallelMode::Auto;
}

workloads::Graph replica_graph(const workloads::Graph& g, ParallelMode mode, std::uint32_t cores, ParallelPlan& out) {
  if (mode == ParallelMode::Auto)  // a caller's slip, not the user's: auto needs the roofs
    throw std::logic_error("replica_graph: --parallel auto needs the hardware config");
  HardwareConfig hw;
  hw.cores = cores;
  return replica_graph(g, mode, hw, out);
}

workloads::Graph replica_graph(const workloads::Graph& g, ParallelMode mode, const HardwareConfig& hw,
                               ParallelPlan& out) {
  out.mode = mode;
  out.cores = std::max(hw.cores, 1u);
  out.replicas = 1;
  if (mode == ParallelMode::None) return g;
  std::string example;
  if (pins_ops_to_cores(mode)) {
    // The batch only scales the inputs per second: inputs that lead with different sizes (a
    // KV cache next to the tokens) still split by channels.
    try {
      out.batch = batch_of(g, mode, example);
    } catch (const InputError&) {
      out.batch = 1;
    }
    out.replica_batch = out.batch;
    // Host ops (npu.host.ops) are not split: the one host CPU takes each whole, gathered.
    workloads::Graph marked = g;
    mark_host_ops(marked, hw);
    return mode == ParallelMode::Auto ? auto_tensor_graph(marked, hw, out)
                                      : tensor_graph(marked, out.cores, out, hw.mac_array.cols);
  }
  out.batch = batch_of(g, mode, example);
  if (mode == ParallelMode::Data) {
    if (out.batch % out.cores != 0)
      throw InputError(where_of(mode),
                       "expected a batch that splits evenly over npu.cores = " + std::to_string(out.cores) +
                           ", found batch " + std::to_string(out.batch) + " (" + example + ")");
    out.replicas = out.cores;
    out.replica_batch = out.batch / out.cores;
  } else {
    if (out.batch < 2)
      throw InputError(where_of(mode),
                       "expected a batch of at least 2 inputs to stream through the stages, found batch " +
                           std::to_string(out.batch) + " (" + example + ")");
    out.replicas = static_cast<std::uint32_t>(out.batch);
    out.replica_batch = 1;
  }
  return out.replica_batch == out.batch ? g : rebatched(g, out.replica_batch, mode);
}

double roofline_seconds(const HardwareConfig& hw, double macs, double vector_ops, double dram_bytes) {
  return std::max({2.0 * macs / hw.mac_peak_ops(), vector_ops / hw.vector_peak_ops(),
                   dram_bytes / hw.dram.peak_bandwidth().bytes_per_second});
}

double dma_stream_seconds(const HardwareConfig& hw, double bytes, std::uint32_t cores) {
  if (bytes <= 0) return 0;
  const auto& d = hw.dram;
  const auto& t = d.timing;
  const double window = double(hw.dma.channels) * hw.dma.max_outstanding_bursts * hw.dma.burst_bytes;
  const double idle = double(t.tRCD + t.CL + t.tDQSCK + d.burst_cycles()) / d.clock.hz +
                      double(hw.noc.latency_cycles) / hw.core_clock.hz;
  const double n = std::max(cores, 1u);
  return bytes / d.peak_bandwidth().bytes_per_second + idle * std::max(1.0, bytes / (n * window));
}

void assign_stages(ParallelPlan& pp, const Program& one, const HardwareConfig& hw) {
  const std::size_t groups = one.group_sram_bytes.size();
  if (groups < pp.cores)
    throw InputError(where_of(pp.mode),
                     "expected at least as many fusion groups as npu.cores = " + std::to_string(pp.cores) +
                         " (one stage per core), found " + std::to_string(groups) + " groups");
  // Each group's time at the roofs of one core: the slowest of its MAC, vector and DRAM work.
  std::vector<double> macs(groups, 0), vops(groups, 0), bytes(groups, 0);
  const std::uint64_t burst = hw.dram.bytes_per_burst();
  for (const auto& c : one.commands) {
    if (c.group < 0) continue;
    macs[c.group] += double(c.macs);
    vops[c.group] += double(c.vector_ops);
    if (c.kind == CommandKind::DmaLoad || c.kind == CommandKind::DmaStore)
      bytes[c.group] += double(c.dram.burst_bytes(burst));
  }
  std::vector<double> cost(groups);
  for (std::size_t g = 0; g < groups; ++g) cost[g] = roofline_seconds(hw, macs[g], vops[g], bytes[g]);
  // The least "slowest stage" that cuts the groups into at most `cores` runs: bisection on it,
  // each trial packing groups greedily (a stage closes when the next group would exceed it).
  const auto stages_at = [&](double limit, std::vector<std::uint32_t>* assign) {
    std::uint32_t stage = 0;
    double sum = 0;
    for (std::size_t g = 0; g < groups; ++g) {
      if (sum > 0 && sum + cost[g] > limit) ++stage, sum = 0;
      sum += cost[g];
      if (assign) (*assign)[g] = stage;
    }
    return stage + 1;
  };
  double lo = *std::max_element(cost.begin(), cost.end()), hi = 0;
  for (double c : cost) hi += c;
  hi = std::max(hi, lo);
  for (int i = 0; i < 100 && hi - lo > 1e-15 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (stages_at(mid, nullptr) <= pp.cores ? hi : lo) = mid;
  }
  pp.group_core.assign(groups, 0);
  const std::uint32_t stages = stages_at(hi, &pp.group_core);
  pp.stage_seconds.assign(stages, 0);
  for (std::size_t g = 0; g < groups; ++g) pp.stage_seconds[pp.group_core[g]] += cost[g];
}

Program replicate_program(const Program& one, ParallelPlan& pp, const HardwareConfig& hw) {
  const std::uint32_t n = static_cast<std::uint32_t>(one.commands.size());
  const std::uint32_t groups = static_cast<std::uint32_t>(one.group_sram_bytes.size());
  pp.commands_per_replica = n;
  pp.groups_per_replica = groups;
  // Each copy's tensors (and weights) at their own page-aligned addresses.
  const std::uint64_t stride = std::max<std::uint64_t>(4096, (one.dram_footprint + 4095) / 4096 * 4096);
  const std::uint64_t total = stride * pp.replicas;
  if (total > hw.dram.capacity_bytes())
    throw InputError(hw.source + " (npu.dram)",
                     "expected the " + std::to_string(pp.replicas) + " copies of the workload (" +
                         std::to_string(stride) + " B each) to fit in the DRAM's " +
                         std::to_string(hw.dram.capacity_bytes()) + " B, found " + std::to_string(total) + " B");
  Program out;
  out.commands.reserve(std::size_t(n) * pp.replicas);
  for (std::uint32_t r = 0; r < pp.replicas; ++r) {
    const auto core_of = [&](int g) -> std::uint32_t {
      if (pp.mode == ParallelMode::Data) return r;
      if (pp.mode == ParallelMode::Pipeline && g >= 0) return pp.group_core.at(g);
      return 0;
    };
    for (const auto& c : one.commands) {
      Command d = c;
      d.id = c.id + r * n;
      for (auto& dep : d.deps) dep += r * n;
      if (c.op >= 0) d.op = c.op + int(r * pp.ops_per_replica);
      d.core = core_of(c.group);
      if (c.group >= 0) d.group = c.group + int(r * groups);
      if (c.kind == CommandKind::DmaLoad || c.kind == CommandKind::DmaStore) d.dram.addr += r * stride;
      out.commands.push_back(std::move(d));
    }
    for (std::uint32_t g = 0; g < groups; ++g) {
      out.group_sram_bytes.push_back(one.group_sram_bytes[g]);
      if (one.group_buffer_bytes.size() == groups) out.group_buffer_bytes.push_back(one.group_buffer_bytes[g]);
      out.group_core.push_back(core_of(int(g)));
    }
  }
  out.dram_footprint = total;
  return out;
}

std::string replica_label(const ParallelPlan& pp, std::uint32_t r) {
  return (pp.mode == ParallelMode::Pipeline ? " [input " : " [core ") + std::to_string(r) + "]";
}

nlohmann::json to_json(const ParallelPlan& pp) {
  nlohmann::json j = {{"mode", to_string(pp.mode)},
                      {"cores", pp.cores},
                      {"replicas", pp.replicas},
                      {"batch", pp.batch},
                      {"replica_batch", pp.replica_batch},
                      {"commands_per_replica", pp.commands_per_replica},
                      {"groups_per_replica", pp.groups_per_replica}};
  if (pins_ops_to_cores(pp.mode)) {
    j["segments"] = pp.segments;
    j["split_ops"] = pp.split_ops;
    j["serial_ops"] = pp.serial_ops;
    j["gather_bytes"] = pp.gather_bytes;
  }
  if (pp.mode == ParallelMode::Auto) add_choices(j, pp);
  if (pp.mode == ParallelMode::Pipeline) {
    nlohmann::json stages = nlohmann::json::array();
    for (std::uint32_t s = 0; s < pp.stage_seconds.size(); ++s) {
      const auto first = std::find(pp.group_core.begin(), pp.group_core.end(), s) - pp.group_core.begin();
      const auto last = pp.group_core.rend() - std::find(pp.group_core.rbegin(), pp.group_core.rend(), s) - 1;
      stages.push_back(
          {{"core", s}, {"first_group", first}, {"last_group", last}, {"estimated_s", pp.stage_seconds[s]}});
    }
    j["stages"] = stages;
  }
  return j;
}

}  // namespace npusim::sched
