#pragma once
// Internal to the scheduler's lowering: the Lowering class that lower_plan (lowering.cpp) runs,
// with the operand-buffer bookkeeping its members share. One object walks the whole plan, and
// its members are defined by what they lower: lowering.cpp (the walk over groups, the command
// limit, DRAM placement and residency), lowering_commands.cpp (loads, barriers, vector commands,
// a segment's epilogue and stores), lowering_gemm.cpp (GEMM and conv segments with their
// prologues), lowering_depth_first.cpp, lowering_attention.cpp and lowering_vector.cpp. Only
// those files include this header; the rest of the tree sees lowering.h.
#include <cstdint>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/scheduler/attention.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/pool_epilogue.h"
#include "sim/scheduler/tiling.h"

namespace npusim::sched::detail {

/// Plan::sample_iterations's choice for one GEMM segment: its block loops (for_each_block: rows
/// then the weights' column blocks when K is split or rows run outer, else column blocks then
/// rows) and which of them is lowered in part, the outermost when it has more than
/// kSampledIterations iterations and at least as many as the inner one, else the inner one.
struct LoopSampling {
  bool rows_outer = false;
  std::int64_t outer_n = 0, inner_n = 0;
  bool sample = false, sample_outer = false;
  std::int64_t loop_n = 0;  // iterations of the sampled loop
};
LoopSampling loop_sampling(const GemmGeometry& geo, const Tiling& t, bool sample_iterations);

/// A region of `runs` runs of `run` elements `stride` elements apart, merged into one run
/// when the runs touch.
inline DramRegion region(std::uint64_t base, std::uint64_t start, std::uint64_t run, std::uint64_t stride,
                         std::uint64_t runs, std::uint32_t eb) {
  if (run == stride || runs == 1) return {base + start * eb, run * runs * eb, run * runs * eb, 1};
  return {base + start * eb, run * eb, stride * eb, runs};
}

/// One double-buffered operand buffer: which data version it holds and who used each version.
struct OperandBuffer {
  std::tuple<std::int64_t, std::int64_t, std::int64_t> key{-1, -1, -1};
  std::uint32_t load = 0;                         // command that filled the current version
  std::vector<std::vector<std::uint32_t>> users;  // compute commands per version
  bool valid = false;
};

class Lowering {
 public:
  Lowering(const workloads::Graph& g, const HardwareConfig& hw, const Plan& plan);

  Program run();
  std::uint64_t expected_commands() const;
  [[noreturn]] void refuse(std::uint64_t commands, const char* about) const;

 private:
  // ---- placement (lowering.cpp) -----------------------------------------------------------

  void allocate_dram();

  /// The groups between which a base tensor's DRAM region must hold it.
  struct Lifetime {
    int first = -1, last = -1;  // first group that writes it, last that reads or writes it
    bool whole_run = false;     // read before the run or after it: its own region throughout
  };

  std::vector<Lifetime> lifetimes(const std::vector<std::pair<int, std::uint64_t>>& inside) const;
  template <typename Bytes>
  void place_transients(std::vector<int>& transient, const std::vector<Lifetime>& life, const Bytes& region_bytes);

  std::uint64_t addr(int tensor) const { return base_addr_[base_tensor(g_, tensor)]; }

  /// Bytes per element of `tensor` (its own width, else the config's dtype).
  std::uint32_t eb(int tensor) const { return workloads::element_bytes(g_, tensor, eb_); }

  /// A region laid out for elements of `from` bytes, for the same elements of `to` bytes (an
  /// epilogue operand whose width differs from the output tile's).
  static DramRegion rescaled(DramRegion r, std::uint64_t from, std::uint64_t to) {
    if (from == to) return r;
    return {r.addr / from * to, r.run_bytes / from * to, r.stride / from * to, r.runs};
  }

  Residency residency_of(const GroupPlan& grp) const;

  // ---- command helpers (lowering_commands.cpp) --------------------------------------------

  void load_resident_inputs(const GroupPlan& grp);
  Command vector_command(int o, std::uint64_t elems, std::uint64_t vector_ops, std::uint64_t read_bytes,
                         std::uint64_t write_bytes, std::vector<std::uint32_t> deps) const;
  std::uint32_t emit(Command c);
  /// The id the next command emitted takes.
  std::uint32_t next_id() const { return static_cast<std::uint32_t>(prog_.commands.size()); }
  std::uint32_t load(int op, const DramRegion& reg, std::vector<std::uint32_t> deps);
  void add_ready_dep(int t, bool resident, std::vector<std::uint32_t>& deps) const;
  std::uint32_t load_whole_once(std::map<int, std::uint32_t>& loads, int op, int t);
  std::uint32_t ensure_loaded(OperandBuffer& buf, std::tuple<std::int64_t, std::int64_t, std::int64_t> key, int op,
                              int tensor, const DramRegion& reg);
  std::uint32_t pinned_ready(int tensor);
  std::uint32_t barrier(std::vector<std::uint32_t> deps);

  // ---- segments (lowering_commands.cpp) ---------------------------------------------------

  /// Per-segment state of the epilogue operands and the output stream.
  struct Stream {
    std::vector<std::uint32_t> finals;  // last command of each output tile (store or compute)
    std::vector<std::uint32_t> stores;
    std::vector<std::uint32_t> computes;  // final compute per output tile (for SRAM readiness)
    std::map<int, OperandBuffer> extra_buffers;
    std::map<int, std::uint32_t> whole_loads;
    std::map<int, std::uint64_t> ops_done;  // epilogue op -> element ops emitted so far
    std::uint64_t out_elems_done = 0;
  };

  void lower_segment(const Segment& seg);
  std::uint32_t epilogue_and_store(const Segment& seg, Stream& st, std::uint32_t prev, std::uint64_t out_elems,
                                   const DramRegion& tile_region_rel, const DramRegion* store_rel = nullptr);
  std::uint64_t share(int o, Stream& st, std::uint64_t tile_elems, std::uint64_t total);
  void finish_segment(const Segment& seg, const Stream& st);

  // ---- GEMM and conv segments (lowering_gemm.cpp) -----------------------------------------

  std::uint32_t dequantize(int op, int weights, std::uint64_t elems, std::uint32_t width, std::uint32_t loaded);
  DramRegion out_block_region(const GemmGeometry& geo, const GemmBlock& b, std::uint32_t elem) const;
  DramRegion store_region(const PoolEpilogue& pool, const GemmGeometry& geo, const GemmBlock& b,
                          std::uint32_t elem) const;
  DramRegion a_block_region(const GemmGeometry& geo, const GemmBlock& b, std::uint32_t elem) const;
  DramRegion b_block_region(const GemmGeometry& geo, const GemmBlock& b, std::uint32_t elem) const;
  DramRegion in_bytes(int t, DramRegion r) const;

  static DramRegion at(DramRegion r, std::uint64_t base) {
    r.addr += base;
    return r;
  }

  /// A GEMM head's prologue state: its streamed inputs' buffers, its operands loaded whole, and
  /// (spill) the store of every operand block the first pass made.
  struct Prologue {
    std::map<int, OperandBuffer> inputs;
    std::map<int, std::uint32_t> whole;
    std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::uint32_t> spilled;
  };

  std::uint32_t prologue_block(const Segment& seg, Prologue& pro, Stream& st, OperandBuffer& a_buf,
                               std::tuple<std::int64_t, std::int64_t, std::int64_t> key, const DramRegion& rel,
                               std::uint64_t elems);
  std::uint32_t run_prologue(const Segment& seg, Prologue& pro, Stream& st,
                             std::tuple<std::int64_t, std::int64_t, std::int64_t> key, const DramRegion& rel,
                             std::uint64_t elems, const std::vector<std::uint32_t>& slot);
  void lower_gemm(const Segment& seg);

  // ---- depth-first groups (lowering_depth_first.cpp) --------------------------------------

  void lower_depth_first(const GroupPlan& grp);
  DramRegion depth_first_out_region(const GemmGeometry& geo, const GemmBlock& blk, std::uint32_t elem) const;
  void weight_slice_loads(const Segment& seg, const GemmGeometry& geo, const GemmBlock& blk, OperandBuffer& buf,
                          std::int64_t tile, std::vector<std::uint32_t>& deps);
  void weight_loads(const Segment& seg, OperandBuffer& buf, std::int64_t version, std::vector<std::uint32_t>& deps);

  // ---- attention groups (lowering_attention.cpp) ------------------------------------------

  std::uint32_t attention_gemm(int op, GemmWork w, std::vector<std::uint32_t> deps);
  DramRegion attention_kv_region(const AttentionGeometry& a, bool key, std::int64_t h, std::int64_t c0,
                                 std::int64_t cols) const;
  void lower_attention(const GroupPlan& grp);

  // ---- vector segments (lowering_vector.cpp) ----------------------------------------------

  void lower_vector(const Segment& seg);

  const workloads::Graph& g_;
  const HardwareConfig& hw_;
  const Plan& plan_;
  const std::uint64_t limit_ = command_limit();
  const std::uint32_t eb_;
  const std::vector<bool> handoff_;  // by op: a host op's tiles start with a hand-off (host_handoffs)
  Program prog_;
  int group_ = -1;
  Residency where_;
  std::vector<std::uint64_t> base_addr_;
  std::uint64_t dram_top_ = 0;
  std::vector<int> dram_ready_, sram_ready_;
  std::vector<bool> pinned_;                      // by base tensor: lives in SRAM throughout (a pinned KV cache)
  std::vector<std::uint32_t> previous_computes_;  // last computes of the group's previous segment
  int gate_ = -1;                                 // barrier the current segment's loads wait for
};

}  // namespace npusim::sched::detail
