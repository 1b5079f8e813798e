// One phase of a language-model run in a child process: its graph planned on the run's NPU and
// simulated with its first layers, the layers not simulated taking the timing of the last
// simulated layer of their kind, and its figures split by part (attention, MLP, head, other).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "sim/engine/child.h"
#include "sim/engine/llm_run.h"
#include "sim/engine/llm_run_internal.h"
#include "sim/engine/run_pipeline.h"
#include "sim/scheduler/host_ops.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/parallel.h"
#include "workloads/llm/llm_graph.h"

namespace npusim::engine {
using nlohmann::json;
namespace llm = workloads::llm;
using detail::Attempt;
using detail::LayerStack;
using detail::Prepared;
using detail::StandIns;

namespace {

/// The part of a step graph an op belongs to, by its name (workloads/llm/llm_graph.cpp names
/// every op of layer L "model.layers.L.self_attn.*", "model.layers.L.mlp.*" or a norm or residual
/// of the layer; the head "lm_head*"): attention, mlp, head or other (norms, residuals, the
/// embedding).
const char* part_of(const std::string& op) {
  if (op.find(".self_attn.") != std::string::npos) return "attention";
  if (op.find(".mlp.") != std::string::npos) return "mlp";
  if (op.rfind("lm_head", 0) == 0) return "head";
  return "other";
}

/// Each op's seconds and energy in a phase: its time share of the phase, plus its part of what
/// its group holds beyond its ops (the runtime's dispatches and synchronisations belong to a
/// group, not to an op: the groups' shares add up to the phase, the ops' alone need not), split
/// in proportion to the group's ops' shares (equally when they have none). In summary.json's op
/// order.
struct OpShare {
  double seconds = 0, energy = 0;
};
std::vector<OpShare> op_shares(const json& summary) {
  const double seconds = summary.at("seconds").get<double>();
  auto energy_of = [](const json& x) { return x.at("energy_j").is_number() ? x.at("energy_j").get<double>() : 0.0; };
  struct Held {
    double share = 0, energy = 0;
    std::size_t ops = 0;
  };
  std::map<std::string, Held> held;  // by group name: what its ops hold
  const json& ops = summary.at("ops");
  for (const json& o : ops) {
    Held& h = held[o.at("group").get<std::string>()];
    h.share += o.at("time_share").get<double>();
    h.energy += energy_of(o);
    ++h.ops;
  }
  std::map<std::string, std::pair<double, double>> extra;  // by group name: share and energy no op holds
  for (const json& g : summary.at("groups")) {
    const auto it = held.find(g.at("name").get<std::string>());
    if (it == held.end()) continue;
    // Signed: where ops of several groups are in flight together, an op's share of that time
    // can exceed its group's (the shares are split among what is in flight at each level); op
    // seconds stay >= 0 (an op's share times its group's over its ops').
    extra[it->first] = {g.at("time_share").get<double>() - it->second.share, energy_of(g) - it->second.energy};
  }
  std::vector<OpShare> out;
  out.reserve(ops.size());
  for (const json& o : ops) {
    const std::string group = o.at("group").get<std::string>();
    const Held& h = held.at(group);
    const double share = o.at("time_share").get<double>();
    const double w = h.share > 0 ? share / h.share : 1.0 / double(h.ops);
    const auto [more_share, more_energy] = extra.count(group) ? extra.at(group) : std::pair<double, double>{0, 0};
    out.push_back({(share + w * more_share) * seconds, energy_of(o) + w * more_energy});
  }
  return out;
}

/// Adds op `o`'s seconds, MACs and DRAM bytes to its part's (part_of) in `parts`.
void add_to_part(json& parts, const json& o, double seconds) {
  json& part = parts[part_of(o.at("name").get<std::string>())];
  if (part.is_null()) part = {{"seconds", 0.0}, {"macs", 0.0}, {"dram_bytes", 0.0}};
  part["seconds"] = part["seconds"].get<double>() + seconds;
  part["macs"] = part["macs"].get<double>() + o.at("macs").get<double>();
  part["dram_bytes"] =
      part["dram_bytes"].get<double>() + o.at("dram_read_bytes").get<double>() + o.at("dram_write_bytes").get<double>();
}

/// A phase's time, MACs and DRAM bytes split by part (summary.json `llm` "parts", docs/llm.md):
/// seconds are the ops' shares of the phase with their groups' runtime time (op_shares), so the
/// parts add up to it.
json parts_of(const json& summary) {
  json parts = json::object();
  for (const char* p : {"attention", "mlp", "head", "other"})
    parts[p] = {{"seconds", 0.0}, {"macs", 0.0}, {"dram_bytes", 0.0}};
  const std::vector<OpShare> shares = op_shares(summary);
  const json& ops = summary.at("ops");
  for (std::size_t i = 0; i < ops.size(); ++i) add_to_part(parts, ops[i], shares[i].seconds);
  return parts;
}

LayerStack decoder_layers(const llm::LlmConfig& model) {
  return {"model.layers.", model.layers, [&model](std::int64_t l) { return model.kind(l); }};
}

/// The layer an op of `stack` belongs to: L of its "<prefix>L." name (llm_graph.cpp), or -1.
std::int64_t layer_of(const std::string& op, const std::string& prefix) {
  const std::size_t at = op.find(prefix);
  if (at == std::string::npos) return -1;
  std::int64_t l = 0;
  std::size_t i = at + prefix.size();
  if (i >= op.size() || !std::isdigit(static_cast<unsigned char>(op[i]))) return -1;
  for (; i < op.size() && std::isdigit(static_cast<unsigned char>(op[i])); ++i) l = l * 10 + (op[i] - '0');
  return l;
}

/// The classes of layers (StandIns): a kind and an index mod the period.
constexpr int kMaxPeriod = 2;
constexpr int kLayerClasses = llm::LlmConfig::kLayerKinds * kMaxPeriod;
int class_of(const LayerStack& stack, std::int64_t l, StandIns si) {
  return stack.kind(l) * si.period + int(l % si.period);
}

/// The layers among the first n that may stand for others: 1 .. n - 1, or 1 .. n - 2 with the
/// graph's last layer apart.
std::int64_t standing_end(std::int64_t n, StandIns si) {
  return si.last_apart ? n - 1 : n;
}

/// The fewest first layers n such that each class among layers n .. L - 1 has at least two
/// layers that may stand for others among the first n, or L when no n below L has that.
std::int64_t simulated_layers(const LayerStack& stack, StandIns si) {
  std::int64_t last[kLayerClasses];  // the last layer of each class
  std::fill(std::begin(last), std::end(last), -1);
  for (std::int64_t l = 0; l < stack.total; ++l) last[class_of(stack, l, si)] = l;
  for (std::int64_t n = 1; n < stack.total; ++n) {
    int seen[kLayerClasses] = {};
    for (std::int64_t l = 1; l < standing_end(n, si); ++l) ++seen[class_of(stack, l, si)];
    bool enough = true;
    for (int c = 0; c < kLayerClasses; ++c) enough = enough && (last[c] < n || seen[c] >= 2);
    if (enough) return n;
  }
  return stack.total;
}

/// The layers a settled attempt simulates (Attempt::settled): three times the first attempt's,
/// a third for the plan to settle into its period and the rest to show two periods of each
/// class, and at least what StandIns{kMaxPeriod, true} needs.
std::int64_t settled_layers(const LayerStack& stack) {
  return std::min(stack.total, std::max(3 * simulated_layers(stack, {}), simulated_layers(stack, {kMaxPeriod, true})));
}

/// A share of a simulated phase (a layer's, a query block's): its ops' time shares of the
/// phase's seconds, their MACs, DRAM bytes and energy, and the same by part (parts_of).
struct LayerShare {
  double seconds = 0, macs = 0, read = 0, write = 0, energy = 0;
  json parts = json::object();

  void add_op(const json& o, const OpShare& share) {
    seconds += share.seconds;
    macs += o.at("macs").get<double>();
    read += o.at("dram_read_bytes").get<double>();
    write += o.at("dram_write_bytes").get<double>();
    energy += share.energy;
    add_to_part(parts, o, share.seconds);
  }

  /// Adds n times `x`.
  void add(const LayerShare& x, double n) {
    seconds += n * x.seconds;
    macs += n * x.macs;
    read += n * x.read;
    write += n * x.write;
    energy += n * x.energy;
    add_parts(parts, x.parts, n);
  }

  /// Adds n times the figures of `from`'s parts to `to`'s (parts_of's keys).
  static void add_parts(json& to, const json& from, double n) {
    for (const auto& [part, f] : from.items())
      for (const char* key : {"seconds", "macs", "dram_bytes"})
        to[part][key] = to[part].value(key, 0.0) + n * f.at(key).get<double>();
  }
};

std::vector<LayerShare> layer_shares(const json& summary, const std::string& prefix, std::int64_t layers) {
  std::vector<LayerShare> out(static_cast<std::size_t>(layers));
  const std::vector<OpShare> shares = op_shares(summary);
  const json& ops = summary.at("ops");
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::int64_t l = layer_of(ops[i].at("name").get<std::string>(), prefix);
    if (l >= 0 && l < layers) out[std::size_t(l)].add_op(ops[i], shares[i]);
  }
  return out;
}

/// The share of the ops whose names start with `start`.
LayerShare share_of(const json& summary, const std::vector<OpShare>& shares, const std::string& start) {
  LayerShare x;
  const json& ops = summary.at("ops");
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].at("name").get<std::string>().rfind(start, 0) == 0) x.add_op(ops[i], shares[i]);
  return x;
}

double relative(double a, double b) {
  return a == b ? 0.0 : std::abs(a - b) / std::max(std::abs(a), std::abs(b));
}

/// How far apart two shares are: the largest relative difference of seconds, DRAM bytes, energy.
double departure_of(const LayerShare& a, const LayerShare& b) {
  return std::max(
      {relative(a.seconds, b.seconds), relative(a.read + a.write, b.read + b.write), relative(a.energy, b.energy)});
}

/// Adds n times `b` to the summary's MACs, DRAM bytes, energy and parts; returns the seconds.
double add_to_summary(json& summary, const LayerShare& b, double n) {
  summary["macs"] = summary.at("macs").get<double>() + n * b.macs;
  summary["dram_read_bytes"] = summary.at("dram_read_bytes").get<double>() + n * b.read;
  summary["dram_write_bytes"] = summary.at("dram_write_bytes").get<double>() + n * b.write;
  if (summary.contains("energy_j") && summary.at("energy_j").is_number())
    summary["energy_j"] = summary.at("energy_j").get<double>() + n * b.energy;
  LayerShare::add_parts(summary["parts"], b.parts, n);
  return n * b.seconds;
}

/// Lengthens the summary's seconds (and cycles, in proportion) by `more`.
void add_seconds(json& summary, double more) {
  const double seconds = summary.at("seconds").get<double>();
  if (seconds > 0) summary["cycles"] = summary.at("cycles").get<double>() * (seconds + more) / seconds;
  summary["seconds"] = seconds + more;
}

/// Whether tensor `t` stands in for a query block's context (StepSpec::sample_query_blocks).
bool is_stand_in(const workloads::Graph& g, int t) {
  const std::string& name = g.tensor(t).name;
  const std::string suffix = llm::kStandInSuffix;
  return g.tensor(t).producer < 0 && name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The query blocks a step's graph stood in for: how many, per attention (the ops' prefix,
/// "model.layers.3.self_attn.").
std::map<std::string, std::int64_t> stood_in_blocks(const workloads::Graph& g) {
  std::map<std::string, std::int64_t> out;
  for (int t = 0; t < int(g.tensors().size()); ++t)
    if (is_stand_in(g, t)) ++out[g.tensor(t).name.substr(0, g.tensor(t).name.rfind("block"))];
  return out;
}

/// One iteration of a loop lowered in part (a row of summary.json's `sampled_iterations`): its
/// share of the period, MACs, DRAM bytes and energy, as its head op's.
LayerShare iteration_share(const json& r) {
  const json op = {{"name", r.at("ops").at(0)},
                   {"macs", r.at("macs")},
                   {"dram_read_bytes", r.at("dram_read_bytes")},
                   {"dram_write_bytes", r.at("dram_write_bytes")}};
  LayerShare iteration;
  iteration.add_op(
      op, {r.at("period_s").get<double>(), r.at("energy_j").is_number() ? r.at("energy_j").get<double>() : 0.0});
  return iteration;
}

/// The share of the ops whose names start with `start`, with the iterations their loops lowered
/// in part did not lower (each its loop's iteration share): a query block's whole share when
/// its chunks of keys share their timing.
LayerShare grown_share_of(const json& summary, const std::vector<OpShare>& shares, const std::string& start) {
  LayerShare x = share_of(summary, shares, start);
  for (const json& r : summary.value("sampled_iterations", json::array()))
    if (r.at("ops").at(0).get<std::string>().rfind(start, 0) == 0)
      x.add(iteration_share(r), r.at("skipped").get<double>());
  return x;
}

/// The phase grown to every query block: each block stood in adds the share of the last full
/// block simulated (block kSampledQueryBlocks - 2, with its chunks of keys not lowered), to the
/// summary and to its layer's share in `layers`. Returns the largest departure between the last
/// two full blocks simulated of an attention; nothing is grown when that is past kLayerTolerance.
double grow_query_blocks(json& summary, const workloads::Graph& g, const std::string& layer_prefix,
                         std::vector<LayerShare>& layers) {
  const std::map<std::string, std::int64_t> stood = stood_in_blocks(g);
  if (stood.empty()) return 0.0;
  const std::vector<OpShare> shares = op_shares(summary);
  const std::string last = "block" + std::to_string(llm::kSampledQueryBlocks - 2) + ".",
                    before_last = "block" + std::to_string(llm::kSampledQueryBlocks - 3) + ".";
  std::map<std::string, LayerShare> representative;
  double departure = 0;
  for (const auto& [attention, n] : stood) {
    representative[attention] = grown_share_of(summary, shares, attention + last);
    const double d = departure_of(grown_share_of(summary, shares, attention + before_last), representative[attention]);
    spdlog::debug("{}: query blocks {} and {} differ by {:.3g} %", attention, before_last, last, 100 * d);
    departure = std::max(departure, d);
  }
  if (departure > kLayerTolerance) return departure;
  double more = 0;
  for (const auto& [attention, n] : stood) {
    more += add_to_summary(summary, representative[attention], double(n));
    const std::int64_t l = layer_of(attention, layer_prefix);
    if (l >= 0 && l < std::int64_t(layers.size())) layers[std::size_t(l)].add(representative[attention], double(n));
  }
  add_seconds(summary, more);
  return departure;
}

/// The phase grown to every iteration of the GEMM loops its lowering lowered in part
/// (summary `sampled_iterations`, Plan::sample_iterations): each iteration not lowered adds one
/// iteration's share of the period of iterations 3 and 4, MACs, DRAM bytes and energy to the
/// summary and to its layer's share in `layers`. Returns the largest relative difference between
/// that period and the one an iteration before; nothing is grown when that is past kLayerTolerance.
double grow_sampled_iterations(json& summary, const std::string& layer_prefix, std::vector<LayerShare>& layers) {
  if (!summary.contains("sampled_iterations")) return 0.0;
  const json& rows = summary.at("sampled_iterations");
  double departure = 0;
  for (const json& r : rows) {
    const double d = relative(r.at("check_period_s").get<double>(), r.at("period_s").get<double>());
    spdlog::debug("{}: GEMM iterations' periods differ by {:.3g} %", r.at("ops").at(0).get<std::string>(), 100 * d);
    departure = std::max(departure, d);
  }
  if (departure > kLayerTolerance) return departure;
  double more = 0;
  for (const json& r : rows) {
    const std::string head = r.at("ops").at(0).get<std::string>();
    const LayerShare iteration = iteration_share(r);
    const double n = r.at("skipped").get<double>();
    more += add_to_summary(summary, iteration, n);
    const std::int64_t l = layer_of(head, layer_prefix);
    if (l >= 0 && l < std::int64_t(layers.size())) layers[std::size_t(l)].add(iteration, n);
  }
  add_seconds(summary, more);
  return departure;
}

/// The layer of each class that stands for the class's layers not simulated (the last that may
/// stand among the first `simulated`), the one before it that checks it, and how many it stands
/// for; -1 and 0 where none.
struct Standing {
  std::int64_t last[kLayerClasses], before_last[kLayerClasses], missing[kLayerClasses] = {};
};
Standing standing(const LayerStack& stack, std::int64_t simulated, StandIns si) {
  Standing st;
  std::fill(std::begin(st.last), std::end(st.last), -1);
  std::fill(std::begin(st.before_last), std::end(st.before_last), -1);
  for (std::int64_t l = 1; l < standing_end(simulated, si); ++l) {
    const int c = class_of(stack, l, si);
    st.before_last[c] = st.last[c];
    st.last[c] = l;
  }
  for (std::int64_t l = simulated; l < stack.total; ++l) ++st.missing[class_of(stack, l, si)];
  return st;
}

/// The largest relative difference between the last two simulated layers of a class that stands
/// for others (infinite when a class lacks them).
double layer_departure(const LayerStack& stack, const Standing& st, const std::vector<LayerShare>& shares) {
  double departure = 0;
  for (int c = 0; c < kLayerClasses; ++c) {
    if (st.missing[c] == 0) continue;
    if (st.before_last[c] < 0) return HUGE_VAL;
    const LayerShare &a = shares[std::size_t(st.before_last[c])], &b = shares[std::size_t(st.last[c])];
    const double d = departure_of(a, b);
    spdlog::debug("{}{} and {} differ by {:.3g} % ({} / {} s, {} / {} B, {} / {} J)", stack.prefix, st.before_last[c],
                  st.last[c], 100 * d, a.seconds, b.seconds, a.read + a.write, b.read + b.write, a.energy, b.energy);
    departure = std::max(departure, d);
  }
  return departure;
}

/// The phase of the first `simulated` layers of `stack` grown to all of them: each layer not
/// simulated adds the share of the layer that stands for its class (`shares`, grown to every
/// query block and GEMM iteration). The stand-ins are StandIns{} or, `settled`, StandIns{1, true}
/// or else StandIns{2, true}. Returns the largest relative difference between the last two
/// simulated layers of a class that stands for others, and the period taken; `summary` is grown
/// only when that is within kLayerTolerance.
std::pair<double, int> grow_to_every_layer(json& summary, const LayerStack& stack, std::int64_t simulated,
                                           const std::vector<LayerShare>& shares, bool settled) {
  std::vector<StandIns> tried = {StandIns{}};
  if (settled) tried = {StandIns{1, true}, StandIns{kMaxPeriod, true}};
  double departure = HUGE_VAL;
  for (const StandIns si : tried) {
    const Standing st = standing(stack, simulated, si);
    const double d = layer_departure(stack, st, shares);
    if (d > kLayerTolerance) {
      departure = std::min(departure, d);
      continue;
    }
    double more = 0;
    for (int c = 0; c < kLayerClasses; ++c)
      if (st.missing[c] > 0) more += add_to_summary(summary, shares[std::size_t(st.last[c])], double(st.missing[c]));
    add_seconds(summary, more);
    return {d, si.period};
  }
  return {departure, 0};
}

/// `graph` (a step or the vision encoder) on the run's NPU: split across its cores as the run
/// says, host ops marked, planned with the run's fusion policy.
LoadedRun planned_graph(const LlmSpec& s, const Prepared& p, workloads::Graph graph) {
  LoadedRun run;
  run.hw = p.hw;
  run.graph = std::move(graph);
  run.workload_name = run.graph.name;
  if (p.parallel != sched::ParallelMode::None)
    run.graph = sched::replica_graph(run.graph, p.parallel, run.hw, run.parallel);
  sched::mark_host_ops(run.graph, run.hw);
  run.plan = plan_for(s.fusion, "", run.graph, run.hw);
  return run;
}

/// A phase's child process: with --quiet its own progress lines go nowhere (its errors come back
/// through the pipe).
ChildOptions child_options(const LlmSpec& s) {
  ChildOptions o;
  if (!s.progress) o.log_path = "/dev/null";
  return o;
}

}  // namespace

namespace detail {

/// A phase's figures from its run summary.
StepFigures phase_of(const json& s) {
  StepFigures r;
  r.seconds = s.at("seconds").get<double>();
  r.cycles = s.at("cycles").get<double>();
  r.macs = s.at("macs").get<double>();
  r.dram_bytes = s.at("dram_read_bytes").get<double>() + s.at("dram_write_bytes").get<double>();
  if (s.contains("energy_j") && s.at("energy_j").is_number()) r.energy_j = s.at("energy_j").get<double>();
  return r;
}

Phase step_phase(const Prepared& p, const llm::StepSpec& st, std::string what) {
  return {std::move(what), decoder_layers(p.model),
          [&p, st](std::int64_t layers, bool sample_blocks) {
            llm::LlmConfig model = p.model;
            model.layers = layers;
            llm::StepSpec step = st;
            step.sample_query_blocks = sample_blocks;
            return llm::build_llm_step(model, step);
          },
          st.tokens > 1};
}

LayersJob::LayersJob(const LlmSpec& s, const Prepared& p, const Phase& phase, const std::string& out, Attempt a)
    : what_(phase.what), child_([&] { return work(s, p, phase, out, a); }, child_options(s)) {}

json LayersJob::result() {
  return json::parse(reply_or_throw(child_.wait(), what_));
}

std::string LayersJob::work(const LlmSpec& s, const Prepared& p, const Phase& phase, const std::string& out,
                            Attempt a) {
  LoadedRun run = planned_graph(s, p, phase.graph(a.layers, a.sample_blocks));
  run.plan.sample_iterations = a.sample_iterations && p.parallel == sched::ParallelMode::None;
  run.plan.sample_chunks = run.plan.sample_iterations && phase.sample_chunks;
  RunSpec rs;
  rs.config = s.config;
  rs.fusion = s.fusion;
  rs.out = out;
  rs.label = phase.what + ": ";              // the pipeline's own progress lines say which phase
  rs.trace.level = traces::TraceLevel::Ops;  // op and group slices: a light trace per phase
  SimulatedRun sim = simulate_run(rs, run);
  json grown = sim.summary;
  grown["parts"] = parts_of(grown);
  std::vector<LayerShare> shares = layer_shares(grown, phase.stack.prefix, a.layers);
  // What stands in for others, in the order it grows: query blocks first (their shares are
  // fractions of the simulated seconds, which growing iterations lengthens), then GEMM iterations, then
  // layers. The first that disagrees is the reply.
  json refused;
  double departure = grow_query_blocks(grown, run.graph, phase.stack.prefix, shares);
  if (departure > kLayerTolerance) refused = {{"blocks_departure", departure}};
  if (refused.is_null()) {
    const double rows = grow_sampled_iterations(grown, phase.stack.prefix, shares);
    if (rows > kLayerTolerance) refused = {{"iterations_departure", rows}};
    departure = std::max(departure, rows);
  }
  int period = 1;
  if (refused.is_null() && a.layers < phase.stack.total) {
    const auto [d, p] = grow_to_every_layer(grown, phase.stack, a.layers, shares, a.settled);
    if (d > kLayerTolerance) refused = {{"layers_departure", d}};
    departure = std::max(departure, d);
    period = p;
  }
  if (!refused.is_null()) rs.out.clear();
  finish_run(rs, run, sim);
  if (!refused.is_null()) return refused.dump();
  std::int64_t blocks_stood_in = 0;
  for (int t = 0; t < int(run.graph.tensors().size()); ++t) blocks_stood_in += is_stand_in(run.graph, t) ? 1 : 0;
  std::int64_t rows_stood_in = 0;
  for (const json& r : grown.value("sampled_iterations", json::array()))
    rows_stood_in += r.at("skipped").get<std::int64_t>();
  const bool grown_any = a.layers < phase.stack.total || blocks_stood_in > 0 || rows_stood_in > 0;
  grown["layers"] = {{"total", phase.stack.total},
                     {"simulated", a.layers},
                     {"period", period},
                     {"last_apart", a.settled && a.layers < phase.stack.total},
                     {"query_blocks_stood_in", blocks_stood_in},
                     {"gemm_iterations_stood_in", rows_stood_in},
                     {"largest_departure", grown_any ? json(departure) : json()}};
  // The DRAM the phase holds beyond its resident tensors (weights, KV cache, inputs and
  // outputs): its intermediate regions alive at once. A layer's intermediates are dead before
  // the next layer's: the first layers' layout holds as many as the whole model's. Query blocks'
  // stand-ins are inputs (resident, left out); they move the intermediates' layout, so with
  // blocks stood in the peak is near the whole graph's, not equal (docs/llm.md).
  const std::uint64_t footprint = sim.dram_footprint;
  grown["activation_bytes"] = footprint - std::min(footprint, sched::resident_dram_bytes(run.graph, run.hw));
  grown.erase("ops");
  grown.erase("groups");
  grown.erase("sampled_iterations");
  return grown.dump();
}

namespace {
Attempt first_attempt(const LlmSpec& s, const LayerStack& stack) {
  if (s.every_layer) return {stack.total, false, false, false};
  return {simulated_layers(stack, {}), true, true, false};
}
}  // namespace

StepJob::StepJob(const LlmSpec& s, const Prepared& p, Phase phase, std::string out)
    : s_(s),
      p_(p),
      phase_(std::move(phase)),
      out_(std::move(out)),
      job_(s, p, phase_, out_, first_attempt(s, phase_.stack)) {}

json StepJob::result() {
  Attempt a = first_attempt(s_, phase_.stack);
  json r = job_.result();
  auto again = [&](const char* why, const char* what, double departure) {
    spdlog::debug("{}: {} that stand for others differ by {:.3g} %, more than {:.3g} %: {}", phase_.what, why,
                  100 * departure, 100 * kLayerTolerance, what);
    r = LayersJob(s_, p_, phase_, out_, a).result();
  };
  if (r.contains("iterations_departure")) {
    a.sample_iterations = false;
    again("GEMM iterations", "every GEMM iteration simulated", r.at("iterations_departure").get<double>());
  }
  if (r.contains("layers_departure") && settled_layers(phase_.stack) < phase_.stack.total) {
    a.layers = settled_layers(phase_.stack);
    a.settled = true;
    again("simulated layers", "more layers simulated, settled", r.at("layers_departure").get<double>());
  }
  // Whatever the last attempt found apart (the settled one lowers more GEMM loops, which may
  // disagree too): every layer, block and iteration.
  const std::pair<const char*, const char*> refusals[] = {{"layers_departure", "simulated layers"},
                                                          {"blocks_departure", "query blocks"},
                                                          {"iterations_departure", "GEMM iterations"}};
  for (const auto& [key, why] : refusals)
    if (r.contains(key)) {
      const double departure = r.at(key).get<double>();
      a = {phase_.stack.total, false, false, false};
      again(why, "every layer, block and iteration simulated", departure);
      r["layers"]["largest_departure"] = departure;
      break;
    }
  return r;
}

json simulate_step(const LlmSpec& s, const Prepared& p, const llm::StepSpec& st, const std::string& out,
                   const std::string& what) {
  return StepJob(s, p, step_phase(p, st, what), out).result();
}

}  // namespace detail

std::int64_t simulated_layers(const llm::LlmConfig& model) {
  return simulated_layers(decoder_layers(model), {});
}

}  // namespace npusim::engine
