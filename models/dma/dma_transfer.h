#pragma once
// One DMA transfer between DRAM and the SRAM scratchpad, as the sequencer asks for it.
// Plain C++ so Programs and the scheduler can build transfers without SystemC.
#include <cstdint>

namespace npusim::models {

/// `runs` runs of `run_bytes` bytes in DRAM, run r starting at dram_addr + r * stride (a tile
/// row by row); contiguous in SRAM from sram_addr. to_dram = false: a load (DRAM -> SRAM);
/// true: a store (SRAM -> DRAM).
struct DmaTransfer {
  std::uint64_t dram_addr = 0, run_bytes = 0, stride = 0, runs = 1;
  bool to_dram = false;
  std::uint64_t sram_addr = 0;

  std::uint64_t bytes() const { return run_bytes * runs; }
};

}  // namespace npusim::models
