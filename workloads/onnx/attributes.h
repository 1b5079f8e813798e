#pragma once
// Typed access to an ONNX node's attributes: a missing one takes its ONNX default, one of the
// wrong type is an InputError naming the node, the attribute, the expected and found type.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace npusim::workloads::onnx {

class NodeAttributes {
 public:
  /// `where` names the node in messages ("model.onnx (node 'conv1' Conv)").
  NodeAttributes(const ::onnx::NodeProto& node, std::string where);

  bool has(const std::string& name) const;
  std::int64_t integer(const std::string& name, std::int64_t fallback) const;
  std::vector<std::int64_t> integers(const std::string& name, std::vector<std::int64_t> fallback = {}) const;
  double real(const std::string& name, double fallback) const;
  std::vector<double> reals(const std::string& name) const;
  std::string text(const std::string& name, const std::string& fallback) const;
  /// The tensor attribute `name`, nullptr when absent.
  const ::onnx::TensorProto* tensor(const std::string& name) const;

  const std::string& where() const { return where_; }

 private:
  /// The attribute, checked to be of `type`; nullptr when absent.
  const ::onnx::AttributeProto* find(const std::string& name, ::onnx::AttributeProto_AttributeType type) const;

  const ::onnx::NodeProto& node_;
  std::string where_;
};

/// "model.onnx (node 'conv1' Conv)": where an error about this node points.
std::string node_where(const std::string& path, const ::onnx::NodeProto& node);

}  // namespace npusim::workloads::onnx
