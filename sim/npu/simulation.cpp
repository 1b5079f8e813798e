#include "sim/npu/simulation.h"

#include <cmath>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include <unistd.h>

#include <spdlog/spdlog.h>

#include "models/dram/dram_state_tracer.h"
#include "sim/core/errors.h"
#include "sim/core/temporaries.h"
#include "sim/npu/dram_activity_trace.h"
#include "sim/npu/npu.h"
#include "sim/npu/sequencer.h"

namespace npusim {

void describe(traces::Trace& t, const HardwareConfig& hw, const workloads::Graph& g, const sched::Plan& plan) {
  const std::uint32_t eb = dtype_bytes(hw.mac_array.dtype);
  t.fusion = sched::to_string(plan.policy);
  t.config_name = hw.name;
  t.config = to_json(hw);
  for (const auto& c : g.import_choices)
    t.import_choices.push_back({{"node", c.node}, {"choice", c.choice}, {"reason", c.reason}});
  // The chip's roofs: every core's units side by side, the DRAM shared (docs/multicore.md).
  const double cores = std::max(hw.cores, 1u);
  t.cores = std::max(hw.cores, 1u);
  t.roofs.core_clock_hz = hw.core_clock.hz;
  t.roofs.mac_peak_ops = hw.mac_peak_ops() * cores;
  t.roofs.vector_peak_ops = hw.vector_peak_ops() * cores;
  t.roofs.dram_bandwidth = hw.dram.peak_bandwidth().bytes_per_second;
  t.roofs.sram_bandwidth = hw.sram_bandwidth() * cores;
  t.roofs.mac_rows = hw.mac_array.rows;
  t.roofs.mac_cols = hw.mac_array.cols;
  t.roofs.sram_capacity = hw.sram.capacity_bytes * t.cores;
  t.roofs.cores = t.cores;
  t.ops.clear();
  for (std::size_t i = 0; i < g.ops().size(); ++i) {
    const auto& op = g.op(int(i));
    const auto cost = workloads::op_cost(g, op, eb);
    const auto cls = workloads::op_class(op.kind);
    t.ops.push_back({op.name, workloads::to_string(op.kind),
                     cls == workloads::OpClass::Gemm     ? "MAC array"
                     : cls == workloads::OpClass::Vector ? "vector unit"
                                                         : "none",
                     plan.op_group[i], cost.macs, cost.vector_ops});
    if (cls == workloads::OpClass::Gemm) {
      const auto v = workloads::gemm_view(g, op);
      t.ops.back().gemm = {std::uint64_t(v.groups), std::uint64_t(v.m), std::uint64_t(v.k), std::uint64_t(v.n)};
    }
  }
  t.groups.clear();
  for (const auto& gp : plan.groups) {
    // A row op too long for the SRAM runs twice over its rows (docs/scheduling.md, "Two passes").
    std::string fusion = gp.fusion;
    for (const auto& s : gp.segments)
      if (s.tiling.passes == 2) fusion += ", two passes (statistics, apply): " + g.op(s.ops[0]).name;
    for (const auto& s : gp.segments)  // a GEMM's input prologue, and what its operand's re-reads do
      if (!s.prologue.empty())
        fusion += std::string(fusion == "prologue" ? " (" : ", prologue (") + prologue_mode(s.tiling) +
                  "): " + g.op(s.ops[0]).name;
    t.groups.push_back(
        {gp.name, fusion, gp.ops(), gp.sram_bytes, gp.dataflow ? dataflow_name(*gp.dataflow) : std::string()});
  }
  for (const auto& b : plan.boundaries)  // between group i and i + 1: kept with group i
    if (b.from_op >= 0 && plan.op_group[b.from_op] >= 0) t.groups.at(plan.op_group[b.from_op]).not_fused = b.reason;
}

/// The L2's placement and what its banks moved (summary.json's `l2`, docs/outputs.md).
nlohmann::json l2_json(const sched::L2Placement& p, const models::L2Stats& s) {
  return {{"tensors", p.tensors},
          {"bytes_placed", p.bytes},
          {"peak_occupancy_bytes", p.peak_bytes},
          {"left_in_dram", p.left_in_dram},
          {"largest_transfer_bytes", p.largest_transfer},
          {"banks_read_bytes", s.read_bytes},
          {"banks_written_bytes", s.written_bytes},
          {"transfers", s.transfers}};
}

void describe_replicas(traces::Trace& t, const sched::ParallelPlan& pp) {
  t.parallel = sched::to_json(pp);
  if (pp.replicas <= 1) return;
  const auto ops = t.ops;
  const auto groups = t.groups;
  const int n_ops = int(ops.size()), n_groups = int(groups.size());
  t.ops.clear();
  t.groups.clear();
  for (std::uint32_t r = 0; r < pp.replicas; ++r) {
    const std::string label = sched::replica_label(pp, r);
    for (auto op : ops) {
      op.name += label;
      if (op.group >= 0) op.group += int(r) * n_groups;
      t.ops.push_back(std::move(op));
    }
    for (auto g : groups) {
      g.name += label;
      for (int& o : g.ops) o += int(r) * n_ops;
      t.groups.push_back(std::move(g));
    }
  }
}

traces::Trace simulate(const SimulationInput& in) {
  // The kernel prints a banner on first use unless told not to; our output is the report.
  ::setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  Npu npu("npu", in.hw);
  Sequencer seq("sequencer", npu, in.program, in.progress);
  // SystemC appends ".vcd" to the name; the file is renamed into place only after success.
  const std::string vcd_tmp = in.vcd_path.empty() ? "" : in.vcd_path + ".partial-" + std::to_string(::getpid());
  const TemporaryGuard vcd_guard(vcd_tmp.empty() ? "" : vcd_tmp + ".vcd");  // removed if interrupted
  sc_core::sc_trace_file* tf = vcd_tmp.empty() ? nullptr : sc_core::sc_create_vcd_trace_file(vcd_tmp.c_str());
  std::unique_ptr<models::DramStateTracer> dram_tracer;
  if (tf) {
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);  // no banner lines
    tf->set_time_unit(1, sc_core::SC_PS);
    seq.trace(tf);
    dram_tracer = std::make_unique<models::DramStateTracer>("dram_states", npu.dram, tf);
  } else if (in.dram_activity != DramActivityLevel::Off) {
    // Bus gaps under one burst are joined as the trace's slices join them: a long run's record
    // stays a few bytes per gap that matters (the VCD branch above keeps it exact); an overview
    // joins gaps under kOverviewBusJoinPs.
    const bool banks = in.dram_activity == DramActivityLevel::Banks;
    const bool overview = !banks || in.bus_overview;
    const double overview_cycles = std::ceil(double(kOverviewBusJoinPs) * 1e-12 * npu.dram.config().clock.hz);
    npu.dram.record_activity(banks, std::max<std::uint64_t>(npu.dram.config().burst_cycles(),
                                                            overview ? std::uint64_t(overview_cycles) : 0));
  }
  sc_core::sc_start();
  // The VCD writer records a time step's values when the next one starts: one more step writes
  // the last changes (every process is waiting, so nothing else happens).
  if (tf) sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_PS));
  if (tf) sc_core::sc_close_vcd_trace_file(tf);
  if (dram_tracer && dram_tracer->late_changes() > 0)
    spdlog::warn("VCD: {} DRAM state changes were recorded after their time and appear late (docs/dram.md)",
                 dram_tracer->late_changes());
  if (auto report = seq.deadlock_report(); !report.empty()) {
    if (tf) std::remove((vcd_tmp + ".vcd").c_str());
    throw SimulationError(report);
  }
  if (tf && publish(vcd_tmp + ".vcd", in.vcd_path) != 0)
    throw SimulationError("cannot write the VCD file " + in.vcd_path);

  // Refresh ticks after the last transfer would otherwise be processed only when a next one
  // arrives: serve those due by the run's end, so the counts and the DRAM energy cover the whole
  // run and match a run with --vcd, whose replay serves them on time.
  npu.dram.advance_refresh_to(npu.dram.to_cycle(sc_core::sc_time_stamp()));

  traces::Trace t;
  t.workload = in.workload_name;
  describe(t, in.hw, in.graph, in.plan);
  if (in.parallel) describe_replicas(t, *in.parallel);
  t.commands = seq.take_events();
  std::sort(t.commands.begin(), t.commands.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  t.sram_allocations = seq.allocations();
  for (const auto& c : t.commands) t.end_ps = std::max(t.end_ps, c.end_ps);
  t.dram_stats = npu.dram.stats_json();
  if (in.hw.l2.enabled()) t.l2 = l2_json(in.program.l2, npu.l2.stats());
  if (in.dram_activity != DramActivityLevel::Off && npu.dram.engine().activity())
    t.dram_activity = dram_activity_trace(npu.dram, npu.dram.take_activity());
  return t;
}

}  // namespace npusim
