#include "sim/npu/sequencer.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

#include <sysc/kernel/sc_dynamic_processes.h>

#include "sim/core/errors.h"

namespace npusim {
using sched::CommandKind;

Sequencer::Sequencer(sc_core::sc_module_name name, Npu& npu, const sched::Program& program,
                     std::function<void(std::size_t, std::size_t)> progress)
    : sc_core::sc_module(name), npu_(npu), program_(program), progress_(std::move(progress)) {
  const std::size_t n = program.commands.size();
  pending_.assign(n, 0);
  done_.assign(n, false);
  events_.reserve(n);  // one event per command: grown by doubling it would peak at 1.5x
  const std::size_t groups = program.group_sram_bytes.size();
  group_remaining_.assign(groups, 0);
  parked_.assign(groups, {});
  granted_.assign(groups, false);
  allocations_.resize(groups);
  successor_begin_.assign(n + 1, 0);
  for (const auto& c : program.commands) {
    pending_[c.id] = static_cast<std::uint32_t>(c.deps.size());
    for (auto d : c.deps) ++successor_begin_[d + 1];
    if (c.group >= 0) ++group_remaining_[c.group];
  }
  for (std::size_t i = 0; i < n; ++i) successor_begin_[i + 1] += successor_begin_[i];
  successors_.resize(successor_begin_[n]);
  std::vector<std::uint32_t> filled(successor_begin_.begin(), successor_begin_.end() - 1);
  for (const auto& c : program.commands)
    for (auto d : c.deps) successors_[filled[d]++] = c.id;
  per_buffer_ = !npu.core(0).buffers.shared() && program.group_buffer_bytes.size() == groups;
  dispatch_latency_ = sc_core::sc_time(npu.config.runtime.dispatch_latency_s, sc_core::SC_SEC);
  sync_state_.assign(groups, SyncState::None);
  sync_waiters_.assign(groups, {});
  core_sync_ = sc_core::sc_time(npu.config.runtime.core_sync_s, sc_core::SC_SEC);
  cores_ = std::vector<CoreState>(npu.core_count());
  for (std::size_t g = 0; g < groups; ++g) {
    if (core_of_group(g) >= cores_.size())
      throw SimulationError("program group " + std::to_string(g) + " runs on core " + std::to_string(core_of_group(g)) +
                            ", but the NPU has " + std::to_string(cores_.size()) + " cores");
    cores_[core_of_group(g)].groups.push_back(g);
  }
  for (std::size_t g = 0; g < groups; ++g) {
    allocations_[g].group = static_cast<int>(g);
    allocations_[g].bytes = program.group_sram_bytes[g];
    if (per_buffer_) {
      const auto& b = program.group_buffer_bytes[g];
      allocations_[g].bytes = b[0] + b[1] + b[2];
    }
  }
  for (const auto& c : program.commands)
    if (c.core >= cores_.size())
      throw SimulationError("program command " + std::to_string(c.id) + " runs on core " + std::to_string(c.core) +
                            ", but the NPU has " + std::to_string(cores_.size()) + " cores");
  for (std::uint32_t k = 0; k < cores_.size(); ++k) try_grant(k);
  // The commands without dependencies start. Not "pending 0": a barrier without dependencies
  // completes here at once (a group of views of the graph's inputs) and readies its successors
  // itself, which would then be made ready twice and run twice.
  for (const auto& c : program.commands)
    if (c.deps.empty() && !done_[c.id]) make_ready(c.id);

  if (std::any_of(program.commands.begin(), program.commands.end(),
                  [](const sched::Command& c) { return c.kind == CommandKind::Host; }))
    sc_core::sc_spawn([this] { host_thread(); }, "host_lane");
  for (std::uint32_t k = 0; k < cores_.size(); ++k) {
    // A one-core NPU keeps the lane names it always had.
    const std::string prefix = cores_.size() > 1 ? "core" + std::to_string(k) + "_" : "";
    for (std::uint32_t i = 0; i < 2 + npu.config.dma.channels; ++i) busy_.push_back(std::make_unique<bool>(false));
    sc_core::sc_spawn([this, k] { lane_thread(k, Lane::Mac, 0); }, (prefix + "mac_lane").c_str());
    sc_core::sc_spawn([this, k] { lane_thread(k, Lane::Vector, 0); }, (prefix + "vector_lane").c_str());
    if (!npu.config.runtime.ideal())
      sc_core::sc_spawn([this, k] { runtime_thread(k); }, (prefix + "runtime_lane").c_str());
    for (std::uint32_t ch = 0; ch < npu.config.dma.channels; ++ch)
      sc_core::sc_spawn([this, k, ch] { lane_thread(k, Lane::Dma, ch); },
                        (prefix + "dma_lane_" + std::to_string(ch)).c_str());
  }
}

std::uint32_t Sequencer::core_of_group(std::size_t g) const {
  return g < program_.group_core.size() ? program_.group_core[g] : 0;
}

Sequencer::Lane Sequencer::lane_of(CommandKind k) {
  switch (k) {
    case CommandKind::Gemm:
      return Lane::Mac;
    case CommandKind::Vector:
      return Lane::Vector;
    case CommandKind::Host:
      return Lane::Host;
    default:
      return Lane::Dma;
  }
}

std::uint64_t Sequencer::now_ps() const {
  return static_cast<std::uint64_t>(std::llround(sc_core::sc_time_stamp().to_seconds() * 1e12));
}

void Sequencer::lane_thread(std::uint32_t core, Lane lane, std::uint32_t index) {
  const int q = static_cast<int>(lane);
  CoreState& cs = cores_[core];
  while (true) {
    while (cs.ready[q].empty()) sc_core::wait(cs.ready_event[q]);
    const std::uint32_t id = cs.ready[q].top();
    cs.ready[q].pop();
    cs.ready_depth[q] = int(cs.ready[q].size());
    bool& busy = *busy_[lane_index(core, lane, index)];
    const sched::Command& c = program_.commands[id];
    traces::CommandEvent ev = begin_event(id);
    ev.lane = index;
    ev.core = core;
    busy = true;
    execute(c, ev);
    busy = false;
    ev.end_ps = now_ps();
    events_.push_back(std::move(ev));
    complete(id);
  }
}

void Sequencer::runtime_thread(std::uint32_t core) {
  CoreState& cs = cores_[core];
  while (true) {
    while (cs.runtime_jobs.empty()) sc_core::wait(cs.runtime_event);
    const std::int64_t job = cs.runtime_jobs.front();
    cs.runtime_jobs.pop();
    const bool dispatch = job >= 0;
    traces::CommandEvent ev;
    ev.unit = traces::Unit::Runtime;
    ev.kind = dispatch ? traces::CommandKind::Dispatch : traces::CommandKind::Sync;
    ev.core = core;
    // Not a command of the Program: ids after the Program's, one per group or synchronisation.
    ev.id = std::uint32_t(program_.commands.size() + runtime_events_++);
    if (dispatch) {
      ev.group = int(job);
    } else {
      const auto& waiting = program_.commands[std::size_t(-1 - job)];
      ev.group = waiting.group;
      ev.op = waiting.op;
    }
    ev.begin_ps = now_ps();
    sc_core::wait(dispatch ? dispatch_latency_ : core_sync_);
    ev.end_ps = now_ps();
    events_.push_back(std::move(ev));
    if (dispatch) {
      open_group(std::size_t(job));
      continue;
    }
    const std::uint32_t id = std::uint32_t(-1 - job);
    make_ready(id);
    if (const int g = program_.commands[id].group; g >= 0) {
      sync_state_[g] = SyncState::Done;
      for (auto waiting : std::exchange(sync_waiters_[g], {})) make_ready(waiting);
    }
  }
}

traces::CommandEvent Sequencer::begin_event(std::uint32_t id) const {
  const sched::Command& c = program_.commands[id];
  traces::CommandEvent ev;
  ev.id = id;
  ev.core = c.core;
  ev.op = c.op;
  ev.group = c.group;
  ev.deps = c.deps;
  ev.sram_read_bytes = c.sram_read_bytes;
  ev.sram_write_bytes = c.sram_write_bytes;
  ev.macs = c.macs;
  ev.vector_ops = c.vector_ops;
  ev.begin_ps = now_ps();
  return ev;
}

void Sequencer::host_thread() {
  const HostConfig& host = npu_.config.host;
  int last_group = -1;
  while (true) {
    while (host_ready_.empty()) sc_core::wait(host_event_);
    const std::uint32_t id = host_ready_.top();
    host_ready_.pop();
    const sched::Command& c = program_.commands[id];
    traces::CommandEvent ev = begin_event(id);
    ev.kind = traces::CommandKind::Host;
    ev.unit = traces::Unit::Host;
    // A task's first tile takes the tensors over from the NPU; its later tiles follow on, and a
    // task fed by host ops alone continues on the host without a hand-off.
    const double handoff = c.handoff && c.group != last_group ? host.handoff_latency_s : 0.0;
    last_group = c.group;
    const double seconds =
        handoff + double(c.vector_ops) / host.op_rate + double(c.sram_read_bytes + c.sram_write_bytes) / host.bandwidth;
    sc_core::wait(sc_core::sc_time(seconds, sc_core::SC_SEC));
    ev.end_ps = now_ps();
    events_.push_back(std::move(ev));
    complete(id);
  }
}

void Sequencer::execute(const sched::Command& c, traces::CommandEvent& ev) {
  Core& core = npu_.core(c.core);
  switch (c.kind) {
    case CommandKind::Gemm: {
      ev.kind = traces::CommandKind::Gemm;
      ev.unit = traces::Unit::MacArray;
      models::GemmTile tile{c.gemm.shape(), c.sram_read_bytes, c.sram_write_bytes, c.gemm.dataflow,
                            c.gemm.operand_bytes};
      const auto r = core.mac_array.run(tile);
      ev.stall_cycles = r.stall_cycles;
      ev.compute_cycles = r.compute_cycles;
      ev.bank_conflict_cycles = r.bank_conflict_cycles;
      ev.psum_write_bytes = r.psum_write_bytes;
      ev.psum_read_bytes = r.psum_read_bytes;
      break;
    }
    case CommandKind::Vector: {
      ev.kind = traces::CommandKind::Vector;
      ev.unit = traces::Unit::VectorUnit;
      models::VectorTile tile{c.vec.kind, c.vec.elements, c.vector_ops, c.sram_read_bytes, c.sram_write_bytes};
      const auto r = core.vector_unit.run(tile);
      ev.stall_cycles = r.stall_cycles;
      ev.compute_cycles = r.compute_cycles;
      break;
    }
    case CommandKind::DmaLoad:
    case CommandKind::DmaStore: {
      const bool store = c.kind == CommandKind::DmaStore;
      ev.kind = store ? traces::CommandKind::DmaStore : traces::CommandKind::DmaLoad;
      ev.unit = traces::Unit::Dma;
      // The DRAM moves whole bursts: a run that is not burst-aligned costs its partial bursts.
      if (in_l2_window(c.dram.addr))  // a tensor placed in the shared L2: its bytes, no DRAM bursts
        ev.l2_bytes = c.dram.bytes();
      else
        (store ? ev.dram_write_bytes : ev.dram_read_bytes) = c.dram.burst_bytes(npu_.dram.config().bytes_per_burst());
      models::DmaTransfer t;
      t.dram_addr = c.dram.addr;
      t.run_bytes = c.dram.run_bytes;
      t.stride = c.dram.stride;
      t.runs = c.dram.runs;
      t.to_dram = store;
      const models::DmaResult r = core.dma.transfer(t);
      // A DMA command's stall: the time its SRAM side waited for bank bandwidth beyond its DRAM
      // side (rounded up to whole core cycles), the "DMA SRAM wait" of the stall breakdown.
      ev.stall_cycles = std::uint64_t(std::ceil(r.sram_wait.to_seconds() * npu_.config.core_clock.hz - 1e-9));
      ev.contention_ps = static_cast<std::uint64_t>(std::llround(r.contention.to_seconds() * 1e12));
      break;
    }
    case CommandKind::Barrier:
    case CommandKind::Host:  // barriers complete when ready; host tiles run on host_thread
      break;
  }
}

void Sequencer::complete(std::uint32_t first) {
  // Barriers complete as soon as they are ready, so completion walks a worklist.
  std::vector<std::uint32_t> work{first};
  while (!work.empty()) {
    const std::uint32_t id = work.back();
    work.pop_back();
    done_[id] = true;
    ++completed_;
    const int g = program_.commands[id].group;
    if (g >= 0 && --group_remaining_[g] == 0) {
      release_group(g);
      allocations_[g].free_ps = now_ps();
      const std::uint32_t core = core_of_group(std::size_t(g));
      try_grant(core);
      cores_[core].sram_used = allocated_bytes(core);
    }
    for (std::uint32_t k = successor_begin_[id]; k < successor_begin_[id + 1]; ++k) {
      const std::uint32_t s = successors_[k];
      if (--pending_[s] != 0) continue;
      const auto& sc = program_.commands[s];
      if (core_sync_ > sc_core::SC_ZERO_TIME && crosses_cores(s) && !synced(s)) {
        // The runtime synchronises the cores once per task, before the task's first command that
        // needs another core's results; its later such commands wait for that barrier.
        if (sc.group >= 0 && sync_state_[sc.group] == SyncState::Running) {
          sync_waiters_[sc.group].push_back(s);
        } else {
          if (sc.group >= 0) sync_state_[sc.group] = SyncState::Running;
          cores_[sc.core].runtime_jobs.push(-1 - std::int64_t(s));
          cores_[sc.core].runtime_event.notify(sc_core::SC_ZERO_TIME);
        }
      } else if (sc.kind == CommandKind::Barrier && (sc.group < 0 || granted_[sc.group])) {
        work.push_back(s);
      } else {
        make_ready(s);
      }
    }
  }
  if (progress_ && completed_ % 512 == 0) progress_(completed_, program_.commands.size());
}

bool Sequencer::synced(std::uint32_t id) const {
  const int g = program_.commands[id].group;
  return g >= 0 && sync_state_[g] == SyncState::Done;
}

bool Sequencer::crosses_cores(std::uint32_t id) const {
  const auto& c = program_.commands[id];
  for (auto d : c.deps)
    if (program_.commands[d].core != c.core) return true;
  return false;
}

void Sequencer::make_ready(std::uint32_t id) {
  const auto& c = program_.commands[id];
  if (c.group >= 0 && !granted_[c.group]) {
    parked_[c.group].push_back(id);
    return;
  }
  if (c.kind == CommandKind::Barrier) {
    complete(id);
    return;
  }
  if (c.kind == CommandKind::Host) {
    host_ready_.push(id);
    if (sc_core::sc_is_running()) host_event_.notify(sc_core::SC_ZERO_TIME);
    return;
  }
  const int q = static_cast<int>(lane_of(c.kind));
  CoreState& cs = cores_[c.core];
  cs.ready[q].push(id);
  if (sc_core::sc_is_running()) {
    cs.ready_event[q].notify(sc_core::SC_ZERO_TIME);
  }
  cs.ready_depth[q] = int(cs.ready[q].size());
}

void Sequencer::try_grant(std::uint32_t core) {
  CoreState& cs = cores_[core];
  while (cs.next_grant < cs.groups.size()) {
    const std::size_t g = cs.groups[cs.next_grant];
    while (cs.oldest_running < cs.groups.size() && group_remaining_[cs.groups[cs.oldest_running]] == 0 &&
           cs.oldest_running < cs.next_grant)
      ++cs.oldest_running;
    // A runtime that dispatches tasks one at a time starts a group once the core's earlier ones
    // are done; the hardware alone prefetches one group ahead.
    const std::size_t lookahead = dispatch_latency_ > sc_core::SC_ZERO_TIME ? 0 : kGroupLookahead;
    if (cs.next_grant > cs.oldest_running + lookahead) return;
    if (!allocate_group(g)) return;  // waits for an earlier group to free
    cs.sram_used = allocated_bytes(core);
    allocations_[g].alloc_ps = now_ps();
    allocations_[g].core = core;
    ++cs.next_grant;
    if (group_remaining_[g] == 0) {  // a group without commands (views only)
      granted_[g] = true;
      release_group(g);
      allocations_[g].free_ps = allocations_[g].alloc_ps;
      continue;
    }
    if (lookahead == 0) {
      cs.runtime_jobs.push(std::int64_t(g));  // opened when its dispatch is over
      if (sc_core::sc_is_running()) cs.runtime_event.notify(sc_core::SC_ZERO_TIME);
      return;
    }
    open_group(g);
  }
}

void Sequencer::open_group(std::size_t g) {
  granted_[g] = true;
  auto parked = std::move(parked_[g]);
  parked_[g].clear();
  for (auto id : parked) make_ready(id);
}

namespace {
constexpr models::Operand kOperands[3] = {models::Operand::Ifmap, models::Operand::Filter, models::Operand::Ofmap};
}  // namespace

bool Sequencer::allocate_group(std::size_t g) {
  Core& core = npu_.core(core_of_group(g));
  if (!per_buffer_) return core.sram.try_allocate(allocations_[g].bytes);
  // All three buffers or none: a group cannot start with part of its tiles placed.
  const auto& bytes = program_.group_buffer_bytes[g];
  for (std::size_t i = 0; i < 3; ++i) {
    if (core.buffers.try_allocate(kOperands[i], bytes[i])) continue;
    for (std::size_t j = 0; j < i; ++j) core.buffers.release(kOperands[j], bytes[j]);
    return false;
  }
  return true;
}

void Sequencer::release_group(std::size_t g) {
  Core& core = npu_.core(core_of_group(g));
  if (!per_buffer_) {
    core.sram.release(allocations_[g].bytes);
    return;
  }
  for (std::size_t i = 0; i < 3; ++i) core.buffers.release(kOperands[i], program_.group_buffer_bytes[g][i]);
}

std::uint64_t Sequencer::allocated_bytes(std::uint32_t core) {
  Core& c = npu_.core(core);
  if (!per_buffer_) return c.sram.used();
  std::uint64_t sum = 0;
  for (models::Operand o : kOperands) sum += c.buffers.used(o);
  return sum;
}

std::size_t Sequencer::lane_index(std::uint32_t core, Lane lane, std::uint32_t index) const {
  const std::size_t per_core = 2 + npu_.config.dma.channels;
  return core * per_core + (lane == Lane::Mac ? 0 : lane == Lane::Vector ? 1 : 2 + index);
}

void Sequencer::trace(sc_core::sc_trace_file* tf) {
  const std::size_t per_core = 2 + npu_.config.dma.channels;
  for (std::uint32_t k = 0; k < cores_.size(); ++k) {
    const std::string p = cores_.size() > 1 ? "core" + std::to_string(k) + "_" : "";
    sc_core::sc_trace(tf, *busy_[k * per_core], p + "mac_array_busy");
    sc_core::sc_trace(tf, *busy_[k * per_core + 1], p + "vector_unit_busy");
    for (std::size_t ch = 2; ch < per_core; ++ch)
      sc_core::sc_trace(tf, *busy_[k * per_core + ch], p + "dma_ch" + std::to_string(ch - 2) + "_busy");
    sc_core::sc_trace(tf, cores_[k].ready_depth[0], p + "mac_ready_commands");
    sc_core::sc_trace(tf, cores_[k].ready_depth[1], p + "vector_ready_commands");
    sc_core::sc_trace(tf, cores_[k].ready_depth[2], p + "dma_ready_commands");
    sc_core::sc_trace(tf, cores_[k].sram_used, p + "sram_allocated_bytes");
  }
}

std::string Sequencer::deadlock_report() const {
  if (completed_ == program_.commands.size()) return "";
  std::ostringstream os;
  os << "deadlock: " << program_.commands.size() - completed_ << " of " << program_.commands.size()
     << " commands never ran";
  int shown = 0;
  for (const auto& c : program_.commands) {
    if (done_[c.id] || shown >= 5) continue;
    ++shown;
    os << "\n  command " << c.id << " (group " << c.group << ", op " << c.op << ") waits for";
    for (auto d : c.deps)
      if (!done_[d]) os << ' ' << d;
    if (c.group >= 0 && !granted_[c.group]) os << " and SRAM for its group (" << allocations_[c.group].bytes << " B)";
  }
  return os.str();
}

}  // namespace npusim
