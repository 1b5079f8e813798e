// The YAML workload loader: a good file, every attribute spelling, and bad files whose errors
// must name the file, the line and the field. Files are built from one string per line, so
// the line numbers in the expectations can be counted in the source.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/core/errors.h"
#include "workloads/loader.h"

namespace npusim::workloads {
namespace {

std::string lines(const std::vector<std::string>& text) {
  std::string s;
  for (const auto& l : text) s += l + "\n";
  return s;
}

/// A file with one 1x3x32x32 input on line 3, ops from line 5 on.
std::string with_ops(const std::vector<std::string>& ops) {
  std::vector<std::string> text{"name: t", "inputs:", "  - {name: image, shape: [1, 3, 32, 32]}", "ops:"};
  text.insert(text.end(), ops.begin(), ops.end());
  return lines(text);
}

/// Runs `fn`, expects an InputError and returns its message.
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an InputError";
  return "";
}

/// Parses `text` as "bad.yaml" and returns the InputError's message.
std::string load_error(const std::string& text) {
  return error_of([&] { parse_yaml_workload(text, "bad.yaml"); });
}

::testing::AssertionResult contains(const std::string& haystack, const std::string& needle) {
  if (haystack.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << needle << "' not in: " << haystack;
}

const Tensor& tensor(const Graph& g, const std::string& name) {
  const int i = g.find_tensor(name);
  EXPECT_GE(i, 0) << name;
  return g.tensor(i);
}

const Op& op(const Graph& g, const std::string& name) {
  const int i = g.find_op(name);
  EXPECT_GE(i, 0) << name;
  return g.op(i);
}

TEST(YamlLoader, LoadsTheDocumentedExample) {
  const Graph g =
      parse_yaml_workload(lines({
                              "name: small_cnn",                           // 1
                              "inputs:",                                   // 2
                              "  - {name: image, shape: [1, 3, 32, 32]}",  // 3
                              "ops:",                                      // 4
                              "  - {name: conv1, op: conv2d, inputs: [image], out_channels: 16, kernel: 3, stride: 1, "
                              "padding: 1, bias: true}",                                                   // 5
                              "  - {name: relu1, op: relu, inputs: [conv1]}",                              // 6
                              "  - {name: pool1, op: max_pool, inputs: [relu1], kernel: 2}",               // 7
                              "  - {name: flat, op: flatten, inputs: [pool1]}",                            // 8
                              "  - {name: fc, op: matmul, inputs: [flat], out_features: 10, bias: true}",  // 9
                              "outputs: [fc]",                                                             // 10
                          }),
                          "example.yaml");
  EXPECT_EQ(g.name, "small_cnn");
  ASSERT_EQ(g.ops().size(), 5u);
  EXPECT_EQ(tensor(g, "conv1.weight").shape, (Shape{16, 3, 3, 3}));
  EXPECT_TRUE(tensor(g, "conv1.weight").is_constant);
  EXPECT_EQ(tensor(g, "conv1.bias").shape, (Shape{16}));
  EXPECT_EQ(tensor(g, "conv1").shape, (Shape{1, 16, 32, 32}));
  EXPECT_EQ(tensor(g, "pool1").shape, (Shape{1, 16, 16, 16}));  // stride defaults to the kernel
  EXPECT_EQ(tensor(g, "flat").shape, (Shape{1, 4096}));         // flatten axis 1: 16*16*16
  EXPECT_EQ(tensor(g, "fc.weight").shape, (Shape{4096, 10}));
  EXPECT_EQ(tensor(g, "fc").shape, (Shape{1, 10}));
  EXPECT_EQ(op(g, "conv1").source_line, 5);
  EXPECT_EQ(op(g, "fc").source_line, 9);
  EXPECT_EQ(op(g, "conv1").inputs.size(), 3u);  // image, weight, bias
  EXPECT_EQ(g.declared_outputs, (std::vector<std::string>{"fc"}));
  // conv1: 32*32*16 * 3*9 = 442368 MACs; fc: 4096*10 = 40960
  EXPECT_EQ(graph_totals(g, 1).macs, 483'328u);
  // params: 16*27 + 16 + 4096*10 + 10 = 41418
  EXPECT_EQ(graph_totals(g, 1).params, 41'418u);
}

TEST(YamlLoader, AttributeSpellings) {
  const Graph g =
      parse_yaml_workload(with_ops({
                              "  - {name: rect, op: conv2d, inputs: [image], out_channels: 8, kernel: [1, 3], "
                              "padding: [0, 1], stride: [1, 2]}",
                              "  - {name: same, op: conv2d, inputs: [image], out_channels: 4, kernel: 3, stride: 2, "
                              "padding: same}",
                              "  - {name: lrtb, op: conv2d, inputs: [image], out_channels: 4, kernel: 3, "
                              "padding: [1, 0, 0, 0], dilation: 2}",
                              "  - {name: dw, op: conv2d, inputs: [image], kernel: 3, padding: 1, depthwise: true}",
                              "  - {name: grouped, op: conv2d, inputs: [dw], out_channels: 6, kernel: 1, groups: 3}",
                              "  - {name: r6, op: relu6, inputs: [dw]}",
                              "  - {name: clip, op: clip, inputs: [dw], min: -1.5, max: 2}",
                              "  - {name: leaky, op: leaky_relu, inputs: [dw], alpha: 0.2}",
                              "  - {name: split, op: reshape, inputs: [image], shape: [1, 3, -1]}",
                              "  - {name: tr, op: transpose, inputs: [split], perm: [0, 2, 1]}",
                              "  - {name: mm, op: matmul, inputs: [split, tr]}",
                              "  - {name: ln, op: layer_norm, inputs: [tr], axis: -1}",
                              "  - {name: bn, op: batch_norm, inputs: [image]}",
                              "  - {name: sl, op: slice, inputs: [image], starts: [1], ends: [3], axes: [1]}",
                              "  - {name: up, op: resize, inputs: [image], scales: [1, 1, 2, 2]}",
                              "  - {name: cat, op: concat, inputs: [image, bn], axis: 1}",
                              "  - {name: scaled, op: mul, inputs: [image, k]}",
                          }) + lines({"constants:", "  - {name: k, shape: [3, 1, 1]}"}),
                          "spell.yaml");
  EXPECT_EQ(tensor(g, "rect.weight").shape, (Shape{8, 3, 1, 3}));
  EXPECT_EQ(tensor(g, "rect").shape, (Shape{1, 8, 32, 16}));  // W: (32 + 2 - 3) / 2 + 1 = 16
  // same: out = ceil(32 / 2) = 16; total pad = (16-1)*2 + 3 - 32 = 1 -> 0 before, 1 after
  EXPECT_EQ(tensor(g, "same").shape, (Shape{1, 4, 16, 16}));
  EXPECT_EQ(op(g, "same").attrs.pads, (std::array<std::int64_t, 4>{0, 0, 1, 1}));
  // padding [top, left, bottom, right] = [1, 0, 0, 0], extent 5: H 32+1-5+1 = 29, W 32-5+1 = 28
  EXPECT_EQ(tensor(g, "lrtb").shape, (Shape{1, 4, 29, 28}));
  EXPECT_EQ(op(g, "dw").attrs.groups, 3);
  EXPECT_EQ(tensor(g, "dw.weight").shape, (Shape{3, 1, 3, 3}));
  EXPECT_EQ(tensor(g, "grouped.weight").shape, (Shape{6, 1, 1, 1}));
  EXPECT_EQ(op(g, "r6").kind, OpKind::Clip);
  EXPECT_EQ(op(g, "r6").attrs.min, 0);
  EXPECT_EQ(op(g, "r6").attrs.max, 6);
  EXPECT_EQ(op(g, "clip").attrs.min, -1.5);
  EXPECT_EQ(op(g, "leaky").attrs.alpha, 0.2);
  EXPECT_EQ(tensor(g, "split").shape, (Shape{1, 3, 1024}));
  EXPECT_EQ(tensor(g, "mm").shape, (Shape{1, 3, 3}));  // [1,3,1024] x [1,1024,3]
  EXPECT_EQ(tensor(g, "ln.weight").shape, (Shape{3}));
  EXPECT_EQ(tensor(g, "bn.scale").shape, (Shape{3}));
  EXPECT_EQ(tensor(g, "sl").shape, (Shape{1, 2, 32, 32}));
  EXPECT_EQ(tensor(g, "up").shape, (Shape{1, 3, 64, 64}));
  EXPECT_EQ(tensor(g, "cat").shape, (Shape{1, 6, 32, 32}));
  EXPECT_TRUE(tensor(g, "k").is_constant);
  EXPECT_EQ(op_cost(g, op(g, "scaled"), 1).weight_bytes, 3u);
  EXPECT_EQ(g.name, "t");
}

// ---- Hostile input: limits, overflow, duplicate keys, depth, encoding ----

TEST(YamlLoaderLimits, HugeShapesAreErrorsNotZeroElements) {
  // 2^32 x 2^32 x 4 = 2^66 elements wraps an int64 to 0 unchecked.
  const std::string e = load_error(lines({"name: t", "inputs:", "  - {name: x, shape: [4294967296, 4294967296, 4]}",
                                          "ops:", "  - {name: r, op: relu, inputs: [x]}"}));
  EXPECT_TRUE(contains(e, "bad.yaml:3 (inputs[0] 'x', field 'shape'): expected at most 2^40"));
  EXPECT_TRUE(contains(e, "[4294967296, 4294967296, 4]"));
  // 2^20 x 2^20 = 2^40 elements is the limit itself, and loads.
  const Graph g = parse_yaml_workload(lines({"name: t", "inputs:", "  - {name: x, shape: [1048576, 1048576]}",
                                             "ops:", "  - {name: r, op: relu, inputs: [x]}"}),
                                      "ok.yaml");
  EXPECT_EQ(tensor(g, "r").elements(), std::int64_t{1} << 40);
}

TEST(YamlLoaderLimits, HugePaddingIsAnErrorNotAHang) {
  // Padding 10^12: a 2*10^12 + 222 square output of 16 channels, far beyond 2^40 elements.
  EXPECT_TRUE(contains(
      load_error(with_ops(
          {"  - {name: c, op: conv2d, inputs: [image], out_channels: 16, kernel: 3, padding: 1000000000000}"})),
      "bad.yaml:5 (op 'c'): expected at most 2^40"));
  // Padding 2^63 - 1 overflows the padded size itself.
  EXPECT_TRUE(contains(
      load_error(with_ops(
          {"  - {name: c, op: conv2d, inputs: [image], out_channels: 16, kernel: 3, padding: 9223372036854775807}"})),
      "expected a padded input (height) within 64-bit range"));
  // A 3*10^9-square input: 2.7 * 10^19 elements per channel.
  EXPECT_TRUE(contains(load_error(lines({"name: t", "inputs:", "  - {name: x, shape: [1, 3, 3000000000, 3000000000]}",
                                         "ops:", "  - {name: r, op: relu, inputs: [x]}"})),
                       "expected at most 2^40"));
}

TEST(YamlLoaderLimits, MacsPerOpAreBounded) {
  // 2^20-square matmul: 2^20 x 2^20 x 2^20 = 2^60 MACs > 2^50.
  EXPECT_TRUE(contains(load_error(lines({"name: t", "inputs:", "  - {name: x, shape: [1048576, 1048576]}",
                                         "ops:", "  - {name: mm, op: matmul, inputs: [x], out_features: 1048576}"})),
                       "bad.yaml:5 (op 'mm'): expected at most 2^50"));
}

TEST(YamlLoaderLimits, DuplicateKeysNameBothLines) {
  // yaml-cpp keeps the first `ops:` and drops the second silently.
  EXPECT_TRUE(contains(load_error(with_ops({"  - {name: a, op: relu, inputs: [image]}",
                                            "ops:", "  - {name: b, op: relu, inputs: [image]}"})),
                       "bad.yaml:6: expected each key once in a mapping, found 'ops' again (first at line 4)"));
  EXPECT_TRUE(
      contains(load_error(with_ops({"  - {name: a, op: relu, inputs: [image], name: b}"})), "found 'name' again"));
}

TEST(YamlLoaderLimits, DeepNestingAndBadEncodingAreRejected) {
  const std::string deep = "name: t\nx: " + std::string(100, '[') + std::string(100, ']') + "\n";
  EXPECT_TRUE(contains(load_error(deep), "bad.yaml:2: expected nesting at most 64 levels deep"));
  const std::string very_deep = "x: " + std::string(100000, '[') + "\n";
  EXPECT_TRUE(contains(load_error(very_deep), "expected nesting at most 64 levels deep"));
  // Latin-1 "é" (0xE9) where UTF-8 is expected, in the op name on line 5.
  EXPECT_TRUE(contains(load_error(with_ops({"  - {name: caf\xe9, op: relu, inputs: [image]}"})),
                       "bad.yaml:5: expected UTF-8 text, found byte 0xE9 at column 15"));
}

TEST(YamlLoaderLimits, AliasBombsAreRefusedBeforeExpansion) {
  // 10 aliases of 10 aliases, 6 levels: 10^6 values from a file of ~300 bytes.
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 6; ++i) {
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", *a" : "*a") + std::to_string(i - 1);
    text += "]\n";
  }
  EXPECT_TRUE(contains(load_error(text), "aliases (*name) expand beyond it"));
}

TEST(YamlLoaderErrors, UnknownTopLevelKey) {
  const std::string msg = load_error(lines({"name: t", "input:", "  - {name: x, shape: [1]}"}));
  EXPECT_TRUE(contains(msg, "bad.yaml:2 (field 'input')"));
  EXPECT_TRUE(contains(msg, "found unknown 'input'"));
  EXPECT_TRUE(contains(msg, "one of name, inputs, constants, ops, outputs"));
}

TEST(YamlLoaderErrors, UnknownOpKindListsTheValidOnes) {
  const std::string msg = load_error(with_ops({
      "  - {name: a, op: relu, inputs: [image]}",
      "  - {name: b, op: conv3d, inputs: [a]}",
  }));
  EXPECT_TRUE(contains(msg, "bad.yaml:6 (op 'b', field 'op')"));
  EXPECT_TRUE(contains(msg, "found 'conv3d'"));
  EXPECT_TRUE(contains(msg, "conv2d, matmul"));
  EXPECT_TRUE(contains(msg, "relu6"));
}

TEST(YamlLoaderErrors, UnknownAttributeForTheKind) {
  const std::string msg = load_error(with_ops({"  - {name: a, op: relu, inputs: [image], kernel: 3}"}));
  EXPECT_TRUE(contains(msg, "bad.yaml:5 (op 'a', field 'kernel')"));
  EXPECT_TRUE(contains(msg, "an attribute of relu"));
}

TEST(YamlLoaderErrors, MissingRequiredField) {
  const std::string msg = load_error(with_ops({
      "  - {name: a, op: relu, inputs: [image]}",
      "  - name: c",
      "    op: conv2d",
      "    inputs: [a]",
      "    kernel: 3",
  }));
  EXPECT_TRUE(contains(msg, "bad.yaml:6 (op 'c', field 'out_channels')"));
  EXPECT_TRUE(contains(msg, "expected field 'out_channels', found none"));
}

TEST(YamlLoaderErrors, WrongTypeNamesTheLineOfTheValue) {
  const std::string msg = load_error(with_ops({
      "  - name: c",
      "    op: conv2d",
      "    inputs: [image]",
      "    out_channels: sixteen",
      "    kernel: 3",
  }));
  EXPECT_TRUE(contains(msg, "bad.yaml:8 (op 'c', field 'out_channels')"));
  EXPECT_TRUE(contains(msg, "expected an integer, found 'sixteen'"));
}

TEST(YamlLoaderErrors, UndefinedInputIsNamed) {
  const std::string msg = load_error(with_ops({
      "  - {name: a, op: relu, inputs: [image]}",
      "  - {name: b, op: add, inputs: [a, imgae]}",
  }));
  EXPECT_TRUE(contains(msg, "bad.yaml:6 (op 'b', field 'inputs')"));
  EXPECT_TRUE(contains(msg, "undefined 'imgae'"));
}

TEST(YamlLoaderErrors, NegativeAndZeroSizes) {
  const std::string shape = load_error(lines({"name: t", "inputs:", "  - {name: x, shape: [1, -3, 8]}"}));
  EXPECT_TRUE(contains(shape, "bad.yaml:3 (inputs[0] 'x', field 'shape')"));
  EXPECT_TRUE(contains(shape, "expected a positive size, found -3"));
  const std::string zero =
      load_error(with_ops({"  - {name: c, op: conv2d, inputs: [image], out_channels: 0, kernel: 3}"}));
  EXPECT_TRUE(contains(zero, "bad.yaml:5 (op 'c', field 'out_channels')"));
  EXPECT_TRUE(contains(zero, "found 0"));
}

TEST(YamlLoaderErrors, DuplicateNameGivesTheFirstLine) {
  const std::string msg = load_error(with_ops({
      "  - {name: a, op: relu, inputs: [image]}",
      "  - {name: b, op: relu, inputs: [a]}",
      "  - {name: a, op: relu, inputs: [b]}",
  }));
  EXPECT_TRUE(contains(msg, "bad.yaml:7 (op 'a', field 'name')"));
  EXPECT_TRUE(contains(msg, "'a' already defined at line 5"));
}

TEST(YamlLoaderErrors, ShapeMismatchComesFromInference) {
  const std::string msg = load_error(with_ops({
      "  - {name: c, op: conv2d, inputs: [image], out_channels: 8, kernel: 3}",
      "  - {name: sum, op: add, inputs: [c, image]}",
  }));
  // c is [1, 8, 30, 30], which does not broadcast with [1, 3, 32, 32]
  EXPECT_TRUE(contains(msg, "bad.yaml:6 (op 'sum')"));
  EXPECT_TRUE(contains(msg, "[1, 8, 30, 30]"));
}

TEST(YamlLoaderErrors, YamlSyntaxErrorNamesTheLine) {
  const std::string msg = load_error(with_ops({
      "  - {name: a, op: relu, inputs: [image]}",
      "  - {name: b, op: relu, inputs: [a}",
  }));
  EXPECT_TRUE(contains(msg, "bad.yaml:6"));
  EXPECT_TRUE(contains(msg, "expected valid YAML"));
}

TEST(YamlLoaderErrors, Relu6TakesNoAttributesAndClipNeedsBounds) {
  EXPECT_TRUE(contains(load_error(with_ops({"  - {name: r, op: relu6, inputs: [image], max: 3}"})),
                       "bad.yaml:5 (op 'r', field 'max')"));
  EXPECT_TRUE(
      contains(load_error(with_ops({"  - {name: c, op: clip, inputs: [image], min: 0}"})), "expected field 'max'"));
}

class LoadWorkload : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("npusim_zoo_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    write("tiny.yaml", with_ops({"  - {name: a, op: relu, inputs: [image]}"}));
    write("other.yaml", with_ops({"  - {name: b, op: tanh, inputs: [image]}"}));
    write("notes.txt", "not a workload");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  std::filesystem::path dir_;
};

TEST_F(LoadWorkload, ResolvesPathsThenZooNames) {
  EXPECT_EQ(load_workload((dir_ / "tiny.yaml").string(), "/nonexistent").ops().at(0).name, "a");
  EXPECT_EQ(load_workload("other", dir_.string()).ops().at(0).name, "b");
  EXPECT_EQ(zoo_names(dir_.string()), (std::vector<std::string>{"other", "tiny"}));
}

TEST_F(LoadWorkload, UnknownNameListsTheZoo) {
  try {
    load_workload("resnet9000", dir_.string());
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "resnet9000");
    EXPECT_TRUE(contains(e.what(), "other, tiny"));
  }
  EXPECT_TRUE(contains(error_of([&] { load_workload((dir_ / "notes.txt").string(), ""); }), "'.txt'"));
}

TEST_F(LoadWorkload, FileErrorsCarryThePath) {
  write("broken.yaml", with_ops({"  - {name: a, op: relu, inputs: [nothing]}"}));
  const std::string path = (dir_ / "broken.yaml").string();
  try {
    load_workload(path, "");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), path + ":5 (op 'a', field 'inputs')"));
  }
}

}  // namespace
}  // namespace npusim::workloads
