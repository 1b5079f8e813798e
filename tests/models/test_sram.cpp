// SRAM scratchpad: capacity accounting, bandwidth, bank conflicts and the TLM target.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "models/sram/sram.h"
#include "sim/core/errors.h"

namespace npusim::models {
namespace {

constexpr Frequency kClock{1e9};

SramConfig config_16x16(std::uint32_t ports = 1) {
  SramConfig c;
  c.capacity_bytes = 1024;
  c.banks = 16;
  c.bank_width_bytes = 16;
  c.ports_per_bank = ports;
  return c;
}

TEST(Sram, CapacityAccounting) {
  Sram sram("sram", config_16x16(), kClock);
  EXPECT_EQ(sram.capacity(), 1024u);
  EXPECT_TRUE(sram.try_allocate(600));
  EXPECT_FALSE(sram.try_allocate(500));  // 600 + 500 = 1100 > 1024: refused, nothing changes
  EXPECT_EQ(sram.used(), 600u);
  EXPECT_TRUE(sram.try_allocate(424));  // 600 + 424 = 1024: exact fit
  EXPECT_EQ(sram.used(), 1024u);
  sram.release(1000);
  EXPECT_EQ(sram.used(), 24u);
  EXPECT_EQ(sram.peak_used(), 1024u);
  EXPECT_THROW(sram.release(25), SimulationError);  // only 24 allocated
  EXPECT_EQ(sram.used(), 24u);
}

TEST(Sram, AccessCyclesSpreadOverBanksAndPorts) {
  Sram one_port("sram1", config_16x16(1), kClock);
  // 16 banks * 16 B * 1 port = 256 B/cycle: 1024 B -> 4 cycles; 1025 B -> ceil(4.004) = 5
  EXPECT_EQ(one_port.access_cycles(1000, 24), 4u);
  EXPECT_EQ(one_port.access_cycles(1000, 25), 5u);
  EXPECT_EQ(one_port.access_cycles(0, 0), 0u);
  Sram two_ports("sram2", config_16x16(2), kClock);
  // 512 B/cycle: reads and writes share the ports: ceil(1025 / 512) = 3
  EXPECT_EQ(two_ports.access_cycles(1000, 25), 3u);
}

TEST(Sram, StridedAccessesToOneBankSerialise) {
  Sram one_port("sram1", config_16x16(1), kClock);
  // stride 256 B = 16 banks * 16 B: all 32 accesses hit bank 0 -> 32 cycles
  EXPECT_EQ(one_port.strided_access_cycles(0, 256, 32, 16), 32u);
  // stride 16 B: consecutive banks, 32 accesses -> 2 per bank -> 2 cycles
  EXPECT_EQ(one_port.strided_access_cycles(0, 16, 32, 16), 2u);
  // stride 32 B: banks 0,2,..,14 (8 banks), 32 accesses -> 4 per bank -> 4 cycles
  EXPECT_EQ(one_port.strided_access_cycles(0, 32, 32, 16), 4u);
  // 16 B accesses starting mid-word (start 8) touch two banks each: 16 accesses -> 2 per bank
  EXPECT_EQ(one_port.strided_access_cycles(8, 16, 16, 16), 2u);
  // one 512 B access from 8: words 0..32 (33 words) -> bank 0 serves words 0, 16, 32 -> 3
  EXPECT_EQ(one_port.strided_access_cycles(8, 0, 1, 512), 3u);
  // large count, no per-access loop: stride 48 B = 3 words visits all 16 banks once per 16
  // accesses; 1'000'001 = 62'500 * 16 + 1 -> bank 0 serves 62'501 -> 62'501 cycles
  EXPECT_EQ(one_port.strided_access_cycles(0, 48, 1'000'001, 16), 62'501u);
  Sram two_ports("sram2", config_16x16(2), kClock);
  // two ports per bank halve the conflict: 32 accesses to bank 0 -> 16 cycles
  EXPECT_EQ(two_ports.strided_access_cycles(0, 256, 32, 16), 16u);
}

TEST(Sram, StridedAccessMatchesPerAccessCount) {
  // Cross-check the arithmetic against a plain per-word count on small random patterns.
  SramConfig c = config_16x16(1);
  c.banks = 8;
  c.bank_width_bytes = 4;
  c.ports_per_bank = 2;
  Sram sram("sram", c, kClock);
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 500; ++trial) {
    const std::uint64_t start = rng() % 1000, stride = rng() % 200, count = rng() % 100;
    const auto bytes = std::uint32_t(1 + rng() % 70);
    std::vector<std::uint64_t> hits(c.banks, 0);
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint64_t addr = start + i * stride;
      for (std::uint64_t w = addr / 4; w <= (addr + bytes - 1) / 4; ++w) ++hits[w % c.banks];
    }
    std::uint64_t busiest = 0;
    for (std::uint64_t h : hits) busiest = std::max(busiest, h);
    ASSERT_EQ(sram.strided_access_cycles(start, stride, count, bytes), (busiest + 1) / 2)
        << "start " << start << " stride " << stride << " count " << count << " bytes " << bytes;
  }
}

TEST(Sram, BadConfigIsRejected) {
  SramConfig c = config_16x16();
  c.banks = 0;
  EXPECT_THROW(Sram("sram", c, kClock), InputError);
}

/// Sends TLM transactions to the SRAM from a thread and records what came back.
struct Initiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Initiator> socket{"socket"};
  std::vector<std::pair<tlm::tlm_response_status, sc_core::sc_time>> replies;

  explicit Initiator(sc_core::sc_module_name n) : sc_module(n) {}

  void send(tlm::tlm_command command, std::uint64_t address, unsigned length) {
    tlm::tlm_generic_payload p;
    p.set_command(command);
    p.set_address(address);
    p.set_data_ptr(nullptr);  // the SRAM models timing only
    p.set_data_length(length);
    p.set_streaming_width(length);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(p, delay);
    replies.emplace_back(p.get_response_status(), delay);
  }
};

TEST(Sram, TransportCountsBytesAndAnnotatesDelay) {
  Sram sram("sram", config_16x16(), kClock);
  Initiator cpu("cpu");
  cpu.socket.bind(sram.socket);
  sc_core::sc_spawn([&] {
    cpu.send(tlm::TLM_READ_COMMAND, 0, 1024);  // 1024 / 256 = 4 cycles = 4 ns
    // ceil(300 / 256) = 2 cycles, but the banks are still busy with the read (both were sent
    // at t = 0 with zero annotated delay), so it is served after it: 4 + 2 = 6 ns.
    cpu.send(tlm::TLM_WRITE_COMMAND, 100, 300);
    cpu.send(tlm::TLM_READ_COMMAND, 1000, 100);  // 1000 + 100 > 1024: outside the scratchpad
  });
  sc_core::sc_start();
  ASSERT_EQ(cpu.replies.size(), 3u);
  EXPECT_EQ(cpu.replies[0].first, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(cpu.replies[0].second, sc_core::sc_time(4, sc_core::SC_NS));
  EXPECT_EQ(cpu.replies[1].first, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(cpu.replies[1].second, sc_core::sc_time(6, sc_core::SC_NS));
  EXPECT_EQ(cpu.replies[2].first, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(sram.read_bytes(), 1024u);
  EXPECT_EQ(sram.write_bytes(), 300u);
}

TEST(Sram, ComputeUnitsAndDmaShareTheBanks) {
  // 16 banks x 16 B = 256 B per 1 ns cycle. A compute unit's 2560 B (10 cycles) at t = 0,
  // over its own 10 cycles, holds the banks until 10 ns; a DMA write of 512 B (2 cycles)
  // arriving then is served after it, 12 ns; a compute access at t = 20 ns finds the banks
  // idle: 4 cycles.
  Sram sram("sram", config_16x16(), kClock);
  Initiator dma("dma");
  dma.socket.bind(sram.socket);
  std::uint64_t first = 0, later = 0;
  sc_core::sc_spawn([&] {
    first = sram.record_access(2048, 512, 10);
    dma.send(tlm::TLM_WRITE_COMMAND, 0, 512);
    sc_core::wait(20, sc_core::SC_NS);
    later = sram.record_access(1024, 0, 0);
  });
  sc_core::sc_start();
  EXPECT_EQ(first, 10u);
  ASSERT_EQ(dma.replies.size(), 1u);
  EXPECT_EQ(dma.replies[0].second, sc_core::sc_time(12, sc_core::SC_NS));
  EXPECT_EQ(later, 4u);
}

TEST(Sram, ATileSpreadOverItsComputeTimeLeavesTheRestToOthers) {
  // 256 B per 1 ns cycle. A MAC tile of 2560 B (10 bank cycles) computing for 20 cycles reads
  // at half the banks' rate: alone it is served after 20 ns. A DMA write of 512 B (2 bank
  // cycles) sent at t = 0 gets the other half: 2 / 0.5 = 4 ns. A DMA read of 2560 B (10 bank
  // cycles) sent next finds nothing free until 4 ns, half the banks from 4 to 20 ns (8 cycles'
  // worth), then all of them for the last 2: served after 22 ns. Together the three moved
  // 22 bank cycles in 22 ns: never more than the banks' bandwidth.
  SramConfig c = config_16x16();
  c.capacity_bytes = 64 * 1024;
  Sram sram("sram", c, kClock);
  Initiator dma("dma");
  dma.socket.bind(sram.socket);
  std::uint64_t tile = 0;
  sc_core::sc_spawn([&] {
    tile = sram.record_access(2048, 512, 20);
    dma.send(tlm::TLM_WRITE_COMMAND, 0, 512);
    dma.send(tlm::TLM_READ_COMMAND, 0, 2560);
  });
  sc_core::sc_start();
  EXPECT_EQ(tile, 20u);
  ASSERT_EQ(dma.replies.size(), 2u);
  EXPECT_EQ(dma.replies[0].second, sc_core::sc_time(4, sc_core::SC_NS));
  EXPECT_EQ(dma.replies[1].second, sc_core::sc_time(22, sc_core::SC_NS));
}

}  // namespace
}  // namespace npusim::models
