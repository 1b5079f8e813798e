// Fusion policy `none`: every op a group of its own, reading its inputs from DRAM and writing its
// output to DRAM (the baseline the other policies are measured against).
#include "sim/scheduler/fusion.h"

namespace npusim::sched {

Plan plan_none(const PlanInput& in) {
  return plan_segments_apart(in, FusionPolicy::None, make_segments(in.g, in.g.topological_order(), false, false));
}

}  // namespace npusim::sched
