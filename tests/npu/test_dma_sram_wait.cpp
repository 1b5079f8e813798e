// A DMA command waiting for SRAM bank bandwidth shows it. small_cnn on edge-s (greedy): the MAC
// array's operand and partial-sum traffic holds the single-ported banks, so loads outlast their
// DRAM side; with two ports per bank the same loads never wait for SRAM.
#include <gtest/gtest.h>

#include "tests/support/cli_support.h"
#include "traces/trace_io.h"

using nlohmann::json;
using npusim::test::read_json;
using npusim::test::run_npusim;
using npusim::test::scratch;

namespace {

struct Waits {
  double stall_s = 0;            // summary.json stalls.dma_sram_wait_s
  std::uint64_t dma_stalls = 0;  // DMA commands with stall_cycles > 0 in trace.json
};

Waits run(const std::string& extra) {
  const auto out = scratch("sram_wait");
  EXPECT_EQ(run_npusim("run --config edge-s --workload small_cnn --fusion greedy " + extra + " --out " + out.string()),
            0);
  Waits w;
  w.stall_s = read_json(out / "summary.json").at("stalls").at("dma_sram_wait_s").get<double>();
  for (const auto& c : npusim::traces::read_trace_json((out / "trace.json").string()).commands)
    if ((c.kind == npusim::traces::CommandKind::DmaLoad || c.kind == npusim::traces::CommandKind::DmaStore) &&
        c.stall_cycles > 0)
      ++w.dma_stalls;
  return w;
}

}  // namespace

TEST(DmaSramWait, LoadsWaitingForSramBanksShowTheirOwnStallClass) {
  const Waits one_port = run("");
  EXPECT_GT(one_port.dma_stalls, 0u);
  EXPECT_GT(one_port.stall_s, 0.0);
  const Waits two_ports = run("--set npu.sram.ports=2");
  EXPECT_EQ(two_ports.dma_stalls, 0u);
  EXPECT_EQ(two_ports.stall_s, 0.0);
}
