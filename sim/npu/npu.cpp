#include "sim/npu/npu.h"

namespace npusim {
namespace {

models::OperandBuffers operand_buffers_of(const HardwareConfig& cfg, models::Sram& sram) {
  if (!cfg.sram.separate_buffers()) return models::OperandBuffers(sram);
  return models::OperandBuffers(cfg.sram.ifmap_bytes, cfg.sram.filter_bytes, cfg.sram.ofmap_bytes);
}

}  // namespace

Npu::Npu(sc_core::sc_module_name name, const HardwareConfig& cfg)
    : sc_core::sc_module(name),
      config(cfg),
      sram("sram", cfg.sram, cfg.core_clock,
           models::BankPorts{cfg.sram.read_ports, cfg.sram.write_ports, cfg.sram.ports_per_bank}),
      mac_array("mac_array", cfg.mac_array, cfg.core_clock, sram),
      vector_unit("vector_unit", cfg.vector_unit, cfg.core_clock, sram),
      dma("dma", cfg.dma),
      dram("dram", cfg.dram),
      buffers(operand_buffers_of(cfg, sram)) {
  dma.dram_socket.bind(dram.socket);
  dma.sram_socket.bind(sram.socket);
}

}  // namespace npusim
