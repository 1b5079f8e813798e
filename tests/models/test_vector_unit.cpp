// Vector unit: the cost-table formula and the SystemC module's timing and SRAM stalls.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>

#include <gtest/gtest.h>

#include "models/sram/sram.h"
#include "models/vector_unit/vector_unit.h"
#include "sim/core/errors.h"

namespace npusim::models {
namespace {

VectorUnitConfig lanes_64() {
  VectorUnitConfig c;
  c.lanes = 64;
  c.cost = {{"relu", 1.0}, {"softmax", 4.0}};
  c.default_cost = 2.0;
  return c;
}

SramConfig sram_256_per_cycle() {
  SramConfig c;
  c.banks = 16;
  c.bank_width_bytes = 16;
  c.ports_per_bank = 1;
  return c;
}

constexpr Frequency kClock{800e6};  // 1.25 ns

/// The SRAM's TLM socket must be bound before simulation (in the NPU the DMA binds it); these
/// tests drive the compute unit directly, so an idle initiator fills the binding.
struct IdleInitiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<IdleInitiator> socket{"socket"};
  explicit IdleInitiator(sc_core::sc_module_name n, Sram& sram) : sc_module(n) { socket.bind(sram.socket); }
};

TEST(VectorComputeCycles, CostTableOverLanes) {
  const VectorUnitConfig c = lanes_64();
  EXPECT_EQ(vector_compute_cycles(c, "relu", 1000), 16u);     // 1000 * 1 / 64 = 15.6 -> 16
  EXPECT_EQ(vector_compute_cycles(c, "softmax", 1000), 63u);  // 1000 * 4 / 64 = 62.5 -> 63
  EXPECT_EQ(vector_compute_cycles(c, "gelu", 1000), 32u);     // default 2: 2000 / 64 = 31.25 -> 32
  EXPECT_EQ(vector_compute_cycles(c, "relu", 6400), 100u);    // exactly 100
  EXPECT_EQ(vector_compute_cycles(c, "relu", 0), 0u);
}

TEST(VectorComputeCycles, FractionalCostRoundingErrorIsNotACycle) {
  VectorUnitConfig c;
  c.lanes = 1;
  c.cost = {{"add", 0.1}};
  // 30 * 0.1 is 3.0000000000000004 in binary floating point; the answer is 3 cycles, not 4
  EXPECT_EQ(vector_compute_cycles(c, "add", 30), 3u);
  EXPECT_EQ(vector_compute_cycles(c, "add", 31), 4u);  // 3.1 -> 4
}

TEST(VectorComputeCycles, BadConfigThrows) {
  VectorUnitConfig c = lanes_64();
  c.lanes = 0;
  EXPECT_THROW(vector_compute_cycles(c, "relu", 10), InputError);
  c = lanes_64();
  c.cost["exp"] = -1;
  EXPECT_THROW(vector_compute_cycles(c, "exp", 10), InputError);
}

TEST(VectorUnit, RunAdvancesTimeByCyclesTimesPeriod) {
  Sram sram("sram", sram_256_per_cycle(), kClock);
  IdleInitiator dma("dma", sram);
  VectorUnit vec("vec", lanes_64(), kClock, sram);
  VectorResult result;
  sc_core::sc_spawn([&] { result = vec.run({"relu", 6400, 6400, 6400, 6400}); });
  sc_core::sc_start();
  // compute 6400 / 64 = 100 cycles; SRAM (6400 + 6400) / 256 = 50 cycles: no stall
  // -> 100 * 1.25 ns = 125 ns
  EXPECT_EQ(result.cycles, 100u);
  EXPECT_EQ(result.stall_cycles, 0u);
  EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::sc_time(125, sc_core::SC_NS));
  EXPECT_EQ(vec.ops(), 6400u);
  EXPECT_EQ(sram.read_bytes(), 6400u);
  EXPECT_EQ(sram.write_bytes(), 6400u);
}

TEST(VectorUnit, StarvedTileStallsForTheSramExcess) {
  Sram sram("sram", sram_256_per_cycle(), kClock);
  IdleInitiator dma("dma", sram);
  VectorUnit vec("vec", lanes_64(), kClock, sram);
  VectorResult result;
  sc_core::sc_spawn([&] { result = vec.run({"relu", 640, 640, 2560, 2560}); });
  sc_core::sc_start();
  // compute 640 / 64 = 10; SRAM 5120 / 256 = 20 -> 20 cycles, stall 10; 20 * 1.25 = 25 ns
  EXPECT_EQ(result.compute_cycles, 10u);
  EXPECT_EQ(result.cycles, 20u);
  EXPECT_EQ(result.stall_cycles, 10u);
  EXPECT_EQ(vec.stall_cycles(), 10u);
  EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::sc_time(25, sc_core::SC_NS));
}

TEST(VectorUnit, NegativeCostIsRejectedAtConstruction) {
  Sram sram("sram", sram_256_per_cycle(), kClock);
  VectorUnitConfig bad = lanes_64();
  bad.cost["exp"] = -0.5;
  EXPECT_THROW(VectorUnit("vec", bad, kClock, sram), InputError);
}

}  // namespace
}  // namespace npusim::models
