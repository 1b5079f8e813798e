#pragma once
// Builds small ONNX models through the protobuf API for the importer's tests, writes them to a
// temporary file and imports them. Weights carry only their dims unless values are given: the
// importer reads weights' shapes, never their values.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "sim/core/errors.h"
#include "workloads/loader.h"
#include "tests/support/scratch.h"

namespace npusim::workloads::testing {

/// A dim: a size, or a symbolic name ("batch").
using Dim = std::variant<std::int64_t, std::string>;

class OnnxBuilder {
 public:
  explicit OnnxBuilder(std::int64_t opset = 17) {
    model.set_ir_version(8);
    model.set_producer_name("npusim-tests");
    auto* o = model.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model.mutable_graph()->set_name("test");
  }

  OnnxBuilder& input(const std::string& name, const std::vector<Dim>& dims) {
    auto* v = model.mutable_graph()->add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(::onnx::TensorProto::FLOAT);
    for (const auto& d : dims) {
      auto* dim = t->mutable_shape()->add_dim();
      if (std::holds_alternative<std::int64_t>(d)) {
        dim->set_dim_value(std::get<std::int64_t>(d));
      } else {
        dim->set_dim_param(std::get<std::string>(d));
      }
    }
    return *this;
  }

  /// A float weight with dims only (or values, when given).
  OnnxBuilder& weight(const std::string& name, const std::vector<std::int64_t>& dims,
                      const std::vector<float>& values = {}) {
    auto* t = model.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    for (auto d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
    return *this;
  }

  /// An initializer of any element type (::onnx::TensorProto::UINT8, FLOAT16, ...), dims only.
  OnnxBuilder& typed_weight(const std::string& name, const std::vector<std::int64_t>& dims, int data_type) {
    auto* t = model.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(data_type);
    for (auto d : dims) t->add_dims(d);
    return *this;
  }

  /// An int64 initializer (a shape, axes, pads): 1-D unless `dims` are given.
  OnnxBuilder& ints(const std::string& name, const std::vector<std::int64_t>& values,
                    const std::vector<std::int64_t>& dims = {}) {
    auto* t = model.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::INT64);
    if (dims.empty()) t->add_dims(static_cast<std::int64_t>(values.size()));
    for (auto d : dims) t->add_dims(d);
    for (auto v : values) t->add_int64_data(v);
    return *this;
  }

  /// A float scalar initializer (rank 0).
  OnnxBuilder& scalar(const std::string& name, float value) {
    auto* t = model.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    t->add_float_data(value);
    return *this;
  }

  ::onnx::NodeProto& node(const std::string& op_type, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = model.mutable_graph()->add_node();
    n->set_op_type(op_type);
    n->set_name(name.empty() ? outputs.at(0) : name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }

  OnnxBuilder& output(const std::string& name) {
    model.mutable_graph()->add_output()->set_name(name);
    return *this;
  }

  /// Writes the model to a fresh file in the test's temp dir and returns its path.
  std::string write(const std::string& file = "model.onnx") const {
    const std::string path = temp_path(file);
    std::ofstream out(path, std::ios::binary);
    model.SerializeToOstream(&out);
    return path;
  }

  Graph load(const LoadOptions& options = {}) const { return load_onnx_workload(write(), options); }

  static std::string temp_path(const std::string& file) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const auto dir = std::filesystem::path(::testing::TempDir()) /
                     ("npusim_onnx_" + std::string(info->test_suite_name()) + "_" + info->name());
    std::filesystem::create_directories(dir);
    npusim::test::remove_at_exit(dir);
    return (dir / file).string();
  }

  ::onnx::ModelProto model;
};

inline void set_ints(::onnx::NodeProto& n, const std::string& name, const std::vector<std::int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}

inline void set_int(::onnx::NodeProto& n, const std::string& name, std::int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}

inline void set_float(::onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

inline void set_string(::onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(v);
}

/// Runs `fn`, expects an InputError and returns its message.
template <typename Fn>
std::string input_error(Fn&& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an InputError";
  return "";
}

inline ::testing::AssertionResult contains(const std::string& haystack, const std::string& needle) {
  if (haystack.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << needle << "' not in: " << haystack;
}

/// Number of ops of `kind` in `g`.
inline int count_ops(const Graph& g, OpKind kind) {
  int n = 0;
  for (const auto& op : g.ops()) n += op.kind == kind;
  return n;
}

}  // namespace npusim::workloads::testing
