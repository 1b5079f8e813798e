#pragma once
// Helpers shared by the scheduler and simulation tests: test workloads, the DRAM bytes a
// Program moves, schedule-file errors as text, and a one-group plan for hand-made Programs.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/core/hardware_config.h"
#include "sim/scheduler/plan.h"
#include "sim/scheduler/program.h"
#include "sim/scheduler/schedule_file.h"
#include "workloads/graph.h"
#include "workloads/loader.h"
#include "workloads/loader.h"
#include "tests/support/test_paths.h"

namespace npusim::test {

/// tests/data/<name>.yaml.
inline workloads::Graph data(const std::string& name) {
  return workloads::load_yaml_workload(std::string(test_paths::data_dir()) + "/" + name + ".yaml");
}

/// Bytes the Program's DMA commands move (as planned, not rounded to bursts).
/// DRAM bytes a plan expects: the sum of its groups' `dram_bytes`.
inline std::uint64_t plan_dram_bytes(const sched::Plan& p) {
  std::uint64_t b = 0;
  for (const auto& g : p.groups) b += g.dram_bytes;
  return b;
}

inline std::uint64_t dram_bytes(const sched::Program& p) {
  std::uint64_t b = 0;
  for (const auto& c : p.commands)
    if (c.kind == sched::CommandKind::DmaLoad || c.kind == sched::CommandKind::DmaStore) b += c.dram.bytes();
  return b;
}

/// The message parse_schedule throws for `text`, or "" when the schedule is accepted.
/// The InputError message of loading config `spec` with `sets` ("" when it loads).
inline std::string config_load_error(const std::string& spec, const std::vector<std::string>& sets = {}) {
  try {
    config::load_hardware_config(spec, sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

/// The InputError message of loading edge-m with `sets` ("" when it loads).
inline std::string config_error(const std::vector<std::string>& sets) {
  return config_load_error("edge-m", sets);
}

inline std::string schedule_error(const std::string& text, const workloads::Graph& g, const HardwareConfig& hw) {
  try {
    sched::parse_schedule(text, "s.json", g, hw);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

/// x [64, 32] -> matmul -> [64, 32]: M = 64, K = 32, N = 32.
inline const char* const kOneMatmul = R"(
name: one_matmul
inputs:
  - {name: x, shape: [64, 32]}
ops:
  - {name: fc, op: matmul, inputs: [x], out_features: 32}
outputs: [fc]
)";

/// `name`: x [rows, in] -> matmul `fc` -> [rows, out] (M = rows, K = in, N = out).
inline workloads::Graph one_matmul(const std::string& name, long rows, long in, long out) {
  const std::string yaml =
      "name: " + name + "\ninputs:\n  - {name: x, shape: [" + std::to_string(rows) + ", " + std::to_string(in) +
      "]}\nops:\n  - {name: fc, op: matmul, inputs: [x], out_features: " + std::to_string(out) + "}\noutputs: [fc]\n";
  return workloads::parse_yaml_workload(yaml, name + ".yaml");
}

/// A plan of one group around op 0, for hand-made programs.
inline sched::Plan one_group_plan(const workloads::Graph& g) {
  sched::Plan p;
  sched::GroupPlan gp;
  gp.name = "g";
  gp.fusion = "none";
  gp.segments.resize(1);
  gp.segments[0].ops = {0};
  p.groups.push_back(gp);
  p.op_group.assign(g.ops().size(), 0);
  return p;
}

/// A Program of one GEMM command (op 0, group 0) of `w` holding no SRAM: the MAC array alone.
inline sched::Program one_gemm_program(const sched::GemmWork& w) {
  sched::Program prog;
  sched::Command c;
  c.kind = sched::CommandKind::Gemm;
  c.op = 0;
  c.group = 0;
  c.gemm = w;
  c.macs = std::uint64_t(w.m * w.k * w.n * w.repeats);
  prog.add(c);
  prog.group_sram_bytes = {0};
  return prog;
}

}  // namespace npusim::test
