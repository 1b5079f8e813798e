// The model zoo: each network loads, its MAC and parameter counts equal the exact figures
// derived by hand below, and sit within 1% (MACs) / 2% (params) of the published ones.
// BN is folded into conv biases: each BN layer's 2*C trainable parameters (gamma, beta)
// become the conv's C bias values, so folded params = published - sum of BN channels.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "workloads/loader.h"
#include "tests/support/test_paths.h"

namespace npusim::workloads {
namespace {

const std::string kZoo = std::string(test_paths::source_dir()) + "/workloads/zoo";

struct Figures {
  std::uint64_t macs, params;
};

Figures load(const std::string& name) {
  const GraphTotals t = graph_totals(load_workload(name, kZoo), 1);
  return {t.macs, t.params};
}

double relative(double value, double reference) {
  return std::abs(value - reference) / reference;
}

TEST(Zoo, ListsEveryModel) {
  EXPECT_EQ(zoo_names(kZoo), (std::vector<std::string>{"bert_base_layer", "ds_cnn_kws", "mobilenet_v2", "resnet18",
                                                       "resnet50", "small_cnn", "vit_s16_block"}));
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

TEST(Zoo, ResNet18) {
  const Figures f = load("resnet18");
  // conv1 7x7/2: 112*112*64*3*49 = 118,013,952; layer1: 4 convs 56*56*64*64*9 = 462,422,016;
  // layers 2-4 each: a strided 3x3 (28*28*128*64*9 = 57,802,752 for layer2), three 3x3 at the
  // new width (3 * 115,605,504) and a 1x1 projection (28*28*128*64 = 6,422,528): 411,041,792
  // each, as the map halves when the width doubles; fc 512*1000 = 512,000.
  EXPECT_EQ(f.macs, 118'013'952u + 462'422'016u + 3 * 411'041'792u + 512'000u);  // 1,814,073,344
  // Published: 1.81 G MACs (torchvision resnet18 "1.81 GFLOPS", counting MACs).
  EXPECT_LT(relative(f.macs, 1.814e9), 0.01);
  // torchvision resnet18: 11,689,512 params; its 20 BN layers have 4,800 channels
  // (64 + 4*64 + (4*128 + 128) + (4*256 + 256) + (4*512 + 512)).
  EXPECT_EQ(f.params, 11'689'512u - 4'800u);
  EXPECT_LT(relative(f.params, 11'689'512), 0.02);
}

TEST(Zoo, DsCnnKeywordSpotting) {
  const Graph g = load_workload("ds_cnn_kws", kZoo);
  const GraphTotals t = graph_totals(g, 1);
  // SAME padding keeps ceil(49/2) x ceil(10/2) = 25x5 = 125 pixels throughout.
  // conv1 10x4: 125*64*1*40 = 320,000; each block: depthwise 125*64*9 = 72,000 + pointwise
  // 125*64*64 = 512,000, four blocks 2,336,000; fc 64*12 = 768.
  EXPECT_EQ(t.macs, 2'656'768u);
  // Published: 2.66 M MACs for the MLPerf Tiny KWS reference (Hello Edge DS-CNN-S: 5.4 M
  // operations, i.e. 2 per MAC plus the elementwise ones).
  EXPECT_LT(relative(t.macs, 2.66e6), 0.01);
  // conv1 40*64 + 64 = 2,624; block 9*64 + 64 + 64*64 + 64 = 4,800 (x4); fc 64*12 + 12 = 780.
  // The Keras model's 9 BN layers (2*64 trainable each) add 1,152: 23,756 published.
  EXPECT_EQ(t.params, 22'604u);
  EXPECT_EQ(t.params, 23'756u - 1'152u);
  EXPECT_EQ(g.tensor(g.graph_outputs().at(0)).shape, (Shape{1, 12}));
}

TEST(Zoo, VitS16Block) {
  const Graph g = load_workload("vit_s16_block", kZoo);
  const GraphTotals t = graph_totals(g, 1);
  // T = 197 tokens, H = 384, 6 heads of 64, MLP 4H: q, k, v, proj 4*T*H*H = 116,195,328;
  // MLP 2*T*H*4H = 232,390,656; scores and context 2 * 6*T*T*64 = 29,805,312.
  EXPECT_EQ(t.macs, 378'391'296u);  // 12*T*H^2 + 2*T^2*H
  // Published: ViT-S/16 (DeiT-S) 4.6 G MACs for 12 blocks + the 16x16 patch embedding
  // (196*384*768 = 57,802,752) + the head (384*1000 = 384,000).
  EXPECT_LT(relative(12.0 * t.macs + 57'802'752 + 384'000, 4.6e9), 0.01);
  // 4*(H*H + H) + (H*4H + 4H) + (4H*H + H) + 2 layer norms * 2H = 1,774,464, + 1 attn_scale.
  EXPECT_EQ(t.params, 1'774'465u);
  // Published: 22.05 M params: 12 blocks + patch embedding 295,296 + position embeddings
  // 75,648 + class token 384 + final norm 768 + head 385,000.
  EXPECT_LT(relative(12.0 * 1'774'464 + 295'296 + 75'648 + 384 + 768 + 385'000, 22.05e6), 0.01);
  EXPECT_EQ(g.tensor(g.graph_outputs().at(0)).shape, (Shape{1, 197, 384}));
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
