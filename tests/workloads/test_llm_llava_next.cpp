// LLaVA-NeXT (model_type llava_next) and LLaVA-OneVision (llava_onevision): LLaVA's tower and
// projector run on an image cut at its best pinpoint into crops (anyres tiling), the crops' tokens
// packed into a grid that is unpadded, downscaled (OneVision's anyres_max_N) and ended by a newline
// token a row, as transformers' select_best_resolution, unpad_image and pack_image_features do.
// Tokens, pinpoints, parameters and encoder MACs by hand.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "tests/support/test_paths.h"
#include "tests/workloads/llm_config_errors.h"
#include "workloads/llm/llm_config.h"
#include "workloads/llm/llm_graph.h"

namespace npusim::workloads::llm {
namespace {

/// test_llm_llava.cpp's tiny LLaVA (a llama of hidden 128 under a CLIP tower of 3 layers, hidden
/// 64, images of 56 px: 4 x 4 = 16 patches and the class row, read at layer -2, the class row
/// dropped: 16 tokens an image) as llava_next, with LlavaNextConfig's pinpoints at a sixth of
/// their size: [height, width] 56x112, 112x56, 112x112, 168x56, 56x168 (crops of 56 px).
const char* kTinyNext = R"({"model_type": "llava_next", "projector_hidden_act": "gelu",
  "vision_feature_layer": -2, "vision_feature_select_strategy": "default",
  "image_grid_pinpoints": [[56, 112], [112, 56], [112, 112], [168, 56], [56, 168]],
  "text_config": {"model_type": "llama", "hidden_size": 128, "num_hidden_layers": 2, "intermediate_size": 256,
    "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1024, "max_position_embeddings": 4096},
  "vision_config": {"model_type": "clip_vision_model", "hidden_size": 64, "image_size": 56, "intermediate_size": 96,
    "num_attention_heads": 4, "num_hidden_layers": 3, "patch_size": 14}})";

/// A tiny OneVision: a qwen2 of hidden 128 under a SigLIP tower of 2 layers, hidden 64 (4 heads),
/// MLP 96, images of 56 px (16 patches, no class row, every row kept: 16 tokens an image), read
/// at its last layer; pinpoints every [height, width] of 56, 112 and 168 px.
const char* kTinyOnevision = R"({"model_type": "llava_onevision",
  "image_grid_pinpoints": [[56, 56], [56, 112], [56, 168], [112, 56], [112, 112], [112, 168], [168, 56],
    [168, 112], [168, 168]],
  "text_config": {"model_type": "qwen2", "hidden_size": 128, "num_hidden_layers": 2, "intermediate_size": 256,
    "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1024, "max_position_embeddings": 4096},
  "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 64, "image_size": 56,
    "intermediate_size": 96, "num_attention_heads": 4, "num_hidden_layers": 2, "patch_size": 14}})";

/// `base` with `key` set to `value` at the top level (a JSON text).
std::string with(const char* base, const std::string& key, const std::string& value) {
  nlohmann::json j = nlohmann::json::parse(base);
  j[key] = nlohmann::json::parse(value);
  return j.dump();
}

VisionInput image(const LlmConfig& c, const char* size) {
  return vision_input(c, size, "--image");
}

/// An image's tiling as the tests state it: the images through the tower (the base image and the
/// crops), the crops' token grid after unpad_image and after OneVision's downscale (rows x
/// columns), and the tokens the prompt gains.
struct Tiling {
  std::int64_t images, unpadded_rows, unpadded_cols, packed_rows, packed_cols, tokens;
  bool operator==(const Tiling& o) const {
    return std::tie(images, unpadded_rows, unpadded_cols, packed_rows, packed_cols, tokens) ==
           std::tie(o.images, o.unpadded_rows, o.unpadded_cols, o.packed_rows, o.packed_cols, o.tokens);
  }
};

std::ostream& operator<<(std::ostream& os, const Tiling& t) {
  return os << t.images << " images, unpadded " << t.unpadded_rows << " x " << t.unpadded_cols << ", packed "
            << t.packed_rows << " x " << t.packed_cols << ", " << t.tokens << " tokens";
}

Tiling tiling(const LlmConfig& c, const char* size) {
  const VisionInput v = image(c, size);
  return {v.images, v.unpadded_rows, v.unpadded_cols, v.packed_rows, v.packed_cols, v.tokens};
}

/// The shape of the encoder's last output: the image tokens the prompt gains.
Shape image_tokens_shape(const Graph& g) {
  const int op = g.find_op("model.pack_image_features.image_tokens");
  return op < 0 ? Shape{} : g.tensor(g.op(op).outputs[0]).shape;
}

TEST(LlmLlavaNext, ReadsThePinpointsAndTakesLlavaNextConfigsDefaults) {
  const LlmConfig c = parse_llm_config(kTinyNext, "next.json");
  EXPECT_EQ(c.model_type, "llava_next");
  EXPECT_EQ(c.field_prefix, "text_config.");
  EXPECT_EQ(c.vision.kind, VisionKind::Clip);
  EXPECT_EQ(c.vision.depth, 2);
  ASSERT_EQ(c.vision.pinpoints.size(), 5u);
  EXPECT_EQ(c.vision.pinpoints[4].height, 56);
  EXPECT_EQ(c.vision.pinpoints[4].width, 168);
  EXPECT_EQ(c.vision.max_tiles, 0);  // llava_next never downscales the grid
  // Only the model_type: LlavaNextConfig's llama, its CLIP ViT-L/14 at 336 px read at -2 without
  // the class row (576 tokens an image), and its five pinpoints.
  const LlmConfig d = parse_llm_config(R"({"model_type": "llava_next"})", "next.json");
  EXPECT_EQ(d.hidden, 4096);
  EXPECT_EQ(d.vision.kind, VisionKind::Clip);
  EXPECT_EQ(d.vision.embed_dim, 1024);
  EXPECT_EQ(d.vision.depth, 23);
  EXPECT_EQ(d.vision.tokens, 576);
  ASSERT_EQ(d.vision.pinpoints.size(), 5u);
  EXPECT_EQ(d.vision.pinpoints[3].height, 1008);
  EXPECT_EQ(d.vision.pinpoints[3].width, 336);
}

TEST(LlmLlavaNext, TheBestPinpointKeepsTheMostPixelsThenWastesTheLeast) {
  const LlmConfig c = parse_llm_config(kTinyNext, "next.json");
  // 200x60 (W x H) scaled into each [height, width], its aspect ratio kept: 56x112 by 0.56 keeps
  // 112 x 33 = 3,696 px; 112x56 by 0.28 keeps 56 x 16 = 896; 112x112 by 0.56 3,696; 168x56 896;
  // 56x168 by min(168 / 200, 56 / 60) = 0.84 keeps 168 x 50 = 8,400: the most, one row of 3 crops.
  VisionInput v = image(c, "200x60");
  EXPECT_EQ(v.resized_width, 168);
  EXPECT_EQ(v.resized_height, 56);
  EXPECT_EQ(v.crop_rows, 1);
  EXPECT_EQ(v.crop_cols, 3);
  EXPECT_EQ(v.images, 4);  // the base image and 3 crops
  // 112x112 keeps all its 12,544 px only in 112x112 (2 x 2 crops).
  v = image(c, "112x112");
  EXPECT_EQ(v.crop_rows, 2);
  EXPECT_EQ(v.crop_cols, 2);
  EXPECT_EQ(v.images, 5);
  // 56x56 keeps its 3,136 px in every pinpoint: the least wasted area, 56 x 112 = 6,272 in 56x112
  // and in 112x56, goes to the first listed: one row of 2 crops.
  v = image(c, "56x56");
  EXPECT_EQ(v.resized_width, 112);
  EXPECT_EQ(v.resized_height, 56);
  EXPECT_EQ(v.images, 3);
}

TEST(LlmLlavaNext, TokensAreTheBaseImageTheUnpaddedGridAndANewlineARow) {
  const LlmConfig c = parse_llm_config(kTinyNext, "next.json");
  EXPECT_EQ(image(c, "112x112").base_tokens, 16);
  // A crop is 4 x 4 tokens. 112x112: 2 x 2 crops, a grid of 8 x 8 tokens, nothing to unpad:
  // 16 + 8 x (8 + 1) = 88.
  EXPECT_EQ(tiling(c, "112x112"), (Tiling{5, 8, 8, 8, 8, 88}));
  // 160x120 (4:3) in 112x112: wider than the square grid, so the image fills int(120 x 8 / 160)
  // = 6 of its 8 rows and (8 - 6) / 2 = 1 padded row goes at the top and the bottom: 6 x 8 tokens,
  // 16 + 6 x (8 + 1) = 70.
  EXPECT_EQ(tiling(c, "160x120"), (Tiling{5, 6, 8, 6, 8, 70}));
  // 120x160 (3:4): the columns instead, 8 x 6 tokens, 16 + 8 x (6 + 1) = 72.
  EXPECT_EQ(tiling(c, "120x160"), (Tiling{5, 8, 6, 8, 6, 72}));
  // 200x60 in 56x168 (4 x 12 tokens): int(60 x 12 / 200) = 3 rows filled, (4 - 3) // 2 = 0 rows of
  // padding dropped on each side, so all 4 stay: 16 + 4 x 13 = 68.
  EXPECT_EQ(tiling(c, "200x60"), (Tiling{4, 4, 12, 4, 12, 68}));
  // 56x56 in 56x112 (4 x 8 tokens): int(56 x 4 / 56) = 4 columns filled, 2 dropped each side:
  // 16 + 4 x 5 = 36.
  EXPECT_EQ(tiling(c, "56x56"), (Tiling{3, 4, 4, 4, 4, 36}));
}

TEST(LlmLlavaNext, TheEncoderRunsTheBaseImageAndEveryCropThroughTheTower) {
  const LlmConfig c = parse_llm_config(kTinyNext, "next.json");
  // The checkpoint: test_llm_llava.cpp's 151,904 and image_newline's 128. The graph: its 122,432
  // (the blocks the encoder runs) and image_newline's 128.
  EXPECT_EQ(vision_parameter_count(c), 151904ull + 128);
  // One image's MACs are 2,044,160 (test_llm_llava.cpp: the patch embedding, 2 blocks of 17 rows,
  // the projector on 16 rows); the base image and 2 x 2 crops are 5 images through every block and
  // the projector, and the packing is data movement: 5 x 2,044,160 = 10,220,800.
  const VisionInput v = image(c, "160x120");
  const Graph g = build_vision_encoder(c, v, Widths{});
  EXPECT_EQ(graph_totals(g, 2).params, 122432ull + 128);
  EXPECT_EQ(graph_totals(g, 2).macs, 10220800ull);
  // The same tower on one image (llava, no tiling): a fifth of that.
  nlohmann::json one = nlohmann::json::parse(kTinyNext);
  one["model_type"] = "llava";
  const LlmConfig llava = parse_llm_config(one.dump(), "llava.json");
  EXPECT_EQ(graph_totals(build_vision_encoder(llava, image(llava, "160x120"), Widths{}), 2).macs * 5, 10220800ull);
  // The projector reads 5 x 16 rows; the prompt's image tokens are the 70 rows packed from them.
  const int projector = g.find_op("multi_modal_projector.linear_2");
  ASSERT_GE(projector, 0);
  EXPECT_EQ(g.tensor(g.op(projector).outputs[0]).shape, (Shape{80, 128}));
  EXPECT_EQ(image_tokens_shape(g), (Shape{70, 128}));
  EXPECT_GE(g.find_op("model.pack_image_features.unpad_rows"), 0);
  EXPECT_EQ(g.find_op("model.pack_image_features.anyres_max_downscale"), -1);
}

TEST(LlmLlavaNext, AnImageFarWiderThanHighKeepsNoGridRows) {
  const LlmConfig c = parse_llm_config(kTinyNext, "next.json");
  // 1000x10 goes to 56x168 (168 x 1 px kept), a grid of 4 x 12 tokens of which the image fills
  // int(10 x 12 / 1000) = 0 rows: all 4 are padding, and the prompt gains the base image's 16
  // tokens alone (transformers' count too).
  EXPECT_EQ(tiling(c, "1000x10"), (Tiling{4, 0, 12, 0, 12, 16}));
  EXPECT_EQ(graph_totals(build_vision_encoder(c, image(c, "1000x10"), Widths{}), 2).macs, 4 * 2044160ull);
  // 10x1000: no columns, but each of the 12 rows keeps its newline token: 16 + 12 x (0 + 1) = 28.
  EXPECT_EQ(tiling(c, "10x1000"), (Tiling{4, 12, 0, 12, 0, 28}));
  EXPECT_EQ(image_tokens_shape(build_vision_encoder(c, image(c, "10x1000"), Widths{})), (Shape{28, 128}));
}

TEST(LlmLlavaNext, TheShippedLlavaV16Mistral7B) {
  const LlmConfig c = load_llm_config("llava-v1.6-mistral-7b-hf", test_paths::source_dir());
  EXPECT_EQ(c.model_type, "llava_next");
  EXPECT_EQ(c.hidden, 4096);
  EXPECT_EQ(c.kv_heads, 8);
  EXPECT_EQ(c.intermediate, 14336);
  EXPECT_EQ(c.vocab, 32064);
  // The language model: embeddings and head 2 x 32064 x 4096 = 262,668,288; a layer q and o
  // 2 x 4096^2, k and v 2 x 4096 x 1024, the MLP 3 x 4096 x 14336, 2 norms: 218,112,000, x 32 =
  // 6,979,584,000; the final norm 4,096: 7,242,256,384. The tower and projector as
  // llava-1.5-7b-hf's (303,507,456 + 20,979,712) and image_newline 4,096: 324,491,264. In all
  // 7,566,747,648: the model card's 7.57 B.
  EXPECT_EQ(parameter_count(c), 7242256384ull);
  EXPECT_EQ(vision_parameter_count(c), 324491264ull);
  // 672x672: 672x672 (2 x 2 crops of 336), a grid of 48 x 48 tokens: 576 + 48 x (48 + 1) = 2928,
  // from 5 images of 576 patches. The encoder: 5 x llava-1.5-7b-hf's 195,096,524,800 MACs (the
  // same tower and projector widths) = 975,482,624,000.
  const VisionInput v = image(c, "672x672");
  EXPECT_EQ(v.patches, 576);
  EXPECT_EQ(tiling(c, "672x672"), (Tiling{5, 48, 48, 48, 48, 2928}));
  EXPECT_EQ(graph_totals(build_vision_encoder(c, v, Widths{}), 2).macs, 975482624000ull);
  // 800x600: [672, 672] keeps 672 x 504 px (by 0.84), the most; the image fills int(600 x 48 / 800)
  // = 36 of the 48 rows: 576 + 36 x 49 = 2340.
  EXPECT_EQ(tiling(c, "800x600"), (Tiling{5, 36, 48, 36, 48, 2340}));
  // 1000x500: [336, 672] keeps 672 x 336 px and wastes none: 2 crops, 24 x 48 tokens, 576 + 24 x
  // 49 = 1752.
  EXPECT_EQ(tiling(c, "1000x500"), (Tiling{3, 24, 48, 24, 48, 1752}));
}

TEST(LlmLlavaNext, OneVisionScalesAGridOverAnyresMaxDown) {
  // anyres_max_1: 168x168 is 3 x 3 crops, a grid of 12 x 12 tokens, sqrt(144 / (1 x 4^2)) = 3 base
  // images' side, over 1.1: each side to 12 // 3 = 4, 16 + 4 x (4 + 1) = 36.
  const LlmConfig one = parse_llm_config(with(kTinyOnevision, "vision_aspect_ratio", "\"anyres_max_1\""), "ov.json");
  EXPECT_EQ(one.vision.max_tiles, 1);
  EXPECT_EQ(tiling(one, "168x168"), (Tiling{10, 12, 12, 4, 4, 36}));
  // The encoder: 10 images of one image's 602,112 (patches 16 x 588 x 64) + 2 x 491,520 (a block:
  // 4 x 16 x 64^2 + 2 x 16 x 64 x 96 + 2 x 16^2 x 64) + 393,216 (the projector: 16 x (64 x 128 +
  // 128^2)) = 1,978,368 MACs: 19,783,680; the downscale is a bilinear resize of the grid.
  const Graph g = build_vision_encoder(one, image(one, "168x168"), Widths{});
  EXPECT_EQ(graph_totals(g, 2).macs, 19783680ull);
  EXPECT_GE(g.find_op("model.pack_image_features.anyres_max_downscale"), 0);
  EXPECT_EQ(image_tokens_shape(g), (Shape{36, 128}));
  // anyres_max_2: 112x112's 8 x 8 grid is sqrt(64 / 32) = 1.414 base images' side: 8 // 1.414 = 5
  // a side, 16 + 5 x 6 = 46; 168x112 ([height, width] 112x168, 8 x 12 tokens) by sqrt(96 / 32) =
  // 1.732: 4 x 6, 16 + 4 x 7 = 44.
  const LlmConfig two = parse_llm_config(with(kTinyOnevision, "vision_aspect_ratio", "\"anyres_max_2\""), "ov.json");
  EXPECT_EQ(tiling(two, "112x112"), (Tiling{5, 8, 8, 5, 5, 46}));
  EXPECT_EQ(tiling(two, "168x112"), (Tiling{7, 8, 12, 4, 6, 44}));
  // LlavaOnevisionConfig's anyres_max_9: 64 tokens are under 9 x 16, kept: 16 + 8 x 9 = 88.
  const LlmConfig nine = parse_llm_config(kTinyOnevision, "ov.json");
  EXPECT_EQ(nine.vision.max_tiles, 9);
  EXPECT_EQ(tiling(nine, "112x112"), (Tiling{5, 8, 8, 8, 8, 88}));
}

TEST(LlmLlavaNext, TheShippedOnevisionQwen2HalfB) {
  const LlmConfig c = load_llm_config("llava-onevision-qwen2-0.5b-ov-hf", test_paths::source_dir());
  EXPECT_EQ(c.model_type, "llava_onevision");
  EXPECT_EQ(c.vision.kind, VisionKind::Siglip);
  EXPECT_EQ(c.vision.depth, 26);  // vision_feature_layer -1: every block
  EXPECT_EQ(c.vision.pinpoints.size(), 36u);
  EXPECT_EQ(c.vision.max_tiles, 9);
  // Qwen2-0.5B, tied: Qwen2.5-0.5B's 494,032,768. SigLIP at 384 px (729 patches): the patch
  // embedding 588 x 1152 + 1152, positions 729 x 1152 (1,518,336), 26 layers of 15,239,504, the
  // post-layernorm 2,304 (397,747,744); the projector 1152 x 896 + 896 + 896^2 + 896 (1,836,800);
  // image_newline 896: 399,585,440. In all 893,618,208 (the model card's 894 M).
  EXPECT_EQ(parameter_count(c), 494032768ull);
  EXPECT_EQ(vision_parameter_count(c), 399585440ull);
  // One image: 729 x 588 x 1152 = 493,807,104; a layer 4 x 729 x 1152^2 + 2 x 729 x 1152 x 4304 +
  // 2 x 729^2 x 1152 = 12,323,342,592, x 26; the projector 729 x (1152 x 896 + 896^2) =
  // 1,337,720,832: 322,238,435,328. 384x384 is one crop beside the base image: 2 images,
  // 644,476,870,656 MACs, 729 + 27 x 28 = 1485 tokens.
  EXPECT_EQ(tiling(c, "384x384"), (Tiling{2, 27, 27, 27, 27, 1485}));
  EXPECT_EQ(graph_totals(build_vision_encoder(c, image(c, "384x384"), Widths{}), 2).macs, 644476870656ull);
  // 1536x1536: 4 x 4 crops, 108 x 108 tokens, sqrt(11664 / (9 x 27^2)) = 1.333 base images' side:
  // 108 // 1.333 = 81 a side, 729 + 81 x 82 = 7371 (3 x 3 crops' worth). 2304x2304 (6 x 6 crops, 37
  // images) comes to the same.
  EXPECT_EQ(tiling(c, "1536x1536"), (Tiling{17, 108, 108, 81, 81, 7371}));
  EXPECT_EQ(tiling(c, "2304x2304"), (Tiling{37, 162, 162, 81, 81, 7371}));
  // 1920x1080: [height, width] 1152x1920 keeps all of it (by 1.0): 3 x 5 crops, 81 x 135 tokens of
  // which the image fills int(1080 x 135 / 1920) = 75 rows; sqrt(75 x 135 / 6561) = 1.243: 75 // 1.243
  // = 60 rows, 135 // 1.243 = 108 columns, 729 + 60 x 109 = 7269.
  EXPECT_EQ(tiling(c, "1920x1080"), (Tiling{16, 75, 135, 60, 108, 7269}));
}

TEST(LlmLlavaNext, BadTilingFieldsAreNamedWithExpectedAndFound) {
  auto error = [](const std::string& json) { return config_error(json, "next.json"); };
  std::string e = error(with(kTinyNext, "image_grid_pinpoints", "[[56, 100]]"));
  EXPECT_NE(e.find("next.json (image_grid_pinpoints): expected each side a multiple of vision_config.image_size 56 px "
                   "(a pinpoint is a grid of whole crops), found [56,100]"),
            std::string::npos)
      << e;
  e = error(with(kTinyNext, "image_grid_pinpoints", "[]"));
  EXPECT_NE(e.find("(image_grid_pinpoints): expected a list of 1 to 256 [height, width] pairs in px, found 0 pairs"),
            std::string::npos)
      << e;
  e = error(with(kTinyNext, "image_grid_pinpoints", "\"anyres\""));
  EXPECT_NE(e.find("(image_grid_pinpoints): expected a list of 1 to 256 [height, width] pairs in px, found string"),
            std::string::npos)
      << e;
  e = error(with(kTinyNext, "image_grid_pinpoints", "[[56, 112, 168]]"));
  EXPECT_NE(e.find("expected [height, width] pairs of positive whole numbers of px, found array [56,112,168]"),
            std::string::npos)
      << e;
  for (const char* bad : {"[[0, 56]]", "[[-56, 56]]", "[[56.5, 56]]", "[[18446744073709551615, 56]]"}) {
    e = error(with(kTinyNext, "image_grid_pinpoints", bad));
    EXPECT_NE(e.find("expected [height, width] pairs of positive whole numbers of px"), std::string::npos) << bad << e;
  }
  // Absurd: 9 x 9 = 81 crops, over the 64 a pinpoint may hold; a side over 16384 px.
  e = error(with(kTinyNext, "image_grid_pinpoints", "[[504, 504]]"));
  EXPECT_NE(e.find("expected sides up to 16384 px and at most 64 crops of 56 px a pinpoint, found [504,504] (9 x 9 "
                   "crops)"),
            std::string::npos)
      << e;
  e = error(with(kTinyNext, "image_grid_pinpoints", "[[56, 16408]]"));
  EXPECT_NE(e.find("found [56,16408] (1 x 293 crops)"), std::string::npos) << e;
  nlohmann::json many = nlohmann::json::array();
  for (int i = 0; i < 257; ++i) many.push_back({56, 56});
  e = error(with(kTinyNext, "image_grid_pinpoints", many.dump()));
  EXPECT_NE(e.find("found 257 pairs"), std::string::npos) << e;
  // The default list must fit the tower's image_size too; the message says it is the default.
  e = error(R"({"model_type": "llava_next", "vision_config": {"image_size": 224, "patch_size": 14}})");
  EXPECT_NE(e.find("(image_grid_pinpoints): expected each side a multiple of vision_config.image_size 224 px (a "
                   "pinpoint is a grid of whole crops), found [336,672] (LlavaNextConfig's default list: the file "
                   "states none)"),
            std::string::npos)
      << e;
  // Each crop's tokens must be its patch grid: CLIP without its class row, SigLIP with every row.
  e = error(with(kTinyNext, "vision_feature_select_strategy", "\"full\""));
  EXPECT_NE(e.find("(vision_feature_select_strategy): expected default (CLIP's class row dropped): anyres tiling "
                   "lays each crop's tokens out as its 4 x 4 patches, found 'full' (17 tokens an image)"),
            std::string::npos)
      << e;
  e = error(with(kTinyOnevision, "vision_feature_select_strategy", "\"default\""));
  EXPECT_NE(e.find("expected full (SigLIP has no class row to drop): anyres tiling lays each crop's tokens out as "
                   "its 4 x 4 patches, found 'default' (15 tokens an image)"),
            std::string::npos)
      << e;
  for (const char* bad : {"\"anyres\"", "\"anyres_max_\"", "\"anyres_max_0\"", "\"anyres_max_x9\"", "\"max_9\"",
                          "\"anyres_max_99999\""}) {
    e = error(with(kTinyOnevision, "vision_aspect_ratio", bad));
    EXPECT_NE(e.find("(vision_aspect_ratio): expected anyres_max_N, N from 1 to 1024 base images' worth of tokens "
                     "the crops keep (such as anyres_max_9), found '"),
              std::string::npos)
        << bad << e;
  }
  e = error(with(kTinyOnevision, "vision_aspect_ratio", "9"));
  EXPECT_NE(e.find("(vision_aspect_ratio): expected a string, found number 9"), std::string::npos) << e;
}

}  // namespace
}  // namespace npusim::workloads::llm
