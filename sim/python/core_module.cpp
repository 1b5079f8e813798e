// npusim._core: the C++ engine for Python (pybind11). The Python package (sim/python/npusim/)
// wraps it; this file only adapts types. Loading and planning run in the calling process (they
// need no SystemC); every simulation runs in a forked child process, because SystemC elaborates
// once per process, and sends its summary and roofline back through a pipe as JSON.
#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "sim/engine/child.h"
#include "sim/engine/llm_run.h"
#include "sim/engine/output_dir.h"
#include "sim/engine/run_options.h"
#include "sim/engine/run_pipeline.h"
#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/core/json_input.h"
#include "sim/scheduler/host_ops.h"
#include "sim/scheduler/parallel.h"
#include "sim/scheduler/policy.h"
#include "sim/scheduler/schedule_file.h"
#include "traces/aligned_groups.h"
#include "traces/roofline.h"
#include "workloads/loader.h"

// libsystemc references sc_main; simulations start from simulate() in a child process.
// Exported: pybind11 builds modules with hidden visibility, and libsystemc must see it.
extern "C" __attribute__((visibility("default"))) int sc_main(int, char*[]) {
  return 0;
}

namespace py = pybind11;

namespace npusim::python {
namespace {

/// A hardware config as `--config` and `--set` give it, resolved once.
struct Config {
  std::string spec;
  std::vector<std::string> overrides;
  HardwareConfig hw;
};

/// A loaded workload. `name` is what reports call it (the file's stem or the zoo name).
struct Graph {
  std::string name;
  workloads::Graph graph;
};

Config make_config(const std::string& spec, const std::vector<std::string>& overrides) {
  return {spec, overrides, config::load_hardware_config(spec, overrides)};
}

/// A message of the engine with the command line's flags spelled as Python's keywords
/// ("--weight-dtype int3" -> "weight_dtype int3"): the engine checks the arguments once, for
/// both front ends, and Python's users never typed a flag.
std::string keyword_text(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const bool flag = text.compare(i, 2, "--") == 0 && i + 2 < text.size() && std::islower(text[i + 2]) &&
                      (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1])));
    if (!flag) {
      out += text[i++];
      continue;
    }
    for (i += 2; i < text.size() && (std::islower(text[i]) || std::isdigit(text[i]) || text[i] == '-'); ++i)
      out += text[i] == '-' ? '_' : text[i];
  }
  return out;
}

/// Runs `work`, rethrowing an InputError with its flags spelled as keywords (keyword_text).
template <typename Work>
auto with_keywords(Work work) -> decltype(work()) {
  try {
    return work();
  } catch (const InputError& e) {
    const std::string where = keyword_text(e.where());
    const std::string what = std::string(e.what()).substr(e.where().empty() ? 0 : e.where().size() + 2);
    throw InputError(where, keyword_text(what));
  }
}

Graph load(const std::string& spec, const std::map<std::string, workloads::Shape>& input_shapes, bool skip_unsupported,
           const std::map<std::string, std::int64_t>& dims, bool kv_cache_copy) {
  workloads::LoadOptions options;
  options.input_shapes = input_shapes;
  options.dims = dims;
  options.skip_unsupported = skip_unsupported;
  options.kv_cache_copy = kv_cache_copy;
  workloads::Graph g = engine::load_workload_spec(spec, options);
  std::string name = g.name.empty() ? spec : g.name;
  return {std::move(name), std::move(g)};
}

Graph parse_yaml(const std::string& text, const std::string& source) {
  workloads::Graph g = workloads::parse_yaml_workload(text, source);
  std::string name = g.name;
  return {std::move(name), std::move(g)};
}

py::list graph_ops(const Graph& g, std::uint32_t elem_bytes) {
  py::list out;
  const auto& tensors = g.graph.tensors();
  for (const auto& op : g.graph.ops()) {
    const workloads::OpCost c = workloads::op_cost(g.graph, op, elem_bytes);
    py::list inputs, outputs;
    for (int t : op.inputs) inputs.append(tensors[t].name);
    for (int t : op.outputs) outputs.append(tensors[t].name);
    py::dict d;
    d["name"] = op.name;
    d["kind"] = workloads::to_string(op.kind);
    d["inputs"] = inputs;
    d["outputs"] = outputs;
    d["macs"] = c.macs;
    d["vector_ops"] = c.vector_ops;
    d["input_bytes"] = c.input_bytes;
    d["weight_bytes"] = c.weight_bytes;
    d["output_bytes"] = c.output_bytes;
    out.append(d);
  }
  return out;
}

py::list graph_tensors(const Graph& g) {
  py::list out;
  for (const auto& t : g.graph.tensors()) {
    py::dict d;
    d["name"] = t.name;
    d["shape"] = t.shape;
    d["constant"] = t.is_constant;
    d["producer"] = t.producer >= 0 ? py::object(py::str(g.graph.op(t.producer).name)) : py::object(py::none());
    out.append(d);
  }
  return out;
}

/// The plan as schedule.json has it (policies, or a schedule file's text validated).
std::string plan(const Graph& g, const Config& c, const std::string& fusion, const std::string& objective) {
  workloads::Graph marked = g.graph;
  sched::mark_host_ops(marked, c.hw);
  return sched::to_json(engine::plan_for(fusion, objective, marked, c.hw), marked).dump();
}

sched::Plan schedule_plan(const Graph& g, const Config& c, const std::string& text, const std::string& source) {
  return sched::parse_schedule(text, source, g.graph, c.hw);
}

std::string check_schedule(const Graph& g, const Config& c, const std::string& text, const std::string& source) {
  return sched::to_json(schedule_plan(g, c, text, source), g.graph).dump();
}

// ---- simulation in a child process ----

/// Waits for `child`, the GIL released; a Python signal (Ctrl-C) cancels the child and raises
/// in the caller.
engine::ChildResult wait_for(engine::Child& child) {
  engine::ChildResult r;
  bool python_signal = false;
  {
    py::gil_scoped_release release;
    r = child.wait([&python_signal] {
      py::gil_scoped_acquire acquire;
      python_signal = PyErr_CheckSignals() != 0;
      return !python_signal;
    });
  }
  if (python_signal) throw py::error_already_set();
  return r;
}

/// The reply of a child that ended with an error, as {"error": "input"|"simulation", "message"}
/// (flags spelled as keywords when `keywords`); none when it succeeded.
std::optional<std::string> error_reply(const engine::ChildResult& r, bool keywords) {
  if (r.end != engine::ChildResult::End::Error) return std::nullopt;
  return nlohmann::json{{"error", r.kind == "input" ? "input" : "simulation"},
                        {"message", keywords ? keyword_text(r.message) : r.message}}
      .dump();
}

/// The graph one copy runs under `parallel` (none, data, pipeline, tensor; "" = none) on `c`'s cores,
/// as `npusim run --parallel` splits it (docs/multicore.md), and how the copies spread.
struct Replica {
  workloads::Graph graph;
  sched::ParallelPlan parallel;
};

Replica replica_of(const Graph& g, const Config& c, const std::string& parallel) {
  Replica r{g.graph, {}};
  if (!parallel.empty()) {
    with_keywords([&] {
      const auto mode = sched::parse_parallel_mode(parallel, "parallel");
      if (mode != sched::ParallelMode::None) r.graph = sched::replica_graph(g.graph, mode, c.hw, r.parallel);
    });
  }
  sched::mark_host_ops(r.graph, c.hw);  // npu.host.ops, as the engine marks them before planning
  return r;
}

/// Simulates `plan` of `r` (a replica of `g`) on `c` in a forked child (sim/engine/child.h);
/// `out` (optional) receives the run folder as `npusim run --out` writes it. Returns {"summary",
/// "roofline"} as JSON text, or {"error": "input"|"simulation", "message"} when the simulation
/// failed.
std::string simulate_plan(const Graph& g, const Config& c, const Replica& r, const sched::Plan& plan,
                          const std::string& out) {
  // The run folder follows the CLI's rules (sim/engine/output_dir.h): checked and locked first,
  // written in a temporary sibling, put in place whole only when the simulation succeeded; a
  // user's own folder is never written into.
  std::optional<engine::OutputDir> folder;
  if (!out.empty()) folder.emplace(out, "out=");
  engine::RunSpec spec;
  spec.config = c.spec;
  spec.workload = g.name;
  spec.out = folder ? folder->path().string() : "";
  if (r.parallel.mode != sched::ParallelMode::None) spec.parallel = sched::to_string(r.parallel.mode);
  const engine::LoadedRun run{c.hw, r.graph, g.name, plan, r.parallel};
  engine::Child child([&] {
    const engine::SimulatedRun sim = engine::simulate_run(spec, run);
    if (!spec.out.empty()) engine::write_run_outputs(spec, run, sim);
    return nlohmann::json{{"summary", sim.summary}, {"roofline", traces::to_json(sim.roofline)}}.dump();
  });
  const engine::ChildResult result = wait_for(child);
  if (auto e = error_reply(result, r.parallel.mode != sched::ParallelMode::None)) return *e;
  std::string reply = engine::reply_or_throw(result, "the simulation process");
  if (folder) folder->commit();
  return reply;
}

std::string simulate(const Graph& g, const Config& c, const std::string& fusion, const std::string& objective,
                     const std::string& out, const std::string& parallel) {
  const Replica r = replica_of(g, c, parallel);
  return simulate_plan(g, c, r, engine::plan_for(fusion, objective, r.graph, c.hw), out);
}

std::string simulate_schedule(const Graph& g, const Config& c, const std::string& text, const std::string& source,
                              const std::string& out, const std::string& parallel) {
  const Replica r = replica_of(g, c, parallel);
  return simulate_plan(g, c, r, sched::parse_schedule(text, source, r.graph, c.hw), out);
}

// ---- language models ----

/// `npusim llm` (sim/engine/llm_run.h): checks `spec` (errors name the keywords), runs the
/// phases in a child process (each phase in a grandchild: SystemC elaborates once per process)
/// and, with `spec.out`, writes the folder `npusim llm --out` writes. Returns summary.json's
/// content, or {"error", "message"} as simulate does.
std::string llm(engine::LlmSpec spec) {
  with_keywords([&] { engine::check_llm_spec(spec); });
  std::optional<engine::OutputDir> folder;
  if (!spec.out.empty()) {
    folder.emplace(spec.out, "out=");
    spec.out = folder->path().string();
  }
  engine::ChildOptions options;
  options.own_process_group = true;  // a cancel also stops the phase being simulated
  engine::Child child([&] { return engine::run_llm(spec).dump(); }, options);
  const engine::ChildResult result = wait_for(child);
  if (auto e = error_reply(result, true)) return *e;
  std::string reply = engine::reply_or_throw(result, "the language model's process");
  if (folder) {
    write_file_atomic((folder->path() / "summary.json").string(), nlohmann::json::parse(reply).dump(2) + "\n");
    folder->commit();
  }
  return reply;
}

}  // namespace
}  // namespace npusim::python

PYBIND11_MODULE(_core, m) {
  using namespace npusim::python;
  m.doc() = "npusim's C++ engine (use the npusim package, not this module directly)";

  static py::exception<npusim::InputError> input_error(m, "InputError", PyExc_ValueError);
  static py::exception<npusim::SimulationError> simulation_error(m, "SimulationError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const npusim::InputError& e) {
      // The instance carries `where` (file:line, field or node) beside the message.
      py::object error = py::reinterpret_borrow<py::object>(input_error.ptr())(e.what());
      error.attr("where") = e.where();
      PyErr_SetObject(input_error.ptr(), error.ptr());
    } catch (const npusim::SimulationError& e) {
      simulation_error(e.what());
    }
  });

  py::class_<Config>(m, "Config")
      .def(py::init(&make_config), py::arg("spec"), py::arg("overrides"))
      .def_readonly("spec", &Config::spec)
      .def_readonly("overrides", &Config::overrides)
      .def_property_readonly("name", [](const Config& c) { return c.hw.name; })
      .def_property_readonly("elem_bytes", [](const Config& c) { return npusim::dtype_bytes(c.hw.mac_array.dtype); })
      .def("resolved", [](const Config& c) { return npusim::to_json(c.hw).dump(); });

  py::class_<Graph>(m, "Graph")
      .def_readonly("name", &Graph::name)
      .def("ops", &graph_ops, py::arg("elem_bytes"))
      .def("tensors", &graph_tensors)
      .def(
          "totals",
          [](const Graph& g, std::uint32_t elem_bytes) {
            const auto t = npusim::workloads::graph_totals(g.graph, elem_bytes);
            return py::dict(py::arg("macs") = t.macs, py::arg("vector_ops") = t.vector_ops,
                            py::arg("weight_bytes") = t.weight_bytes, py::arg("params") = t.params);
          },
          py::arg("elem_bytes"));

  m.def("load", &load, py::arg("spec"), py::arg("input_shapes"), py::arg("skip_unsupported"), py::arg("dims"),
        py::arg("kv_cache_copy"));
  m.def("zoo_names", [] { return npusim::workloads::zoo_names(npusim::config::data_dir() + "/workloads/zoo"); });
  m.def("parse_yaml", &parse_yaml, py::arg("text"), py::arg("source"));
  // The fusion policies' table (sim/scheduler/policy.h), in its order:
  // [(name, description, simulates_finalists, llm), ...].
  // The run options' one table (sim/engine/run_options.h) as JSON text: npusim.run_options() and
  // the package's checks read their names, values and ranges from it.
  m.def("run_options", [] { return npusim::engine::run_options_json().dump(); });
  m.def("fusion_policies", [] {
    std::vector<std::tuple<std::string, std::string, bool, bool>> out;
    for (const auto& p : npusim::sched::fusion_policies())
      out.emplace_back(std::string(p.name), std::string(p.description), p.simulates_finalists, !p.model_groups);
    return out;
  });
  m.def(
      "check_arguments",
      [](const std::vector<std::string>& policies, const std::string& objective) {
        npusim::engine::check_run_arguments(policies, objective, {"fusion", "objective"});
      },
      py::arg("policies"), py::arg("objective"));
  // A schedule file as the CLI reads it: the same messages for a missing file, bad UTF-8, bad
  // JSON and duplicate keys (returned as JSON text without them).
  m.def(
      "read_schedule_text",
      [](const std::string& path) {
        return npusim::parse_json_input(npusim::read_file(path), path, "a JSON schedule").dump();
      },
      py::arg("path"));
  // compare's per-group diff aligned by ops, as `npusim compare` computes it (compare.json's
  // aligned_groups): `runs` is [[name, summary.json text], ...].
  m.def(
      "align_groups",
      [](const std::vector<std::pair<std::string, std::string>>& runs) {
        std::vector<nlohmann::json> docs;
        for (const auto& r : runs) docs.push_back(nlohmann::json::parse(r.second));
        std::vector<std::pair<std::string, const nlohmann::json*>> named;
        for (std::size_t i = 0; i < runs.size(); ++i) named.emplace_back(runs[i].first, &docs[i]);
        return npusim::traces::align_groups(named).dump();
      },
      py::arg("runs"));
  m.def("plan", &plan, py::arg("graph"), py::arg("config"), py::arg("fusion"), py::arg("objective"));
  m.def("check_schedule", &check_schedule, py::arg("graph"), py::arg("config"), py::arg("text"), py::arg("source"));
  m.def("simulate", &simulate, py::arg("graph"), py::arg("config"), py::arg("fusion"), py::arg("objective"),
        py::arg("out"), py::arg("parallel"));
  m.def("simulate_schedule", &simulate_schedule, py::arg("graph"), py::arg("config"), py::arg("text"),
        py::arg("source"), py::arg("out"), py::arg("parallel"));
  m.def(
      "llm",
      [](const std::string& model, const Config& config, std::int64_t prompt, std::int64_t generate, std::int64_t batch,
         const std::string& weight_dtype, std::uint32_t group_size, const std::string& kv_dtype,
         const std::string& act_dtype, bool zero_point, bool wide_head, bool all_logits, const std::string& fusion,
         int decode_samples, double decode_tolerance, const std::string& out, bool quiet, std::int64_t context,
         const std::string& expert_routing, const std::string& draft, std::int64_t draft_tokens, double acceptance,
         std::uint32_t kv_group_size, bool every_layer, const std::string& image, std::int64_t prefill_chunk) {
        npusim::engine::LlmSpec s;
        s.model = model;
        s.config = config.spec;
        s.overrides = config.overrides;
        s.prompt = prompt;
        s.generate = generate;
        s.batch = batch;
        s.context = context;
        s.prefill_chunk = prefill_chunk;
        s.expert_routing = expert_routing;
        s.draft = draft;
        s.draft_tokens = draft_tokens;
        s.acceptance = acceptance;
        s.kv_group_size = kv_group_size;
        s.weight_dtype = weight_dtype;
        s.group_size = group_size;
        s.kv_dtype = kv_dtype;
        s.act_dtype = act_dtype;
        s.zero_point = zero_point;
        s.wide_head = wide_head;
        s.all_logits = all_logits;
        s.fusion = fusion;
        s.decode_samples = decode_samples;
        s.decode_tolerance = decode_tolerance;
        s.every_layer = every_layer;
        s.image = image;
        s.out = out;
        s.progress = !quiet;
        return llm(std::move(s));
      },
      py::arg("model"), py::arg("config"), py::arg("prompt"), py::arg("generate"), py::arg("batch"),
      py::arg("weight_dtype"), py::arg("group_size"), py::arg("kv_dtype"), py::arg("act_dtype"), py::arg("zero_point"),
      py::arg("wide_head"), py::arg("all_logits"), py::arg("fusion"), py::arg("decode_samples"),
      py::arg("decode_tolerance"), py::arg("out"), py::arg("quiet"), py::arg("context"), py::arg("expert_routing"),
      py::arg("draft"), py::arg("draft_tokens"), py::arg("acceptance"), py::arg("kv_group_size"),
      py::arg("every_layer"), py::arg("image"), py::arg("prefill_chunk"));
}
