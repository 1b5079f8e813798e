#pragma once
// A hand-made two-op trace whose roofline and summary can be worked out on paper.
//
// Machine: 1 GHz core, 64x64 MAC array  -> MAC peak    2 * 4096 * 1e9 = 8.192e12 ops/s
//          64 vector lanes               -> vector peak 64 * 1e9       = 6.4e10 ops/s
//          DRAM 1.6e11 bytes/s, SRAM 1024 bytes/cycle -> 1.024e12 bytes/s
//
// op 0 "gemm0" (group 0 "gemm0", unfused), 0 .. 1 us:
//   c0 dma_load  ch0  [0, 0.3 us)     DRAM read 80000, SRAM write 80000
//   c1 gemm      MAC  [0.3, 0.8 us)   1e6 MACs, SRAM read 200000, SRAM write 20000,
//                                      450 compute + 50 stall cycles
//   c2 dma_store ch1  [0.8, 1.0 us)   DRAM write 20000, SRAM read 20000
// op 1 "relu1" (group 1 "relu1_chain" with the view op 2 "flatten2"), 1 .. 1.5 us:
//   c3 dma_load  ch0  [1.0, 1.1 us)   DRAM read 20000, SRAM write 20000
//   c4 vector    VU   [1.1, 1.42 us)  2e4 vector ops, SRAM read 20000, SRAM write 20000,
//                                      313 compute (2e4 / 64 lanes = 312.5) + 7 stall cycles
//   c5 dma_store ch1  [1.42, 1.5 us)  DRAM write 20000, SRAM read 20000
// op 2 "flatten2" is a view: no command. Nothing overlaps: gemm0 holds the first 1 us, relu1
// the last 0.5 us.
//
// Energy model (config.energy): 1 pJ per MAC (int8), 2 pJ per vector op, SRAM 1 pJ/B read and
// 2 pJ/B write, DRAM 10 pJ/B, 10 mW DRAM background + 20 mW static.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "traces/trace.h"

namespace npusim::traces::sample {

inline CommandEvent command(std::uint32_t id, CommandKind kind, Unit unit, std::uint32_t lane, int op, int group,
                            std::uint64_t begin_ps, std::uint64_t end_ps) {
  CommandEvent c;
  c.id = id;
  c.kind = kind;
  c.unit = unit;
  c.lane = lane;
  c.op = op;
  c.group = group;
  c.begin_ps = begin_ps;
  c.end_ps = end_ps;
  return c;
}

inline Roofs sample_roofs() {
  Roofs r;
  r.core_clock_hz = 1e9;
  r.mac_rows = 64;
  r.mac_cols = 64;
  r.mac_peak_ops = 8.192e12;
  r.vector_peak_ops = 6.4e10;
  r.dram_bandwidth = 1.6e11;
  r.sram_bandwidth = 1.024e12;
  r.sram_capacity = 1 << 20;
  return r;
}

inline Trace sample_trace() {
  Trace t;
  t.workload = "tiny";
  t.fusion = "none";
  t.config_name = "test-npu";
  t.config = {{"name", "test-npu"},
              {"core_clock", "1 GHz"},
              {"mac_array", {{"rows", 64}, {"dtype", "int8"}}},
              {"energy",
               {{"mac_j", {{"int8", 1e-12}, {"fp16", 5e-12}}},
                {"vector_op_j", 2e-12},
                {"sram_read_j_per_byte", 1e-12},
                {"sram_write_j_per_byte", 2e-12},
                {"dram_j_per_byte", 1e-11},
                {"dram_background_w", 0.01},
                {"static_w", 0.02}}}};
  t.dram_stats = {{"read_bytes", 100000}, {"row_hits", 17}, {"row_hit_rate", 0.85}};
  t.roofs = sample_roofs();
  t.ops = {{"gemm0", "matmul", "MAC array", 0, 1000000, 0},
           {"relu1", "relu", "vector unit", 1, 0, 20000},
           {"flatten2", "flatten", "none", 1, 0, 0}};
  t.groups = {{"gemm0", "none", {0}, 262144, "WS"}, {"relu1_chain", "chain", {1, 2}, 65536, ""}};

  CommandEvent c0 = command(0, CommandKind::DmaLoad, Unit::Dma, 0, 0, 0, 0, 300000);
  c0.dram_read_bytes = 80000;
  c0.sram_write_bytes = 80000;
  CommandEvent c1 = command(1, CommandKind::Gemm, Unit::MacArray, 0, 0, 0, 300000, 800000);
  c1.macs = 1000000;
  c1.sram_read_bytes = 200000;
  c1.sram_write_bytes = 20000;
  c1.stall_cycles = 50;
  c1.compute_cycles = 450;
  c1.deps = {0};
  CommandEvent c2 = command(2, CommandKind::DmaStore, Unit::Dma, 1, 0, 0, 800000, 1000000);
  c2.dram_write_bytes = 20000;
  c2.sram_read_bytes = 20000;
  c2.deps = {1};
  CommandEvent c3 = command(3, CommandKind::DmaLoad, Unit::Dma, 0, 1, 1, 1000000, 1100000);
  c3.dram_read_bytes = 20000;
  c3.sram_write_bytes = 20000;
  CommandEvent c4 = command(4, CommandKind::Vector, Unit::VectorUnit, 0, 1, 1, 1100000, 1420000);
  c4.vector_ops = 20000;
  c4.compute_cycles = 313;
  c4.stall_cycles = 7;
  c4.sram_read_bytes = 20000;
  c4.sram_write_bytes = 20000;
  c4.deps = {3};
  CommandEvent c5 = command(5, CommandKind::DmaStore, Unit::Dma, 1, 1, 1, 1420000, 1500000);
  c5.dram_write_bytes = 20000;
  c5.sram_read_bytes = 20000;
  c5.deps = {4, 2};
  t.commands = {c0, c1, c2, c3, c4, c5};
  t.sram_allocations = {{0, 262144, 0, 1000000}, {1, 65536, 1000000, 1500000}};
  t.end_ps = 1500000;
  return t;
}

/// Files handed out by temp_path, removed when the test program ends.
inline std::vector<std::string>& temp_files() {
  static std::vector<std::string> files;
  return files;
}

class TempFileCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    for (const std::string& f : temp_files()) std::remove(f.c_str());
  }
};
// One registration per program, whichever test file includes this header first.
inline ::testing::Environment* const kTempFileCleanup = ::testing::AddGlobalTestEnvironment(new TempFileCleanup);

/// A path in the test's temp folder, unique per test.
inline std::string temp_path(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string path = ::testing::TempDir() + "npusim_" + info->test_suite_name() + "_" + info->name() + "_" + name;
  temp_files().push_back(path);
  return path;
}

}  // namespace npusim::traces::sample
