// Dma bound to a DramController and a stub SRAM target. One sc_start per TEST (each TEST runs in
// its own process). LPDDR4-3200 at 1600 MHz: one DRAM cycle = 625 ps; 4 KiB rows of 64 bursts,
// bank = address bits 12..14; a burst is 8 cycles and a read to a closed bank takes 63 cycles
// to its first data.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "models/dma/dma.h"
#include "models/dram/dram_controller.h"
#include "sim/core/errors.h"
#include "test_dram_support.h"

namespace npusim::models {
namespace {

using sc_core::SC_PS;
using sc_core::sc_time;
using sc_core::SC_US;

sc_time dram_cycles(std::uint64_t n) {
  return sc_time(double(n) * 625.0, SC_PS);
}

/// Stands in for the SRAM: answers every access after a fixed delay and counts them.
class StubSram : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<StubSram> socket{"socket"};
  StubSram(sc_core::sc_module_name name, sc_time delay) : sc_core::sc_module(name), delay_(delay) {
    socket.register_b_transport(this, &StubSram::b_transport);
  }
  unsigned reads = 0, writes = 0;
  std::uint64_t bytes = 0;

 private:
  void b_transport(tlm::tlm_generic_payload& p, sc_time& delay) {
    (p.is_read() ? reads : writes) += 1;
    bytes += p.get_data_length();
    delay += delay_;
    p.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  sc_time delay_;
};

/// DMA, DRAM controller and stub SRAM, wired.
struct Bench {
  explicit Bench(std::uint32_t channels = 2, sc_time sram_delay = sc_core::SC_ZERO_TIME)
      : dma("dma", dma_config(channels)), dram("dram", test::lpddr4_3200()), sram("sram", sram_delay) {
    dma.dram_socket.bind(dram.socket);
    dma.sram_socket.bind(sram.socket);
  }
  static DmaConfig dma_config(std::uint32_t channels) {
    DmaConfig c;
    c.channels = channels;
    c.max_outstanding_bursts = 16;
    return c;
  }
  Dma dma;
  DramController dram;
  StubSram sram;
};

DmaTransfer load(std::uint64_t addr, std::uint64_t bytes) {
  DmaTransfer t;
  t.dram_addr = addr;
  t.run_bytes = bytes;
  t.stride = bytes;
  return t;
}

TEST(Dma, LoadEndsWhenTheDramEngineSays) {
  // 8 KiB = 128 bursts in two open rows (banks 0, 1), 16 outstanding: the second bank's ACT
  // hides behind the first's data, so 63 + 128 * 8 = 1087 cycles.
  DramEngine engine(test::lpddr4_3200());
  const std::uint64_t cycles = engine.access_transfer(0, 8192, 8192, 1, false, 0, 16);
  ASSERT_EQ(cycles, 1087u);

  Bench b;
  DmaResult result, empty;
  test::ThreadRunner thread("thread", [&] {
    result = b.dma.transfer(load(0, 8192));
    empty = b.dma.transfer(load(0, 0));  // nothing to move: returns at once
  });
  sc_core::sc_start();
  EXPECT_EQ(result.bytes, 8192u);
  EXPECT_EQ(result.begin, sc_core::SC_ZERO_TIME);
  EXPECT_EQ(result.end, dram_cycles(cycles));
  EXPECT_EQ(result.sram_wait, sc_core::SC_ZERO_TIME);  // DRAM was the slower side
  EXPECT_EQ(sc_core::sc_time_stamp(), dram_cycles(cycles));
  EXPECT_EQ(empty.bytes, 0u);
  EXPECT_EQ(empty.end, empty.begin);
  EXPECT_EQ(b.dma.stats().bytes_loaded, 8192u);
  EXPECT_EQ(b.dma.stats().transfers, 2u);
  EXPECT_EQ(b.dram.stats().reads, 128u);
  EXPECT_EQ(b.sram.writes, 1u);
  EXPECT_EQ(b.sram.bytes, 8192u);
}

TEST(Dma, SlowerSramSetsTheEnd) {
  // DRAM done at 1087 cycles = 679.375 ns; the SRAM's 2 us is later.
  Bench b(2, sc_time(2, SC_US));
  DmaResult result;
  test::ThreadRunner thread("thread", [&] { result = b.dma.transfer(load(0, 8192)); });
  sc_core::sc_start();
  EXPECT_EQ(result.end, sc_time(2, SC_US));
  // The wait for SRAM is reported: the SRAM side outlasted the DRAM side by 2000 - 679.375 ns.
  EXPECT_EQ(result.sram_wait, sc_time(2, SC_US) - dram_cycles(1087));
}

TEST(Dma, TwoChannelsShareTheDramBus) {
  // Two 4 KiB loads at time 0 from banks 0 and 4: the controller serves them in call order.
  // First: 63 + 64 * 8 = 575. Second: its ACT hides, its data follows: 575 + 64 * 8 = 1087.
  Bench b(2);
  DmaResult first, second;
  test::ThreadRunner a("a", [&] { first = b.dma.transfer(load(0, 4096)); });
  test::ThreadRunner c("c", [&] { second = b.dma.transfer(load(4 * 4096, 4096)); });
  sc_core::sc_start();
  EXPECT_EQ(first.begin, sc_core::SC_ZERO_TIME);
  EXPECT_EQ(second.begin, sc_core::SC_ZERO_TIME);
  EXPECT_EQ(std::min(first.end, second.end), dram_cycles(575));
  EXPECT_EQ(std::max(first.end, second.end), dram_cycles(1087));
  EXPECT_EQ(b.dma.stats().bytes_loaded, 8192u);
}

TEST(Dma, OneChannelRunsTransfersOneAfterTheOther) {
  // The second load waits for the channel until 575, then ACT 575, data 575 + 63 .. + 512:
  // 1150 cycles.
  Bench b(1);
  DmaResult first, second;
  test::ThreadRunner a("a", [&] { first = b.dma.transfer(load(0, 4096)); });
  test::ThreadRunner c("c", [&] { second = b.dma.transfer(load(4 * 4096, 4096)); });
  sc_core::sc_start();
  const DmaResult& later = first.end < second.end ? second : first;
  EXPECT_EQ(later.begin, dram_cycles(575));
  EXPECT_EQ(later.end, dram_cycles(1150));
}

TEST(Dma, StridedStoreWritesDram) {
  // 4 runs of 256 B (4 bursts) every 4 KiB = banks 0..3. First write: ACT 0, WR 29, data
  // 29 + CWL 14 + tDQSS 1 = 44 .. 52; the rest follow on the bus (each bank's ACT, 16 apart, is
  // ready in time): 52 + 15 * 8 = 172.
  DramEngine engine(test::lpddr4_3200());
  const std::uint64_t cycles = engine.access_transfer(0, 256, 4096, 4, true, 0, 16);
  ASSERT_EQ(cycles, 172u);

  Bench b;
  DmaTransfer t;
  t.run_bytes = 256;
  t.stride = 4096;
  t.runs = 4;
  t.to_dram = true;
  DmaResult result;
  test::ThreadRunner thread("thread", [&] { result = b.dma.transfer(t); });
  sc_core::sc_start();
  EXPECT_EQ(result.bytes, 1024u);
  EXPECT_EQ(result.end, dram_cycles(172));
  EXPECT_EQ(b.dram.stats().writes, 16u);
  EXPECT_EQ(b.sram.reads, 1u);
  EXPECT_EQ(b.dma.stats().bytes_stored, 1024u);
  EXPECT_EQ(b.dma.stats().bytes_loaded, 0u);
}

TEST(Dma, DramAddressErrorIsASimulationError) {
  Bench b;
  std::string error;
  test::ThreadRunner thread("thread", [&] {
    try {
      b.dma.transfer(load(std::uint64_t{1} << 31, 64));  // first byte past the 2 GiB device
    } catch (const SimulationError& e) {
      error = e.what();
    }
  });
  sc_core::sc_start();
  EXPECT_NE(error.find("DRAM"), std::string::npos) << error;
  EXPECT_NE(error.find("TLM_ADDRESS_ERROR_RESPONSE"), std::string::npos) << error;
}

}  // namespace
}  // namespace npusim::models
