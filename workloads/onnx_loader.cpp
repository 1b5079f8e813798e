// Placeholder until the ONNX importer lands (issue "Real models in"): names the limitation.
#include "sim/core/errors.h"
#include "workloads/loader.h"

namespace npusim::workloads {

Graph load_onnx_workload(const std::string& path, const LoadOptions&) {
  throw InputError(path, "expected a YAML or SCALE-Sim workload: this build does not read ONNX yet");
}

}  // namespace npusim::workloads
