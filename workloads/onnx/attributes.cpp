#include "workloads/onnx/attributes.h"

#include "sim/core/errors.h"

namespace npusim::workloads::onnx {

NodeAttributes::NodeAttributes(const ::onnx::NodeProto& node, std::string where)
    : node_(node), where_(std::move(where)) {}

const ::onnx::AttributeProto* NodeAttributes::find(const std::string& name,
                                                   ::onnx::AttributeProto_AttributeType type) const {
  for (const auto& a : node_.attribute()) {
    if (a.name() != name) continue;
    if (a.type() != type) {
      throw InputError(where_, "expected attribute '" + name + "' of type " +
                                   ::onnx::AttributeProto_AttributeType_Name(type) + ", found " +
                                   ::onnx::AttributeProto_AttributeType_Name(a.type()));
    }
    return &a;
  }
  return nullptr;
}

bool NodeAttributes::has(const std::string& name) const {
  for (const auto& a : node_.attribute()) {
    if (a.name() == name) return true;
  }
  return false;
}

std::int64_t NodeAttributes::integer(const std::string& name, std::int64_t fallback) const {
  const auto* a = find(name, ::onnx::AttributeProto::INT);
  return a ? a->i() : fallback;
}

std::vector<std::int64_t> NodeAttributes::integers(const std::string& name, std::vector<std::int64_t> fallback) const {
  const auto* a = find(name, ::onnx::AttributeProto::INTS);
  return a ? std::vector<std::int64_t>(a->ints().begin(), a->ints().end()) : fallback;
}

double NodeAttributes::real(const std::string& name, double fallback) const {
  const auto* a = find(name, ::onnx::AttributeProto::FLOAT);
  return a ? a->f() : fallback;
}

std::vector<double> NodeAttributes::reals(const std::string& name) const {
  const auto* a = find(name, ::onnx::AttributeProto::FLOATS);
  return a ? std::vector<double>(a->floats().begin(), a->floats().end()) : std::vector<double>{};
}

std::string NodeAttributes::text(const std::string& name, const std::string& fallback) const {
  const auto* a = find(name, ::onnx::AttributeProto::STRING);
  return a ? a->s() : fallback;
}

const ::onnx::TensorProto* NodeAttributes::tensor(const std::string& name) const {
  const auto* a = find(name, ::onnx::AttributeProto::TENSOR);
  return a ? &a->t() : nullptr;
}

std::string node_where(const std::string& path, const ::onnx::NodeProto& node) {
  const std::string name = node.name().empty() ? node.output_size() ? node.output(0) : "" : node.name();
  return path + " (node '" + name + "' " + node.op_type() + ")";
}

}  // namespace npusim::workloads::onnx
