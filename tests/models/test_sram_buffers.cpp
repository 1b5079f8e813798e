// SRAM ports (read, write, read/write), mixed-batch bank conflicts, operand buffers (one shared
// scratchpad or SCALE-Sim's three) and double buffering. Expected numbers are worked out in the
// comments.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <systemc>

#include <gtest/gtest.h>

#include "models/sram/double_buffer.h"
#include "models/sram/operand_buffers.h"
#include "models/sram/sram.h"
#include "sim/core/errors.h"

namespace npusim::models {
namespace {

constexpr Frequency kClock{1e9};

SramConfig config_16x16() {
  SramConfig c;
  c.capacity_bytes = 1024;
  c.banks = 16;
  c.bank_width_bytes = 16;
  c.ports_per_bank = 1;
  return c;
}

TEST(SramPorts, PortLimitedCyclesByHand) {
  // 10 reads and 4 writes on one bank.
  // 1 read + 1 write port: reads need 10 cycles, writes 4, together 14 / 2 = 7 -> 10.
  EXPECT_EQ(port_limited_cycles(10, 4, {1, 1, 0}), 10u);
  // 2 read/write ports: 14 words / 2 per cycle = 7.
  EXPECT_EQ(port_limited_cycles(10, 4, {0, 0, 2}), 7u);
  // 1 read + 1 read/write: reads up to 2 per cycle (5), writes 1 (4), 2 in all (7) -> 7.
  EXPECT_EQ(port_limited_cycles(10, 4, {1, 0, 1}), 7u);
  // 1 read/write port: one word per cycle: 14.
  EXPECT_EQ(port_limited_cycles(10, 4, {0, 0, 1}), 14u);
  // Writes with only a read port cannot be served.
  EXPECT_THROW(port_limited_cycles(0, 1, {1, 0, 0}), InputError);
}

TEST(SramPorts, ReadsAndWritesToOneBankSerialiseOnSharedPorts) {
  // 8 reads and 8 writes of 16 B at a 256 B stride: all on bank 0 (16 banks x 16 B).
  const StridedAccess reads{0, 256, 8, 16}, writes{0, 256, 8, 16};
  Sram shared("shared", config_16x16(), kClock);  // 1 read/write port per bank
  // bank 0 serves 16 words through one port: 16 cycles.
  EXPECT_EQ(shared.conflict_cycles(reads, writes), 16u);
  // With a dedicated read port and write port a read and a write go in the same cycle: 8.
  Sram split("split", config_16x16(), kClock, BankPorts{1, 1, 0});
  EXPECT_EQ(split.conflict_cycles(reads, writes), 8u);
  // The writes moved to bank 1 (start 16): each bank has 8 words on its one port: 8 cycles.
  EXPECT_EQ(shared.conflict_cycles(reads, {16, 256, 8, 16}), 8u);
  // Bulk traffic honours the split ports too: 2048 B read + 512 B written over 16 banks x 16 B:
  // reads 2048 / 256 = 8 cycles on the read ports, writes 512 / 256 = 2 -> 8.
  EXPECT_EQ(split.access_cycles(2048, 512), 8u);
  EXPECT_EQ(shared.access_cycles(2048, 512), 10u);  // one shared port: 2560 / 256
}

TEST(SramPorts, BankWordsCountsEveryBank) {
  Sram sram("sram", config_16x16(), kClock);
  // 3 accesses of 32 B from 8: words [0,2], [2,4]... -> offsets 8, 40, 72 cover words 0-2, 2-4, 4-6
  const std::vector<std::uint64_t> w = sram.bank_words({8, 32, 3, 32});
  ASSERT_EQ(w.size(), 16u);
  EXPECT_EQ(w[0], 1u);
  EXPECT_EQ(w[2], 2u);  // shared by the first two accesses
  EXPECT_EQ(w[4], 2u);
  EXPECT_EQ(w[6], 1u);
  EXPECT_EQ(w[7], 0u);
}

TEST(OperandBuffers, SeparateBuffersHaveTheirOwnCapacity) {
  OperandBuffers b(100, 50, 10);  // SCALE-Sim's three SRAMs
  EXPECT_FALSE(b.shared());
  EXPECT_TRUE(b.try_allocate(Operand::Ifmap, 100));
  EXPECT_FALSE(b.try_allocate(Operand::Ifmap, 1));   // ifmap full
  EXPECT_TRUE(b.try_allocate(Operand::Filter, 50));  // the filter buffer is untouched by ifmap
  EXPECT_FALSE(b.try_allocate(Operand::Ofmap, 11));  // 11 > 10
  EXPECT_EQ(b.available(Operand::Ofmap), 10u);
  b.release(Operand::Ifmap, 40);
  EXPECT_EQ(b.used(Operand::Ifmap), 60u);
  EXPECT_THROW(b.release(Operand::Filter, 51), SimulationError);
  EXPECT_THROW(OperandBuffers(1, 0, 1), InputError);
}

TEST(OperandBuffers, OneScratchpadIsSharedByAllOperands) {
  Sram sram("sram", config_16x16(), kClock);  // 1024 B
  OperandBuffers b(sram);
  EXPECT_TRUE(b.shared());
  EXPECT_TRUE(b.try_allocate(Operand::Ifmap, 600));
  EXPECT_FALSE(b.try_allocate(Operand::Filter, 500));  // 600 + 500 > 1024
  EXPECT_TRUE(b.try_allocate(Operand::Filter, 424));   // exact fit
  EXPECT_EQ(b.available(Operand::Ofmap), 0u);
  EXPECT_EQ(sram.used(), 1024u);
  // An operand cannot give back another's bytes, even in a shared scratchpad.
  EXPECT_THROW(b.release(Operand::Ofmap, 1), SimulationError);
  b.release(Operand::Ifmap, 600);
  EXPECT_EQ(sram.used(), 424u);
}

TEST(DoubleBuffer, PrefetchWaitsForTheHalfStillInUse) {
  // The DMA fills a tile in 10 ns, the array uses one for 30 ns; three tiles, two halves.
  //   fill 0: 0-10 (half 0)   fill 1: 10-20 (half 1)
  //   use 0: waits 0-10 for fill 0, runs 10-40
  //   fill 2 needs half 0: waits 20-40 (20 ns), runs 40-50
  //   use 1: 40-70 (ready since 20)   use 2: 70-100 (ready since 50)
  DoubleBuffer buf;
  sc_core::sc_time fill2_start, end;
  sc_core::sc_spawn([&] {
    for (int i = 0; i < 3; ++i) {
      const int half = buf.begin_fill();
      if (i == 2) fill2_start = sc_core::sc_time_stamp();
      EXPECT_EQ(half, i % 2);
      sc_core::wait(10, sc_core::SC_NS);
      buf.end_fill(half);
    }
  });
  sc_core::sc_spawn([&] {
    for (int i = 0; i < 3; ++i) {
      const int half = buf.begin_use();
      sc_core::wait(30, sc_core::SC_NS);
      buf.end_use(half);
    }
    end = sc_core::sc_time_stamp();
  });
  sc_core::sc_start();
  EXPECT_EQ(fill2_start, sc_core::sc_time(40, sc_core::SC_NS));
  EXPECT_EQ(buf.fill_wait(), sc_core::sc_time(20, sc_core::SC_NS));
  EXPECT_EQ(buf.use_wait(), sc_core::sc_time(10, sc_core::SC_NS));
  EXPECT_EQ(end, sc_core::sc_time(100, sc_core::SC_NS));
  EXPECT_EQ(buf.tiles_filled(), 3u);
}

}  // namespace
}  // namespace npusim::models
