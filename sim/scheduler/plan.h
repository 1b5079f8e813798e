#pragma once
// The scheduler's decision: which ops run together (fused groups), how each group's work is
// tiled, which tensors stay resident in SRAM, and why neighbours were not fused.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/hardware_config.h"
#include "workloads/graph.h"

namespace npusim::sched {

/// none: every op round-trips DRAM. epilogue: GEMM/conv + following elementwise ops on the
/// output tile. greedy: epilogues and elementwise chains, then grow groups along the graph
/// keeping intermediates resident in SRAM while they fit and save DRAM traffic.
/// file: a user's schedule.json (see schedule_file.h).
/// as-is: the groups the model file itself fused (ONNX Runtime's contrib ops, Op::origin), each
/// checked as a schedule file's group; every other op unfused (see schedule_file.h).
/// search: tries every contiguous grouping of segments (up to a length bound) by dynamic
/// programming and keeps the one with the least estimated time (or DRAM bytes).
/// Each but File is a row of the policies' table (policy.h: its name, planner and description).
enum class FusionPolicy { None, Epilogue, Greedy, Search, File, AsIs };

/// What `search` minimises: run time, DRAM traffic, or energy (needs the config's energy model).
enum class SearchObjective { Cycles, DramBytes, Energy };
/// A name of the policies' table, or File for "file:PATH"; InputError naming `where` and listing
/// the table's names else (policy.cpp).
FusionPolicy parse_fusion_policy(const std::string& text, const std::string& where);
/// The table's name ("file" for File).
std::string to_string(FusionPolicy p);
/// "cycles", "energy" or "dram-bytes" (the --objective values); InputError naming `where` else.
SearchObjective parse_search_objective(const std::string& text, const std::string& where);
std::string to_string(SearchObjective o);

/// How a segment's work is cut into tiles (chosen by tile_segment).
struct Tiling {
  // GEMM head: output rows per tile, output channels (or whole groups) per tile, input
  // channels (K block) per tile, and the loop order (true: weight blocks outermost).
  std::int64_t rows = 0, cols = 0, in_channels = 0;
  bool weights_outer = true;
  // Conv head whose single output row does not fit: output columns per tile (0: whole rows).
  std::int64_t width = 0;
  // Vector head: number of tiles the op is cut into (per pass), the driver elements per tile
  // (tiling.h, VectorGeometry; 0: not chosen yet) and the passes over each reduced block (2: a
  // row op whose block does not fit reads it once for statistics, once to apply them).
  std::int64_t tiles = 1;
  std::uint64_t tile_elems = 0;
  int passes = 1;
  // A concat its producers write into place (tiling.h, concat_in_place): no work, no bytes.
  bool in_place = false;
  std::uint64_t working_set_bytes = 0;  // SRAM for the double-buffered tile buffers
  /// working_set_bytes by operand buffer: ifmap (first operand; a vector op's inputs), filter
  /// (second operand), ofmap (output / partial sums and epilogue operands). What a group holds
  /// in each buffer when npu.sram.operand_buffers is `separate`.
  std::uint64_t ifmap_bytes = 0, filter_bytes = 0, ofmap_bytes = 0;
  std::uint64_t dram_bytes = 0;  // DRAM traffic the segment will cause
  std::uint64_t tile_count = 0;  // compute tiles of the head op
  /// GEMM head with a prologue (Segment::prologue): how many times each first-operand block is
  /// loaded (1: read once), whether the re-reads load a copy the first pass spilled to DRAM
  /// (else every load recomputes the prologue), and the prologue's vector ops in all.
  std::uint64_t prologue_reads = 1;
  bool prologue_spill = false;
  std::uint64_t prologue_vector_ops = 0;
};

/// A tile shape a schedule file asks for (0 = let the tiler choose).
struct TileRequest {
  std::int64_t rows = 0, cols = 0, in_channels = 0;
  bool any() const { return rows || cols || in_channels; }
};

/// A head op plus the ops applied to its output tile before it leaves SRAM: a tile region, a
/// convex set of elementwise ops (and, on a vector head's row tiles, one softmax/layer-norm
/// over the last axis) whose intermediates never leave SRAM; ops are in topological order,
/// the last one makes the segment's output.
struct Segment {
  std::vector<int> ops;  // ops[0] is the head; views form a segment of their own
  /// GEMM head: elementwise ops (topological order) applied on the vector unit to each block of
  /// its first operand as it is loaded, the last one making that operand (prologue fusion); the
  /// operand and the prologue's intermediates never go to DRAM (but a spill, Tiling).
  std::vector<int> prologue;
  Tiling tiling;
  TileRequest request;
  /// Dataflow a GEMM head runs with (its group's); nullopt: the MAC array's configured one.
  std::optional<Dataflow> dataflow;
  /// Why the tile region ends where it does (the op it could not take and why), "" when its
  /// output has no reader it could have taken (or the policy grows no regions).
  std::string region_end;
};

/// Depth-first (layer) fusion of a conv chain: the group is tiled over the last layer's output
/// rows (and, when whole rows do not fit, columns: strips of columns, each walked down its rows;
/// or output channels: each layer's rows computed a block of channels at a time) and every tile
/// computes the rows and columns each layer needs. The halo rows a tile shares
/// with the next are either computed again (recompute) or kept in a line buffer in SRAM (cache);
/// the halo columns a strip shares with the next are always computed (and loaded) again.
enum class Halo { Recompute, Cache };
std::string to_string(Halo h);

struct DepthFirst {
  bool enabled = false;
  Halo halo = Halo::Cache;
  std::int64_t rows = 0;         // output rows of the last layer per tile
  bool weights_resident = true;  // all layers' weights stay in SRAM, else re-fetched per tile
  std::int64_t cols = 0;         // output columns of the last layer per tile (0: the whole width)
  /// Output channels per block: every layer computes a tile's rows in blocks of this many
  /// output channels, each with its slice of the weights (0: all at once). Only with whole
  /// rows (cols 0): it lets a chain whose weights or accumulators do not fit run depth-first.
  std::int64_t channels = 0;
};

/// Attention fusion (FLAT's row granularity): MatMul(Q, K^T) -> [elementwise] -> softmax ->
/// MatMul(P, V), one head at a time, in blocks of query rows; the score matrix never goes to DRAM.
/// Exact: a block's whole score rows stay in SRAM and softmax runs over them. Online
/// (FlashAttention): a block's scores are computed one K/V chunk at a time, softmax keeps a
/// running row maximum and sum, and the context accumulators are rescaled per chunk, so SRAM
/// holds B x chunk scores however long the rows are.
struct Attention {
  bool enabled = false;
  std::int64_t block_rows = 0;  // query rows per block
  bool kv_resident = true;      // K and V of a head stay in SRAM for all its blocks, else re-read per block
  std::int64_t kv_rows = 0;     // K/V rows per load: the whole head when resident, a chunk when streamed
  bool online = false;          // online softmax per chunk (K/V streamed), else exact over whole rows
};

struct GroupPlan {
  std::string name;
  DepthFirst depth_first;
  Attention attention;
  std::string
      fusion;  // "none", "epilogue", "chain", "prologue", "layer" (resident intermediates), "depth_first", "attention"
  std::vector<Segment> segments;
  std::vector<int> resident_tensors;  // base tensors kept whole in SRAM inside the group
  /// Group inputs read by several segments but loaded by each: keeping them resident did not
  /// fit (or saved nothing). Those that fit are in resident_tensors, loaded once.
  std::vector<int> reloaded_inputs;
  std::uint64_t sram_bytes = 0;  // peak SRAM the group needs
  std::uint64_t dram_bytes = 0;  // DRAM traffic the plan expects for the group
  /// Dataflow of the group's GEMM segments (set for every group with a GEMM head, from the
  /// schedule file's override or the config); nullopt for groups without GEMM work.
  std::optional<Dataflow> dataflow;
  std::vector<int> ops() const;
};

/// Why two neighbouring ops ended up in different groups.
struct Boundary {
  int from_op = -1, to_op = -1;
  /// "policy: <name>", "capacity: ...", "branch: ...", "no traffic saved: ...", "search: cheaper
  /// apart" [dataflow conflict], ...; then why the tile region before it ended (region_end).
  std::string reason;
};

/// What the search policy tried (reported in schedule.json).
struct SearchReport {
  std::uint64_t candidates = 0, feasible = 0;
  std::size_t max_group_segments = 0;
  double seconds = 0;           // host time the search took
  double estimate_seconds = 0;  // estimated run time of the chosen schedule
  double greedy_estimate_seconds = 0;
  std::string objective;
  /// Groups of the chosen schedule whose GEMM work runs with a dataflow other than the config's.
  std::size_t dataflow_overrides = 0;
  /// A candidate schedule simulated to pick the final one, with its simulated figures.
  struct Simulated {
    std::string name;
    double seconds = 0;
    std::uint64_t dram_bytes = 0;
    std::optional<double> energy_j;  // nullopt without an energy model
  };
  std::vector<Simulated> simulated;
  std::string chosen;
};

struct Plan {
  FusionPolicy policy = FusionPolicy::None;
  std::vector<GroupPlan> groups;
  std::vector<int> op_group;  // op index -> group index
  std::vector<Boundary> boundaries;
  SearchReport search;
  /// `config_hash` of the resolved config the plan was made for (sim/core/version.h), written
  /// into schedule.json's `provenance`; "" when the caller did not say (tests' plans).
  std::string config_hash;
  /// The lowering lowers only some iterations of a GEMM segment's outermost loop (row or column
  /// blocks) when it has more than kSampledIterations of them, else of the loop inside it, in each
  /// outer iteration (SampledIterations): set for an LLM phase's layers (docs/llm.md, "GEMM
  /// iterations share their timing"), never for `npusim run`.
  bool sample_iterations = false;
  /// With sample_iterations, an online attention's chunks of keys are lowered in part too
  /// (kWarmChunks, then as a GEMM loop's iterations): set for an LLM phase of more than one token
  /// a sequence (docs/llm.md, "Chunks of keys share their timing").
  bool sample_chunks = false;
};

struct SearchOptions {
  SearchObjective objective = SearchObjective::Cycles;
  double time_budget_seconds = 20;  // the search shortens its longest group when it would run over
  /// greedy: may form attention groups; with attention_by_bytes it also plans without them and
  /// keeps the plan that moves fewer DRAM bytes (a layer group can keep Q, K, V and the context
  /// resident instead), else it keeps every attention group that fits (a search finalist: fewer
  /// bytes is not always fewer cycles).
  bool attention_groups = true;
  bool attention_by_bytes = true;
  /// Also try every dataflow for each candidate group with GEMM work and keep the best.
  bool try_dataflows = true;
  /// greedy: then merge neighbouring groups (the second reading the first's outputs) while the
  /// merged group fits and moves no more DRAM bytes than the two: greedy's own rule applied to
  /// whole groups, where growing one segment at a time stopped at a local step (a search finalist).
  bool merge_groups = false;
};

/// Splits `ops` (topologically ordered) into segments: each head takes the elementwise ops that
/// can run on its output tile (`chains` = false: every op alone; `gemm_heads_only`: only GEMM
/// heads take followers). Shared by the policies and by schedule files.
std::vector<Segment> make_segments(const workloads::Graph& g, const std::vector<int>& ops, bool chains,
                                   bool gemm_heads_only);

/// Groups of `p` whose GEMM work runs with a dataflow other than `configured`.
std::size_t count_dataflow_overrides(const Plan& p, Dataflow configured);

/// Name and fusion kind of a group as reports show them.
std::string group_name(const workloads::Graph& g, const GroupPlan& p);
std::string fusion_kind(const workloads::Graph& g, const GroupPlan& p);

/// Partitions the graph into groups under `policy` (its planner in the policies' table, policy.h)
/// and tiles every segment to fit SRAM. Throws InputError naming the op when an op cannot be
/// tiled into SRAM at all.
Plan make_plan(const workloads::Graph& g, const HardwareConfig& hw, FusionPolicy policy,
               const SearchOptions& search = {});

/// Appends to each boundary (but a branch) why the tile region before it ended, when it ended
/// at an op it could not take (Segment::region_end).
void explain_region_ends(const workloads::Graph& g, Plan& plan);

nlohmann::json to_json(const Plan& p, const workloads::Graph& g);

/// What a GEMM head's prologue does on its operand's re-reads: "read once" (each block is loaded
/// once), "recompute" (every load runs the prologue again) or "spill" (the first stores it).
std::string prologue_mode(const Tiling& t);

}  // namespace npusim::sched
