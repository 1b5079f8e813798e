// The constant-folding evaluator: nodes whose inputs are all known are computed at import time,
// whatever the operator, so the parameters they feed (pads, shapes, repeats) become concrete.
// Each value below is worked out by hand; a wrong fold changes an output shape.
#include <gtest/gtest.h>

#include <limits>

#include "onnx_builder.h"

namespace npusim::workloads {
namespace {

using testing::contains;
using testing::count_ops;
using testing::input_error;
using testing::OnnxBuilder;
using testing::set_int;
using testing::set_ints;
using testing::set_string;

const Shape& shape_of(const Graph& g, const std::string& tensor) {
  const int i = g.find_tensor(tensor);
  EXPECT_GE(i, 0) << tensor;
  return g.tensor(i >= 0 ? i : 0).shape;
}

TEST(OnnxFold, Tf2onnxPadsFromSplitAndConcat) {
  // tf2onnx writes a TF paddings tensor as ONNX pads through Split + Concat of a constant:
  // Split([0,2,4,0, 0,1,3,0]) = [0,2,4,0], [0,1,3,0]; Concat(second, first) = begins
  // [0,1,3,0] then ends [0,2,4,0]: [1, 8, 8, 4] becomes [1, 8+1+2, 8+3+4, 4] = [1, 11, 15, 4].
  OnnxBuilder b;
  b.input("x", {1, 8, 8, 4}).ints("tf_pads", {0, 2, 4, 0, 0, 1, 3, 0});
  set_int(b.node("Split", {"tf_pads"}, {"ends", "begins"}, "split"), "axis", 0);
  set_int(b.node("Concat", {"begins", "ends"}, {"pads"}, "concat"), "axis", 0);
  b.node("Pad", {"x", "pads"}, {"y"}, "pad");
  b.output("y");
  const Graph g = b.load();
  EXPECT_EQ(shape_of(g, "y"), (Shape{1, 11, 15, 4}));
  EXPECT_EQ(count_ops(g, OpKind::Pad), 1);
  EXPECT_EQ(count_ops(g, OpKind::Slice), 0);   // the Split was folded, not mapped
  EXPECT_EQ(count_ops(g, OpKind::Concat), 0);  // so was the Concat
}

TEST(OnnxFold, SplitWithSizesAndUnevenDefault) {
  // Split of [10 values] into sizes [3, 7] given as an input; then the 7 into 3 equal parts of
  // ceil(7/3) = 3: sizes [3, 3, 1]. The target [9 - 6, max(7, 0, 0)] = [3, 7] is built from them.
  OnnxBuilder b;
  b.input("x", {1, 21}).ints("v", {0, 1, 2, 3, 7, 0, 0, 0, 0, 9}).ints("sizes", {3, 7});
  b.node("Split", {"v", "sizes"}, {"head", "tail"}, "split");
  b.node("Split", {"tail"}, {"t0", "t1", "t2"}, "thirds");  // [7, 0, 0], [0, 0, 0], [9]
  b.ints("six", {6});
  b.node("Sub", {"t2", "six"}, {"three"}, "sub");
  set_int(b.node("ReduceMax", {"t0"}, {"seven"}, "rmax"), "keepdims", 1);
  set_int(b.node("Concat", {"three", "seven"}, {"shape"}, "concat"), "axis", 0);
  b.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  b.output("y");
  const Graph g = b.load();
  EXPECT_EQ(shape_of(g, "y"), (Shape{3, 7}));  // 9 - 6 = 3 and max(7, 0, 0) = 7
}

TEST(OnnxFold, SplitSizesThatDoNotAddUpAreNamed) {
  OnnxBuilder b;
  b.input("x", {1, 8}).ints("v", {1, 2, 3, 4}).ints("sizes", {1, 2});
  b.node("Split", {"v", "sizes"}, {"a", "b"}, "bad_split");
  b.node("Reshape", {"x", "a"}, {"y"}, "reshape");
  b.output("y");
  const std::string msg = input_error([&] { b.load(); });
  EXPECT_TRUE(contains(msg, "node 'bad_split' Split"));
  EXPECT_TRUE(contains(msg, "adding up to 4, found [1, 2]"));
}

TEST(OnnxFold, TileOfAShape) {
  // Tile([2, 8], repeats [2]) = [2, 8, 2, 8]: 256 elements, x's count.
  OnnxBuilder b;
  b.input("x", {1, 256}).ints("half", {2, 8}).ints("reps", {2});
  b.node("Tile", {"half", "reps"}, {"shape"}, "tile");
  b.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  b.output("y");
  EXPECT_EQ(shape_of(b.load(), "y"), (Shape{2, 8, 2, 8}));
}

TEST(OnnxFold, EinsumOfConstants) {
  // "ij,j->i": [[1, 2], [3, 4]] . [1, 1] = [3, 7]; x [1, 21] reshaped to [3, 7].
  OnnxBuilder b;
  b.input("x", {1, 21}).ints("m", {1, 2, 3, 4}, {2, 2}).ints("ones", {1, 1});
  set_string(b.node("Einsum", {"m", "ones"}, {"shape"}, "einsum"), "equation", "ij,j->i");
  b.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  // Implicit output ("ij,jk" -> "ik") and a transpose-only equation ("ij->ji"):
  // [[1, 2], [3, 4]] . [[1, 1], [1, 1]] = [[3, 3], [7, 7]]; ji of that: [[3, 7], [3, 7]];
  // its first row [3, 7] again.
  b.ints("ones22", {1, 1, 1, 1}, {2, 2}).ints("zero", {0});
  set_string(b.node("Einsum", {"m", "ones22"}, {"prod"}, "einsum2"), "equation", "ij, jk");
  set_string(b.node("Einsum", {"prod"}, {"prod_t"}, "einsum3"), "equation", "ij->ji");
  set_int(b.node("Gather", {"prod_t", "zero"}, {"row"}, "gather"), "axis", 0);
  b.ints("flat", {-1});
  b.node("Reshape", {"row", "flat"}, {"shape2"}, "flatten_row");
  b.node("Reshape", {"x", "shape2"}, {"y2"}, "reshape2");
  b.output("y").output("y2");
  const Graph g = b.load();
  EXPECT_EQ(shape_of(g, "y"), (Shape{3, 7}));
  EXPECT_EQ(shape_of(g, "y2"), (Shape{3, 7}));
}

TEST(OnnxFold, CumSumRangeAndArgMax) {
  // CumSum([2, 1, 2]) = [2, 3, 5] (30 elements); exclusive + reverse of [1, 2, 3] = [5, 3, 0]
  // feeds nothing but must fold; ArgMax([5, 9, 3]) = 1 and Range(0, 3, 1) = [0, 1, 2].
  OnnxBuilder b;
  b.input("x", {30}).input("z", {2, 3}).ints("v", {2, 1, 2}).ints("axis0", {0});
  b.node("CumSum", {"v", "axis0"}, {"shape"}, "cumsum");
  b.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  b.ints("peaks", {5, 9, 3});
  set_int(b.node("ArgMax", {"peaks"}, {"where_max"}, "argmax"), "keepdims", 1);  // [1]
  b.ints("minus1", {-1});
  set_int(b.node("Concat", {"where_max", "minus1"}, {"shape3"}, "concat"), "axis", 0);  // [1, -1]
  b.node("Reshape", {"z", "shape3"}, {"y3"}, "reshape3");
  b.output("y").output("y3");
  const Graph g = b.load();
  EXPECT_EQ(shape_of(g, "y"), (Shape{2, 3, 5}));
  EXPECT_EQ(shape_of(g, "y3"), (Shape{1, 6}));
}

TEST(OnnxFold, ClipAndWhereOfConstantsFeedAShape) {
  // Clip([0, 50, 3], min 1, max 4) = [1, 4, 3]; Where([1, 0, 1], it, [7, 7, 7]) = [1, 7, 3].
  OnnxBuilder b;
  b.input("x", {21}).ints("v", {0, 50, 3}).ints("lo", {1}, {}).ints("hi", {4}, {});
  b.node("Clip", {"v", "lo", "hi"}, {"clipped"}, "clip");
  b.ints("mask", {1, 0, 1}).ints("sevens", {7, 7, 7});
  set_int(b.node("Cast", {"mask"}, {"cond"}, "cast"), "to", ::onnx::TensorProto::BOOL);
  b.node("Where", {"cond", "clipped", "sevens"}, {"shape"}, "where");
  b.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  b.output("y");
  EXPECT_EQ(shape_of(b.load(), "y"), (Shape{1, 7, 3}));
}

TEST(OnnxFold, ScatterNDOfConstantsFeedsAShape) {
  // Swin-T builds its attention masks with ScatterND on shapes. [1, 1, 24] with rows [0] and [2]
  // (indices [[0], [2]]) set to 2 and 12: [2, 1, 12]. With reduction add, [1, 1, 1] gets 2 + 3 at
  // row 1: [1, 6, 1].
  OnnxBuilder b;
  b.input("x", {24}).input("z", {6});
  b.ints("data", {1, 1, 24}).ints("rows", {0, 2}, {2, 1}).ints("updates", {2, 12});
  b.node("ScatterND", {"data", "rows", "updates"}, {"shape"}, "scatter");
  b.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  b.ints("ones", {1, 1, 1}).ints("twice", {1, 1}, {2, 1}).ints("parts", {2, 3});
  set_string(b.node("ScatterND", {"ones", "twice", "parts"}, {"shape2"}, "scatter_add"), "reduction", "add");
  b.node("Reshape", {"z", "shape2"}, {"y2"}, "reshape2");
  b.output("y").output("y2");
  const Graph g = b.load();
  EXPECT_EQ(shape_of(g, "y"), (Shape{2, 1, 12}));
  EXPECT_EQ(shape_of(g, "y2"), (Shape{1, 6, 1}));
}

TEST(OnnxFold, ScatterAndGatherElementsAndGatherND) {
  // ScatterElements([4, 4, 4], [0, 2], [2, 3], axis 0) = [2, 4, 3] (24 elements).
  // GatherElements([[1, 2], [3, 4]], [[1, 0], [0, 0]], axis 1) = [[2, 1], [3, 3]]: [2, 1, 3, 3]
  // once flattened (18 elements). GatherND([[2, 3], [4, 5]], [[1, 0], [0, 1]]) = [4, 3]; with
  // batch_dims 1 and indices [[1], [0]]: [data[0][1], data[1][0]] = [3, 4] (12 elements each).
  OnnxBuilder b;
  b.input("x", {24}).input("w", {18}).input("v", {12}).input("u", {12});
  b.ints("fours", {4, 4, 4}).ints("at", {0, 2}).ints("put", {2, 3});
  b.node("ScatterElements", {"fours", "at", "put"}, {"s1"}, "scatter_elements");
  b.node("Reshape", {"x", "s1"}, {"y1"}, "r1");
  b.ints("m", {1, 2, 3, 4}, {2, 2}).ints("mi", {1, 0, 0, 0}, {2, 2});
  set_int(b.node("GatherElements", {"m", "mi"}, {"g2"}, "gather_elements"), "axis", 1);
  b.ints("flat", {4});
  b.node("Reshape", {"g2", "flat"}, {"s2"}, "flatten_g2");
  b.node("Reshape", {"w", "s2"}, {"y2"}, "r2");
  b.ints("d", {2, 3, 4, 5}, {2, 2}).ints("di", {1, 0, 0, 1}, {2, 2});
  b.node("GatherND", {"d", "di"}, {"s3"}, "gather_nd");
  b.node("Reshape", {"v", "s3"}, {"y3"}, "r3");
  b.ints("bi", {1, 0}, {2, 1});
  set_int(b.node("GatherND", {"d", "bi"}, {"s4"}, "gather_nd_batch"), "batch_dims", 1);
  b.node("Reshape", {"u", "s4"}, {"y4"}, "r4");
  b.output("y1").output("y2").output("y3").output("y4");
  const Graph g = b.load();
  EXPECT_EQ(shape_of(g, "y1"), (Shape{2, 4, 3}));
  EXPECT_EQ(shape_of(g, "y2"), (Shape{2, 1, 3, 3}));
  EXPECT_EQ(shape_of(g, "y3"), (Shape{4, 3}));
  EXPECT_EQ(shape_of(g, "y4"), (Shape{3, 4}));
}

TEST(OnnxFold, TriluOfAConstantMask) {
  // A causal mask (GPT exports: torch.tril(ones)). Lower triangle of ones[3, 3]: rows
  // [1,0,0], [1,1,0], [1,1,1], row sums [1, 2, 3]. Upper from diagonal k = -1: rows [1,1,1],
  // [1,1,1], [0,1,1], sums [3, 3, 2]. Each sum vector reshapes an input.
  OnnxBuilder b(14);
  b.input("x", {6}).input("z", {18});
  b.ints("ones", {1, 1, 1, 1, 1, 1, 1, 1, 1}, {3, 3}).ints("minus1", {-1}, {}).ints("axis1", {1});
  set_int(b.node("Trilu", {"ones"}, {"lower"}, "tril"), "upper", 0);
  set_int(b.node("ReduceSum", {"lower", "axis1"}, {"s1"}, "sum1"), "keepdims", 0);
  b.node("Reshape", {"x", "s1"}, {"y1"}, "r1");
  b.node("Trilu", {"ones", "minus1"}, {"upper"}, "triu");
  set_int(b.node("ReduceSum", {"upper", "axis1"}, {"s2"}, "sum2"), "keepdims", 0);
  b.node("Reshape", {"z", "s2"}, {"y2"}, "r2");
  b.output("y1").output("y2");
  const Graph g = b.load();
  EXPECT_EQ(shape_of(g, "y1"), (Shape{1, 2, 3}));
  EXPECT_EQ(shape_of(g, "y2"), (Shape{3, 3, 2}));
}

TEST(OnnxFold, ScatterIndexOutsideTheDataIsNamed) {
  OnnxBuilder b;
  b.input("x", {6}).ints("data", {1, 6}).ints("rows", {5}, {1, 1}).ints("updates", {2});
  b.node("ScatterND", {"data", "rows", "updates"}, {"shape"}, "scatter");
  b.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  b.output("y");
  const std::string e = input_error([&] { b.load(); });
  EXPECT_TRUE(contains(e, "scatter")) << e;
  EXPECT_TRUE(contains(e, "indices in [-2, 1], found 5")) << e;
  // An index past int64 (a float tensor holding 1e30) is compared before it is converted.
  OnnxBuilder h;
  h.input("x", {4}).ints("data", {1, 2, 3, 4}).weight("far", {1}, {1e30f});
  h.node("Gather", {"data", "far"}, {"g"}, "gather_far");
  h.node("Reshape", {"x", "g"}, {"y"}, "reshape");
  h.output("y");
  const std::string e3 = input_error([&] { h.load(); });
  EXPECT_TRUE(contains(e3, "gather_far")) << e3;
  EXPECT_TRUE(contains(e3, "indices in [-4, 3], found 1.0000000150474662e+30")) << e3;
  // GatherElements indices longer than the data on a dim other than the axis would read past it.
  OnnxBuilder c;
  c.input("x", {4}).ints("m", {1, 2, 3, 4}, {2, 2}).ints("mi", {0, 0, 0, 0, 0, 0}, {3, 2});
  set_int(c.node("GatherElements", {"m", "mi"}, {"g"}, "gather_elements"), "axis", 1);
  c.ints("flat", {6});
  c.node("Reshape", {"g", "flat"}, {"s"}, "flatten");
  c.node("Reshape", {"x", "s"}, {"y"}, "reshape");
  c.output("y");
  const std::string e2 = input_error([&] { c.load(); });
  EXPECT_TRUE(contains(e2, "gather_elements")) << e2;
  EXPECT_TRUE(contains(e2, "indices no larger than the data [2, 2] but on axis 1")) << e2;
}

TEST(OnnxFold, SliceToTheEndWithInt64MaxEnds) {
  // PyTorch writes x[:, 0::4] as Slice(starts [0], ends [INT64_MAX], axes [1], steps [4]) (seen
  // in Keypoint R-CNN's RPN). INT64_MAX means "to the end": axis 1 of size 10 gives
  // elements 0, 4, 8 = 3; ends INT64_MIN with step -1 means "to the front": 9..0 = 10.
  OnnxBuilder b;
  b.input("x", {2, 10})
      .ints("s0", {0})
      .ints("e_max", {std::numeric_limits<std::int64_t>::max()})
      .ints("ax", {1})
      .ints("st4", {4})
      .ints("s9", {9})
      .ints("e_min", {std::numeric_limits<std::int64_t>::min()})
      .ints("back", {-1});
  b.node("Slice", {"x", "s0", "e_max", "ax", "st4"}, {"every4"}, "every4");
  b.node("Slice", {"x", "s9", "e_min", "ax", "back"}, {"reversed"}, "reversed");
  b.output("every4").output("reversed");
  const Graph g = b.load();
  EXPECT_EQ(shape_of(g, "every4"), (Shape{2, 3}));
  EXPECT_EQ(shape_of(g, "reversed"), (Shape{2, 10}));
}

}  // namespace
}  // namespace npusim::workloads
