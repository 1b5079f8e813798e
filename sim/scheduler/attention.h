#pragma once
// Internal to the scheduler: attention-style fusion (FLAT's row granularity). Three segments
//   MatMul(Q, K^T) [+ elementwise: scale, mask]  ->  softmax [+ elementwise]  ->  MatMul(P, V)
// run one head at a time in blocks of B query rows: S = Q_blk K^T (B x Lk), softmax over whole
// rows, O_blk = P_blk V. K and V of a head stay in SRAM for all its blocks (resident) or are
// re-read per block in chunks of rows (streamed). Online (FlashAttention) streams K/V too but
// runs softmax per chunk with a running row maximum and sum, rescaling O_blk, so only B x chunk
// scores are held. The planner (evaluate_attention) and the lowering walk the same geometry, so
// both count bytes one way.
#include <optional>
#include <string>
#include <vector>

#include "sim/scheduler/fusion.h"
#include "sim/scheduler/tiling.h"

namespace npusim::sched {

/// The shapes of an attention group. Q [heads, L, d], K [heads, Lk, d] (or [heads, d, Lk]),
/// V [heads, Lk, dv], O [heads, L, dv], every head's slice contiguous.
struct AttentionGeometry {
  std::int64_t heads = 0;      // batch x heads: independent attention problems
  std::int64_t rows = 0;       // L: query rows (score rows)
  std::int64_t kv_rows = 0;    // Lk: key/value rows (score columns)
  std::int64_t d = 0;          // query/key width: K of the score GEMM
  std::int64_t dv = 0;         // value width: N of the context GEMM
  bool k_transposed = true;    // K stored [Lk, d] (the score matmul's transpose_b), else [d, Lk]
  int q = -1, k = -1, v = -1;  // input tensors as the matmuls name them
};

/// Whether key and value are one tensor (multi-head latent attention's cache rows, docs/llm.md,
/// "DeepSeek"): one buffer holds them and a resident head's rows are loaded once for both GEMMs.
inline bool shares_kv(const AttentionGeometry& a) {
  return a.k == a.v && a.k_transposed;
}

/// Why `segs` are not an attention pattern ("" when they are).
std::string attention_obstacle(const workloads::Graph& g, const std::vector<Segment>& segs);
AttentionGeometry attention_geometry(const workloads::Graph& g, const std::vector<Segment>& segs);

/// SRAM an attention group holds, by buffer (bytes).
struct AttentionBuffers {
  std::uint64_t q = 0;       // 2 x B x d query block (double-buffered)
  std::uint64_t kv = 0;      // 2 x (Lk or chunk) x (d + dv): K and V, double-buffered (next head / chunk)
  std::uint64_t scores = 0;  // 2 x B x W at accumulator width (the next block's or chunk's scores while softmax runs)
  std::uint64_t probs = 0;   // 2 x B x W probabilities (softmax output, read by the context GEMM)
  std::uint64_t out = 0;     // 2 x B x dv context accumulators
  std::uint64_t stats = 0;   // online: 2 x B x 2 running row maxima and sums at accumulator width
  std::uint64_t constants = 0;  // epilogue operands held whole (scale, mask)
  // (W: Lk exact, the chunk online.)
  std::uint64_t total() const { return q + kv + scores + probs + out + stats + constants; }
  /// "score blocks (65536 B)": the largest buffer, for capacity messages.
  std::string largest() const;
};

AttentionBuffers attention_buffers(const workloads::Graph& g, const HardwareConfig& hw,
                                   const std::vector<Segment>& segs, std::int64_t block_rows, std::int64_t kv_chunk,
                                   bool online = false);

/// Element ops per score of online softmax: max, subtract, exp and sum (FlashAttention keeps the
/// probabilities unnormalised; the divide happens once per context value at the block's end).
constexpr std::uint64_t kOnlineScoreOps = 4;

/// Extra element ops of online softmax per block of `rows` query rows over `chunks` K/V chunks:
/// from the second chunk on, each row's correction exp(m_old - m_new) and the rescale of its
/// running sum and dv context accumulators; after the last chunk, O divided by the row sums.
inline std::uint64_t online_rescale_ops(std::int64_t rows, std::int64_t chunks, std::int64_t dv) {
  return std::uint64_t(rows) * (std::uint64_t(chunks - 1) * std::uint64_t(dv + 2) + std::uint64_t(dv));
}

/// The ways an attention group may run; unset fields are npusim's to choose.
struct AttentionChoice {
  std::int64_t block_rows = 0;      // 0: the largest block that fits
  std::optional<bool> kv_resident;  // K/V resident (loaded once per head) or streamed per block
  std::optional<bool> online;       // online softmax per K/V chunk (streamed), or exact over whole rows
};

/// Evaluates `segs` fused as attention: of the modes `choice` allows (resident, streamed,
/// online), each at its largest block (online: each chunk at its largest block), the one the
/// estimate says is fastest.
GroupEval evaluate_attention(const workloads::Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs,
                             const AttentionChoice& choice = {});

/// Estimated seconds of an attention group plan (the estimate the tiler and search use).
double attention_estimate(const workloads::Graph& g, const HardwareConfig& hw, const GroupPlan& gp);

/// For the greedy policy: the attention group starting at segs[i], when segs[i..i+3) form the
/// pattern, fit, and move no more DRAM bytes than the three segments planned apart.
std::optional<GroupEval> greedy_attention_at(const workloads::Graph& g, const HardwareConfig& hw,
                                             const std::vector<Segment>& segs, std::size_t i);

}  // namespace npusim::sched
