#pragma once
// The NPU top: every hardware model is a named member and every binding is in the
// constructor, so this file alone shows the whole machine.
//
//   Sequencer lanes: MacArray, VectorUnit -> Sram (operands)
//                    Dma channels -> Sram (TLM) and DramController (TLM)
#include <systemc>

#include "models/dma/dma.h"
#include "models/dram/dram_controller.h"
#include "models/mac_array/mac_array.h"
#include "models/sram/operand_buffers.h"
#include "models/sram/sram.h"
#include "models/vector_unit/vector_unit.h"
#include "sim/core/hardware_config.h"

namespace npusim {

class Npu : public sc_core::sc_module {
 public:
  Npu(sc_core::sc_module_name name, const HardwareConfig& config);

  const HardwareConfig config;
  models::Sram sram;
  models::MacArray mac_array;
  models::VectorUnit vector_unit;
  models::Dma dma;
  models::DramController dram;
  /// Where a group's operand tiles are allocated: the scratchpad's capacity (shared) or the
  /// three buffers of npu.sram.operand_buffers: separate.
  models::OperandBuffers buffers;
};

}  // namespace npusim
