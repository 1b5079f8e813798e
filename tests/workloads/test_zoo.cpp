// The model zoo: each network loads, its MAC and parameter counts equal the exact figures
// derived by hand below, and sit within 1% (MACs) / 2% (params) of the published ones.
// BN is folded into conv biases: each BN layer's 2*C trainable parameters (gamma, beta)
// become the conv's C bias values, so folded params = published - sum of BN channels.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "workloads/loader.h"

namespace npusim::workloads {
namespace {

const std::string kZoo = std::string(NPUSIM_SOURCE_DIR) + "/workloads/zoo";

struct Figures {
  std::uint64_t macs, params;
};

Figures load(const std::string& name) {
  const GraphTotals t = graph_totals(load_workload(name, kZoo), 1);
  return {t.macs, t.params};
}

double relative(double value, double reference) { return std::abs(value - reference) / reference; }

TEST(Zoo, ListsEveryModel) {
  EXPECT_EQ(zoo_names(kZoo),
            (std::vector<std::string>{"bert_base_layer", "mobilenet_v2", "resnet50", "small_cnn"}));
}

TEST(Zoo, SmallCnn) {
  const Graph g = load_workload("small_cnn", kZoo);
  const GraphTotals t = graph_totals(g, 1);
  // conv1 64*64*16*3*9 = 1,769,472; conv2 32*32*32*16*9 = 4,718,592;
  // conv3 32*32*32*32*9 = 9,437,184; conv4 16*16*64*32*9 = 4,718,592; fc 64*10 = 640
  EXPECT_EQ(t.macs, 20'644'480u);
  // weights+biases: 448 + 4,640 + 9,248 + 18,496 + 650
  EXPECT_EQ(t.params, 33'482u);
  ASSERT_EQ(g.graph_outputs().size(), 1u);
  EXPECT_EQ(g.tensor(g.graph_outputs()[0]).shape, (Shape{1, 10}));
}

TEST(Zoo, MobileNetV2) {
  const Figures f = load("mobilenet_v2");
  // Per stage (t, c, n, s): stem 3x3/2 conv 10,838,016; (1,16,1,1) 10,035,200;
  // (6,24,2,2) 54,942,720; (6,32,3,2) 37,443,840; (6,64,4,2) 38,497,536;
  // (6,96,3,1) 58,103,808; (6,160,3,2) 46,560,192; (6,320,1,1) 23,002,560;
  // 1x1 conv to 1280 at 7x7: 49*320*1280 = 20,070,400; fc 1280*1000 = 1,280,000.
  EXPECT_EQ(f.macs, 300'774'272u);
  // Published: 300 M multiply-adds (Sandler et al. 2018, Table 3).
  EXPECT_LT(relative(f.macs, 300e6), 0.01);
  // torchvision mobilenet_v2: 3,504,872 params; its 52 BN layers have 17,056 channels.
  EXPECT_EQ(f.params, 3'504'872u - 17'056u);
  EXPECT_LT(relative(f.params, 3'504'872), 0.02);
}

TEST(Zoo, ResNet50) {
  const Figures f = load("resnet50");
  // conv1 7x7/2: 112*112*64*3*49 = 118,013,952; layer1 667,942,912; layer2 1,027,604,480;
  // layer3 1,464,336,384; layer4 809,238,528; fc 2048*1000 = 2,048,000.
  EXPECT_EQ(f.macs, 4'089'184'256u);
  // Published: 4.1 G MACs for v1.5 (torchvision lists 4.09 "GFLOPS", counting MACs).
  EXPECT_LT(relative(f.macs, 4.1e9), 0.01);
  // torchvision resnet50: 25,557,032 params; its 53 BN layers have 26,560 channels.
  EXPECT_EQ(f.params, 25'557'032u - 26'560u);
  EXPECT_LT(relative(f.params, 25.6e6), 0.02);
}

TEST(Zoo, BertBaseLayer) {
  const Graph g = load_workload("bert_base_layer", kZoo);
  const GraphTotals t = graph_totals(g, 1);
  // S = 128, H = 768, FFN = 4H, 12 heads of 64:
  // Q, K, V, O projections 4*S*H*H = 301,989,888; FFN 2*S*H*4H = 603,979,776;
  // scores Q.K^T and probs.V 2 * 12*S*S*64 = 25,165,824.  Sum = 12*S*H^2 + 2*S^2*H.
  EXPECT_EQ(t.macs, 931'135'488u);
  EXPECT_LT(relative(t.macs, 0.93e9), 0.01);
  // 4*(H*H + H) + (H*4H + 4H) + (4H*H + H) + 2 layer norms * 2H = 7,087,872 (one layer of
  // BERT-base, Devlin et al. 2019), + 1 for the attention scale constant.
  EXPECT_EQ(t.params, 7'087'873u);
  EXPECT_LT(relative(t.params, 7'087'872), 0.02);
  // softmax over [1, 12, 128, 128]: 5 * 196,608 vector ops
  const Op& softmax = g.op(g.find_op("attention.probs"));
  EXPECT_EQ(op_cost(g, softmax, 1).vector_ops, 983'040u);
  EXPECT_EQ(g.tensor(g.graph_outputs().at(0)).shape, (Shape{1, 128, 768}));
}

}  // namespace
}  // namespace npusim::workloads
