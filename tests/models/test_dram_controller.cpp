// DramController through its TLM socket. One sc_start per TEST: CTest runs each TEST in its own
// process (gtest_discover_tests), as SystemC elaborates once per process.
// LPDDR4-3200 at 1600 MHz: one cycle = 625 ps.
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/dram/dram_controller.h"
#include "test_dram_support.h"

namespace npusim::models {
namespace {

using sc_core::SC_NS;
using sc_core::SC_PS;
using sc_core::sc_time;

class Initiator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Initiator> socket{"socket"};
  explicit Initiator(sc_core::sc_module_name name) : sc_core::sc_module(name) {}
};

struct Outcome {
  tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
  sc_time returned_delay;
  sc_time finished;
};

/// Elaborates initiator -> controller, sends `payload` at time zero with `delay`, waits the
/// annotated delay, and simulates to the end.
Outcome run_one(DramController& dram, tlm::tlm_generic_payload& payload, sc_time delay) {
  Initiator init("init");
  init.socket.bind(dram.socket);
  Outcome out;
  test::ThreadRunner thread("thread", [&] {
    init.socket->b_transport(payload, delay);
    out.status = payload.get_response_status();
    out.returned_delay = delay;
    sc_core::wait(delay);
    out.finished = sc_core::sc_time_stamp();
  });
  sc_core::sc_start();
  return out;
}

void prepare(tlm::tlm_generic_payload& p, tlm::tlm_command cmd, std::uint64_t addr, unsigned bytes) {
  p.set_command(cmd);
  p.set_address(addr);
  p.set_data_ptr(nullptr);
  p.set_data_length(bytes);
  p.set_streaming_width(bytes);
}

TEST(DramController, ContiguousReadEndsWhenTheEngineSays) {
  // 4 KiB = 64 bursts in one open row: 63 + 64 * 8 = 575 cycles = 359.375 ns.
  DramEngine engine(test::lpddr4_3200());
  const std::uint64_t cycles = engine.access_transfer(0, 4096, 4096, 1, false, 0, 32);
  ASSERT_EQ(cycles, 575u);

  DramController dram("dram", test::lpddr4_3200());
  tlm::tlm_generic_payload p;
  prepare(p, tlm::TLM_READ_COMMAND, 0, 4096);
  const Outcome out = run_one(dram, p, sc_core::SC_ZERO_TIME);
  EXPECT_EQ(out.status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(out.finished, sc_time(575 * 625.0, SC_PS));
  EXPECT_EQ(dram.stats().reads, 64u);
  EXPECT_EQ(dram.stats_json()["bytes_read"].get<std::uint64_t>(), 4096u);
  // The same statistics as the standalone engine: 64 reads, the last ends at 575 cycles.
  EXPECT_DOUBLE_EQ(dram.stats_json()["sim_time_ns"].get<double>(), 575 * 0.625);
  EXPECT_EQ(dram.stats_json()["read_latency_count"].get<std::uint64_t>(), 64u);
  EXPECT_GT(dram.stats_json()["read_latency_p99_ns"].get<double>(), 0.0);
}

TEST(DramController, InFlightLimitIsBytesCountedInTheDevicesBursts) {
  // A DMA keeping 16 bursts of 64 B in flight keeps 1 KiB: 32 bursts of a x16 LPDDR4X channel
  // (16 beats x 2 B = 32 B), 16 of a x32 one (64 B), 8 of a 128 B device; never fewer than one.
  EXPECT_EQ(outstanding_bursts(16 * 64, 32), 32u);
  EXPECT_EQ(outstanding_bursts(16 * 64, 64), 16u);
  EXPECT_EQ(outstanding_bursts(16 * 64, 128), 8u);
  EXPECT_EQ(outstanding_bursts(16, 64), 1u);
  EXPECT_EQ(outstanding_bursts(0, 64), std::numeric_limits<std::uint32_t>::max());
  EXPECT_EQ(outstanding_bursts(std::uint64_t{1} << 50, 32), std::numeric_limits<std::uint32_t>::max());
}

TEST(DramController, TransferKeepsTheBytesInFlightItsInitiatorSays) {
  // 4 KiB read with 128 B in flight on LPDDR4-3200 x32 (64 B bursts): a window of 2 bursts, as
  // the engine times it alone; slower than the 32-burst window of the contiguous read above.
  DramEngine engine(test::lpddr4_3200());
  const std::uint64_t two = engine.access_transfer(0, 4096, 4096, 1, false, 0, 2);
  ASSERT_GT(two, 575u);

  DramController dram("dram", test::lpddr4_3200());
  tlm::tlm_generic_payload p;
  prepare(p, tlm::TLM_READ_COMMAND, 0, 4096);
  p.set_extension(new DramStrideExtension(4096, 4096, 1, 128));
  const Outcome out = run_one(dram, p, sc_core::SC_ZERO_TIME);
  EXPECT_EQ(out.status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(out.finished, sc_time(double(two) * 625.0, SC_PS));
}

TEST(DramController, ArrivalDelayShiftsTheStart) {
  // Annotated 100 ns = 160 cycles: a write ACTs at 160, WR at + tRCD 29, data + CWL 14 +
  // tDQSS 1 + 8: 160 + 52 = 212 cycles = 132.5 ns.
  DramController dram("dram", test::lpddr4_3200());
  tlm::tlm_generic_payload p;
  prepare(p, tlm::TLM_WRITE_COMMAND, 0, 64);
  const Outcome out = run_one(dram, p, sc_time(100, SC_NS));
  EXPECT_EQ(out.status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(out.finished, sc_time(132.5, SC_NS));
  EXPECT_EQ(dram.stats().writes, 1u);
}

TEST(DramController, StrideExtensionSplitsRuns) {
  // 4 runs of 128 B every 4 KiB (banks 0..3), 16 outstanding 64 B bursts: 128 cycles (see
  // test_dram_timing).
  DramController dram("dram", test::lpddr4_3200());
  tlm::tlm_generic_payload p;
  prepare(p, tlm::TLM_READ_COMMAND, 0, 512);
  p.set_extension(new DramStrideExtension(128, 4096, 4, 16 * 64));
  const Outcome out = run_one(dram, p, sc_core::SC_ZERO_TIME);
  EXPECT_EQ(out.status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(out.finished, sc_time(128 * 625.0, SC_PS));
  EXPECT_EQ(dram.stats().row_misses, 4u);
}

TEST(DramController, AddressBeyondTheDeviceIsAnAddressError) {
  // The device holds 2 GiB; 64 B from 2 GiB - 32 cross its end.
  DramController dram("dram", test::lpddr4_3200());
  tlm::tlm_generic_payload p;
  prepare(p, tlm::TLM_READ_COMMAND, (std::uint64_t{1} << 31) - 32, 64);
  const Outcome out = run_one(dram, p, sc_time(5, SC_NS));
  EXPECT_EQ(out.status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(out.returned_delay, sc_time(5, SC_NS));  // untouched
  EXPECT_EQ(dram.stats().bursts(), 0u);
}

TEST(DramController, ExtensionDisagreeingWithLengthIsABurstError) {
  DramController dram("dram", test::lpddr4_3200());
  tlm::tlm_generic_payload p;
  prepare(p, tlm::TLM_READ_COMMAND, 0, 500);
  p.set_extension(new DramStrideExtension(128, 4096, 4, 16 * 64));  // 512 B, not 500
  const Outcome out = run_one(dram, p, sc_core::SC_ZERO_TIME);
  EXPECT_EQ(out.status, tlm::TLM_BURST_ERROR_RESPONSE);
  EXPECT_EQ(dram.stats().bursts(), 0u);
}

TEST(DramController, CycleConversionRoundsUpToTheNextEdge) {
  DramController dram("dram", test::lpddr4_3200());
  EXPECT_EQ(dram.to_cycle(sc_time(625, SC_PS)), 1u);
  EXPECT_EQ(dram.to_cycle(sc_time(626, SC_PS) + sc_time(1, SC_PS)), 2u);
  EXPECT_EQ(dram.to_cycle(sc_core::SC_ZERO_TIME), 0u);
  EXPECT_EQ(dram.to_time(3), sc_time(1875, SC_PS));
}

}  // namespace
}  // namespace npusim::models
