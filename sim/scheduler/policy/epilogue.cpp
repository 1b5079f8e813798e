// Fusion policy `epilogue`: each GEMM/conv head takes the elementwise ops that run on its output
// tile (its tile region) and the ones that make its first operand (its prologue); every segment
// is a group of its own.
#include "sim/scheduler/fusion.h"

namespace npusim::sched {

Plan plan_epilogue(const PlanInput& in) {
  return plan_segments_apart(in, FusionPolicy::Epilogue, make_segments(in.g, in.g.topological_order(), true, true));
}

}  // namespace npusim::sched
