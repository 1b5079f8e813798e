// Placeholder until the SCALE-Sim topology reader lands (issue "MAC array and SRAM at reference
// fidelity"): names the limitation.
#include "sim/core/errors.h"
#include "workloads/loader.h"

namespace npusim::workloads {

Graph load_scalesim_topology(const std::string& path, const LoadOptions&) {
  throw InputError(path, "expected a YAML workload: this build does not read SCALE-Sim topology CSVs yet");
}

}  // namespace npusim::workloads
