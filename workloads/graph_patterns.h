#pragma once
// Import-time pattern recognition (a Graph pass): activations that exporters write out in
// elementwise pieces become the single IR op the user thinks of, when the pieces' intermediates
// are read only inside the pattern. Everything else stays as imported; the scheduler's tile
// regions fuse it (docs/scheduling.md).
#include <string>

#include "workloads/graph.h"

namespace npusim::workloads {

/// What recognize_patterns replaced, for the log and the tests.
struct PatternCounts {
  int gelu = 0;       // erf form 0.5*x*(1+erf(x/sqrt 2)) and tanh form
  int hardswish = 0;  // x*HardSigmoid(x) and x*Relu6(x+3)/6
  int silu = 0;       // x*Sigmoid(x) and Swish x*Sigmoid(beta*x)
  int mish = 0;       // x*Tanh(Softplus(x)), Softplus also as Log(1+Exp(x))
};

/// Returns `g` (finalized) with every recognised pattern replaced by one op (named after the
/// exporter's module, "/act" for "/act/Div" ... "/act/Mul_1", else after the pattern's last op),
/// reading the pattern's input and writing its output; constants only the
/// pattern read are dropped. A pattern is a closed elementwise region over one input x (its
/// other operands one-element constants, every intermediate read only inside it) whose op kinds
/// match a known form. `source` is used by finalize's messages.
Graph recognize_patterns(const Graph& g, const std::string& source, PatternCounts* counts = nullptr);

}  // namespace npusim::workloads
