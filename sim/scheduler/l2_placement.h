#pragma once
// Which tensors live in the shared L2 (npu.l2; docs/multicore.md, "The shared L2"). The rule:
// an intermediate tensor that DMA commands of more than one core load or store (a pipeline
// stage's hand-off, a tensor-parallel gather, a core-0 op's output that every core reads) is
// moved into the L2 window when it fits; everything else stays in DRAM. Within one copy of the
// program the shared tensors are placed first fit in the order their lifetimes start (the
// lowering's group order), a region free again after its tensor's last group, up to the L2's
// capacity; a tensor that does not fit stays in DRAM. Copies (pipeline: one per input, all in
// flight at once) each get that layout in a slice of their own, as many as the capacity holds.
#include "sim/core/hardware_config.h"
#include "sim/scheduler/parallel.h"
#include "sim/scheduler/program.h"

namespace npusim::sched {

/// Rewrites the DMA commands of the tensors placed in L2 to L2-window addresses and fills
/// `program.l2`. `one_copy` is the lowering's `transients` (of one copy, before
/// replicate_program). Without an L2 (capacity 0) it changes nothing. Throws InputError (exit
/// 2) naming npu.l2.capacity when the L2 is smaller than one tile: the largest single DMA
/// transfer to or from a shared tensor.
void place_in_l2(Program& program, const std::vector<TensorSpan>& one_copy, const ParallelPlan& pp,
                 const HardwareConfig& hw);

}  // namespace npusim::sched
