// Lowering of an attention group: per head and block of query rows, the score GEMMs, softmax and
// the context GEMMs, with Q, K and V loaded into double-buffered operands.
#include <algorithm>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/scheduler/attention.h"
#include "sim/scheduler/lowering_internal.h"
#include "sim/scheduler/tiling.h"

namespace npusim::sched::detail {

/// One GEMM tile of an attention group reading operand loads `deps`.
std::uint32_t Lowering::attention_gemm(int op, GemmWork w, std::vector<std::uint32_t> deps) {
  Command c;
  c.kind = CommandKind::Gemm;
  c.op = op;
  c.gemm = w;
  c.gemm.operand_bytes = g_.tensor(g_.op(op).inputs[0]).elem_bytes;
  c.macs = std::uint64_t(w.m * w.k * w.n * w.repeats);
  const GemmSramTraffic tr = gemm_sram_traffic(w, hw_.mac_array);
  c.sram_read_bytes = tr.read_bytes;
  c.sram_write_bytes = tr.write_bytes;
  c.deps = std::move(deps);
  return emit(std::move(c));
}

/// The K (score GEMM) or V (context GEMM) rows [c0, c0 + cols) of head h.
DramRegion Lowering::attention_kv_region(const AttentionGeometry& a, bool key, std::int64_t h, std::int64_t c0,
                                         std::int64_t cols) const {
  if (!key)
    return region(addr(a.v), std::uint64_t((h * a.kv_rows + c0) * a.dv), std::uint64_t(cols * a.dv),
                  std::uint64_t(cols * a.dv), 1, eb(a.v));
  if (a.k_transposed)
    return region(addr(a.k), std::uint64_t((h * a.kv_rows + c0) * a.d), std::uint64_t(cols * a.d),
                  std::uint64_t(cols * a.d), 1, eb(a.k));
  return region(addr(a.k), std::uint64_t(h * a.d * a.kv_rows + c0), std::uint64_t(cols), std::uint64_t(a.kv_rows),
                std::uint64_t(a.d), eb(a.k));
}

/// An attention group: per head and block of query rows, the score GEMMs (one per K chunk),
/// the score epilogue, softmax, the context GEMMs (one per V chunk, partial sums in order) and
/// the context block's store. Exact: softmax once over whole score rows. Online: softmax per
/// chunk, each after the previous chunk's context GEMM (it rescales those accumulators), and a
/// final normalisation of the block. K and V load once per head when resident, per block when
/// streamed; scores and probabilities never leave SRAM.
void Lowering::lower_attention(const GroupPlan& grp) {
  const auto& segs = grp.segments;
  const AttentionGeometry a = attention_geometry(g_, segs);
  const std::int64_t B = grp.attention.block_rows, C = grp.attention.kv_rows;
  const bool online = grp.attention.online;
  const int s_op = segs[0].ops[0], p_op = segs[1].ops[0], o_op = segs[2].ops[0];
  const std::uint64_t p_total = g_.tensor(g_.op(p_op).outputs[0]).elements();
  const std::uint64_t p_in = eb(g_.op(p_op).inputs[0]), p_out = eb(g_.op(p_op).outputs[0]);
  const std::uint64_t acc = hw_.mac_array.accumulator_bytes;
  gate_ = -1;
  Stream st_s, st_p, st_o;
  OperandBuffer q_buf, k_buf, v_buf;
  // Per score slot use (a block exact, a chunk online), for slot reuse two uses later.
  std::vector<std::uint32_t> softmaxes, contexts;
  // One chunk's score GEMM into the score slot, its epilogue; returns the epilogue's last command.
  auto scores = [&](std::int64_t h, std::int64_t rows, std::int64_t version, std::int64_t c0, std::uint32_t q_load,
                    std::uint32_t prev) {
    const std::int64_t cols = std::min(C, a.kv_rows - c0);
    std::vector<std::uint32_t> deps{q_load, ensure_loaded(k_buf, std::make_tuple(h, version, c0), s_op, a.k,
                                                          attention_kv_region(a, true, h, c0, cols))};
    if (prev)
      deps.push_back(prev);  // one score block, in order
    else if (softmaxes.size() >= 2)
      deps.push_back(softmaxes[softmaxes.size() - 2]);  // score slot: read by softmax
    const std::uint32_t gemm = attention_gemm(s_op, {rows, a.d, cols, 1}, std::move(deps));
    q_buf.users.back().push_back(gemm);
    k_buf.users.back().push_back(gemm);
    return gemm;
  };
  // One chunk's context GEMM, accumulating after `prev` (0: the block's first).
  auto context = [&](std::int64_t h, std::int64_t version, std::int64_t c0, std::int64_t rows, std::uint32_t probs,
                     std::uint32_t prev) {
    const std::int64_t cols = std::min(C, a.kv_rows - c0);
    // Key and value one tensor (MLA's cache rows): the K buffer's load serves, when it holds the chunk.
    OperandBuffer& values = shares_kv(a) ? k_buf : v_buf;
    std::vector<std::uint32_t> deps{probs, ensure_loaded(values, std::make_tuple(h, version, c0), o_op, a.v,
                                                         attention_kv_region(a, false, h, c0, cols))};
    if (prev)
      deps.push_back(prev);  // partial sums in order
    else if (st_o.finals.size() >= 2)
      deps.push_back(st_o.finals[st_o.finals.size() - 2]);  // output slot
    const std::uint32_t gemm = attention_gemm(o_op, {rows, cols, a.dv, 1}, std::move(deps));
    values.users.back().push_back(gemm);
    return gemm;
  };
  for (std::int64_t h = 0; h < a.heads; ++h)
    for (std::int64_t r0 = 0; r0 < a.rows; r0 += B) {
      const std::int64_t rows = std::min(B, a.rows - r0);
      const std::uint32_t q_load =
          ensure_loaded(q_buf, std::make_tuple(h, r0, std::int64_t(0)), s_op, a.q,
                        region(addr(a.q), std::uint64_t((h * a.rows + r0) * a.d), std::uint64_t(rows * a.d),
                               std::uint64_t(rows * a.d), 1, eb(a.q)));
      const std::int64_t version = grp.attention.kv_resident ? 0 : r0;
      std::uint32_t prev = 0;
      if (online) {
        // Plan::sample_chunks: the chunks of a long context are alike but for their K and V
        // rows. The first kWarmChunks are lowered for the pipeline to settle (the loads of the
        // next chunks and heads run ahead), then kSampledIterations - 1 whose timing the ones
        // after take (SampledIterations), then the last.
        const std::int64_t chunks = (a.kv_rows + C - 1) / C;
        const std::int64_t warm = kWarmChunks;
        const bool sample = plan_.sample_chunks && chunks > warm + kSampledIterations;
        SampledIterations sampled;
        for (std::int64_t c0 = 0; c0 < a.kv_rows; c0 += C) {
          const std::int64_t chunk = c0 / C, it = chunk - warm;
          if (sample && it >= kSampledIterations - 1 && chunk < chunks - 1) continue;
          if (sample && it >= 0 && it < kSampledIterations - 1) sampled.iterations[std::size_t(it)].first = next_id();
          const std::uint64_t elems = std::uint64_t(rows * std::min(C, a.kv_rows - c0));
          const std::uint32_t scored =
              epilogue_and_store(segs[0], st_s, scores(h, rows, version, c0, q_load, 0), elems, {});
          // The chunk's softmax updates the row maxima and sums and (after the first chunk)
          // rescales the accumulators the previous context GEMM left.
          std::vector<std::uint32_t> sm_deps{scored};
          if (contexts.size() >= 2) sm_deps.push_back(contexts[contexts.size() - 2]);  // probability slot
          if (prev) sm_deps.push_back(prev);
          const std::uint64_t rescale = c0 > 0 ? std::uint64_t(rows) * std::uint64_t(a.dv + 2) : 0;
          softmaxes.push_back(emit(vector_command(
              p_op, elems, kOnlineScoreOps * elems + rescale, elems * p_in + (rescale ? rows * a.dv * acc : 0),
              elems * p_out + (rescale ? rows * a.dv * acc : 0), std::move(sm_deps))));
          prev = context(h, version, c0, rows, epilogue_and_store(segs[1], st_p, softmaxes.back(), elems, {}), prev);
          contexts.push_back(prev);
          if (sample && it >= 0 && it < kSampledIterations - 1) sampled.iterations[std::size_t(it)].second = next_id();
        }
        if (sample) {
          for (const Segment& seg : segs) sampled.ops.insert(sampled.ops.end(), seg.ops.begin(), seg.ops.end());
          sampled.skipped = chunks - warm - kSampledIterations;
          prog_.sampled_iterations.push_back(std::move(sampled));
        }
        // O divided by the row sums: one element op per context value.
        const std::uint64_t out = std::uint64_t(rows * a.dv);
        prev = emit(vector_command(p_op, out, out, out * acc, out * acc, {prev}));
      } else {
        for (std::int64_t c0 = 0; c0 < a.kv_rows; c0 += C) prev = scores(h, rows, version, c0, q_load, prev);
        const std::uint64_t score_elems = std::uint64_t(rows * a.kv_rows);
        const std::uint32_t scored = epilogue_and_store(segs[0], st_s, prev, score_elems, {});
        std::vector<std::uint32_t> sm_deps{scored};
        if (contexts.size() >= 2) sm_deps.push_back(contexts[contexts.size() - 2]);  // probability slot
        softmaxes.push_back(emit(vector_command(p_op, score_elems, share(p_op, st_p, score_elems, p_total),
                                                score_elems * p_in, score_elems * p_out, std::move(sm_deps))));
        const std::uint32_t probs = epilogue_and_store(segs[1], st_p, softmaxes.back(), score_elems, {});
        prev = 0;
        for (std::int64_t c0 = 0; c0 < a.kv_rows; c0 += C) prev = context(h, version, c0, rows, probs, prev);
        contexts.push_back(prev);
      }
      const std::uint64_t out_elems = std::uint64_t(rows * a.dv);
      epilogue_and_store(
          segs[2], st_o, prev, out_elems,
          region(0, std::uint64_t((h * a.rows + r0) * a.dv), out_elems, out_elems, 1, eb(segment_output(g_, segs[2]))));
    }
  finish_segment(segs[0], st_s);
  finish_segment(segs[1], st_p);
  finish_segment(segs[2], st_o);
}

}  // namespace npusim::sched::detail
