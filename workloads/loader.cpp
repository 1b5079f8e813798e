// Dispatches a workload spec to the loader its file extension names, or to the zoo.
#include "workloads/loader.h"

#include <filesystem>

#include "sim/core/errors.h"
#include "sim/core/file_util.h"

namespace npusim::workloads {
namespace fs = std::filesystem;

namespace {

/// Options that only an ONNX model's import reads, given for `what` (a YAML workload...): an
/// error rather than a silently ignored flag.
void refuse_onnx_options(const LoadOptions& options, const std::string& spec, const std::string& what) {
  std::string flag;
  if (!options.input_shapes.empty())
    flag = "--input-shape " + options.input_shapes.begin()->first;
  else if (!options.dims.empty())
    flag = "--dim " + options.dims.begin()->first;
  else if (!options.branches.empty())
    flag = "--branch " + options.branches.begin()->first;
  else if (options.kv_cache_copy)
    flag = "--kv-cache copy";
  if (flag.empty()) return;
  throw InputError(flag, "expected an ONNX workload (.onnx) for this option, found " + what + " '" + spec +
                             "', whose shapes are fixed");
}

}  // namespace

Graph load_workload(const std::string& spec, const std::string& zoo_dir, const LoadOptions& options) {
  std::error_code ec;
  if (fs::is_regular_file(spec, ec)) {
    const std::string ext = fs::path(spec).extension().string();
    if (ext == ".onnx") return load_onnx_workload(spec, options);
    if (ext == ".yaml" || ext == ".yml") {
      refuse_onnx_options(options, spec, "the YAML workload");
      return load_yaml_workload(spec);
    }
    if (ext == ".csv") {
      refuse_onnx_options(options, spec, "the SCALE-Sim topology");
      return load_scalesim_topology(spec, options);
    }
    throw InputError(
        spec,
        "expected a workload file ending in .yaml, .yml, .onnx or .csv (SCALE-Sim topology), found '" + ext + "'");
  }
  // A path that names something other than a file (a folder called net.onnx) is said to be one,
  // not looked up in the zoo; a bare name stays a zoo name even if a folder of that name exists.
  if ((fs::path(spec).has_extension() || spec.find('/') != std::string::npos) && fs::exists(spec, ec))
    open_input_file(spec);  // throws: "expected a regular file, found a folder"
  const fs::path zoo_file = fs::path(zoo_dir) / (spec + ".yaml");
  if (fs::is_regular_file(zoo_file, ec)) {
    refuse_onnx_options(options, spec, "the zoo workload");
    return load_yaml_workload(zoo_file.string());
  }
  std::string names;
  for (const auto& n : zoo_names(zoo_dir)) names += (names.empty() ? "" : ", ") + n;
  throw InputError(spec, "expected a workload file or a zoo name (" + (names.empty() ? "none found" : names) + " in " +
                             zoo_dir + "), found neither");
}

}  // namespace npusim::workloads
