#pragma once
// Inference-time rewrites of an imported graph, then the final graph: BatchNorm folded into
// the convolution before it, a constant row added after a MatMul taken as its bias, the
// decomposed LayerNorm pattern fused back into one op, and ops whose results no graph output
// needs dropped.
#include <string>
#include <unordered_map>

#include "workloads/graph.h"

namespace npusim::workloads::onnx {

/// What the rewrites did, for the log and the tests.
struct RewriteCounts {
  int batch_norms_folded = 0;
  int matmul_biases_folded = 0;
  int layer_norms_fused = 0;
  int dead_ops_dropped = 0;
  int kv_caches_appended = 0;
};

/// Rewrites `staged` (ops and tensors as imported, not finalized) and returns the finalized
/// graph, holding only the tensors its ops read or write. `scalars` gives the values of
/// one-element constants (by tensor index) that a pattern must check (a Pow's exponent 2).
/// `append_kv_caches`: each `present = Concat(past, new)` whose `past` is a graph input read by
/// nothing else and whose `present` is a graph output becomes an append: `new` is stored into
/// the cache (persistent) and `present`'s readers read the cache in place (a persistent input),
/// so a decode step writes one token's K and V instead of rewriting the cache.
Graph rewrite_and_finalize(const Graph& staged, const std::unordered_map<int, double>& scalars,
                           const std::string& source, RewriteCounts* counts = nullptr, bool append_kv_caches = true);

}  // namespace npusim::workloads::onnx
