#pragma once
// The NPU top: every hardware model is a named member and every binding is in the
// constructor, so this file alone shows the whole machine.
//
//   per core:  Sequencer lanes: MacArray, VectorUnit -> Sram (operands)
//                               Dma channels -> Sram (TLM) and the Noc (TLM)
//   shared:    Noc -> DramController (TLM): every core's DRAM traffic in one timing engine
//              Noc -> L2 (TLM): transfers to the L2 window (npu.l2), when there is an L2
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "models/dma/dma.h"
#include "models/dram/dram_controller.h"
#include "models/mac_array/mac_array.h"
#include "models/l2/l2.h"
#include "models/noc/noc.h"
#include "models/sram/operand_buffers.h"
#include "models/sram/sram.h"
#include "models/vector_unit/vector_unit.h"
#include "sim/core/hardware_config.h"

namespace npusim {

/// One core's units (docs/multicore.md): built inside the Npu, so their SystemC names are
/// npu.<prefix>sram, ... (no prefix on a one-core NPU, "coreK_" otherwise).
struct Core {
  Core(const std::string& prefix, const HardwareConfig& config);

  models::Sram sram;
  models::MacArray mac_array;
  models::VectorUnit vector_unit;
  models::Dma dma;
  /// Where a group's operand tiles are allocated: the scratchpad's capacity (shared) or the
  /// three buffers of npu.sram.operand_buffers: separate.
  models::OperandBuffers buffers;
};

class Npu : public sc_core::sc_module {
 public:
  Npu(sc_core::sc_module_name name, const HardwareConfig& config);

  Core& core(std::size_t i) { return *cores_.at(i); }
  std::size_t core_count() const { return cores_.size(); }

  const HardwareConfig config;

 private:
  std::vector<std::unique_ptr<Core>> cores_;

 public:
  models::Noc noc;
  models::DramController dram;
  models::L2 l2;
};

}  // namespace npusim
