// Attention-style fusion: recognises MatMul(Q, K^T) -> [elementwise] -> softmax -> MatMul(P, V)
// and sizes it per head in blocks of query rows (see attention.h and docs/scheduling.md).
#include "sim/scheduler/attention.h"

#include <algorithm>
#include <set>

#include "models/mac_array/compute_model.h"
#include "models/mac_array/fold_model.h"
#include "sim/core/math_util.h"

namespace npusim::sched {
using workloads::Graph;
using workloads::Op;
using workloads::OpKind;

namespace {

std::int64_t leading(const workloads::Shape& s) {
  std::int64_t p = 1;
  for (std::size_t i = 0; i + 2 < s.size(); ++i) p *= s[i];
  return p;
}

/// Whether `t` is needed beyond its one consumer in the pattern: other readers, or none at
/// all (a graph output).
bool read_outside(const Graph& g, int t) {
  return g.tensor(t).consumers.size() != 1;
}

/// Bytes of the operands a segment's epilogue ops hold whole (scale, mask), each tensor once:
/// the lowering loads each of them once per segment.
std::uint64_t epilogue_constants(const Graph& g, const Segment& seg, std::uint32_t eb) {
  std::set<int> seen;
  std::uint64_t bytes = 0;
  int chain = g.op(seg.ops[0]).outputs[0];
  for (std::size_t i = 1; i < seg.ops.size(); ++i) {
    for (int t : g.op(seg.ops[i]).inputs)
      if (t != chain && seen.insert(t).second) bytes += workloads::tensor_bytes(g, t, eb);
    chain = g.op(seg.ops[i]).outputs[0];
  }
  return bytes;
}

/// K/V chunk heights a streamed head may use, largest first: the array width times powers of
/// two, below Lk (a chunk of all Lk rows is the resident case).
std::vector<std::int64_t> stream_chunks(const HardwareConfig& hw, std::int64_t kv_rows) {
  std::vector<std::int64_t> c;
  for (std::int64_t v = std::max<std::int64_t>(1, hw.mac_array.cols); v < kv_rows; v *= 2) c.push_back(v);
  std::reverse(c.begin(), c.end());
  return c;
}

/// DRAM bytes of each segment of an attention group: Q and K (re-read per block when streamed)
/// for the scores, V and the stored O for the context, and each segment's epilogue constants.
std::vector<std::uint64_t> segment_dram(const Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs,
                                        std::int64_t block_rows, bool kv_resident) {
  const AttentionGeometry a = attention_geometry(g, segs);
  const std::uint64_t eb = dtype_bytes(hw.mac_array.dtype);
  auto width = [&](int t) { return std::uint64_t(workloads::element_bytes(g, t, std::uint32_t(eb))); };
  const std::uint64_t kv_reads = kv_resident ? 1 : std::uint64_t(ceil_div(a.rows, block_rows));
  const std::uint64_t H = std::uint64_t(a.heads);
  const std::uint64_t q = H * std::uint64_t(a.rows * a.d) * width(a.q);
  const std::uint64_t o = H * std::uint64_t(a.rows * a.dv) * width(segment_output(g, segs[2]));
  const std::uint64_t k = kv_reads * H * std::uint64_t(a.kv_rows * a.d) * width(a.k);
  // One tensor as key and value (multi-head latent attention's cache rows): a resident head's
  // rows serve both GEMMs from one load; streamed, the context GEMMs load the chunks again.
  const bool shared = shares_kv(a);
  const std::uint64_t v = shared && kv_resident ? 0 : kv_reads * H * std::uint64_t(a.kv_rows * a.dv) * width(a.v);
  return {q + k + epilogue_constants(g, segs[0], std::uint32_t(eb)), epilogue_constants(g, segs[1], std::uint32_t(eb)),
          v + o + epilogue_constants(g, segs[2], std::uint32_t(eb))};
}

/// Estimated seconds, as the tiler estimates: DRAM time overlapped with the fold model's cycles of
/// every block's GEMMs plus the vector ops at peak, the first block's loads, 64 cycles per tile.
/// Blocks and chunks come in at most two sizes (full, and a shorter last one), so the sums over
/// them are counts times the two sizes' cycles.
double estimate(const Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs, std::int64_t block_rows,
                std::int64_t chunk, bool online, std::uint64_t dram_bytes) {
  const AttentionGeometry a = attention_geometry(g, segs);
  const auto& mac = hw.mac_array;
  const DType operands = models::operand_dtype(mac, g.tensor(a.q).elem_bytes);
  auto fold = [&](std::int64_t m, std::int64_t k, std::int64_t n) {
    return double(models::compute_timing({m, k, n, 1}, mac, mac.dataflow, operands).cycles);
  };
  const std::int64_t chunks = ceil_div(a.kv_rows, chunk), last_cols = a.kv_rows - (chunks - 1) * chunk;
  auto block_cycles = [&](std::int64_t rows) {
    return double(chunks - 1) * (fold(rows, a.d, chunk) + fold(rows, chunk, a.dv)) + fold(rows, a.d, last_cols) +
           fold(rows, last_cols, a.dv);
  };
  const std::int64_t blocks = ceil_div(a.rows, block_rows), last_rows = a.rows - (blocks - 1) * block_rows;
  const double cycles = double(blocks - 1) * block_cycles(block_rows) + block_cycles(last_rows);
  // Per block: a score and a context GEMM per chunk, and one softmax (online: one per chunk and
  // the final normalisation).
  const std::uint64_t tiles =
      std::uint64_t(blocks) * (2 * std::uint64_t(chunks) + (online ? std::uint64_t(chunks) + 1 : 1));
  const std::uint32_t eb = dtype_bytes(mac.dtype);
  double vector_ops = 0;
  for (const auto& s : segs)
    for (int o : s.ops)
      if (!online || o != segs[1].ops[0]) vector_ops += double(workloads::op_cost(g, g.op(o), eb).vector_ops);
  if (online)  // the softmax: kOnlineScoreOps per score and the rescales
    vector_ops += double(a.heads) * double(kOnlineScoreOps * std::uint64_t(a.rows * a.kv_rows) +
                                           std::uint64_t(blocks - 1) * online_rescale_ops(block_rows, chunks, a.dv) +
                                           online_rescale_ops(last_rows, chunks, a.dv));
  const double compute = double(a.heads) * cycles / hw.core_clock.hz + vector_ops / hw.vector_peak_ops();
  const std::uint64_t first = std::uint64_t(std::min(block_rows, a.rows) * a.d) * workloads::element_bytes(g, a.q, eb) +
                              std::uint64_t(chunk * a.d) * workloads::element_bytes(g, a.k, eb) +
                              (shares_kv(a) ? 0 : std::uint64_t(chunk * a.dv) * workloads::element_bytes(g, a.v, eb));
  return estimate_seconds(hw, dram_bytes, compute * hw.mac_peak_ops(), first, tiles * std::uint64_t(a.heads),
                          hw.mac_peak_ops());
}

GroupEval make_eval(const Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs, std::int64_t block_rows,
                    std::int64_t chunk, bool online) {
  const AttentionGeometry a = attention_geometry(g, segs);
  const bool resident = !online && chunk >= a.kv_rows;
  const AttentionBuffers buf = attention_buffers(g, hw, segs, block_rows, chunk, online);
  const auto dram = segment_dram(g, hw, segs, block_rows, resident);
  const std::uint64_t blocks = std::uint64_t(a.heads * ceil_div(a.rows, block_rows));
  const std::uint64_t chunks = std::uint64_t(ceil_div(a.kv_rows, chunk));
  GroupEval ev;
  ev.fits = true;
  ev.plan.attention = {true, block_rows, resident, chunk, online};
  ev.plan.segments = segs;
  // Per segment, as reports show them: the score GEMM (B x chunk of Lk, K = d), softmax (one
  // tile per block, online one per chunk), the context GEMM (B x dv, K = chunk); working sets
  // are the buffers each touches.
  Tiling& s = ev.plan.segments[0].tiling;
  s.rows = block_rows;
  s.cols = chunk;
  s.in_channels = a.d;
  s.tile_count = blocks * chunks;
  s.working_set_bytes = buf.q + buf.kv + buf.scores;
  Tiling& p = ev.plan.segments[1].tiling;
  p.tiles = std::int64_t(online ? blocks * chunks : blocks);
  p.tile_count = std::uint64_t(p.tiles);
  p.working_set_bytes = buf.scores + buf.probs + buf.stats;
  Tiling& o = ev.plan.segments[2].tiling;
  o.rows = block_rows;
  o.cols = a.dv;
  o.in_channels = chunk;
  o.tile_count = blocks * chunks;
  o.working_set_bytes = buf.probs + buf.kv + buf.out;
  for (std::size_t i = 0; i < 3; ++i) {
    ev.plan.segments[i].tiling.dram_bytes = dram[i];
    ev.plan.dram_bytes += dram[i];
  }
  ev.plan.sram_bytes = buf.total();
  ev.estimate = estimate(g, hw, segs, block_rows, chunk, online, ev.plan.dram_bytes);
  return ev;
}

/// The largest block (or the requested one) that fits SRAM with some chunk, and the largest such
/// chunk: fewer blocks mean fewer K/V re-reads and per-block overheads.
std::optional<std::pair<std::int64_t, std::int64_t>> largest_fit(const Graph& g, const HardwareConfig& hw,
                                                                 const std::vector<Segment>& segs,
                                                                 std::int64_t block_rows,
                                                                 const std::vector<std::int64_t>& chunks) {
  const std::int64_t top = block_rows > 0 ? block_rows : attention_geometry(g, segs).rows;
  const std::int64_t bottom = block_rows > 0 ? block_rows : 1;
  for (std::int64_t B = top; B >= bottom; --B)
    for (std::int64_t c : chunks)
      if (attention_buffers(g, hw, segs, B, c).total() <= hw.sram.capacity_bytes) return std::make_pair(B, c);
  return std::nullopt;
}

/// Online: the largest block (or the requested one) that fits SRAM with some chunk, and the
/// largest such chunk, as largest_fit chooses; a chunk's largest block is bisected (buffers grow
/// with B), so rows of thousands of queries cost a few dozen tries per chunk.
std::optional<std::pair<std::int64_t, std::int64_t>> largest_online_fit(const Graph& g, const HardwareConfig& hw,
                                                                        const std::vector<Segment>& segs,
                                                                        std::int64_t block_rows,
                                                                        const std::vector<std::int64_t>& chunks) {
  auto fits = [&](std::int64_t B, std::int64_t c) {
    return attention_buffers(g, hw, segs, B, c, true).total() <= hw.sram.capacity_bytes;
  };
  std::optional<std::pair<std::int64_t, std::int64_t>> best;
  for (std::int64_t c : chunks) {  // widest first: a tie in B keeps the wider chunk
    std::int64_t B = block_rows;
    if (B == 0 && fits(1, c)) {
      std::int64_t lo = 1, hi = attention_geometry(g, segs).rows;  // fits(lo); the answer is in [lo, hi]
      while (lo < hi) {
        const std::int64_t mid = lo + (hi - lo + 1) / 2;
        if (fits(mid, c))
          lo = mid;
        else
          hi = mid - 1;
      }
      B = lo;
    }
    if (B > 0 && fits(B, c) && (!best || B > best->first)) best = std::make_pair(B, c);
  }
  return best;
}

}  // namespace

std::string attention_obstacle(const Graph& g, const std::vector<Segment>& segs) {
  if (segs.size() != 3)
    return std::to_string(segs.size()) + " segments (expected 3: score matmul, softmax, context matmul)";
  const Op& s = g.op(segs[0].ops[0]);
  const Op& sm = g.op(segs[1].ops[0]);
  const Op& o = g.op(segs[2].ops[0]);
  for (const auto& seg : segs)
    if (!seg.prologue.empty()) return "'" + g.op(seg.ops[0]).name + "' has an input prologue";
  if (s.kind != OpKind::MatMul) return "'" + s.name + "' is not a matmul";
  if (sm.kind != OpKind::Softmax) return "'" + sm.name + "' is not a softmax";
  if (o.kind != OpKind::MatMul) return "'" + o.name + "' is not a matmul";
  for (const Op* m : {&s, &o})
    if (m->inputs.size() != 2) return "'" + m->name + "' has a bias";
  const int scores = g.op(segs[0].ops.back()).outputs[0], probs = g.op(segs[1].ops.back()).outputs[0];
  if (sm.inputs[0] != scores) return "'" + sm.name + "' does not read the scores of '" + s.name + "'";
  if (o.inputs[0] != probs)
    return "'" + o.name + "' does not take the probabilities of '" + sm.name + "' as its first operand";
  for (int t : {scores, probs})
    if (read_outside(g, t)) return "'" + g.tensor(t).name + "' is read outside the group";
  const auto& ss = g.tensor(s.outputs[0]).shape;
  if (sm.attrs.axis != -1 && sm.attrs.axis != std::int64_t(ss.size()) - 1)
    return "'" + sm.name + "' normalises axis " + std::to_string(sm.attrs.axis) + ", not the last (a score row)";
  if (o.attrs.transpose_b) return "'" + o.name + "' transposes V";
  const std::int64_t heads = leading(ss);
  for (int t : {s.inputs[0], s.inputs[1], o.inputs[1]}) {
    const auto& shape = g.tensor(t).shape;
    if (g.tensor(t).is_constant || shape.size() < 3 || leading(shape) != heads)
      return "'" + g.tensor(t).name + "' " + workloads::format_shape(shape) + " is not one activation per head (" +
             std::to_string(heads) + " heads)";
  }
  for (const auto& seg : segs)
    for (std::size_t i = 1; i < seg.ops.size(); ++i)
      for (int t : g.op(seg.ops[i]).inputs)
        if (t != g.op(seg.ops[i - 1]).outputs[0] &&
            is_tiled_input(g, t, g.tensor(g.op(seg.ops[i]).outputs[0]).elements()))
          return "'" + g.op(seg.ops[i]).name + "' reads a full-size second operand";
  return "";
}

AttentionGeometry attention_geometry(const Graph& g, const std::vector<Segment>& segs) {
  const Op& s = g.op(segs[0].ops[0]);
  const Op& o = g.op(segs[2].ops[0]);
  const auto& ss = g.tensor(s.outputs[0]).shape;
  AttentionGeometry a;
  a.heads = leading(ss);
  a.rows = ss[ss.size() - 2];
  a.kv_rows = ss.back();
  a.d = g.tensor(s.inputs[0]).shape.back();
  a.dv = g.tensor(o.outputs[0]).shape.back();
  a.k_transposed = s.attrs.transpose_b;
  a.q = s.inputs[0];
  a.k = s.inputs[1];
  a.v = o.inputs[1];
  return a;
}

std::string AttentionBuffers::largest() const {
  const std::pair<const char*, std::uint64_t> all[] = {{"query blocks", q},
                                                       {"K/V buffers", kv},
                                                       {"score blocks", scores},
                                                       {"probability blocks", probs},
                                                       {"context blocks", out},
                                                       {"row statistics", stats},
                                                       {"epilogue constants", constants}};
  const auto* best = std::max_element(std::begin(all), std::end(all),
                                      [](const auto& x, const auto& y) { return x.second < y.second; });
  return std::string(best->first) + " (" + std::to_string(best->second) + " B)";
}

AttentionBuffers attention_buffers(const Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs,
                                   std::int64_t block_rows, std::int64_t kv_chunk, bool online) {
  const AttentionGeometry a = attention_geometry(g, segs);
  const std::uint64_t eb = dtype_bytes(hw.mac_array.dtype), acc = hw.mac_array.accumulator_bytes;
  const std::uint64_t B = std::uint64_t(block_rows);
  const std::uint64_t score_cols = std::uint64_t(online ? kv_chunk : a.kv_rows);
  AttentionBuffers b;
  auto width = [&](int t) { return std::uint64_t(workloads::element_bytes(g, t, std::uint32_t(eb))); };
  b.q = 2 * B * std::uint64_t(a.d) * width(a.q);
  b.kv = 2 * std::uint64_t(kv_chunk * a.d) * width(a.k) +
         (shares_kv(a) ? 0 : 2 * std::uint64_t(kv_chunk * a.dv) * width(a.v));  // shared rows: one buffer
  b.scores = 2 * B * score_cols * acc;
  b.probs = 2 * B * score_cols * width(segment_output(g, segs[1]));
  b.out = 2 * B * std::uint64_t(a.dv) * acc;
  b.stats = online ? 2 * B * 2 * acc : 0;
  for (const auto& s : segs) b.constants += epilogue_constants(g, s, std::uint32_t(eb));
  return b;
}

GroupEval evaluate_attention(const Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs,
                             const AttentionChoice& choice) {
  GroupEval none;
  none.why = attention_obstacle(g, segs);
  if (!none.why.empty()) {
    none.why = "not an attention pattern: " + none.why;
    return none;
  }
  // The score block lives in SRAM between the two matmuls and the softmax: an intermediate kept
  // on chip, which separate operand buffers cannot hold.
  if (!(none.why = resident_fusion_obstacle(hw)).empty()) return none;
  const AttentionGeometry a = attention_geometry(g, segs);
  const std::uint64_t cap = hw.sram.capacity_bytes;
  const std::int64_t block_rows = choice.block_rows;
  const std::vector<std::int64_t> streamed = stream_chunks(hw, a.kv_rows);
  std::optional<GroupEval> best;
  auto consider = [&](std::optional<GroupEval> ev) {
    if (ev && (!best || ev->estimate < best->estimate)) best = std::move(ev);
  };
  if (choice.online != true)
    for (bool resident : {true, false}) {
      if (choice.kv_resident && *choice.kv_resident != resident) continue;
      const std::vector<std::int64_t> chunks = resident ? std::vector<std::int64_t>{a.kv_rows} : streamed;
      if (auto fit = largest_fit(g, hw, segs, block_rows, chunks))
        consider(make_eval(g, hw, segs, fit->first, fit->second, false));
    }
  // Online softmax adds vector work and waits each chunk's softmax on the previous context GEMM:
  // it is taken when exact attention does not fit or re-reads more K/V (a long row leaves room
  // for few query rows per block), as runtimes switch to FlashAttention for long sequences.
  if (choice.online != false && choice.kv_resident != true)
    if (auto fit = largest_online_fit(g, hw, segs, block_rows, streamed))
      if (GroupEval online = make_eval(g, hw, segs, fit->first, fit->second, true);
          !best || online.plan.dram_bytes < best->plan.dram_bytes)
        best = std::move(online);
  if (best) return *best;
  if (choice.kv_resident == false && streamed.empty()) {
    none.why = "K/V cannot be streamed: " + std::to_string(a.kv_rows) + " key rows are within one array width";
    return none;
  }
  // The smallest footprint the allowed modes have: online with the narrowest chunk, else
  // streamed, else resident.
  const bool online = choice.online != false && choice.kv_resident != true && !streamed.empty();
  const std::int64_t chunk = choice.kv_resident == true || streamed.empty() ? a.kv_rows : streamed.back();
  const std::int64_t B = block_rows > 0 ? block_rows : 1;
  const AttentionBuffers buf = attention_buffers(g, hw, segs, B, chunk, online);
  none.over_bytes = buf.total() > cap ? buf.total() - cap : 0;
  none.why = "capacity: attention block of " + std::to_string(B) + " query rows needs " + std::to_string(buf.total()) +
             " B of " + std::to_string(cap) + " B SRAM (over by " + std::to_string(none.over_bytes) +
             " B): largest buffer is the " + buf.largest() +
             (chunk < a.kv_rows ? ", with K/V streamed in chunks of " + std::to_string(chunk) + " rows" +
                                      (online ? " and online softmax" : "")
                                : ", with K/V resident");
  return none;
}

double attention_estimate(const Graph& g, const HardwareConfig& hw, const GroupPlan& gp) {
  return estimate(g, hw, gp.segments, gp.attention.block_rows, gp.attention.kv_rows, gp.attention.online,
                  gp.dram_bytes);
}

std::optional<GroupEval> greedy_attention_at(const Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs,
                                             std::size_t i) {
  if (i + 3 > segs.size()) return std::nullopt;
  const std::vector<Segment> three(segs.begin() + long(i), segs.begin() + long(i) + 3);
  if (!attention_obstacle(g, three).empty()) return std::nullopt;
  GroupEval ev = evaluate_attention(g, hw, three);
  if (!ev.fits) return std::nullopt;
  std::uint64_t apart = 0;
  for (const auto& s : three) {
    const GroupEval alone = evaluate_group(g, hw, {s});
    if (!alone.fits) return ev;  // apart, the segment would have to be split: attention is better
    apart += alone.plan.dram_bytes;
  }
  if (ev.plan.dram_bytes > apart) return std::nullopt;
  return ev;
}

}  // namespace npusim::sched
