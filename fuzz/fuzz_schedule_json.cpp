// schedule.json (docs/schedule-format.md), validated against small_cnn on edge-m.
#include "fuzz/fuzz_support.h"
#include "sim/config/config_loader.h"
#include "sim/scheduler/schedule_file.h"
#include "workloads/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const npusim::HardwareConfig hw = npusim::config::load_hardware_config("edge-m", {});
  static const npusim::workloads::Graph g =
      npusim::workloads::load_workload("small_cnn", npusim::config::data_dir() + "/workloads/zoo");
  return npusim::fuzz::expect_input_errors_only(
      [&] { npusim::sched::parse_schedule(npusim::fuzz::text_of(data, size), "fuzz.json", g, hw); });
}
