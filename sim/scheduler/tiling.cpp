#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <set>
#include <string>
#include <tuple>

#include "sim/core/errors.h"
#include "sim/core/math_util.h"
#include "sim/scheduler/fusion.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/pool_epilogue.h"
#include "sim/scheduler/tiling.h"

namespace npusim::sched {
using workloads::Graph;
using workloads::Op;
using workloads::OpClass;

namespace {

/// Candidate block sizes for a dimension: powers of two times `unit` up to `total`, plus
/// `total` and its small divisors, so tiles can match the array width and the tensor edge.
std::vector<std::int64_t> candidates(std::int64_t total, std::int64_t unit) {
  std::vector<std::int64_t> c;
  for (std::int64_t v = std::max<std::int64_t>(1, unit); v < total; v *= 2) c.push_back(v);
  for (std::int64_t d = 1; d <= 8; ++d)
    if (total % d == 0) c.push_back(total / d);
  c.push_back(total);
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  c.erase(std::remove_if(c.begin(), c.end(), [&](std::int64_t v) { return v < 1 || v > total; }), c.end());
  return c;
}

}  // namespace

namespace {

/// What identifies a gemm_tiling_cost within one TilingCacheScope: the config (one per scope,
/// keyed all the same), every geometry field it and GemmGeometry::work read (so heads of the
/// same shape, ResNet's repeated blocks, share their costs), the tile shape and the dataflow.
struct TileCostKey {
  const HardwareConfig* hw;
  std::array<std::int64_t, 17> words;
  bool operator==(const TileCostKey& o) const { return hw == o.hw && words == o.words; }
};

TileCostKey tile_cost_key(const HardwareConfig& hw, const GemmGeometry& geo, std::int64_t rows, std::int64_t cols,
                          std::int64_t chans, std::optional<Dataflow> dataflow, std::int64_t width) {
  return {&hw,
          {geo.conv, geo.grouped, geo.batch, geo.out_rows, geo.out_cols_px, geo.n_total, geo.c_total, geo.kh, geo.kw,
           geo.cin_g, geo.cout_g, rows, cols, chans, width, dataflow ? int(*dataflow) : -1, geo.operand_bytes}};
}

struct TileCostKeyHash {
  std::size_t operator()(const TileCostKey& k) const {
    std::size_t h = std::hash<const void*>()(k.hw);
    for (std::int64_t v : k.words) h = h * 1000003u ^ std::hash<std::int64_t>()(v);
    return h;
  }
};

using TileCostCache = std::unordered_map<TileCostKey, GemmTileCost, TileCostKeyHash>;

/// What identifies a tile_gemm result within one TilingCacheScope: the segment (ops, prologue,
/// tile request, dataflow), everything of the residency it reads (whether each input of its ops
/// is resident, whether each output is stored), the budget and whether the smallest is wanted.
struct TilingKey {
  const Graph* graph;
  const HardwareConfig* hw;
  std::vector<std::int64_t> words;
  bool operator==(const TilingKey& o) const { return graph == o.graph && hw == o.hw && words == o.words; }
};

struct TilingKeyHash {
  std::size_t operator()(const TilingKey& k) const {
    std::size_t h = std::hash<const void*>()(k.graph) ^ (std::hash<const void*>()(k.hw) << 1);
    for (std::int64_t v : k.words) h = h * 1000003u ^ std::hash<std::int64_t>()(v);
    return h;
  }
};

/// What a cut of a vector head into tiles of `size` driver elements loads and holds.
struct VectorCut {
  std::uint64_t loaded = 0;      // DRAM bytes the head's inputs load (a range when it changes)
  std::uint64_t first_tile = 0;  // bytes the first tile loads (nothing hides them)
  std::uint64_t in_buffer = 0;   // SRAM of the input buffers: slices double-buffered, whole inputs once
  std::uint64_t out_tile = 0;    // output elements of the largest tile (a reduction's accumulators)
  std::uint64_t tiles = 0;       // per pass
};

/// The memory of one TilingCacheScope.
struct PlanningCaches {
  TileCostCache tile_costs;
  std::unordered_map<TilingKey, std::optional<Tiling>, TilingKeyHash> gemm_tilings;
  /// walk_vector_cut's answers, by what the walk reads (remembered_vector_cut): the planners tile
  /// one vector head under many budgets and groupings, a long prompt's attention blocks are ops
  /// of one shape, and its softmax walks millions of tiles a cut.
  std::unordered_map<TilingKey, VectorCut, TilingKeyHash> vector_cuts;
};
thread_local PlanningCaches* t_caches = nullptr;

}  // namespace

GemmTileCost remembered_tiling_cost(const GemmGeometry& geo, std::int64_t rows, std::int64_t cols, std::int64_t chans,
                                    std::optional<Dataflow> dataflow, const HardwareConfig& hw, std::int64_t width) {
  if (!t_caches) return gemm_tiling_cost(geo, rows, cols, chans, dataflow, hw, width);
  const TileCostKey key = tile_cost_key(hw, geo, rows, cols, chans, dataflow, width);
  const auto it = t_caches->tile_costs.find(key);
  if (it != t_caches->tile_costs.end()) return it->second;
  const GemmTileCost c = gemm_tiling_cost(geo, rows, cols, chans, dataflow, hw, width);
  t_caches->tile_costs.emplace(key, c);
  return c;
}

namespace {

/// DRAM bytes moved per byte requested for runs of `run` bytes placed `stride` apart: the DRAM
/// moves whole bursts, so narrow channel blocks of an NHWC tensor cost more than they carry.
/// Run starts cycle through the offsets the stride allows within a burst.
double burst_overfetch(std::uint64_t run, std::uint64_t stride, std::uint64_t burst) {
  if (run == 0 || run >= stride) return 1.0;  // contiguous: only the two ends can be partial
  const std::uint64_t step = std::gcd(stride, burst), offsets = burst / step;
  double bursts = 0;
  for (std::uint64_t k = 0; k < offsets; ++k) bursts += double((k * step + run - 1) / burst + 1);
  return bursts / double(offsets) * double(burst) / double(run);
}

struct ExtraOperands {
  std::uint64_t tiled_bytes_per_out_elem = 0;    // bytes per output element of tiled extras (not resident)
  std::uint64_t scratch_bytes_per_out_elem = 0;  // intermediate tiles a tile region keeps (epilogue_scratch_tiles)
  std::uint64_t whole_buffer_bytes = 0;          // small extras held whole (not resident)
  std::uint64_t dram_bytes = 0;                  // DRAM traffic of all non-resident extras
};

/// The epilogue ops' operands that are not on the tile (TileTensors): loaded per tile or whole.
ExtraOperands epilogue_extras(const Graph& g, const Segment& seg, const Residency& where, std::uint32_t eb) {
  ExtraOperands x;
  x.scratch_bytes_per_out_elem =
      epilogue_scratch_tiles(g, seg) * workloads::element_bytes(g, segment_output(g, seg), eb);
  const TileTensors on_tile(g, seg);
  std::set<int> loaded;
  for (std::size_t i = 1; i < seg.ops.size(); ++i) {
    const Op& op = g.op(seg.ops[i]);
    const std::uint64_t out_elems = g.tensor(op.outputs[0]).elements();
    for (int t : op.inputs) {
      if (on_tile.has(t) || !loaded.insert(t).second) continue;  // a second reader uses the same tile
      const int b = base_tensor(g, t);
      if (where.resident[b]) continue;
      const std::uint64_t bytes = workloads::tensor_bytes(g, t, eb);
      x.dram_bytes += bytes;
      if (is_tiled_input(g, t, out_elems))
        x.tiled_bytes_per_out_elem += workloads::element_bytes(g, t, eb);
      else
        x.whole_buffer_bytes += bytes;
    }
  }
  return x;
}

/// What a GEMM head's prologue (Segment::prologue) reads and does per block of its first operand.
struct PrologueOperands {
  std::uint64_t streamed = 0;             // inputs of the operand's shape loaded with each block (not resident)
  std::uint64_t scratch_tiles = 0;        // blocks a diamond keeps beside the one flowing (epilogue_scratch_tiles)
  std::uint64_t whole_bytes = 0;          // smaller operands (a scale, a bias row) loaded whole once
  std::uint64_t operand_elems = 0;        // elements of the GEMM operand the prologue makes
  std::vector<std::uint64_t> vector_ops;  // per prologue op, over the whole operand
};

PrologueOperands prologue_operands(const Graph& g, const Segment& seg, const Residency& where, std::uint32_t eb) {
  PrologueOperands p;
  if (seg.prologue.empty()) return p;
  const int a = g.op(seg.ops[0]).inputs[0];
  p.operand_elems = std::uint64_t(g.tensor(a).elements());
  Segment chain;
  chain.ops = seg.prologue;
  p.scratch_tiles = epilogue_scratch_tiles(g, chain);
  std::set<int> made, seen;
  for (int o : seg.prologue) {
    const Op& op = g.op(o);
    p.vector_ops.push_back(workloads::op_cost(g, op, eb).vector_ops);
    for (int t : op.inputs) {
      if (made.count(t) || !seen.insert(t).second || where.resident[base_tensor(g, t)]) continue;
      if (g.tensor(t).shape == g.tensor(a).shape)
        ++p.streamed;
      else
        p.whole_bytes += std::uint64_t(g.tensor(t).elements()) * eb;
    }
    made.insert(op.outputs[0]);
  }
  return p;
}

/// DRAM bytes (operand streams, whole operands, the spill) and vector ops of a prologue whose
/// operand blocks are loaded `loaded` elements in all, `distinct` of them different: each load
/// recomputes the block from its inputs, or (spill) the first computes and stores it, the others
/// load it back. The vector ops add up per op as the lowering's tiles do (Lowering::share).
struct PrologueTraffic {
  std::uint64_t dram_bytes = 0, vector_ops = 0;
  bool spill = false;
};
PrologueTraffic prologue_traffic(const PrologueOperands& p, std::uint64_t distinct, std::uint64_t loaded, bool spill,
                                 std::uint32_t eb) {
  PrologueTraffic t;
  const std::uint64_t computed = spill ? distinct : loaded;
  // A spill stores the `distinct` blocks and loads the other `loaded - distinct`: `loaded` in all.
  t.dram_bytes = computed * eb * p.streamed + p.whole_bytes + (spill ? loaded * eb : 0);
  for (std::uint64_t ops : p.vector_ops) t.vector_ops += mul_div(ops, computed, p.operand_elems);
  t.spill = spill;
  return t;
}

/// Recompute or spill, whichever the estimate finds faster for a GEMM candidate moving
/// `other_bytes` besides its first operand and busy for `array_cycles` on the MAC array: the
/// vector unit makes the next operand block while the array multiplies this one, so compute is
/// the larger of the two units' times. Blocks read once (`loaded` = `distinct`) only recompute.
PrologueTraffic cheaper_prologue(const HardwareConfig& hw, const PrologueOperands& p, std::uint64_t distinct,
                                 std::uint64_t loaded, std::uint32_t eb, std::uint64_t other_bytes,
                                 double array_cycles) {
  auto seconds = [&](const PrologueTraffic& t) {
    const double busy = std::max(array_cycles, double(t.vector_ops) / hw.vector_peak_ops() * hw.core_clock.hz);
    return estimate_seconds(hw, t.dram_bytes + other_bytes, busy, 0, 1, hw.core_clock.hz);
  };
  const PrologueTraffic recompute = prologue_traffic(p, distinct, loaded, false, eb);
  if (loaded <= distinct) return recompute;
  const PrologueTraffic spill = prologue_traffic(p, distinct, loaded, true, eb);
  return seconds(spill) < seconds(recompute) ? spill : recompute;
}

/// The candidates that divide `total`: a schedule file's GEMM tiles must (docs/schedule-format.md),
/// so only such tiles are chosen, and a written schedule reads back unchanged.
std::vector<std::int64_t> dividing(std::vector<std::int64_t> cands, std::int64_t total) {
  cands.erase(std::remove_if(cands.begin(), cands.end(), [&](std::int64_t v) { return total % v != 0; }), cands.end());
  return cands;
}

/// Every divisor of `total` from `unit` up (a block narrower than the array's width wastes it;
/// the usual candidates go below it only by small divisors of `total`), and `total`, ascending.
/// Trial division: `total` is a tensor edge.
std::vector<std::int64_t> divisors(std::int64_t total, std::int64_t unit) {
  std::vector<std::int64_t> low, high;
  for (std::int64_t d = 1; d * d <= total; ++d) {
    if (total % d != 0) continue;
    if (d >= unit) low.push_back(d);
    if (d != total / d && total / d >= unit) high.push_back(total / d);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  if (low.empty()) low.push_back(total);
  return low;
}

/// True if some power of two times `unit` (below `total`) divides `total`: candidates() then
/// offers blocks between the unit and the edge's largest ones.
bool ladder_divides(std::int64_t total, std::int64_t unit) {
  for (std::int64_t v = std::max<std::int64_t>(1, unit); v < total; v *= 2)
    if (total % v == 0) return true;
  return false;
}

/// Keeps the candidates a schedule file asked for (0 = any).
std::vector<std::int64_t> requested(std::vector<std::int64_t> cands, std::int64_t want) {
  if (want <= 0) return cands;
  return {want};
}

/// A tile's double-buffered working set split by operand buffer.
struct BufferBytes {
  std::uint64_t ifmap = 0, filter = 0, ofmap = 0;
  std::uint64_t total() const { return ifmap + filter + ofmap; }
};

/// Whether a candidate fits: its working set in the budget and, with separate operand buffers,
/// each part in its own buffer. Looking for the smallest (error messages), only the budget.
bool fits(const HardwareConfig& hw, std::uint64_t budget, const BufferBytes& b, bool smallest) {
  if (b.total() > budget) return false;
  if (smallest || !hw.sram.separate_buffers()) return true;
  return b.ifmap <= hw.sram.ifmap_bytes && b.filter <= hw.sram.filter_bytes && b.ofmap <= hw.sram.ofmap_bytes;
}

void set_buffers(Tiling& t, const BufferBytes& b) {
  t.working_set_bytes = b.total();
  t.ifmap_bytes = b.ifmap;
  t.filter_bytes = b.filter;
  t.ofmap_bytes = b.ofmap;
}

/// Scores a candidate: estimated seconds, or its working set when looking for the smallest.
double score(bool smallest, double seconds, std::uint64_t working_set) {
  return smallest ? double(working_set) : seconds;
}

/// SRAM of a pool epilogue's results: the pooled tile (double-buffered) or, for global pooling,
/// the accumulators of every output channel (filled across row tiles).
std::uint64_t pool_buffer_bytes(const GemmGeometry& geo, const PoolEpilogue& pool, std::uint64_t out_tile_elems,
                                std::uint32_t eb, std::uint32_t acc) {
  if (pool.op < 0) return 0;
  if (pool.global) return std::uint64_t(geo.batch * geo.out_channels) * acc;
  return 2 * out_tile_elems / std::uint64_t(pool.stride_h * pool.stride_w) * eb;
}

/// Output-column block widths for a conv tile of `rows` rows: 0 (whole rows) or, with `split`,
/// for a single output row of a conv without a pool epilogue, narrower blocks (a row of a wide
/// image can alone exceed the SRAM: split output channels first, then the width).
std::vector<std::int64_t> width_candidates(const GemmGeometry& geo, std::int64_t rows, const PoolEpilogue& pool,
                                           bool split) {
  if (!split) return {0};
  std::vector<std::int64_t> w;
  if (!geo.conv || rows != 1 || pool.op >= 0 || geo.out_cols_px <= 1) return w;
  for (std::int64_t v : candidates(geo.out_cols_px, 1))
    if (v < geo.out_cols_px) w.push_back(v);
  return w;
}

/// Whether a block that splits the width reads and writes single strided regions: its input
/// rows' column spans are one run per row only with every input channel, or a single input row
/// (a 1-row kernel) is a run per pixel.
bool column_block_is_one_region(const GemmGeometry& geo, std::int64_t cols, std::int64_t chans) {
  const std::int64_t channels = geo.grouped ? cols * geo.cin_g : chans;
  return channels == geo.in_c || geo.kh == 1;
}

/// The bias row of a GEMM head (its third input) unless resident: loaded whole once per segment
/// and held beside the accumulators (lower_gemm), so it costs its bytes once in DRAM and in SRAM.
std::uint64_t gemm_bias_bytes(const Graph& g, const Op& head, const Residency& where, std::uint32_t eb) {
  if (head.inputs.size() < 3 || where.resident[base_tensor(g, head.inputs[2])]) return 0;
  return workloads::tensor_bytes(g, head.inputs[2], eb);
}

/// One candidate tile shape of a GEMM head: output rows, output columns per row block (0: the
/// whole width), output channels (groups of a grouped conv) and input channels.
struct GemmCandidate {
  std::int64_t rows = 0, width = 0, cols = 0, chans = 0;
};

/// What a cut into row (and column) blocks reads of the first operand, halo included: every
/// block's input summed, the largest block's (for every input channel), and the number of row
/// blocks per batch item, each column block of a split row counted as one.
struct InputSpan {
  std::uint64_t a_full = 0, a_block_max = 0;
  std::int64_t blocks_per_batch = 0;
};

/// How often each operand streams from DRAM (elements) for one loop order.
struct OperandStreams {
  std::uint64_t a = 0, b = 0;
};

/// The tiler of one GEMM segment under one residency, in the steps a reader can name: candidate
/// tiles (rows, widths, output and input channels), each one's SRAM (buffers) and whether it
/// fits, its DRAM streams and estimated time (cost), and the cheapest (choice; with `smallest`,
/// the least SRAM instead, for error messages).
class GemmTiler {
 public:
  GemmTiler(const Graph& g, const HardwareConfig& hw, const Segment& seg, const Residency& where)
      : g_(g),
        hw_(hw),
        seg_(seg),
        head_(g.op(seg.ops[0])),
        geo_(gemm_geometry(g, head_)),
        eb_(dtype_bytes(hw.mac_array.dtype)),
        ea_(workloads::element_bytes(g, head_.inputs[0], eb_)),
        acc_(hw.mac_array.accumulator_bytes),
        a_resident_(where.resident[base_tensor(g, head_.inputs[0])]),
        b_resident_(where.resident[base_tensor(g, head_.inputs[1])]),
        out_(segment_output(g, seg)),
        out_stored_(where.stored[out_]),
        extras_(epilogue_extras(g, seg, where, eb_)),
        eo_(workloads::element_bytes(g, out_, eb_)),
        bias_(gemm_bias_bytes(g, head_, where, eb_)),
        pro_(prologue_operands(g, seg, where, eb_)),
        prologue_(!seg.prologue.empty()),
        b_dequantized_(dequantized_on_vector_unit(g, hw, head_.inputs[1])),
        b_full_(std::uint64_t(g.tensor(head_.inputs[1]).elements())),
        out_bytes_(workloads::tensor_bytes(g, out_, eb_)),
        pool_(pool_epilogue(g, seg)),
        burst_(hw.dram.bytes_per_burst()) {}

  /// The best tile within `budget` (with `smallest`: the smallest working set). Block sizes are
  /// first the usual candidates that divide their dimension; only when none of those fits, every
  /// divisor (a dimension with few small divisors, such as a 32769-token context's 3^2 x 11 x 331,
  /// otherwise leaves no block between 10923 and 1 of its edge). A dimension that no power of two
  /// times its unit divides has its divisors among the usual ones (see blocks()).
  /// With `below_array`, blocks narrower than the MAC array last (see tile_segment).
  std::optional<Tiling> best(std::uint64_t budget, bool smallest, bool below_array) const {
    if (smallest) return search(budget, true, true, false);
    std::optional<Tiling> usual = search(budget, false, false, false);
    if (!usual) usual = search(budget, false, true, false);
    return usual || !below_array ? usual : search(budget, false, true, true);
  }

 private:
  /// A dimension's blocks. The usual candidates of an edge that no power of two times `unit`
  /// divides are only its largest blocks (total / d for d <= 8): 6625 output channels on a 32-wide
  /// array would offer 1325 and 6625 alone, and a tile that fits with those splits the input
  /// channels, re-streaming every weight once per row block (a 40 x 120 x 6625 GEMM moved
  /// 16.5 MB where 125 x 120 blocks move 2.2 MB). Such an edge takes its divisors from `unit` up.
  std::vector<std::int64_t> blocks(std::int64_t total, std::int64_t unit, bool every_divisor) const {
    std::vector<std::int64_t> b = dividing(candidates(total, unit), total);
    if (!every_divisor && ladder_divides(total, unit)) return b;
    const std::vector<std::int64_t> more = divisors(total, unit);
    b.insert(b.end(), more.begin(), more.end());
    std::sort(b.begin(), b.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
    return b;
  }

  std::optional<Tiling> search(std::uint64_t budget, bool smallest, bool every_divisor, bool below_array) const {
    std::optional<Tiling> best;
    double best_cost = std::numeric_limits<double>::infinity();
    const std::int64_t col_unit = geo_.grouped || below_array ? 1 : hw_.mac_array.cols;
    const std::int64_t chan_unit = below_array ? 1 : hw_.mac_array.rows;
    const auto row_cands = requested(blocks(geo_.out_rows, 1, every_divisor), seg_.request.rows);
    const auto col_cands = requested(blocks(geo_.n_total, col_unit, every_divisor), seg_.request.cols);
    const auto chan_cands = geo_.grouped
                                ? std::vector<std::int64_t>{1}
                                : requested(blocks(geo_.c_total, chan_unit, every_divisor), seg_.request.in_channels);
    // Whole rows first; column blocks of a split row only when no whole-row tile fits, or only
    // single rows do (their narrow channel blocks can cost more than column blocks with every
    // channel), or when looking for the smallest tile.
    for (bool split : {false, true})
      for (std::int64_t rows : row_cands)
        for (std::int64_t width : split&& best && best->rows > 1 && !smallest
                                      ? std::vector<std::int64_t>{}
                                      : width_candidates(geo_, rows, pool_, split)) {
          if (pool_.op >= 0 && rows % pool_.stride_h != 0) continue;  // a pool window never straddles two tiles
          const InputSpan span = input_span(rows, width);
          for (std::int64_t cols : col_cands)
            for (std::int64_t chans : chan_cands) {
              const GemmCandidate c{rows, width, cols, chans};
              if (width && !column_block_is_one_region(geo_, cols, chans)) continue;
              if (below_array && block_count(c, span) > kMaxNarrowedBlocks) continue;
              consider(c, span, budget, smallest, best, best_cost);
            }
        }
    return best;
  }

  InputSpan input_span(std::int64_t rows, std::int64_t width) const {
    InputSpan s;
    if (width == 0) {
      for (std::int64_t r0 = 0; r0 < geo_.out_rows; r0 += rows) {
        const std::uint64_t a =
            geo_.a_elements(GemmBlock{0, r0, std::min(rows, geo_.out_rows - r0), 0, geo_.n_total, 0, geo_.c_total});
        s.a_full += a;
        s.a_block_max = std::max(s.a_block_max, a);
      }
    } else {  // rows x columns spans multiply: sum (and largest) of each, times every channel
      std::uint64_t row_sum = 0, row_max = 0, col_sum = 0, col_max = 0;
      for (std::int64_t r0 = 0; r0 < geo_.out_rows; r0 += rows) {
        const auto [i0, i1] = geo_.input_rows(r0, std::min(rows, geo_.out_rows - r0));
        row_sum += std::uint64_t(std::max<std::int64_t>(0, i1 - i0));
        row_max = std::max(row_max, std::uint64_t(std::max<std::int64_t>(0, i1 - i0)));
      }
      for (std::int64_t p0 = 0; p0 < geo_.out_cols_px; p0 += width) {
        const auto [j0, j1] = geo_.input_cols(p0, std::min(width, geo_.out_cols_px - p0));
        col_sum += std::uint64_t(std::max<std::int64_t>(0, j1 - j0));
        col_max = std::max(col_max, std::uint64_t(std::max<std::int64_t>(0, j1 - j0)));
      }
      s.a_full = row_sum * col_sum * std::uint64_t(geo_.in_c);
      s.a_block_max = row_max * col_max * std::uint64_t(geo_.in_c);
    }
    s.a_full *= std::uint64_t(geo_.batch);
    s.blocks_per_batch = ceil_div(geo_.out_rows, rows) * (width ? ceil_div(geo_.out_cols_px, width) : 1);
    return s;
  }

  /// The first block of a candidate (its shape: every block but the edges).
  GemmBlock first_block(const GemmCandidate& c) const {
    return GemmBlock{0, 0, std::min(c.rows, geo_.out_rows), 0, c.cols, 0, c.chans, 0, c.width};
  }

  /// Bytes of n elements of the second operand (a sub-byte, group-quantised weight counts its scales).
  std::uint64_t wb(std::uint64_t n) const { return workloads::elements_bytes(g_, head_.inputs[1], n, eb_); }

  /// The first operand's largest block in bytes: the buffer holds it (an interior block's halo
  /// is not clipped at the padding), for this block's channels of the in_c in a_block_max.
  std::uint64_t a_tile_bytes(const GemmCandidate& c, const GemmBlock& first, const InputSpan& span) const {
    const std::int64_t channels = geo_.grouped ? c.cols * geo_.cin_g : c.chans;
    return (geo_.conv ? mul_div(span.a_block_max, std::uint64_t(channels), std::uint64_t(geo_.in_c))
                      : geo_.a_elements(first)) *
           ea_;
  }

  /// A weight the vector unit dequantises sits in SRAM twice: packed as loaded, and expanded to
  /// the first operand's width for the array (each double-buffered).
  std::uint64_t b_tile_bytes(const GemmBlock& first) const {
    const std::uint64_t n = geo_.b_elements(first);
    return wb(n) + (b_dequantized_ ? n * ea_ : 0);
  }

  /// The candidate's double-buffered working set by operand buffer. Epilogue operands sit beside
  /// the output tile they are applied to; a prologue's input blocks are double-buffered beside
  /// the operand block it makes, so the DMA loads block i+1 while the vector unit makes block i
  /// and the array reads i-1.
  BufferBytes buffers(const GemmCandidate& c, const GemmBlock& first, const InputSpan& span,
                      std::uint64_t b_tile) const {
    const std::uint64_t a_tile = a_tile_bytes(c, first, span);
    const std::uint64_t out_tile_elems = geo_.out_elements(first);
    const std::uint64_t a_part = prologue_
                                     ? 2 * a_tile * (1 + pro_.streamed) + a_tile * pro_.scratch_tiles + pro_.whole_bytes
                                 : a_resident_ ? 0
                                               : 2 * a_tile;
    return BufferBytes{a_part, b_resident_ ? 0 : 2 * b_tile,
                       2 * out_tile_elems * acc_ + 2 * out_tile_elems * extras_.tiled_bytes_per_out_elem +
                           out_tile_elems * extras_.scratch_bytes_per_out_elem + extras_.whole_buffer_bytes + bias_ +
                           pool_buffer_bytes(geo_, pool_, out_tile_elems, eo_, acc_)};
  }

  /// Elements each operand streams with the weights' loop outer or inner.
  OperandStreams streams(const GemmCandidate& c, const InputSpan& span, bool weights_outer) const {
    const std::int64_t nb = ceil_div(geo_.n_total, c.cols);
    const std::int64_t cb = ceil_div(geo_.c_total, c.chans);
    const std::int64_t rb = span.blocks_per_batch * geo_.batch;
    const std::int64_t b_reloads = geo_.b_constant ? rb : span.blocks_per_batch;
    if (geo_.grouped) return {span.a_full, weights_outer || nb == 1 ? b_full_ : b_full_ * std::uint64_t(rb)};
    if (cb == 1) {
      // Weights outer re-reads the inputs per output-channel block, unless one input block (a
      // single row block per weight block) stays in its buffer throughout.
      const bool a_reloaded = (geo_.b_constant ? rb : span.blocks_per_batch) > 1;
      return {weights_outer && nb > 1 && a_reloaded ? span.a_full * std::uint64_t(nb) : span.a_full,
              !weights_outer && nb > 1 ? b_full_ * std::uint64_t(b_reloads) : b_full_};
    }
    return {span.a_full * std::uint64_t(nb), b_full_ * std::uint64_t(b_reloads)};
  }

  /// Over-fetch factors of the strided operands for a block of `chans` inputs x `cols` outputs:
  /// narrow channel blocks fetch whole bursts.
  double a_fetch(std::int64_t chans, std::int64_t cols) const {
    const std::int64_t width = geo_.conv ? (geo_.grouped ? cols * geo_.cin_g : chans) : chans;
    const std::int64_t full = geo_.conv ? geo_.in_c : geo_.k_dim;
    return burst_overfetch(std::uint64_t(width) * ea_, std::uint64_t(full) * ea_, burst_);
  }
  double b_fetch(std::int64_t chans, std::int64_t cols) const {
    if (geo_.b_constant) return 1.0;  // weights are stored pre-tiled, contiguous
    return geo_.transpose_b ? burst_overfetch(wb(std::uint64_t(chans)), wb(std::uint64_t(geo_.k_dim)), burst_)
                            : burst_overfetch(wb(std::uint64_t(cols)), wb(std::uint64_t(geo_.n_total)), burst_);
  }
  double out_fetch(std::int64_t cols) const {
    const std::int64_t width = geo_.grouped ? cols * geo_.cout_g : cols;
    return burst_overfetch(std::uint64_t(width) * eo_, std::uint64_t(geo_.out_channels) * eo_, burst_);
  }

  /// The blocks a candidate cuts the GEMM into: row (and column) blocks x batch x output-channel
  /// blocks x input-channel blocks.
  std::uint64_t block_count(const GemmCandidate& c, const InputSpan& span) const {
    return std::uint64_t(span.blocks_per_batch * geo_.batch * ceil_div(geo_.n_total, c.cols) *
                         ceil_div(geo_.c_total, c.chans));
  }

  /// Scores a fitting candidate in both loop orders and keeps it in `best` when cheaper.
  void consider(const GemmCandidate& c, const InputSpan& span, std::uint64_t budget, bool smallest,
                std::optional<Tiling>& best, double& best_cost) const {
    const GemmBlock first = first_block(c);
    const std::uint64_t b_tile = b_tile_bytes(first);
    const BufferBytes parts = buffers(c, first, span, b_tile);
    if (!fits(hw_, budget, parts, smallest)) return;
    // The array's time with the segment's dataflow (fold timing, SRAM incl. partial sums).
    const GemmTileCost array =
        smallest ? GemmTileCost{} : remembered_tiling_cost(geo_, c.rows, c.cols, c.chans, seg_.dataflow, hw_, c.width);
    const std::int64_t cb = ceil_div(geo_.c_total, c.chans);
    const std::uint64_t tiles = block_count(c, span);
    const std::uint64_t first_load = geo_.a_elements(first) * ea_ + b_tile;
    // What the DRAM really moves per byte of each operand: narrow channel blocks fetch whole bursts.
    const double a_over = a_fetch(c.chans, c.cols), b_over = b_fetch(c.chans, c.cols), out_over = out_fetch(c.cols);
    for (bool weights_outer : {true, false}) {
      if (cb > 1 && !weights_outer) continue;  // with a K split both orders re-stream alike
      const OperandStreams s = streams(c, span, weights_outer);
      const std::uint64_t b_bytes = b_resident_ ? 0 : wb(s.b);
      const std::uint64_t beside_a = b_bytes + (out_stored_ ? out_bytes_ : 0) + extras_.dram_bytes + bias_;
      const PrologueTraffic pt =
          prologue_ ? cheaper_prologue(hw_, pro_, span.a_full, s.a, ea_, beside_a, smallest ? 0 : array.cycles)
                    : PrologueTraffic{};
      const std::uint64_t a_bytes = prologue_ ? pt.dram_bytes : a_resident_ ? 0 : s.a * ea_;
      const std::uint64_t traffic = a_bytes + beside_a;
      const double moved = double(a_bytes) * a_over + (b_resident_ ? 0 : double(b_bytes) * b_over) +
                           double((out_stored_ ? out_bytes_ : 0) + extras_.dram_bytes) * out_over + double(bias_);
      // The banks serve the DMA's bytes too (docs/compute-models.md, "One bandwidth for every
      // unit"): an SRAM-bound array is slowed by every byte loaded or stored beside it.
      const double bank_cycles = double(array.sram_read_bytes + array.sram_write_bytes) + moved;
      const double compute_cycles =
          smallest ? 0 : std::max(array.cycles, bank_cycles / double(hw_.sram.bytes_per_cycle()));
      // Over-fetched bytes are charged even when compute hides the DRAM time: they occupy the
      // channel the next group's prefetch and the stores need, and carry nothing.
      const double overfetch = std::max(0.0, moved - double(traffic)) / hw_.dram.peak_bandwidth().bytes_per_second;
      const double busy_cycles =
          std::max(compute_cycles, double(pt.vector_ops) / hw_.vector_peak_ops() * hw_.core_clock.hz);
      const double cost = score(
          smallest,
          estimate_seconds(hw_, std::uint64_t(moved), busy_cycles, first_load, tiles, hw_.core_clock.hz) + overfetch,
          parts.total());
      if (!(cost < best_cost)) continue;  // (a NaN never wins)
      best_cost = cost;
      Tiling t;
      t.rows = c.rows;
      t.cols = c.cols;
      t.in_channels = c.chans;
      t.width = c.width;
      t.weights_outer = weights_outer;
      set_buffers(t, parts);
      t.dram_bytes = traffic;
      t.tile_count = tiles;
      t.prologue_reads = span.a_full ? s.a / span.a_full : 1;
      t.prologue_spill = pt.spill;
      t.prologue_vector_ops = pt.vector_ops;
      best = t;
    }
  }

  const Graph& g_;
  const HardwareConfig& hw_;
  const Segment& seg_;
  const Op& head_;
  const GemmGeometry geo_;
  const std::uint32_t eb_;  // tensors without their own width
  const std::uint32_t ea_;
  const std::uint32_t acc_;
  const bool a_resident_, b_resident_;
  const int out_;
  const bool out_stored_;
  const ExtraOperands extras_;
  const std::uint32_t eo_;
  const std::uint64_t bias_;
  const PrologueOperands pro_;
  const bool prologue_, b_dequantized_;
  const std::uint64_t b_full_;
  const std::uint64_t out_bytes_;  // what leaves SRAM: the segment's output (pooled, when it ends in a pool)
  const PoolEpilogue pool_;
  const std::uint64_t burst_;
};

TilingKey tiling_key(const Graph& g, const HardwareConfig& hw, const Segment& seg, const Residency& where,
                     std::uint64_t budget, bool smallest, bool below_array) {
  TilingKey k{&g,
              &hw,
              {std::int64_t(budget), (smallest ? 1 : 0) + (below_array ? 2 : 0), seg.dataflow ? int(*seg.dataflow) : -1,
               seg.request.rows, seg.request.cols, seg.request.in_channels, std::int64_t(seg.prologue.size())}};
  for (const int op : segment_ops(seg)) {  // the prologue's ops, then the head and its tile region
    k.words.push_back(op);
    for (const int t : g.op(op).inputs) {
      const int b = base_tensor(g, t);
      k.words.push_back(2 * std::int64_t(b) + (where.resident[b] ? 1 : 0));
    }
    for (const int t : g.op(op).outputs) {
      const int b = base_tensor(g, t);
      k.words.push_back(-1 - (4 * std::int64_t(b) + (where.stored[b] ? 1 : 0) + (where.resident[b] ? 2 : 0)));
    }
  }
  return k;
}

/// The best tiling of a GEMM segment (GemmTiler), remembered while a TilingCacheScope is open:
/// the planners ask about the same segment under the same residency and budget again and again
/// as a group grows (ResNet-50 greedy: 927 calls, 178 distinct).
std::optional<Tiling> tile_gemm(const Graph& g, const HardwareConfig& hw, const Segment& seg, const Residency& where,
                                std::uint64_t budget, bool smallest, bool below_array) {
  if (!t_caches) return GemmTiler(g, hw, seg, where).best(budget, smallest, below_array);
  TilingKey key = tiling_key(g, hw, seg, where, budget, smallest, below_array);
  const auto it = t_caches->gemm_tilings.find(key);
  if (it != t_caches->gemm_tilings.end()) return it->second;
  std::optional<Tiling> t = GemmTiler(g, hw, seg, where).best(budget, smallest, below_array);
  t_caches->gemm_tilings.emplace(std::move(key), t);
  return t;
}

/// Walks the tiles as the lowering will (for_each_vector_tile): a distinct input is loaded when
/// its range changes.
VectorCut walk_vector_cut(const Graph& g, const Op& head, const VectorGeometry& geo, const Residency& where,
                          std::uint64_t size, int passes, std::uint32_t eb) {
  std::vector<int> tensors;  // distinct base tensors of the head's inputs
  std::vector<int> slot(head.inputs.size());
  for (std::size_t k = 0; k < head.inputs.size(); ++k) {
    const int b = base_tensor(g, head.inputs[k]);
    const auto it = std::find(tensors.begin(), tensors.end(), b);
    slot[k] = int(it - tensors.begin());
    if (it == tensors.end()) tensors.push_back(b);
  }
  std::vector<InputRange> last(tensors.size(), InputRange{~0ull, ~0ull});
  std::vector<std::uint64_t> max_slice(tensors.size(), 0);
  std::vector<bool> whole(tensors.size(), true);
  VectorCut cut;
  for_each_vector_tile(geo, size, passes, [&](const VectorTile& t) {
    std::uint64_t tile_loads = 0;
    for (std::size_t k = 0; k < head.inputs.size(); ++k) {
      const std::size_t s = std::size_t(slot[k]);
      const InputRange& range = t.in[k];
      max_slice[s] = std::max(max_slice[s], range.elements());
      if (range.lo != 0 || range.hi != geo.in_elems[k] || range.runs != 1) whole[s] = false;
      if (where.resident[tensors[s]] || range == last[s]) continue;
      last[s] = range;
      tile_loads += workloads::elements_bytes(g, head.inputs[k], range.elements(), eb);
    }
    cut.loaded += tile_loads;
    if (cut.tiles == 0) cut.first_tile = tile_loads;
    cut.out_tile = std::max(cut.out_tile, (t.out1 - t.out0) * (geo.cls == VectorClass::Reduction ? 1 : t.runs));
    cut.tiles += t.pass == 2 ? 0 : 1;
  });
  // A reduction cut inside a block keeps the block's accumulators across its chunks.
  if (geo.cls == VectorClass::Reduction && size < geo.block && geo.inner == 1)
    cut.out_tile = std::max(cut.out_tile, geo.out_elems / (geo.elems / geo.block));
  for (std::size_t s = 0; s < tensors.size(); ++s)
    if (!where.resident[tensors[s]])
      cut.in_buffer += (whole[s] ? 1 : 2) * workloads::elements_bytes(g, tensors[s], max_slice[s], eb);
  return cut;
}

/// The most tiles a vector head is cut into (2^22: 256 MiB in 64-byte tiles).
constexpr std::uint64_t kMaxVectorTiles = std::uint64_t(1) << 22;

/// walk_vector_cut, remembered while a TilingCacheScope is open.
VectorCut remembered_vector_cut(const Graph& g, const HardwareConfig& hw, int head_index, const VectorGeometry& geo,
                                const Residency& where, std::uint64_t size, int passes, std::uint32_t eb) {
  const Op& head = g.op(head_index);
  if (!t_caches) return walk_vector_cut(g, head, geo, where, size, passes, eb);
  // Keyed by what the walk reads, not by the op: a long prompt's attention blocks are ops of one
  // shape each. The geometry; per input its cut, shape, place among the distinct base tensors,
  // residency and element format (elements_bytes).
  TilingKey key{&g, &hw, {std::int64_t(size), passes, std::int64_t(eb), std::int64_t(geo.cls)}};
  std::vector<std::int64_t>& w = key.words;
  const auto add_shape = [&](const workloads::Shape& shape) {
    w.push_back(std::int64_t(shape.size()));
    w.insert(w.end(), shape.begin(), shape.end());
  };
  add_shape(geo.shape);
  for (const std::uint64_t v : {geo.elems, geo.out_elems, geo.block, geo.inner, geo.align})
    w.push_back(std::int64_t(v));
  std::vector<int> bases;
  for (std::size_t k = 0; k < head.inputs.size(); ++k) {
    const int b = base_tensor(g, head.inputs[k]);
    const auto slot = std::find(bases.begin(), bases.end(), b) - bases.begin();
    if (std::size_t(slot) == bases.size()) bases.push_back(b);
    const workloads::SliceRuns& sl = geo.in_slice[k];
    for (const std::int64_t v : {std::int64_t(geo.cuts[k]), std::int64_t(geo.in_elems[k]), std::int64_t(sl.offset),
                                 std::int64_t(sl.run), std::int64_t(sl.stride), std::int64_t(sl.runs),
                                 std::int64_t(geo.in_cover[k]), std::int64_t(slot), std::int64_t(where.resident[b])})
      w.push_back(v);
    for (const int t : {head.inputs[k], b}) {  // the input's format for its loads, the base's for its buffer
      const workloads::Tensor& ten = g.tensor(t);
      for (const std::int64_t v :
           {std::int64_t(ten.format.bits), std::int64_t(ten.format.group), std::int64_t(ten.format.scale_bits),
            std::int64_t(ten.format.zero_bits), std::int64_t(ten.elem_bytes)})
        w.push_back(v);
    }
    add_shape(geo.in_shapes[k]);
  }
  const auto it = t_caches->vector_cuts.find(key);
  if (it != t_caches->vector_cuts.end()) return it->second;
  const VectorCut cut = walk_vector_cut(g, head, geo, where, size, passes, eb);
  t_caches->vector_cuts.emplace(std::move(key), cut);
  return cut;
}

std::optional<Tiling> tile_vector(const Graph& g, const HardwareConfig& hw, const Segment& seg, const Residency& where,
                                  std::uint64_t budget, bool smallest) {
  const Op& head = g.op(seg.ops[0]);
  const std::uint32_t eb = dtype_bytes(hw.mac_array.dtype);
  const int out = segment_output(g, seg);
  const bool out_stored = where.stored[out];
  const ExtraOperands extras = epilogue_extras(g, seg, where, eb);
  const VectorGeometry geo = vector_geometry(g, hw, head);
  // A reduction's output tile is its accumulators; the segment's output (after the epilogue
  // ops) has as many elements as the head's.
  const std::uint64_t seg_out_elems = std::uint64_t(g.tensor(out).elements());

  // Candidate cuts: tile counts from the finest legal cut down to one tile, each turned into
  // driver elements per tile (burst-aligned, whole blocks while a block fits).
  std::vector<std::uint64_t> sizes;
  const std::uint64_t finest = vector_tile_count(geo, 1);
  const auto counts = seg.request.rows > 0 ? std::vector<std::int64_t>{seg.request.rows}
                                           : candidates(std::int64_t(std::max<std::uint64_t>(finest, 1)), 1);
  for (std::int64_t c : counts) sizes.push_back(vector_tile_elems(geo, std::uint64_t(c)));
  // Also cuts into whole rows of the driver (N x H of an NCHW tensor, else all but the last
  // dimension), which keep an NHWC row in one tile.
  const auto& d = geo.shape;
  const std::int64_t rows = d.size() == 4   ? d[0] * d[2]
                            : d.size() <= 1 ? 1
                                            : workloads::dims_product(d, 0, d.size() - 1);
  if (seg.request.rows <= 0 && geo.block == 0)
    for (std::int64_t c : candidates(std::max<std::int64_t>(rows, 1), 1))
      sizes.push_back(vector_tile_elems(geo, std::uint64_t(c)));
  // Largest tiles first: a tie in the estimate goes to fewer tiles.
  std::sort(sizes.begin(), sizes.end(), std::greater<>());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());

  std::optional<Tiling> best;
  double best_cost = std::numeric_limits<double>::infinity();
  const double per_tile = 64.0 / hw.core_clock.hz;  // estimate_seconds' issue overhead per tile
  for (std::uint64_t size : sizes) {
    const int passes = geo.cls == VectorClass::RowOp && size < geo.block && geo.inner == 1 ? 2 : 1;
    const std::uint64_t count = vector_tile_count(geo, size) * std::uint64_t(passes);
    // Finer cuts only add tiles: once their issue overhead alone exceeds the best estimate they
    // cannot win. And a cut into more than kMaxVectorTiles is not walked (nor would its Program
    // be small): a tensor that needs one is refused, naming the finest cut tried.
    if (count > kMaxVectorTiles || (!smallest && double(count) * per_tile > best_cost)) continue;
    const VectorCut cut = remembered_vector_cut(g, hw, seg.ops[0], geo, where, size, passes, eb);
    // A vector op has no filter: inputs in the ifmap buffer, outputs (and epilogue operands) in
    // the ofmap buffer.
    const BufferBytes parts{cut.in_buffer, 0,
                            2 * (cut.out_tile * workloads::element_bytes(g, head.outputs[0], eb) +
                                 cut.out_tile * extras.tiled_bytes_per_out_elem) +
                                cut.out_tile * extras.scratch_bytes_per_out_elem + extras.whole_buffer_bytes};
    const std::uint64_t ws = parts.total();
    if (!fits(hw, budget, parts, smallest)) continue;
    const std::uint64_t traffic =
        cut.loaded + extras.dram_bytes + (out_stored ? seg_out_elems * workloads::element_bytes(g, out, eb) : 0);
    double ops = double(vector_pass_ops(g, head, eb, passes, passes == 2 ? 1 : 0)) +
                 (passes == 2 ? double(vector_pass_ops(g, head, eb, passes, 2)) : 0.0);
    for (std::size_t i = 1; i < seg.ops.size(); ++i)
      ops += double(workloads::op_cost(g, g.op(seg.ops[i]), eb).vector_ops);
    const double cost = score(
        smallest,
        estimate_seconds(hw, traffic, ops, cut.first_tile, cut.tiles * std::uint64_t(passes), hw.vector_peak_ops()),
        ws);
    if (cost < best_cost) {
      best_cost = cost;
      Tiling t;
      t.tiles = std::int64_t(cut.tiles);
      t.tile_elems = size;
      t.passes = passes;
      set_buffers(t, parts);
      t.dram_bytes = traffic;
      t.tile_count = cut.tiles * std::uint64_t(passes);
      best = t;
    }
  }
  return best;
}

}  // namespace

std::array<std::uint64_t, 3> group_buffer_bytes(const GroupPlan& p) {
  std::array<std::uint64_t, 3> out{0, 0, 0};
  for (const Segment& s : p.segments) {
    out[0] = std::max(out[0], s.tiling.ifmap_bytes);
    out[1] = std::max(out[1], s.tiling.filter_bytes);
    out[2] = std::max(out[2], s.tiling.ofmap_bytes);
  }
  return out;
}

namespace {
/// A tile's need and the configured size of each operand buffer, by name.
std::array<std::tuple<const char*, std::uint64_t, std::uint64_t>, 3> operand_buffers(const HardwareConfig& hw,
                                                                                     const Tiling& t) {
  return {std::tuple{"ifmap", t.ifmap_bytes, hw.sram.ifmap_bytes},
          std::tuple{"filter", t.filter_bytes, hw.sram.filter_bytes},
          std::tuple{"ofmap", t.ofmap_bytes, hw.sram.ofmap_bytes}};
}
}  // namespace

std::uint64_t buffer_excess(const HardwareConfig& hw, const Tiling& t) {
  std::uint64_t most = 0;
  for (auto [name, need, have] : operand_buffers(hw, t)) most = std::max(most, need > have ? need - have : 0);
  return most;
}

std::string buffer_shortfall(const HardwareConfig& hw, const std::optional<Tiling>& t) {
  if (!t || !hw.sram.separate_buffers()) return "";
  std::string out;
  for (auto [name, need, have] : operand_buffers(hw, *t)) {
    if (need <= have) continue;
    out += std::string(out.empty() ? "; separate operand buffers: " : ", ") + name + " tile " + std::to_string(need) +
           " B > " + name + " buffer " + std::to_string(have) + " B (npu.sram." + name + "_bytes)";
  }
  return out;
}

std::string resident_fusion_obstacle(const HardwareConfig& hw) {
  if (!hw.sram.separate_buffers()) return "";
  return "separate operand buffers: an intermediate cannot stay resident across the ifmap, filter and ofmap "
         "buffers (npu.sram.operand_buffers)";
}

bool dequantized_on_vector_unit(const Graph& g, const HardwareConfig& hw, int tensor) {
  const workloads::Tensor& t = g.tensor(tensor);
  return hw.mac_array.dequant == DequantPath::VectorUnit && t.is_constant && t.format.group > 0;
}

int base_tensor(const Graph& g, int t) {
  while (true) {
    const int p = g.tensor(t).producer;
    if (p < 0 || workloads::op_class(g.op(p).kind) != OpClass::View) return t;
    t = g.op(p).inputs[0];
  }
}

bool is_tiled_input(const Graph& g, int tensor, std::uint64_t out_elements) {
  return std::uint64_t(g.tensor(tensor).elements()) >= out_elements;
}

std::vector<int> segment_inputs(const Graph& g, const Segment& seg) {
  const std::vector<int> ops = segment_ops(seg);
  // Each op's place in the segment, sorted by op: an input is made inside when its producer runs
  // earlier. Sorted, not hashed: most segments hold one to three ops (the planners ask thousands
  // of times), yet a 100k-op chain is one segment.
  std::vector<std::pair<int, std::size_t>> place;
  place.reserve(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) place.push_back({ops[i], i});
  std::sort(place.begin(), place.end());
  auto made_before = [&](int t, std::size_t i) {
    const int p = g.tensor(t).producer;
    const auto it = std::lower_bound(place.begin(), place.end(), std::pair<int, std::size_t>{p, 0});
    return it != place.end() && it->first == p && it->second < i;
  };
  std::vector<int> in;
  for (std::size_t i = 0; i < ops.size(); ++i)
    for (int t : g.op(ops[i]).inputs)
      if (!made_before(t, i)) in.push_back(base_tensor(g, t));
  return in;
}

std::vector<int> segment_ops(const Segment& seg) {
  std::vector<int> ops = seg.prologue;
  ops.insert(ops.end(), seg.ops.begin(), seg.ops.end());
  return ops;
}

int segment_output(const Graph& g, const Segment& seg) {
  return base_tensor(g, g.op(seg.ops.back()).outputs[0]);
}

TilingCacheScope::TilingCacheScope() {
  if (t_caches) return;
  t_caches = new PlanningCaches();
  owner_ = true;
}

TilingCacheScope::~TilingCacheScope() {
  if (!owner_) return;
  delete t_caches;
  t_caches = nullptr;
}

std::optional<Tiling> tile_segment(const Graph& g, const HardwareConfig& hw, const Segment& seg, const Residency& where,
                                   std::uint64_t budget, bool smallest, bool below_array) {
  switch (workloads::op_class(g.op(seg.ops[0]).kind)) {
    case OpClass::Gemm:
      return tile_gemm(g, hw, seg, where, budget, smallest, below_array);
    case OpClass::Vector:
      if (concat_in_place(g, seg, where)) {
        Tiling t;
        t.in_place = true;
        t.tile_count = 0;
        return t;
      }
      return tile_vector(g, hw, seg, where, budget, smallest);
    case OpClass::View:
      return Tiling{};
  }
  return std::nullopt;
}

bool concat_in_place(const Graph& g, const Segment& seg, const Residency& where) {
  const Op& op = g.op(seg.ops[0]);
  if (seg.ops.size() != 1 || op.kind != workloads::OpKind::Concat) return false;
  const int out = op.outputs[0];
  const auto& shape = g.tensor(out).shape;
  const std::int64_t rank = std::int64_t(shape.size());
  const std::int64_t axis = op.attrs.axis < 0 ? op.attrs.axis + rank : op.attrs.axis;
  if (axis < 0 || axis >= rank || workloads::dims_product(shape, 0, std::size_t(axis)) != 1 || where.resident[out])
    return false;
  for (std::size_t i = 0; i < op.inputs.size(); ++i) {
    const int t = op.inputs[i];
    const auto& ten = g.tensor(t);
    if (ten.is_constant || base_tensor(g, t) != t || where.resident[t]) return false;
    // A graph input is written into its slab before the run (the context of a query block an
    // LLM phase stands in for, docs/llm.md); no chains of placements.
    if (ten.producer >= 0 && g.op(ten.producer).kind == workloads::OpKind::Concat) return false;
    if (ten.consumers.size() != 1 || g.is_output(t)) return false;
    if (std::find(op.inputs.begin(), op.inputs.begin() + std::ptrdiff_t(i), t) != op.inputs.begin() + std::ptrdiff_t(i))
      return false;  // the same tensor twice cannot sit in two places
  }
  return true;
}

}  // namespace npusim::sched
