// npusim._core: the C++ engine for Python (pybind11). The Python package (sim/python/npusim/)
// wraps it; this file only adapts types. Loading and planning run in the calling process (they
// need no SystemC); every simulation runs in a forked child process, because SystemC elaborates
// once per process, and sends its summary and roofline back through a pipe as JSON.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "sim/engine/child.h"
#include "sim/engine/output_dir.h"
#include "sim/engine/run_pipeline.h"
#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/core/json_input.h"
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

Graph load(const std::string& spec, const std::map<std::string, workloads::Shape>& input_shapes, bool skip_unsupported,
           const std::map<std::string, std::int64_t>& dims) {
  workloads::LoadOptions options;
  options.input_shapes = input_shapes;
  options.dims = dims;
  options.skip_unsupported = skip_unsupported;
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
  return sched::to_json(engine::plan_for(fusion, objective, g.graph, c.hw), g.graph).dump();
}

sched::Plan schedule_plan(const Graph& g, const Config& c, const std::string& text, const std::string& source) {
  return sched::parse_schedule(text, source, g.graph, c.hw);
}

std::string check_schedule(const Graph& g, const Config& c, const std::string& text, const std::string& source) {
  return sched::to_json(schedule_plan(g, c, text, source), g.graph).dump();
}

// ---- simulation in a child process ----

/// Simulates `plan` of `g` on `c` in a forked child (sim/engine/child.h); `out` (optional)
/// receives the run folder as `npusim run --out` writes it. Returns {"summary", "roofline"} as
/// JSON text, or {"error": "input"|"simulation", "message"} when the simulation failed. A
/// Python signal (Ctrl-C) cancels the child and raises in the caller.
std::string simulate_plan(const Graph& g, const Config& c, const sched::Plan& plan, const std::string& out) {
  // The run folder follows the CLI's rules (sim/engine/output_dir.h): checked and locked first,
  // written in a temporary sibling, put in place whole only when the simulation succeeded; a
  // user's own folder is never written into.
  std::optional<engine::OutputDir> folder;
  if (!out.empty()) folder.emplace(out, "out=");
  engine::RunSpec spec;
  spec.config = c.spec;
  spec.workload = g.name;
  spec.out = folder ? folder->path().string() : "";
  const engine::LoadedRun run{c.hw, g.graph, g.name, plan};
  engine::ChildResult r;
  bool python_signal = false;
  {
    engine::Child child([&] {
      const engine::SimulatedRun sim = engine::simulate_run(spec, run);
      if (!spec.out.empty()) engine::write_run_outputs(spec, run, sim);
      return nlohmann::json{{"summary", sim.summary}, {"roofline", traces::to_json(sim.roofline)}}.dump();
    });
    py::gil_scoped_release release;
    r = child.wait([&python_signal] {
      py::gil_scoped_acquire acquire;
      python_signal = PyErr_CheckSignals() != 0;
      return !python_signal;
    });
  }
  if (python_signal) throw py::error_already_set();
  if (r.end == engine::ChildResult::End::Error)
    return nlohmann::json{{"error", r.kind == "input" ? "input" : "simulation"}, {"message", r.message}}.dump();
  std::string reply = engine::reply_or_throw(r, "the simulation process");
  if (folder) folder->commit();
  return reply;
}

std::string simulate(const Graph& g, const Config& c, const std::string& fusion, const std::string& objective,
                     const std::string& out) {
  return simulate_plan(g, c, engine::plan_for(fusion, objective, g.graph, c.hw), out);
}

std::string simulate_schedule(const Graph& g, const Config& c, const std::string& text, const std::string& source,
                              const std::string& out) {
  return simulate_plan(g, c, schedule_plan(g, c, text, source), out);
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

  m.def("load", &load, py::arg("spec"), py::arg("input_shapes"), py::arg("skip_unsupported"), py::arg("dims"));
  m.def("zoo_names", [] { return npusim::workloads::zoo_names(npusim::config::data_dir() + "/workloads/zoo"); });
  m.def("parse_yaml", &parse_yaml, py::arg("text"), py::arg("source"));
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
        return npusim::parse_json_input_unique_keys(npusim::read_file(path), path, "a JSON schedule").dump();
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
        py::arg("out"));
  m.def("simulate_schedule", &simulate_schedule, py::arg("graph"), py::arg("config"), py::arg("text"),
        py::arg("source"), py::arg("out"));
}
