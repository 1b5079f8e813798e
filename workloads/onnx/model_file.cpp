#include "workloads/onnx/model_file.h"

#include <optional>
#include <google/protobuf/io/coded_stream.h>
#include <onnx/shape_inference/implementation.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <unordered_set>

#include "sim/core/errors.h"
#include "sim/core/file_util.h"

namespace npusim::workloads::onnx {
namespace {

/// "[batch, 3, 224, 224]" with symbolic dims by name and unknown ones as '?'.
std::string describe_dims(const ::onnx::TensorShapeProto& s) {
  std::string out = "[";
  for (int i = 0; i < s.dim_size(); ++i) {
    const auto& d = s.dim(i);
    out += i ? ", " : "";
    out += d.has_dim_value()                             ? std::to_string(d.dim_value())
           : d.has_dim_param() && !d.dim_param().empty() ? d.dim_param()
                                                         : "?";
  }
  return out + "]";
}

/// Whether `d` has no concrete size (a name like "batch", or nothing). 0 is a size: an empty
/// tensor (a KV cache of past length 0) is legal ONNX.
bool symbolic(const ::onnx::TensorShapeProto_Dimension& d) {
  return !d.has_dim_value() || d.dim_value() < 0;
}

/// The dims as --input-shape wants them: sizes kept, a symbolic first dim (a batch) as 1, any
/// other symbolic one as <its name> for the user to fill in.
std::string example_dims(const ::onnx::TensorShapeProto& s) {
  std::string out;
  for (int i = 0; i < s.dim_size(); ++i) {
    const auto& d = s.dim(i);
    const bool known = !symbolic(d);
    out += (i ? "," : "") + (known    ? std::to_string(d.dim_value())
                             : i == 0 ? std::string("1")
                                      : "<" + (d.dim_param().empty() ? "D" + std::to_string(i) : d.dim_param()) + ">");
  }
  return out;
}

bool is_concrete(const ::onnx::TypeProto& t) {
  if (!t.has_tensor_type() || !t.tensor_type().has_shape()) return false;
  for (const auto& d : t.tensor_type().shape().dim()) {
    if (symbolic(d)) return false;
  }
  return true;
}

/// Protobuf's default recursion limit, which ParseFromIstream applies.
constexpr int kProtobufDepth = 100;

/// Whether `bytes` parse as a ModelProto when messages may nest 10x deeper than protobuf's
/// default (the stack that takes is well under 1 MiB).
bool parses_deeper(const MappedFile& bytes) {
  google::protobuf::io::CodedInputStream coded(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                               static_cast<int>(bytes.size()));
  coded.SetRecursionLimit(10 * kProtobufDepth);
  ::onnx::ModelProto model;
  return model.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
}

}  // namespace

bool is_default_domain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx";
}

::onnx::ModelProto read_model(const std::string& path) {
  // Parsed from the file mapped into memory: through a stream, protobuf grows each tensor's
  // raw_data string chunk by chunk (AlexNet's 244 MB of weights took 2 s; mapped: one copy).
  const MappedFile bytes(path);
  const std::string size = std::to_string(bytes.size());
  if (bytes.size() > std::uint64_t(std::numeric_limits<int>::max()))
    throw InputError(path,
                     "expected an ONNX model of less than 2 GiB (protobuf's limit for one message; a larger "
                     "model keeps its weights in external data files), found " +
                         size + " bytes");
  ::onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    // Protobuf stops at messages nested more than kProtobufDepth deep (a stack guard): each If
    // or Loop body inside another nests three more (graph, node, attribute). Such a file parses
    // with a deeper limit, which tells it apart from bytes that are no model at all.
    if (parses_deeper(bytes))
      throw InputError(path, "expected an ONNX model nested at most " + std::to_string(kProtobufDepth) +
                                 " messages deep (protobuf's limit; each If/Loop body inside another adds 3), "
                                 "found a model of " +
                                 size + " bytes nested deeper (subgraphs within subgraphs)");
    throw InputError(path, "expected an ONNX model (a serialized protobuf ModelProto), found " + size +
                               " bytes that do not parse as one (not an ONNX file, or a truncated one)");
  }
  // Protobuf accepts many byte strings (an empty file is a valid empty message): a real model
  // has a graph and imports an opset. A file cut between fields parses but loses the latter.
  if (!model.has_graph() || model.opset_import_size() == 0) {
    throw InputError(path, std::string("expected an ONNX model with a graph and an opset_import, found ") +
                               (model.has_graph() ? "no opset_import" : "no graph") +
                               " (not an ONNX file, or a truncated one)");
  }
  return model;
}

int default_opset(const ::onnx::ModelProto& model) {
  for (const auto& o : model.opset_import()) {
    if (is_default_domain(o.domain())) return static_cast<int>(o.version());
  }
  return 1;
}

std::vector<std::string> activation_inputs(const ::onnx::GraphProto& graph) {
  std::unordered_set<std::string> initializers;
  for (const auto& t : graph.initializer()) initializers.insert(t.name());
  std::vector<std::string> names;
  for (const auto& in : graph.input()) {
    if (!initializers.count(in.name())) names.push_back(in.name());
  }
  return names;
}

/// An input whose only symbolic dim is the first (exporters' dynamic batch: torch's
/// dynamic_axes, tf2onnx's unk__N) takes batch 1: the one choice that is almost always meant.
/// Returns the choice, or nothing when the input has other symbolic dims (or only one dim).
std::optional<ImportChoice> default_batch(::onnx::ValueInfoProto& in) {
  auto& tensor = *in.mutable_type()->mutable_tensor_type();
  if (!tensor.has_shape() || tensor.shape().dim_size() < 2 || !symbolic(tensor.shape().dim(0))) return std::nullopt;
  for (int i = 1; i < tensor.shape().dim_size(); ++i)
    if (symbolic(tensor.shape().dim(i))) return std::nullopt;
  const std::string before = describe_dims(tensor.shape());
  tensor.mutable_shape()->mutable_dim(0)->set_dim_value(1);
  return ImportChoice{in.name(), "batch 1 (" + before + " -> " + describe_dims(tensor.shape()) + ")",
                      "symbolic first dimension; --input-shape " + in.name() + "=... chooses another"};
}

/// --dim NAME=VALUE: every dim named NAME (dim_param) in the activation inputs `names` takes
/// VALUE. A NAME no input has is an InputError listing the names the inputs have.
void bind_named_dims(::onnx::GraphProto& graph, const std::vector<std::string>& names, const LoadOptions& options,
                     const std::string& path) {
  if (options.dims.empty()) return;
  std::vector<std::string> declared;  // symbolic dim names, in input order
  for (const auto& in : graph.input()) {
    if (std::find(names.begin(), names.end(), in.name()) == names.end()) continue;
    for (const auto& d : in.type().tensor_type().shape().dim())
      if (d.has_dim_param() && !d.has_dim_value() &&
          std::find(declared.begin(), declared.end(), d.dim_param()) == declared.end())
        declared.push_back(d.dim_param());
  }
  for (const auto& [name, value] : options.dims) {
    if (value < 0 || value > (std::int64_t{1} << 31))  // the CLI checks too; Python passes any int
      throw InputError("--dim " + name + "=" + std::to_string(value),
                       "expected a size in [0, 2^31], found " + std::to_string(value));
    if (std::find(declared.begin(), declared.end(), name) != declared.end()) continue;
    std::string list;
    for (const auto& d : declared) list += (list.empty() ? "'" : ", '") + d + "'";
    throw InputError("--dim " + name + "=" + std::to_string(value),
                     "expected the name of a symbolic dimension of the inputs of " + path + " (" +
                         (list.empty() ? "it has none" : list) + "), found '" + name + "'");
  }
  for (auto& in : *graph.mutable_input()) {
    if (std::find(names.begin(), names.end(), in.name()) == names.end() || options.input_shapes.count(in.name()))
      continue;
    for (auto& d : *in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (!d.has_dim_param() || d.has_dim_value()) continue;
      const auto it = options.dims.find(d.dim_param());
      if (it != options.dims.end()) d.set_dim_value(it->second);  // clears dim_param (a oneof)
    }
  }
}

std::vector<ImportChoice> fix_input_shapes(::onnx::ModelProto& model, const LoadOptions& options,
                                           const std::string& path) {
  std::vector<ImportChoice> choices;
  auto& graph = *model.mutable_graph();
  const std::vector<std::string> names = activation_inputs(graph);
  for (const auto& [name, shape] : options.input_shapes) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "'" : ", '") + n + "'";
      throw InputError("--input-shape " + name, "expected the name of a model input (" +
                                                    (list.empty() ? "none" : list) + " in " + path + "), found '" +
                                                    name + "'");
    }
  }
  bind_named_dims(graph, names, options, path);
  std::string unfixed, fixes;
  std::vector<std::string> still_named;  // symbolic dims left, by name, for the --dim hint
  for (auto& in : *graph.mutable_input()) {
    if (std::find(names.begin(), names.end(), in.name()) == names.end()) continue;
    auto& tensor = *in.mutable_type()->mutable_tensor_type();
    const auto it = options.input_shapes.find(in.name());
    if (it != options.input_shapes.end()) {
      const auto& declared = tensor.shape();
      if (tensor.has_shape() && declared.dim_size() != static_cast<int>(it->second.size())) {
        throw InputError("--input-shape " + in.name(),
                         "expected " + std::to_string(declared.dim_size()) + " dimensions as the model declares " +
                             describe_dims(declared) + ", found " + std::to_string(it->second.size()) + " " +
                             format_shape(it->second));
      }
      tensor.mutable_shape()->clear_dim();
      for (auto d : it->second) tensor.mutable_shape()->add_dim()->set_dim_value(d);
      continue;
    }
    if (is_concrete(in.type())) continue;
    if (auto batch = default_batch(in)) {
      choices.push_back(std::move(*batch));
      continue;
    }
    const std::string dims = tensor.has_shape() ? describe_dims(tensor.shape()) : "(no shape)";
    unfixed += (unfixed.empty() ? "'" : ", '") + in.name() + "' " + dims;
    fixes += " --input-shape " + in.name() + "=" + (tensor.has_shape() ? example_dims(tensor.shape()) : "D0,D1,...");
    for (const auto& d : tensor.shape().dim())
      if (symbolic(d) && !d.dim_param().empty() &&
          std::find(still_named.begin(), still_named.end(), d.dim_param()) == still_named.end())
        still_named.push_back(d.dim_param());
  }
  if (!unfixed.empty()) {
    std::string bind;
    for (const auto& d : still_named) bind += " --dim " + d + "=<" + d + ">";
    throw InputError(path, "expected concrete dimensions for every model input, found symbolic or unknown ones: " +
                               unfixed + "; fix them with" + (bind.empty() ? fixes : bind + " (or" + fixes + ")"));
  }
  return choices;
}

std::optional<Shape> concrete_shape(const ::onnx::ValueInfoProto& v) {
  if (!v.has_type() || !v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return std::nullopt;
  Shape s;
  for (const auto& d : v.type().tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return std::nullopt;
    s.push_back(d.dim_value());
  }
  return s;
}

std::unordered_map<std::string, Shape> onnx_inferred_shapes(::onnx::ModelProto& model) {
  try {
    ::onnx::ShapeInferenceOptions options(false, 0, true);
    ::onnx::shape_inference::InferShapes(model, ::onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    spdlog::debug("onnx: ONNX shape inference stopped ({}); npusim's own shape rules take over", e.what());
  }
  std::unordered_map<std::string, Shape> shapes;
  const auto& g = model.graph();
  for (const auto* list : {&g.value_info(), &g.output(), &g.input()}) {
    for (const auto& v : *list) {
      if (auto s = concrete_shape(v)) shapes.emplace(v.name(), std::move(*s));
    }
  }
  return shapes;
}

}  // namespace npusim::workloads::onnx
