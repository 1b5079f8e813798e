#pragma once
// Grouped-query attention as exporters write it (transformers' repeat_kv): the KV cache
// [B, kv_heads, T, hd] repeated along the heads axis (Expand of an unsqueezed size-1 axis, Tile
// or Concat of it, then a Reshape merging it into the heads) and read by the attention MatMuls.
// A runtime reads each KV head once and shares it among its group's query heads; this pass
// rewrites the MatMuls to that grouped form, as the LLM graph builder writes them
// (workloads/llm/llm_graph.cpp): no copy of the cache, the same MACs.
#include <string>

#include "workloads/graph.h"

namespace npusim::workloads {

/// What share_repeated_kv rewrote, for the log and the tests.
struct RepeatKvCounts {
  int repeats = 0;  // Expand / Tile / Concat copies of a tensor removed
  int matmuls = 0;  // MatMuls now reading the source once per KV head
};

/// Returns `g` (finalized) with every provable repeat of a tensor along a heads axis whose
/// readers are all MatMuls (directly, or through a Transpose of the last two axes) replaced by
/// grouped MatMuls: A [.., kv*g, M, K] viewed as [.., kv, g*M, K] times the source
/// [.., kv, K, N] (transpose_b for the Transpose form), the result viewed back to
/// [.., kv*g, M, N]. Anything else is left as it is (a copy). docs/onnx.md, "Grouped-query
/// attention", lists the recognised forms. `source` is used by finalize's messages.
Graph share_repeated_kv(const Graph& g, const std::string& source, RepeatKvCounts* counts = nullptr);

}  // namespace npusim::workloads
