#include "sim/npu/npu.h"

namespace npusim {
namespace {

models::OperandBuffers operand_buffers_of(const HardwareConfig& cfg, models::Sram& sram) {
  if (!cfg.sram.separate_buffers()) return models::OperandBuffers(sram);
  return models::OperandBuffers(cfg.sram.ifmap_bytes, cfg.sram.filter_bytes, cfg.sram.ofmap_bytes);
}

std::string named(const std::string& prefix, const char* unit) {
  return prefix + unit;
}

}  // namespace

Core::Core(const std::string& prefix, const HardwareConfig& cfg)
    : sram(named(prefix, "sram").c_str(), cfg.sram, cfg.core_clock,
           models::BankPorts{cfg.sram.read_ports, cfg.sram.write_ports, cfg.sram.ports_per_bank}),
      mac_array(named(prefix, "mac_array").c_str(), cfg.mac_array, cfg.core_clock, sram),
      vector_unit(named(prefix, "vector_unit").c_str(), cfg.vector_unit, cfg.core_clock, sram),
      dma(named(prefix, "dma").c_str(), cfg.dma),
      buffers(operand_buffers_of(cfg, sram)) {
  dma.sram_socket.bind(sram.socket);
}

Npu::Npu(sc_core::sc_module_name name, const HardwareConfig& cfg)
    : sc_core::sc_module(name),
      config(cfg),
      cores_([&] {
        // Built here, before the Noc, so the Npu's members are in order of the data path.
        std::vector<std::unique_ptr<Core>> cores;
        for (std::uint32_t k = 0; k < std::max(cfg.cores, 1u); ++k)
          cores.push_back(std::make_unique<Core>(cfg.cores > 1 ? "core" + std::to_string(k) + "_" : "", cfg));
        return cores;
      }()),
      noc("noc", cfg.noc, cfg.core_clock, std::max(cfg.cores, 1u)),
      dram("dram", cfg.dram),
      l2("l2", cfg.l2, cfg.core_clock) {
  for (auto& c : cores_) c->dma.dram_socket.bind(noc.cores);
  noc.dram_socket.bind(dram.socket);
  noc.l2_socket.bind(l2.socket);
}

}  // namespace npusim
