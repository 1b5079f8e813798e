#include "sim/npu/npu.h"

namespace npusim {

Npu::Npu(sc_core::sc_module_name name, const HardwareConfig& cfg)
    : sc_core::sc_module(name),
      config(cfg),
      sram("sram", cfg.sram, cfg.core_clock),
      mac_array("mac_array", cfg.mac_array, cfg.core_clock, sram),
      vector_unit("vector_unit", cfg.vector_unit, cfg.core_clock, sram),
      dma("dma", cfg.dma),
      dram("dram", cfg.dram) {
  dma.dram_socket.bind(dram.socket);
  dma.sram_socket.bind(sram.socket);
}

}  // namespace npusim
