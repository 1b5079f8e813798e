#pragma once
// Issues a Program's commands to the NPU's units as their dependencies resolve. One SystemC
// thread per unit lane of each core (MAC array, vector unit, each DMA channel); each lane takes
// the lowest ready command id of its kind on its core. A group's SRAM (on its core) is
// allocated before its first command may start and freed after its last ends; each core grants
// its groups in order. Dependencies may cross cores (docs/multicore.md).
#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <vector>

#include <systemc>

#include "sim/npu/npu.h"
#include "sim/scheduler/program.h"
#include "traces/trace.h"

namespace npusim {

class Sequencer : public sc_core::sc_module {
 public:
  /// `progress(done, total)` is called every few hundred commands (may be empty).
  Sequencer(sc_core::sc_module_name name, Npu& npu, const sched::Program& program,
            std::function<void(std::size_t, std::size_t)> progress = {});

  const std::vector<traces::CommandEvent>& events() const { return events_; }
  /// The events, moved out once the run is over (a long run's are tens of MB).
  std::vector<traces::CommandEvent> take_events() { return std::move(events_); }
  const std::vector<traces::SramAllocation>& allocations() const { return allocations_; }
  std::size_t completed() const { return completed_; }
  /// After sc_start: empty when every command ran, else a description of what still waits.
  std::string deadlock_report() const;
  /// Adds the waveforms to a VCD file: one busy signal per lane, the ready-queue depth per unit
  /// kind, and the SRAM bytes allocated. Call before sc_start.
  void trace(sc_core::sc_trace_file* tf);

 private:
  enum class Lane { Mac, Vector, Dma, Host };
  using ReadyQueue = std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>>;

  /// What each core schedules on its own: ready queues, its groups in grant order.
  struct CoreState {
    ReadyQueue ready[3];
    sc_core::sc_event ready_event[3];
    std::vector<std::size_t> groups;  // this core's groups, in order
    std::size_t next_grant = 0;       // index into groups
    std::size_t oldest_running = 0;   // index into groups: lowest with commands left
    int ready_depth[3] = {0, 0, 0};
    std::uint64_t sram_used = 0;
    /// The runtime's work for this core (npu.runtime): groups to dispatch (>= 0) and commands
    /// held for a cross-core synchronisation (-1 - id), served in order by runtime_thread.
    std::queue<std::int64_t> runtime_jobs;
    sc_core::sc_event runtime_event;
  };

  void lane_thread(std::uint32_t core, Lane lane, std::uint32_t index);
  /// The software between the NPU's tasks on one core (docs/runtime.md): waits out each
  /// dispatch (then opens its group's commands) and each cross-core synchronisation (then
  /// readies the command that waited), one after another, recording each as a runtime event.
  void runtime_thread(std::uint32_t core);
  /// The host CPU (npu.host.ops): runs the host ops' tiles of every core, one at a time, each
  /// group's first tile after the hand-off latency.
  void host_thread();
  /// Opens a granted group: its parked commands become ready.
  void open_group(std::size_t g);
  /// Whether command `id`, now free of dependencies, waited for a command of another core.
  bool crosses_cores(std::uint32_t id) const;
  /// Whether the task of command `id` has been through its cross-core synchronisation.
  bool synced(std::uint32_t id) const;
  void execute(const sched::Command& c, traces::CommandEvent& ev);
  /// The event of command `id` as it starts now: what the command says it moves and computes.
  traces::CommandEvent begin_event(std::uint32_t id) const;
  void complete(std::uint32_t id);
  void make_ready(std::uint32_t id);
  void try_grant(std::uint32_t core);
  std::uint32_t core_of_group(std::size_t g) const;
  /// A group's SRAM: from the scratchpad's pool, or from each operand buffer when the NPU has
  /// separate buffers and the Program says what the group holds in each (all or nothing).
  bool allocate_group(std::size_t g);
  void release_group(std::size_t g);
  std::uint64_t allocated_bytes(std::uint32_t core);
  static Lane lane_of(sched::CommandKind k);
  std::uint64_t now_ps() const;

  Npu& npu_;
  const sched::Program& program_;
  std::function<void(std::size_t, std::size_t)> progress_;
  std::vector<std::uint32_t> pending_;  // unmet dependencies per command
  // Each command's successors, in program order: successors_[successor_begin_[id] ..
  // successor_begin_[id + 1]) (one array: a vector per command was an allocation per command).
  std::vector<std::uint32_t> successor_begin_, successors_;
  std::vector<std::uint32_t> group_remaining_;      // commands not yet done per group
  std::vector<std::vector<std::uint32_t>> parked_;  // ready but their group is not granted
  std::vector<bool> granted_;                       // SRAM allocated (and, with a dispatch latency, dispatched)
  /// npu.runtime: a dispatch latency serialises each core's groups; 0 = an ideal runtime.
  sc_core::sc_time dispatch_latency_, core_sync_;
  /// npu.runtime.core_sync: each task synchronises with the other cores once (None, Running, Done),
  /// commands that cross cores while its barrier runs waiting for it.
  enum class SyncState : std::uint8_t { None, Running, Done };
  std::vector<SyncState> sync_state_;
  std::vector<std::vector<std::uint32_t>> sync_waiters_;
  std::vector<CoreState> cores_;
  bool per_buffer_ = false;  // groups allocate per operand buffer (separate buffers)
  /// Groups allocated ahead of the oldest running one: the next layer's loads may start early
  /// (a compiler prefetches one layer ahead), further ones wait.
  static constexpr std::size_t kGroupLookahead = 1;
  std::vector<traces::CommandEvent> events_;
  std::vector<traces::SramAllocation> allocations_;
  std::vector<bool> done_;
  std::size_t completed_ = 0;
  std::size_t runtime_events_ = 0;  // dispatches and synchronisations recorded
  ReadyQueue host_ready_;           // host tiles ready to run, lowest id first
  sc_core::sc_event host_event_;
  // Waveforms (VCD): plain values the trace file samples at every time step (several
  // processes change them within one delta cycle, which signals would not allow).
  std::vector<std::unique_ptr<bool>> busy_;  // per core, per lane: mac, vector, dma 0..n-1
  std::size_t lane_index(std::uint32_t core, Lane lane, std::uint32_t index) const;
};

}  // namespace npusim
