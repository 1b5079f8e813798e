#include "sim/engine/llm_run.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>

#include <spdlog/spdlog.h>
#include <unistd.h>

#include "sim/engine/child.h"
#include "sim/engine/interrupts.h"
#include "sim/engine/run_pipeline.h"
#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/core/math_util.h"
#include "sim/scheduler/host_ops.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/parallel.h"
#include "sim/scheduler/sram_pinning.h"
#include "workloads/llm/llm_graph.h"

namespace npusim::engine {
namespace fs = std::filesystem;
using nlohmann::json;
namespace llm = workloads::llm;

namespace {

/// The widths of `spec` (flags named in errors). Activations take whole-byte formats only; the
/// KV cache also int4, with one fp16 scale per kv_group_size elements (the sub-byte caches of
/// llama.cpp's Q4_0 and KIVI).
llm::Widths widths_of(const LlmSpec& s) {
  llm::Widths w;
  w.weights = llm::parse_format(s.weight_dtype, s.group_size, s.zero_point, "--weight-dtype");
  auto whole = [](const std::string& name, const char* flag, const char* allowed) {
    if (name == "int4")
      throw InputError(std::string(flag) + " int4", std::string("expected ") + allowed + ", found 'int4'");
    return llm::parse_format(name, 0, false, flag);
  };
  if (s.kv_dtype == "int4") {
    if (s.kv_group_size < 1 || s.kv_group_size > 4096)
      throw InputError("--kv-group-size", "expected a whole number from 1 to 4096 (elements per scale), found " +
                                              std::to_string(s.kv_group_size));
    w.kv = llm::parse_format("int4", s.kv_group_size, false, "--kv-dtype");
  } else {
    w.kv = whole(s.kv_dtype, "--kv-dtype", "int4, int8, fp16 or bf16");
  }
  w.activations = whole(s.act_dtype, "--act-dtype", "int8, fp16 or bf16");
  w.wide_head = s.wide_head;
  return w;
}

void check_count(std::int64_t v, std::int64_t min, const char* flag) {
  if (v < min || v > 1000000)
    throw InputError(flag,
                     "expected an integer from " + std::to_string(min) + " to 1000000, found " + std::to_string(v));
}

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

/// The progress line: redrawn in place on a terminal, silent otherwise.
class LlmProgress {
 public:
  explicit LlmProgress(bool enabled) : on_(enabled && ::isatty(2)) {}
  void show(const std::string& text) {
    if (!on_) return;
    std::fprintf(stderr, "\r\033[Kllm: %s", text.c_str());
    shown_ = true;
  }
  ~LlmProgress() {
    if (shown_) std::fprintf(stderr, "\r\033[K");
  }

 private:
  bool on_;
  bool shown_ = false;
};

struct Prepared {
  HardwareConfig hw;
  llm::LlmConfig model;
  llm::Widths widths;
  llm::ExpertRouting routing = llm::ExpertRouting::Uniform;
  sched::ParallelMode parallel = sched::ParallelMode::None;
  std::optional<llm::LlmConfig> draft;  // speculative decoding's draft model
};

/// The split of a step over the cores: --parallel, else auto on a multi-core NPU. A step is one
/// sequence's tokens at a time, so the modes that split the weights' work (tensor, auto) apply;
/// data and pipeline replicas would need several independent inputs.
sched::ParallelMode parallel_of(const LlmSpec& s, const HardwareConfig& hw) {
  if (s.parallel.empty()) return hw.cores > 1 ? sched::ParallelMode::Auto : sched::ParallelMode::None;
  const auto mode = sched::parse_parallel_mode(s.parallel, "--parallel");
  if (mode == sched::ParallelMode::Data || mode == sched::ParallelMode::Pipeline)
    throw InputError("--parallel " + s.parallel,
                     "expected none, tensor or auto for a language model's steps, found '" + s.parallel + "'");
  return mode;
}

/// Tokens in each sequence's KV cache after the last decode step.
std::int64_t final_context(const LlmSpec& s) {
  return s.context + s.prompt + s.generate;
}

/// The largest --draft-tokens: a round's verify step is a prefill of draft_tokens + 1 tokens.
constexpr std::int64_t kMaxDraftTokens = 64;

/// Positions either model's cache reaches: speculation's last round may verify up to
/// draft_tokens tokens past the last one kept.
std::int64_t reached_context(const LlmSpec& s) {
  return final_context(s) + (s.draft.empty() ? 0 : s.draft_tokens);
}

/// The prompt's prefill steps (--prefill-chunk): `count` chunks of `size` tokens, the last one
/// holding the rest; one chunk of the whole prompt without chunking.
struct Chunks {
  std::int64_t prompt = 0, context = 0, size = 0, count = 1;
  std::int64_t tokens(std::int64_t i) const { return i + 1 < count ? size : prompt - (count - 1) * size; }
  /// The tokens the cache holds when chunk i starts.
  std::int64_t past(std::int64_t i) const { return context + i * size; }
  /// Chunk i in progress lines and error messages.
  std::string what(std::int64_t i) const {
    if (count == 1) return "prefill of " + std::to_string(prompt) + " tokens";
    return "prefill chunk " + std::to_string(i + 1) + " of " + std::to_string(count) + " (" +
           std::to_string(tokens(i)) + " tokens at context " + std::to_string(past(i)) + ")";
  }
};

Chunks chunks_of(const LlmSpec& s) {
  Chunks c;
  c.prompt = s.prompt;
  c.context = s.context;
  c.size = s.prefill_chunk > 0 && s.prefill_chunk < s.prompt ? s.prefill_chunk : s.prompt;
  c.count = (s.prompt + c.size - 1) / c.size;
  return c;
}

/// Reads and checks the draft model against the model it drafts for: the same vocabulary (its
/// tokens are the model's proposals) and room for every position a round reaches.
llm::LlmConfig load_draft(const LlmSpec& s, const llm::LlmConfig& model) {
  if (s.draft_tokens < 1 || s.draft_tokens > kMaxDraftTokens)
    throw InputError("--draft-tokens", "expected an integer from 1 to " + std::to_string(kMaxDraftTokens) + ", found " +
                                           std::to_string(s.draft_tokens));
  if (!(s.acceptance >= 0 && s.acceptance <= 1))
    throw InputError("--acceptance", "expected a probability from 0 to 1, found " + std::to_string(s.acceptance));
  if (s.generate < 1)
    throw InputError("--draft " + s.draft,
                     "expected --generate of at least 1 (a draft proposes decode tokens), found 0");
  llm::LlmConfig draft = llm::load_llm_config(s.draft, config::data_dir());
  if (draft.vocab != model.vocab)
    throw InputError("--draft " + s.draft, "expected a draft model with the vocabulary of " + model.name + " (" +
                                               std::to_string(model.vocab) + " tokens: its proposals are " +
                                               model.name + "'s tokens), found " + std::to_string(draft.vocab));
  llm::check_context(draft, reached_context(s), "--draft " + s.draft + " at the run's last round");
  return draft;
}

Prepared prepare(const LlmSpec& s) {
  check_count(s.context, 0, "--context");
  check_count(s.prompt, 1, "--prompt");
  check_count(s.generate, 0, "--generate");
  check_count(s.batch, 1, "--batch");
  check_count(s.prefill_chunk, 0, "--prefill-chunk");
  if (s.decode_samples < 0 || s.decode_samples == 1)
    throw InputError("--decode-samples",
                     "expected 0 (every step) or at least 2, found " + std::to_string(s.decode_samples));
  if (!(s.decode_tolerance > 0 && s.decode_tolerance <= 1))
    throw InputError("--decode-tolerance",
                     "expected a fraction above 0 and at most 1, found " + std::to_string(s.decode_tolerance));
  if (s.group_size > 1u << 20)
    throw InputError("--group-size", "expected at most 1048576, found " + std::to_string(s.group_size));
  Prepared p;
  p.widths = widths_of(s);
  p.routing = llm::parse_expert_routing(s.expert_routing, "--expert-routing");
  p.model = llm::load_llm_config(s.model, config::data_dir());
  llm::check_context(p.model, reached_context(s),
                     (s.context > 0 ? "--context " + std::to_string(s.context) + " + " : std::string()) + "--prompt " +
                         std::to_string(s.prompt) + " + --generate " + std::to_string(s.generate) +
                         (s.draft.empty() ? std::string() : " + --draft-tokens " + std::to_string(s.draft_tokens)));
  if (!s.draft.empty()) p.draft = load_draft(s, p.model);
  p.hw = config::load_hardware_config(s.config, s.overrides);
  p.parallel = parallel_of(s, p.hw);
  if (p.hw.sram.kv_cache == KvCacheHome::Sram) {
    // Every phase plans around the SRAM the caches hold at the run's final context (the draft's
    // beside the model's when it speculates).
    const std::uint32_t eb = dtype_bytes(p.hw.mac_array.dtype);
    p.hw.sram.kv_reserve_bytes = llm::kv_cache_bytes(p.model, p.widths, s.batch, reached_context(s), eb);
    if (p.draft) p.hw.sram.kv_reserve_bytes += llm::kv_cache_bytes(*p.draft, p.widths, s.batch, reached_context(s), eb);
    sched::check_pinned_fits(p.hw.sram.kv_reserve_bytes, p.hw);
  }
  return p;
}

llm::StepSpec step_spec(const LlmSpec& s, const Prepared& p, std::int64_t tokens, std::int64_t past) {
  llm::StepSpec st;
  st.batch = s.batch;
  st.tokens = tokens;
  st.past = past;
  st.all_logits = s.all_logits;
  st.widths = p.widths;
  st.routing = p.routing;
  return st;
}

/// The repeated layers of a phase's graph: the language model's decoder layers or the vision
/// tower's blocks. Their ops' names start with `prefix` and the layer's index; each layer has
/// one of LlmConfig::kLayerKinds kinds, and layers of one kind add the same ops.
struct LayerStack {
  std::string prefix;
  std::int64_t total = 0;
  std::function<int(std::int64_t)> kind;
};

LayerStack decoder_layers(const llm::LlmConfig& model) {
  return {"model.layers.", model.layers, [&model](std::int64_t l) { return model.kind(l); }};
}

/// The vision tower's blocks: of two kinds, attention inside windows (Qwen2.5-VL) and over every patch.
LayerStack vision_blocks(const llm::LlmConfig& model) {
  return {model.vision.block_prefix(), model.vision.depth,
          [&model](std::int64_t d) { return model.vision.windowed(d) ? 0 : 1; }};
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

std::int64_t simulated_layers(const LayerStack& stack) {
  constexpr int K = llm::LlmConfig::kLayerKinds;
  std::int64_t last[K] = {-1, -1, -1, -1};  // the last layer of each kind
  for (std::int64_t l = 0; l < stack.total; ++l) last[stack.kind(l)] = l;
  int seen[K] = {0, 0, 0, 0};  // layers of each kind among 1 .. n - 1
  for (std::int64_t n = 1; n < stack.total; ++n) {
    bool enough = true;
    for (int k = 0; k < K; ++k) enough = enough && (last[k] < n || seen[k] >= 2);
    if (enough) return n;
    ++seen[stack.kind(n)];
  }
  return stack.total;
}

/// One layer's share of a simulated phase: its ops' time shares of the phase's seconds, their
/// MACs, DRAM bytes and energy, and the same by part (parts_of).
struct LayerShare {
  double seconds = 0, macs = 0, read = 0, write = 0, energy = 0;
  json parts = json::object();
};

std::vector<LayerShare> layer_shares(const json& summary, const std::string& prefix, std::int64_t layers) {
  std::vector<LayerShare> out(static_cast<std::size_t>(layers));
  const std::vector<OpShare> shares = op_shares(summary);
  const json& ops = summary.at("ops");
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const json& o = ops[i];
    const std::string name = o.at("name").get<std::string>();
    const std::int64_t l = layer_of(name, prefix);
    if (l < 0 || l >= layers) continue;
    LayerShare& x = out[std::size_t(l)];
    const double t = shares[i].seconds, macs = o.at("macs").get<double>(), read = o.at("dram_read_bytes").get<double>(),
                 write = o.at("dram_write_bytes").get<double>();
    x.seconds += t;
    x.macs += macs;
    x.read += read;
    x.write += write;
    x.energy += shares[i].energy;
    add_to_part(x.parts, o, t);
  }
  return out;
}

double relative(double a, double b) {
  return a == b ? 0.0 : std::abs(a - b) / std::max(std::abs(a), std::abs(b));
}

/// The phase of the first `simulated` layers of `stack` grown to all of them: each layer not
/// simulated adds the share of the last simulated layer of its kind (simulated_layers). Returns
/// the largest relative difference between the last two simulated layers of a kind that stands
/// for others; `summary` is grown only when that is within kLayerTolerance.
double grow_to_every_layer(json& summary, const LayerStack& stack, std::int64_t simulated) {
  const std::vector<LayerShare> shares = layer_shares(summary, stack.prefix, simulated);
  constexpr int K = llm::LlmConfig::kLayerKinds;
  std::int64_t last[K] = {-1, -1, -1, -1}, before_last[K] = {-1, -1, -1, -1};
  for (std::int64_t l = 1; l < simulated; ++l) {
    const int k = stack.kind(l);
    before_last[k] = last[k];
    last[k] = l;
  }
  std::int64_t missing[K] = {0, 0, 0, 0};
  for (std::int64_t l = simulated; l < stack.total; ++l) ++missing[stack.kind(l)];
  double departure = 0;
  for (int k = 0; k < K; ++k) {
    if (missing[k] == 0) continue;
    const LayerShare &a = shares[std::size_t(before_last[k])], &b = shares[std::size_t(last[k])];
    departure = std::max({departure, relative(a.seconds, b.seconds), relative(a.read + a.write, b.read + b.write),
                          relative(a.energy, b.energy)});
  }
  if (departure > kLayerTolerance) return departure;
  const double seconds = summary.at("seconds").get<double>();
  double more_seconds = 0;
  for (int k = 0; k < K; ++k) {
    if (missing[k] == 0) continue;
    const LayerShare& b = shares[std::size_t(last[k])];
    const double n = double(missing[k]);
    more_seconds += n * b.seconds;
    summary["macs"] = summary.at("macs").get<double>() + n * b.macs;
    summary["dram_read_bytes"] = summary.at("dram_read_bytes").get<double>() + n * b.read;
    summary["dram_write_bytes"] = summary.at("dram_write_bytes").get<double>() + n * b.write;
    if (summary.contains("energy_j") && summary.at("energy_j").is_number())
      summary["energy_j"] = summary.at("energy_j").get<double>() + n * b.energy;
    for (const auto& [part, f] : b.parts.items())
      for (const char* key : {"seconds", "macs", "dram_bytes"})
        summary["parts"][part][key] = summary["parts"][part][key].get<double>() + n * f.at(key).get<double>();
  }
  if (seconds > 0) summary["cycles"] = summary.at("cycles").get<double>() * (seconds + more_seconds) / seconds;
  summary["seconds"] = seconds + more_seconds;
  return departure;
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

/// A phase a child process simulates: a step of the language model or the vision encoder, as
/// the graph of its first `layers` layers (the first layers keep their kinds: is_local and is_moe
/// go by the layer's index).
struct Phase {
  std::string what;  // "prefill of 128 tokens", for progress lines and errors
  LayerStack stack;
  std::function<workloads::Graph(std::int64_t layers)> graph;
};

Phase step_phase(const Prepared& p, const llm::StepSpec& st, std::string what) {
  return {std::move(what), decoder_layers(p.model), [&p, st](std::int64_t layers) {
            llm::LlmConfig model = p.model;
            model.layers = layers;
            return llm::build_llm_step(model, st);
          }};
}

Phase encoder_phase(const Prepared& p, const llm::VisionInput& image) {
  return {"vision encoder of " + std::to_string(image.patches) + " patches", vision_blocks(p.model),
          [&p, image](std::int64_t blocks) {
            llm::LlmConfig model = p.model;
            model.vision.depth = blocks;
            return llm::build_vision_encoder(model, image, p.widths);
          }};
}

/// A phase's child process: with --quiet its own progress lines go nowhere (its errors come back
/// through the pipe).
ChildOptions child_options(const LlmSpec& s) {
  ChildOptions o;
  if (!s.progress) o.log_path = "/dev/null";
  return o;
}

/// Simulates a phase with its first `layers` layers in a child process started at construction;
/// with `out`, writes its run folder there. With fewer layers than the phase's, the reply is
/// the phase grown to every layer (grow_to_every_layer), or {"layers_departure": d} when the
/// layers that would stand for the rest differ by more than kLayerTolerance (then no folder is
/// written).
class LayersJob {
 public:
  LayersJob(const LlmSpec& s, const Prepared& p, const Phase& phase, const std::string& out, std::int64_t layers)
      : what_(phase.what), child_([&] { return work(s, p, phase, out, layers); }, child_options(s)) {}
  json result() { return json::parse(reply_or_throw(child_.wait(), what_)); }

 private:
  static std::string work(const LlmSpec& s, const Prepared& p, const Phase& phase, const std::string& out,
                          std::int64_t layers) {
    const bool sampled = layers < phase.stack.total;
    LoadedRun run = planned_graph(s, p, phase.graph(layers));
    RunSpec rs;
    rs.config = s.config;
    rs.fusion = s.fusion;
    rs.out = out;
    rs.label = phase.what + ": ";              // the pipeline's own progress lines say which phase
    rs.trace.level = traces::TraceLevel::Ops;  // op and group slices: a light trace per phase
    SimulatedRun sim = simulate_run(rs, run);
    json grown = sim.summary;
    grown["parts"] = parts_of(grown);
    const double departure = sampled ? grow_to_every_layer(grown, phase.stack, layers) : 0.0;
    if (departure > kLayerTolerance) rs.out.clear();
    finish_run(rs, run, sim);
    if (departure > kLayerTolerance) return json{{"layers_departure", departure}}.dump();
    grown["layers"] = {
        {"total", phase.stack.total}, {"simulated", layers}, {"largest_departure", sampled ? json(departure) : json()}};
    // The DRAM the phase holds beyond its resident tensors (weights, KV cache, inputs and
    // outputs): its intermediate regions alive at once. A layer's intermediates are dead before
    // the next layer's: the first layers' layout holds as many as the whole model's.
    const std::uint64_t footprint = sim.dram_footprint;
    grown["activation_bytes"] = footprint - std::min(footprint, sched::resident_dram_bytes(run.graph, run.hw));
    grown.erase("ops");
    grown.erase("groups");
    return grown.dump();
  }

  std::string what_;
  Child child_;
};

/// One phase, its layers of one kind sharing their timing unless --every-layer (or the layers
/// standing for the others disagree: then simulated again with every layer), in a child process
/// started at construction; with `out`, writes the simulated layers' run folder.
class StepJob {
 public:
  StepJob(const LlmSpec& s, const Prepared& p, Phase phase, std::string out)
      : s_(s),
        p_(p),
        phase_(std::move(phase)),
        out_(std::move(out)),
        job_(s, p, phase_, out_, s.every_layer ? phase_.stack.total : simulated_layers(phase_.stack)) {}
  json result() {
    json r = job_.result();
    if (!r.contains("layers_departure")) return r;
    const double departure = r.at("layers_departure").get<double>();
    spdlog::debug("{}: simulated layers of one kind differ by {:.3g} %, more than {:.3g} %: every layer simulated",
                  phase_.what, 100 * departure, 100 * kLayerTolerance);
    r = LayersJob(s_, p_, phase_, out_, phase_.stack.total).result();
    r["layers"]["largest_departure"] = departure;
    return r;
  }

 private:
  const LlmSpec& s_;
  const Prepared& p_;
  Phase phase_;
  std::string out_;
  LayersJob job_;
};

json simulate_step(const LlmSpec& s, const Prepared& p, const llm::StepSpec& st, const std::string& out,
                   const std::string& what) {
  return StepJob(s, p, step_phase(p, st, what), out).result();
}

json step_json(std::int64_t context, const StepFigures& r, bool simulated) {
  return {{"context", context},
          {"seconds", r.seconds},
          {"dram_bytes", r.dram_bytes},
          {"macs", r.macs},
          {"energy_j", r.energy_j ? json(*r.energy_j) : json()},
          {"simulated", simulated}};
}

}  // namespace

namespace {

/// How far `mid` lies off the line from `a` to `b` at fraction `f`, relative to `mid`: the larger
/// of the seconds' and the DRAM bytes' departures (MACs are linear in the context by formula).
double departure(const StepFigures& a, const StepFigures& b, const StepFigures& mid, double f) {
  auto off = [f](double x, double y, double m) {
    const double line = x + f * (y - x);
    return m != 0 ? std::abs(m - line) / std::abs(m) : std::abs(line);
  };
  return std::max(off(a.seconds, b.seconds, mid.seconds), off(a.dram_bytes, b.dram_bytes, mid.dram_bytes));
}

}  // namespace

DecodeSamples sample_decode_steps(std::int64_t steps, int max_samples, double tolerance,
                                  const std::function<StepFigures(std::int64_t)>& simulate, Bisect order) {
  DecodeSamples d;
  if (steps <= 0) return d;
  if (max_samples == 0 || max_samples >= steps) {
    for (std::int64_t i = 0; i < steps; ++i) d.simulated[i] = simulate(i);
    return d;
  }
  d.simulated[0] = simulate(0);
  d.simulated[steps - 1] = simulate(steps - 1);
  // Intervals whose straightness is unknown, with their parent's departure: the first to split
  // on top (the earliest among equals, so the order of simulations does not depend on the
  // heap's tie-breaking).
  struct Open {
    std::int64_t a, b;
    double parent_off;
  };
  auto later = [order](const Open& x, const Open& y) {
    if (order == Bisect::FarthestFirst && x.parent_off != y.parent_off) return x.parent_off < y.parent_off;
    const auto wx = x.b - x.a, wy = y.b - y.a;
    return wx != wy ? wx < wy : x.a > y.a;
  };
  std::vector<Open> open;
  auto push = [&](std::int64_t a, std::int64_t b, double parent_off) {
    if (b - a < 2) return;  // no step between: nothing to check
    open.push_back({a, b, parent_off});
    std::push_heap(open.begin(), open.end(), later);
  };
  push(0, steps - 1, 0);
  while (!open.empty() && d.simulated.size() < std::size_t(max_samples)) {
    std::pop_heap(open.begin(), open.end(), later);
    const auto [a, b, parent_off] = open.back();
    open.pop_back();
    const std::int64_t m = a + (b - a) / 2;
    const StepFigures mid = d.simulated[m] = simulate(m);
    const double off = departure(d.simulated[a], d.simulated[b], mid, double(m - a) / double(b - a));
    d.largest_departure = std::max(d.largest_departure, off);
    ++d.checked;
    if (off > tolerance) {
      push(a, m, off);
      push(m, b, off);
    }
  }
  return d;
}

StepFigures decode_step(const DecodeSamples& d, std::int64_t i) {
  const auto hi = d.simulated.lower_bound(i);
  if (hi != d.simulated.end() && hi->first == i) return hi->second;
  if (hi == d.simulated.begin() || hi == d.simulated.end())
    throw SimulationError("decode step " + std::to_string(i) + " lies outside the simulated steps");
  const auto lo = std::prev(hi);
  const StepFigures &a = lo->second, &b = hi->second;
  const double f = double(i - lo->first) / double(hi->first - lo->first);
  auto lerp = [f](double x, double y) { return x + f * (y - x); };
  StepFigures r;
  r.seconds = lerp(a.seconds, b.seconds);
  r.cycles = lerp(a.cycles, b.cycles);
  r.macs = std::round(lerp(a.macs, b.macs));
  r.dram_bytes = std::round(lerp(a.dram_bytes, b.dram_bytes));
  if (a.energy_j && b.energy_j) r.energy_j = lerp(*a.energy_j, *b.energy_j);
  return r;
}

std::int64_t simulated_layers(const llm::LlmConfig& model) {
  return simulated_layers(decoder_layers(model));
}

namespace {

/// Checks the graphs a run would build, before any child starts, from copies of the model with
/// one and with two layers of each kind it has (llm::layer_classes: local or global attention,
/// MoE or dense MLP; the layers of a kind add the same ops and tensors, so the two copies differ
/// by one layer exactly): the op count, each tensor's size and the DRAM the weights, KV cache,
/// inputs and outputs hold, for the prefill and the last decode step. Building the whole graphs
/// would cost time in proportion to the layers (seconds for thousands) for the same answers.
/// Returns the most DRAM any of the steps holds resident.
using NamedSteps = std::vector<std::pair<std::string, llm::StepSpec>>;

std::uint64_t check_model_graphs(const llm::LlmConfig& model, const Prepared& p, const NamedSteps& steps) {
  const std::uint64_t layers = std::uint64_t(model.layers);
  std::uint64_t largest = 0;
  for (const auto& [what, step] : steps) {
    // first: the graph of one layer (of the first kind); each further layer adds its kind's ops.
    std::uint64_t first = 0, per_layer = 0, resident = 0, ops = 0;
    try {
      bool started = false;
      for (const llm::LayerClass& k : llm::layer_classes(model)) {
        llm::LlmConfig one = model, two = model;
        one.layers = 1;
        two.layers = 2;
        one.layers_like = two.layers_like = k.example;
        const workloads::Graph g1 = llm::build_llm_step(one, step), g2 = llm::build_llm_step(two, step);
        const std::uint64_t ops1 = g1.ops().size(), ops_layer = g2.ops().size() - ops1;
        const std::uint64_t r1 = sched::resident_dram_bytes(g1, p.hw),
                            r_layer = sched::resident_dram_bytes(g2, p.hw) - r1;
        const std::uint64_t more_layers = std::uint64_t(k.count) - (started ? 0 : 1);
        if (!started) {
          first = ops = ops1;
          resident = r1;
        }
        started = true;
        per_layer = std::max(per_layer, ops_layer);
        ops = checked_add(ops, checked_mul(ops_layer, more_layers).value_or(UINT64_MAX)).value_or(UINT64_MAX);
        const auto more = checked_mul(r_layer, more_layers);
        resident = more ? checked_add(resident, *more).value_or(UINT64_MAX) : UINT64_MAX;
      }
    } catch (const InputError& e) {
      throw InputError(what, e.what());
    }
    if (ops > workloads::kMaxGraphOps)
      throw InputError(model.source + " (" + model.field_prefix +
                           (model.model_type == "gpt2" ? "n_layer" : "num_hidden_layers") + ")",
                       "expected a model whose step graph holds at most " + std::to_string(workloads::kMaxGraphOps) +
                           " ops (" + std::to_string(per_layer) + " a layer: at most " +
                           std::to_string((workloads::kMaxGraphOps - first) / per_layer + 1) + " layers), found " +
                           std::to_string(layers) + " layers");
    try {
      sched::check_dram_capacity(resident, p.hw);
    } catch (const InputError& e) {
      throw InputError(what, e.what());
    }
    largest = std::max(largest, resident);
  }
  return largest;
}

/// A speculative round's verify step: the model reads the round's last kept token and the draft
/// tokens at once and needs the logits of every one of them.
llm::StepSpec verify_spec(const LlmSpec& s, const Prepared& p, std::int64_t past) {
  llm::StepSpec v = step_spec(s, p, s.draft_tokens + 1, past);
  v.all_logits = true;
  return v;
}

/// `p` with the draft model in the model's place: the draft runs on the same NPU, with the same
/// widths and split over the cores.
Prepared as_draft(const Prepared& p) {
  Prepared d = p;
  d.model = *p.draft;
  d.draft.reset();
  return d;
}

void check_step_graphs(const LlmSpec& s, const Prepared& p) {
  const Chunks c = chunks_of(s);
  NamedSteps steps{{c.what(c.count - 1), step_spec(s, p, c.tokens(c.count - 1), c.past(c.count - 1))}};
  if (s.generate > 0)
    steps.emplace_back("decode step at context " + std::to_string(final_context(s)),
                       step_spec(s, p, 1, final_context(s) - 1));
  if (p.draft && s.generate > 0)
    steps.emplace_back("verify step of " + std::to_string(s.draft_tokens + 1) + " tokens at context " +
                           std::to_string(reached_context(s)),
                       verify_spec(s, p, final_context(s) - 1));
  const std::uint64_t resident = check_model_graphs(p.model, p, steps);
  if (!p.draft) return;
  const Prepared d = as_draft(p);
  const std::uint64_t draft_resident = check_model_graphs(
      *p.draft, d,
      {{"draft prefill of " + std::to_string(s.prompt) + " tokens", step_spec(s, d, s.prompt, s.context)},
       {"draft step at context " + std::to_string(reached_context(s)), step_spec(s, d, 1, reached_context(s) - 1)}});
  try {  // both models' weights and caches stay in DRAM for the whole run
    sched::check_dram_capacity(checked_add(resident, draft_resident).value_or(UINT64_MAX), p.hw);
  } catch (const InputError& e) {
    throw InputError("--draft " + s.draft, std::string("the model and its draft together: ") + e.what());
  }
}

}  // namespace

double tokens_per_round(std::int64_t draft_tokens, double acceptance) {
  if (acceptance >= 1) return double(draft_tokens + 1);
  return (1 - std::pow(acceptance, double(draft_tokens + 1))) / (1 - acceptance);
}

namespace {

StepFigures plus(const StepFigures& a, const StepFigures& b) {
  StepFigures r;
  r.seconds = a.seconds + b.seconds;
  r.cycles = a.cycles + b.cycles;
  r.macs = a.macs + b.macs;
  r.dram_bytes = a.dram_bytes + b.dram_bytes;
  if (a.energy_j && b.energy_j) r.energy_j = *a.energy_j + *b.energy_j;
  return r;
}

StepFigures times(const StepFigures& a, double k) {
  StepFigures r;
  r.seconds = a.seconds * k;
  r.cycles = a.cycles * k;
  r.macs = a.macs * k;
  r.dram_bytes = a.dram_bytes * k;
  if (a.energy_j) r.energy_j = *a.energy_j * k;
  return r;
}

/// Speculative decoding of the run's tokens (docs/llm.md, "Speculative decoding"): the draft's
/// prefill, then rounds of draft_tokens draft steps and one verify step, each round adding
/// tokens_per_round tokens on average. Rounds are sampled and interpolated as decode steps are.
/// Returns summary.json's llm.speculative block without the speed-up; raises `activations_peak`
/// to the most intermediate DRAM a simulated step held.
json speculate(const LlmSpec& s, const Prepared& p, const std::function<void(const std::string&)>& show,
               std::uint64_t& activations_peak) {
  const Prepared d = as_draft(p);
  const std::int64_t k = s.draft_tokens;
  const double per_round = tokens_per_round(k, s.acceptance);
  const double rounds = double(s.generate) / per_round;
  const auto whole_rounds = std::int64_t(std::ceil(rounds - 1e-9));
  auto step = [&](const Prepared& who, const llm::StepSpec& st, const std::string& what) {
    show(what);
    const json summary = simulate_step(s, who, st, "", what);
    activations_peak = std::max(activations_peak, summary.at("activation_bytes").get<std::uint64_t>());
    return phase_of(summary);
  };
  const StepFigures draft_prefill =
      step(d, step_spec(s, d, s.prompt, s.context), "draft prefill of " + std::to_string(s.prompt) + " tokens");
  // Round r starts with the model's cache at this many tokens (the prompt's and the tokens the
  // rounds before it kept, on average).
  auto start_of = [&](std::int64_t r) {
    return s.context + s.prompt + std::int64_t(std::floor(double(r) * per_round));
  };
  DecodeSamples drafts, verifies;  // each simulated round's two parts
  const DecodeSamples rounds_simulated =
      sample_decode_steps(whole_rounds, s.decode_samples, s.decode_tolerance, [&](std::int64_t r) {
        const std::int64_t c = start_of(r);
        // The draft's k steps grow linearly with their context: k times the mean of the first and last.
        const StepFigures first = step(d, step_spec(s, d, 1, c), "draft step at context " + std::to_string(c + 1));
        const StepFigures last =
            k > 1 ? step(d, step_spec(s, d, 1, c + k - 1), "draft step at context " + std::to_string(c + k)) : first;
        const StepFigures draft = times(plus(first, last), double(k) / 2);
        const StepFigures verify =
            step(p, verify_spec(s, p, c),
                 "verify step of " + std::to_string(k + 1) + " tokens at context " + std::to_string(c + k + 1));
        drafts.simulated[r] = draft;
        verifies.simulated[r] = verify;
        return plus(draft, verify);
      });
  json list = json::array();
  StepFigures total = draft_prefill;
  for (std::int64_t r = 0; r < whole_rounds; ++r) {
    const StepFigures f = decode_step(rounds_simulated, r);
    const double share = r + 1 < whole_rounds ? 1.0 : rounds - double(whole_rounds - 1);  // the last round's part
    total = plus(total, times(f, share));
    list.push_back({{"round", r},
                    {"context", start_of(r)},
                    {"seconds", f.seconds},
                    {"draft_seconds", decode_step(drafts, r).seconds},
                    {"verify_seconds", decode_step(verifies, r).seconds},
                    {"dram_bytes", f.dram_bytes},
                    {"simulated", rounds_simulated.simulated.count(r) > 0}});
  }
  const double tokens = double(s.batch * s.generate);
  return {{"draft_model", p.draft->name},
          {"draft_params", llm::parameter_count(*p.draft)},
          {"draft_tokens", k},
          {"acceptance", s.acceptance},
          {"tokens_per_round", per_round},
          {"rounds", rounds},
          {"draft_prefill_seconds", draft_prefill.seconds},
          {"seconds", total.seconds},
          {"dram_bytes", total.dram_bytes},
          {"tokens_per_second", total.seconds > 0 ? json(tokens / total.seconds) : json()},
          {"simulated_rounds", rounds_simulated.simulated.size()},
          {"round_list", list}};
}

}  // namespace

namespace {

/// `s` with the image's tokens in the prompt (--image: the prefill's prompt is the text and the
/// image tokens; the decode steps follow both), and the image as the vision tower sees it.
LlmSpec with_image(const LlmSpec& s, std::optional<llm::VisionInput>& image) {
  if (s.image.empty()) return s;
  if (s.batch != 1)
    throw InputError("--image", "expected --batch 1 beside it (one sequence with its image), found --batch " +
                                    std::to_string(s.batch));
  if (!s.draft.empty())
    throw InputError("--image",
                     "expected no --draft beside it (speculative decoding of a vision-language model is "
                     "not modelled), found --draft " +
                         s.draft);
  check_count(s.prompt, 1, "--prompt");
  check_count(s.generate, 0, "--generate");
  check_count(s.context, 0, "--context");
  const llm::LlmConfig model = llm::load_llm_config(s.model, config::data_dir());
  image = llm::vision_input(model, s.image, "--image");
  LlmSpec t = s;
  t.prompt += image->tokens;
  llm::check_context(model, final_context(t),
                     (s.context > 0 ? "--context " + std::to_string(s.context) + " + " : std::string()) + "--prompt " +
                         std::to_string(s.prompt) + " + " + std::to_string(image->tokens) + " image tokens (--image " +
                         s.image + ") + --generate " + std::to_string(s.generate));
  return t;
}

/// The vision encoder's graph must fit DRAM beside the language model's weights and cache.
void check_encoder_graph(const Prepared& p, const llm::VisionInput& image) {
  const workloads::Graph g = llm::build_vision_encoder(p.model, image, p.widths);
  try {
    sched::check_dram_capacity(sched::resident_dram_bytes(g, p.hw), p.hw);
  } catch (const InputError& e) {
    throw InputError("vision encoder of " + std::to_string(image.patches) + " patches", e.what());
  }
}

}  // namespace

void check_llm_spec(const LlmSpec& spec) {
  std::optional<llm::VisionInput> image;
  const LlmSpec s = with_image(spec, image);
  const Prepared p = prepare(s);
  check_step_graphs(s, p);
  if (image) check_encoder_graph(p, *image);
}

namespace {

/// How much each sample weighs in the sum of the figures of all `steps` steps, each simulated or
/// on the line between its nearest samples (decode_step): a step at fraction f of the way from
/// sample a to sample b adds 1 - f to a's weight and f to b's.
std::map<std::int64_t, double> sample_weights(const DecodeSamples& d, std::int64_t steps) {
  std::map<std::int64_t, double> w;
  for (std::int64_t i = 0; i < steps; ++i) {
    const auto hi = d.simulated.lower_bound(i);
    if (hi->first == i) {
      w[i] += 1;
      continue;
    }
    const auto lo = std::prev(hi);
    const double f = double(i - lo->first) / double(hi->first - lo->first);
    w[lo->first] += 1 - f;
    w[hi->first] += f;
  }
  return w;
}

/// At most how many of `chunks` prefill chunks are simulated: the decode steps' budget (0: all)
/// and log2(chunks) more, enough for bisection to find the chunk where the plan changes (the
/// cache stops fitting the SRAM: the chunks' figures jump there, 4x in DRAM bytes for
/// SmolLM2-360M's 256-token chunks at context 3584 on edge-m) between two straight lines.
int chunk_samples(int decode_samples, std::int64_t chunks) {
  if (decode_samples == 0) return 0;
  int log2 = 0;
  while ((std::int64_t{1} << log2) < chunks) ++log2;
  return decode_samples + log2;
}

/// Adds `weight` times a phase's figures (seconds, cycles, MACs, DRAM bytes, energy) and parts
/// to `sum`; energy is null in the sum once one phase has none.
void add_weighted(json& sum, const json& phase, double weight) {
  auto add = [weight](json& to, const json& from) {
    to = (to.is_null() ? 0.0 : to.get<double>()) + weight * from.get<double>();
  };
  for (const char* key : {"seconds", "cycles", "macs", "dram_read_bytes", "dram_write_bytes"})
    add(sum[key], phase.at(key));
  const bool energy = phase.contains("energy_j") && phase.at("energy_j").is_number() &&
                      (!sum.contains("energy_j") || sum.at("energy_j").is_number());
  if (energy)
    add(sum["energy_j"], phase.at("energy_j"));
  else
    sum["energy_j"] = nullptr;
  for (const auto& [part, f] : phase.at("parts").items())
    for (const char* key : {"seconds", "macs", "dram_bytes"}) add(sum["parts"][part][key], f.at(key));
}

/// The prefill: one step of the whole prompt, or its chunks (--prefill-chunk), each a step of
/// `size` tokens at the context the earlier ones left, the last one alone computing logits (it
/// may be shorter). The chunks before the last are sampled by bisection as decode steps are
/// (their attention grows linearly with the context, the rest is the same each time) and summed
/// with the ones on the line between. The first, the last before the last and the last chunk
/// start at construction; the last one's run folder is written. result() is a phase summary as
/// a StepJob's, for the whole prompt, with `chunks`.
class PrefillJob {
 public:
  PrefillJob(const LlmSpec& s, const Prepared& p, std::string out)
      : s_(s), p_(p), c_(chunks_of(s)), out_(std::move(out)) {
    for (const std::int64_t i : {c_.count - 1, std::int64_t(0), c_.count - 2})
      if (i >= 0 && !jobs_.count(i)) jobs_[i] = start(i);
  }

  json result() {
    const std::int64_t last = c_.count - 1;
    if (last == 0) return take(0);
    std::map<std::int64_t, json> phases;
    const DecodeSamples samples = sample_decode_steps(
        last, chunk_samples(s_.decode_samples, last), s_.decode_tolerance,
        [&](std::int64_t i) {
          phases[i] = take(i);
          return phase_of(phases[i]);
        },
        Bisect::FarthestFirst);
    phases[last] = take(last);
    std::map<std::int64_t, double> weights = sample_weights(samples, last);
    weights[last] = 1;
    json sum = json::object();
    std::uint64_t activation_bytes = 0;
    json simulated = json::array();
    for (const auto& [i, w] : weights) {
      add_weighted(sum, phases.at(i), w);
      activation_bytes = std::max(activation_bytes, phases.at(i).at("activation_bytes").get<std::uint64_t>());
      simulated.push_back(i);
    }
    sum["macs"] = std::round(sum.at("macs").get<double>());
    sum["activation_bytes"] = activation_bytes;
    sum["layers"] = phases.at(last).at("layers");
    sum["bound_text"] = phases.at(last).value("bound_text", json());
    sum["chunks"] = {{"size", c_.size},
                     {"count", c_.count},
                     {"simulated", simulated},
                     {"largest_departure", samples.checked ? json(samples.largest_departure) : json()}};
    return sum;
  }

 private:
  std::unique_ptr<StepJob> start(std::int64_t i) {
    const bool last = i + 1 == c_.count;
    llm::StepSpec st = step_spec(s_, p_, c_.tokens(i), c_.past(i));
    st.logits = last || s_.all_logits;
    return std::make_unique<StepJob>(s_, p_, step_phase(p_, st, c_.what(i)), last ? out_ : std::string());
  }
  json take(std::int64_t i) {
    auto it = jobs_.find(i);
    return (it != jobs_.end() ? std::move(it->second) : start(i))->result();
  }

  const LlmSpec& s_;
  const Prepared& p_;
  Chunks c_;
  std::string out_;
  std::map<std::int64_t, std::unique_ptr<StepJob>> jobs_;
};

}  // namespace

json run_llm(const LlmSpec& in) {
  std::optional<llm::VisionInput> image;
  const LlmSpec s = with_image(in, image);
  const Prepared p = prepare(s);
  check_step_graphs(s, p);
  if (image) check_encoder_graph(p, *image);
  const auto start = std::chrono::steady_clock::now();
  LlmProgress progress(s.progress);
  auto folder = [&](const char* name) { return s.out.empty() ? std::string() : (fs::path(s.out) / name).string(); };

  // 1. Prefill: the whole prompt of every sequence at once.
  set_stage("simulating the prefill (child process)");
  progress.show("prefill of " + std::to_string(s.prompt) + " tokens");
  // Phases in all, at most: the prefill and the decode steps that may be simulated (and with a
  // draft, its prefill and up to three steps for each round that may be simulated).
  const std::size_t most_steps =
      std::size_t(s.decode_samples == 0 || s.decode_samples >= s.generate ? s.generate : s.decode_samples);
  const std::size_t most = 1 + most_steps + (p.draft ? 1 + 3 * most_steps : 0);
  auto phase_done = [&](std::size_t done) {
    if (s.on_phase) s.on_phase(done, most);
  };
  phase_done(0);
  const llm::StepSpec pre_spec = step_spec(s, p, s.prompt, s.context);
  auto decode_job = [&](std::int64_t i) {
    const std::int64_t past = s.context + s.prompt + i;
    return std::make_unique<StepJob>(
        s, p, step_phase(p, step_spec(s, p, 1, past), "decode step at context " + std::to_string(past + 1)),
        i + 1 == s.generate ? folder("decode") : "");
  };
  // The vision encoder runs beside the prefill: the prefill's timing does not depend on the image
  // embeddings' values, only on their count.
  std::unique_ptr<StepJob> encoder;
  if (image) encoder = std::make_unique<StepJob>(s, p, encoder_phase(p, *image), folder("vision"));
  PrefillJob prefill(s, p, folder("prefill"));
  // Bisection samples the first and the last decode step before any other, and neither depends on
  // the prefill: they run beside it.
  std::map<std::int64_t, std::unique_ptr<StepJob>> started;
  for (const std::int64_t i : {std::int64_t(0), s.generate - 1})
    if (i >= 0 && !started.count(i)) started[i] = decode_job(i);
  const json pre_summary = prefill.result();
  const StepFigures pre = phase_of(pre_summary);
  // The largest intermediate DRAM of any simulated phase (llm.memory_bytes.activations_peak).
  std::uint64_t activations_peak = pre_summary.at("activation_bytes").get<std::uint64_t>();
  StepFigures vision;  // the encoder's figures (zero without an image)
  json vision_layers;
  if (encoder) {
    const json enc_summary = encoder->result();
    vision = phase_of(enc_summary);
    vision_layers = enc_summary.at("layers");
    activations_peak = std::max(activations_peak, enc_summary.at("activation_bytes").get<std::uint64_t>());
  }
  const double ttft = vision.seconds + pre.seconds;
  auto figures = [](const StepFigures& f) {
    return json{{"seconds", f.seconds},
                {"cycles", f.cycles},
                {"macs", f.macs},
                {"dram_bytes", f.dram_bytes},
                {"energy_j", f.energy_j ? json(*f.energy_j) : json()}};
  };
  if (s.on_figures) {
    json f = figures(pre);
    f["phase"] = "prefill";
    f["tokens"] = s.batch * s.prompt;
    s.on_figures(f);
  }
  json last_parts;   // the last decode step's parts, when it was simulated
  json last_bound;   // and its bound in words (summary.json's bound_text)
  json last_layers;  // and the layers it simulated

  // 2. Decode: steps sampled by bisection and simulated, the others interpolated (linear in the
  // context where the samples show it is). The last step's run folder is kept.
  set_stage("simulating decode steps (child processes)");
  std::size_t simulated_count = 0;
  const DecodeSamples samples =
      sample_decode_steps(s.generate, s.decode_samples, s.decode_tolerance, [&](std::int64_t i) {
        const std::int64_t past = s.context + s.prompt + i;
        ++simulated_count;
        progress.show("decode step at context " + std::to_string(past + 1) + " (" + std::to_string(simulated_count) +
                      " of at most " + std::to_string(most - 1) + " simulated)");
        phase_done(simulated_count);
        const bool last = i + 1 == s.generate;
        const auto it = started.find(i);
        const json step = (it != started.end() ? std::move(it->second) : decode_job(i))->result();
        if (last) {
          last_parts = step.at("parts");
          last_layers = step.at("layers");
          last_bound = step.value("bound_text", json());
        }
        activations_peak = std::max(activations_peak, step.at("activation_bytes").get<std::uint64_t>());
        const StepFigures r = phase_of(step);
        if (s.on_figures) {
          json f = figures(r);
          f["phase"] = "decode";
          f["step"] = i;
          f["context"] = past + 1;
          s.on_figures(f);
        }
        return r;
      });
  json steps = json::array();
  double decode_s = 0, decode_j = 0;
  bool energy = pre.energy_j.has_value();
  for (std::int64_t i = 0; i < s.generate; ++i) {
    const StepFigures r = decode_step(samples, i);
    decode_s += r.seconds;
    if (r.energy_j)
      decode_j += *r.energy_j;
    else
      energy = false;
    steps.push_back(step_json(s.context + s.prompt + i + 1, r, samples.simulated.count(i) > 0));
  }
  json speculative;
  if (p.draft) {
    set_stage("simulating speculative rounds (child processes)");
    std::size_t done = 1 + simulated_count;
    speculative = speculate(
        s, p,
        [&](const std::string& what) {
          progress.show(what + " (speculative decoding)");
          phase_done(done++);
        },
        activations_peak);
  }
  phase_done(most);
  progress.show("");

  const std::int64_t gen_tokens = s.batch * s.generate;
  const workloads::Graph pre_graph = llm::build_llm_step(p.model, pre_spec);
  const std::uint32_t eb = dtype_bytes(p.hw.mac_array.dtype);
  json widths = {{"weights", llm::format_name(p.widths.weights)},
                 {"activations", llm::format_name(p.widths.activations)},
                 {"kv_cache", llm::format_name(p.widths.kv)},
                 {"head_and_embedding", p.widths.wide_head ? "fp16" : llm::format_name(p.widths.weights)},
                 {"config_dtype_bytes", eb}};
  json block = {{"model", p.model.name},
                {"model_type", p.model.model_type},
                {"config_file", p.model.source},
                {"params", llm::parameter_count(p.model)},
                {"weight_bytes", workloads::graph_totals(pre_graph, eb).weight_bytes},
                {"widths", widths},
                {"batch", s.batch},
                {"context", s.context},
                {"prompt", in.prompt},
                {"generate", s.generate},
                {"all_logits", s.all_logits},
                {"prefill",
                 {{"tokens", s.batch * s.prompt},
                  {"seconds", pre.seconds},
                  {"cycles", pre.cycles},
                  {"macs", pre.macs},
                  {"dram_bytes", pre.dram_bytes},
                  {"energy_j", pre.energy_j ? json(*pre.energy_j) : json()},
                  {"parts", pre_summary.at("parts")},
                  {"bound", pre_summary.value("bound_text", json())},
                  {"layers", pre_summary.at("layers")}}},
                {"decode",
                 {{"tokens", gen_tokens},
                  {"seconds", decode_s},
                  {"tokens_per_second", decode_s > 0 ? json(double(gen_tokens) / decode_s) : json()},
                  {"energy_j", energy && s.generate > 0 ? json(decode_j) : json()},
                  {"energy_per_token_j", energy && gen_tokens > 0 ? json(decode_j / double(gen_tokens)) : json()},
                  {"simulated_steps", samples.simulated.size()},
                  {"sampling",
                   {{"max_samples", s.decode_samples},
                    {"tolerance", s.decode_tolerance},
                    {"midpoints_checked", samples.checked},
                    {"largest_departure", samples.checked ? json(samples.largest_departure) : json()}}},
                  {"steps", steps}}},
                {"ttft_seconds", ttft},
                {"total_seconds", ttft + decode_s},
                {"kv_cache_bytes", llm::kv_cache_bytes(p.model, p.widths, s.batch, final_context(s), eb)},
                {"kv_cache_home", to_string(p.hw.sram.kv_cache)},
                {"wall_seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()}};
  if (s.generate > 0) {
    // What the last step's DRAM bytes were: the KV cache it read (the whole cache at its
    // context, once, when the cache lives in DRAM; docs/llm.md) and the rest (the weights, the
    // activations, the new token's K and V).
    const StepFigures last = decode_step(samples, s.generate - 1);
    const double kv = p.hw.sram.kv_cache == KvCacheHome::Sram
                          ? 0.0
                          : double(llm::kv_cache_bytes(p.model, p.widths, s.batch, final_context(s), eb));
    block["decode"]["last_step"] = {{"context", final_context(s)}, {"dram_bytes", last.dram_bytes},
                                    {"kv_cache_read_bytes", kv},   {"other_bytes", last.dram_bytes - kv},
                                    {"parts", last_parts},         {"bound", last_bound},
                                    {"layers", last_layers}};
  }
  if (p.draft) {
    const json& plain = block["decode"]["tokens_per_second"];
    const json& fast = speculative["tokens_per_second"];
    speculative["speedup"] =
        plain.is_number() && fast.is_number() ? json(fast.get<double>() / plain.get<double>()) : json();
    speculative["total_seconds"] = pre.seconds + speculative["seconds"].get<double>();
    speculative["kv_cache_bytes"] = llm::kv_cache_bytes(*p.draft, p.widths, s.batch, final_context(s), eb);
    block["speculative"] = speculative;
  }
  if (pre_summary.contains("chunks")) block["prefill"]["chunks"] = pre_summary.at("chunks");
  if (p.model.moe.experts > 0) {
    // Mixture of experts: what one token reads, and how the steps' tokens picked their experts.
    block["active_params"] = llm::active_parameter_count(p.model);
    block["expert_routing"] = llm::to_string(p.routing);
  }
  std::uint64_t vision_weights = 0;
  if (image) {
    // The image's figures; the vision tower's weights stay in DRAM beside the language model's.
    vision_weights = workloads::graph_totals(llm::build_vision_encoder(p.model, *image, p.widths), eb).weight_bytes;
    block["vision"] = {{"image", {image->resized_width, image->resized_height}},
                       {"image_given", {image->width, image->height}},
                       {"patches", image->patches},
                       {"tokens", image->tokens},
                       {"seconds", vision.seconds},
                       {"cycles", vision.cycles},
                       {"macs", vision.macs},
                       {"dram_bytes", vision.dram_bytes},
                       {"energy_j", vision.energy_j ? json(*vision.energy_j) : json()},
                       {"parameters", llm::vision_parameter_count(p.model)},
                       {"weight_bytes", vision_weights},
                       {"layers", vision_layers}};
  }
  const std::uint64_t weights = block.at("weight_bytes").get<std::uint64_t>() + vision_weights,
                      kv = block.at("kv_cache_bytes").get<std::uint64_t>();
  // A draft's weights and cache stay in DRAM beside the model's for the whole run.
  const std::uint64_t draft = p.draft
                                  ? workloads::graph_totals(llm::build_llm_step(*p.draft, pre_spec), eb).weight_bytes +
                                        block["speculative"]["kv_cache_bytes"].get<std::uint64_t>()
                                  : 0;
  block["memory_bytes"] = {{"weights", weights},
                           {"kv_cache", kv},
                           {"draft", p.draft ? json(draft) : json()},
                           {"activations_peak", activations_peak},
                           {"runtime", nullptr},
                           {"total", weights + kv + draft + activations_peak}};
  block["cores"] = p.hw.cores;
  block["parallel"] = sched::to_string(p.parallel);
  return {{"workload", p.model.name}, {"config_name", p.hw.name}, {"fusion", s.fusion}, {"llm", block}};
}

}  // namespace npusim::engine
