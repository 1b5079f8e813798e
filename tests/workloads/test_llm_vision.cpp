// Qwen2-VL's and Qwen2.5-VL's vision towers: their configs read with transformers' defaults, the
// image's resize, patches, tokens and attention windows, the towers' parameters and the encoder
// graphs' MACs, all by hand.
#include <gtest/gtest.h>

#include <string>

#include "sim/core/errors.h"
#include "tests/workloads/llm_config_errors.h"
#include "workloads/llm/llm_config.h"
#include "workloads/llm/llm_graph.h"
#include "tests/support/test_paths.h"

namespace npusim::workloads::llm {
namespace {

/// A qwen2 decoder of hidden 128 with a vision tower of 2 blocks, embed_dim 64 (4 heads of 16),
/// MLP 4 x 64 = 256, patches of 3 x 2 x 14 x 14 = 1176 pixels, 2 x 2 patches a token.
const char* kTiny = R"({"model_type": "qwen2_vl", "hidden_size": 128, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 256, "vocab_size": 1024,
  "max_position_embeddings": 4096, "tie_word_embeddings": true,
  "vision_config": {"depth": 2, "embed_dim": 64, "num_heads": 4, "mlp_ratio": 4, "in_chans": 3,
                    "hidden_size": 128, "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2}})";

std::string error_of(const std::string& json) {
  return config_error(json, "vlm.json");
}

std::string image_error(const LlmConfig& c, const std::string& image) {
  try {
    vision_input(c, image, "--image");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(LlmVision, Qwen2VlReadsItsDecoderAndItsVisionTower) {
  const LlmConfig c = parse_llm_config(kTiny, "vlm.json");
  EXPECT_EQ(c.hidden, 128);
  EXPECT_TRUE(c.qkv_bias);  // a qwen2 decoder
  EXPECT_TRUE(c.has_vision());
  EXPECT_EQ(c.vision.depth, 2);
  EXPECT_EQ(c.vision.head_dim(), 16);
  EXPECT_EQ(c.vision.mlp_width(), 256);
  EXPECT_EQ(c.vision.patch_pixels(), 1176);
  EXPECT_EQ(c.vision.out_hidden, 128);
}

TEST(LlmVision, ATextConfigHoldsTheDecoderOfANewerExport) {
  const LlmConfig c = parse_llm_config(R"({"model_type": "qwen2_vl", "text_config": {"hidden_size": 128,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 256,
    "vocab_size": 1024, "max_position_embeddings": 4096}, "vision_config": {"depth": 1, "embed_dim": 64,
    "num_heads": 4, "hidden_size": 128}})",
                                       "vlm.json");
  EXPECT_EQ(c.field_prefix, "text_config.");
  EXPECT_EQ(c.layers, 2);
  EXPECT_EQ(c.vision.depth, 1);
}

TEST(LlmVision, TheShippedQwen2Vl2BTakesTransformersDefaultsForWhatItsVisionConfigOmits) {
  // Qwen2-VL-2B-Instruct's published config.json states the vision tower as depth 32, embed_dim
  // 1280, 16 heads, mlp_ratio 4 (Qwen2VLVisionConfig's defaults too) and hidden_size 1536.
  const LlmConfig c = load_llm_config("Qwen2-VL-2B-Instruct", test_paths::source_dir());
  EXPECT_EQ(c.vision.depth, 32);
  EXPECT_EQ(c.vision.embed_dim, 1280);
  EXPECT_EQ(c.vision.heads, 16);
  EXPECT_EQ(c.vision.out_hidden, 1536);
  // Omitted fields: the defaults (patch 14, temporal 2, merge 2, 3 channels).
  const LlmConfig d = parse_llm_config(R"({"model_type": "qwen2_vl", "hidden_size": 3584, "num_hidden_layers": 1,
    "num_attention_heads": 28, "num_key_value_heads": 4, "intermediate_size": 64, "vocab_size": 100,
    "max_position_embeddings": 256})",
                                       "vlm.json");
  EXPECT_EQ(d.vision.depth, 32);
  EXPECT_EQ(d.vision.patch_pixels(), 1176);
  EXPECT_EQ(d.vision.merge, 2);
  EXPECT_EQ(d.vision.out_hidden, 3584);
}

TEST(LlmVision, BadVisionFieldsAreNamedWithExpectedAndFound) {
  std::string e = error_of(R"({"model_type": "qwen2_vl", "hidden_size": 128, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 256, "vocab_size": 1024,
    "max_position_embeddings": 4096, "vision_config": {"embed_dim": 64, "num_heads": 4, "hidden_size": 96}})");
  EXPECT_NE(e.find("vlm.json (vision_config.hidden_size): expected the language model's hidden_size 128"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("found 96"), std::string::npos) << e;
  e = error_of(R"({"model_type": "qwen2_vl", "hidden_size": 128, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 256, "vocab_size": 1024,
    "max_position_embeddings": 4096, "vision_config": {"embed_dim": 66, "num_heads": 4, "hidden_size": 128}})");
  EXPECT_NE(e.find("(vision_config.embed_dim): expected a multiple of num_heads 4, found 66"), std::string::npos) << e;
  e = error_of(R"({"model_type": "qwen2_vl", "hidden_size": 128, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 256, "vocab_size": 1024,
    "max_position_embeddings": 4096, "vision_config": [1]})");
  EXPECT_NE(e.find("(vision_config): expected an object (the vision tower's fields), found array"), std::string::npos)
      << e;
}

TEST(LlmVision, SmartResizeRoundsEachSideToTwentyEightAndKeepsThePixelsInBounds) {
  const LlmConfig c = parse_llm_config(kTiny, "vlm.json");
  struct Case {
    const char* image;
    std::int64_t w, h, patches, tokens;
  };
  const Case cases[] = {
      // 448 = 16 x 28: kept; (448 / 14)^2 = 32 x 32 = 1024 patches, / 2^2 = 256 tokens.
      {"448x448", 448, 448, 1024, 256},
      // 500 / 28 = 17.86 -> 18 x 28 = 504; 300 / 28 = 10.71 -> 11 x 28 = 308; 36 x 22 = 792 patches, 198 tokens.
      {"500x300", 504, 308, 792, 198},
      // 4004 x 2996 = 12.0 M pixels > 28 x 28 x 1280 = 1,003,520: beta = sqrt(4000 x 3000 / 1,003,520)
      // = 3.458; 4000 / 3.458 / 28 = 41.3 -> 41 x 28 = 1148, 3000 / 3.458 / 28 = 30.98 -> 30 x 28 = 840
      // (964,320 pixels); 82 x 60 = 4920 patches, 1230 tokens.
      {"4000x3000", 1148, 840, 4920, 1230},
      // 28 x 28 = 784 < 56 x 56 = 3136: beta = 2, each side ceil(28 x 2 / 28) x 28 = 56; 16 patches, 4 tokens.
      {"28x28", 56, 56, 16, 4},
      // Halves round to even as Python's round: 70 / 28 = 2.5 -> 2, 42 / 28 = 1.5 -> 2: 56 x 56.
      {"70x42", 56, 56, 16, 4},
  };
  for (const auto& k : cases) {
    const VisionInput v = vision_input(c, k.image, "--image");
    EXPECT_EQ(v.resized_width, k.w) << k.image;
    EXPECT_EQ(v.resized_height, k.h) << k.image;
    EXPECT_EQ(v.patches, k.patches) << k.image;
    EXPECT_EQ(v.tokens, k.tokens) << k.image;
  }
}

TEST(LlmVision, BadImagesAreNamedWithExpectedAndFound) {
  const LlmConfig c = parse_llm_config(kTiny, "vlm.json");
  EXPECT_NE(image_error(c, "abc").find("--image: expected WIDTHxHEIGHT in pixels (such as 448x448), found 'abc'"),
            std::string::npos);
  EXPECT_NE(image_error(c, "448x").find("found '448x'"), std::string::npos);
  EXPECT_NE(image_error(c, "0x10").find("--image: expected each side from 28 px"), std::string::npos);
  EXPECT_NE(image_error(c, "0x10").find("found 0x10"), std::string::npos);
  EXPECT_NE(image_error(c, "16385x448").find("to 16384 px, found 16385x448"), std::string::npos);
  EXPECT_NE(image_error(c, "28x6000").find("expected an aspect ratio of at most 200"), std::string::npos);
  const LlmConfig text = parse_llm_config(R"({"model_type": "qwen2", "hidden_size": 64, "num_hidden_layers": 1,
    "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 100,
    "max_position_embeddings": 256})",
                                          "text.json");
  EXPECT_NE(image_error(text, "448x448").find("--image 448x448: expected a model with a vision tower"),
            std::string::npos);
}

TEST(LlmVision, TheVisionTowersParametersByHandAndInTheGraph) {
  // Tiny: patch embedding 1176 x 64 = 75,264; a block: norms 4 x 64 = 256, qkv 3 x 64^2 + 192 =
  // 12,480, proj 64^2 + 64 = 4,160, fc1 + fc2 2 x 64 x 256 + 256 + 64 = 33,088: 49,984, x 2 =
  // 99,968; merger: ln_q 128, 256 x 256 + 256 = 65,792, 256 x 128 + 128 = 32,896: 98,816.
  // 75,264 + 99,968 + 98,816 = 274,048.
  const LlmConfig c = parse_llm_config(kTiny, "vlm.json");
  EXPECT_EQ(vision_parameter_count(c), 274048ull);
  const Graph g = build_vision_encoder(c, vision_input(c, "56x56", "--image"), Widths{});
  EXPECT_EQ(graph_totals(g, 2).params, 274048ull);
  // Qwen2-VL-2B: patch embedding 1176 x 1280 = 1,505,280; a block: norms 5,120, qkv 3 x 1280^2 +
  // 3,840 = 4,919,040, proj 1,639,680, fc1 1280 x 5120 + 5120 = 6,558,720, fc2 5120 x 1280 + 1280 =
  // 6,554,880: 19,677,440, x 32 = 629,678,080; merger: 2,560 + 5120^2 + 5120 = 26,219,520 +
  // 5120 x 1536 + 1536 = 7,865,856: 34,087,936. In all 665,271,296. The Qwen2-VL paper's "675M"
  // is the tower of its 7B, whose merger ends at 3584: 5120 x 3584 + 3584 = 18,353,664, 10,487,808
  // more: 675,759,104. With the 1,543,714,304 of the language model, 2,208,985,600 (the model
  // card's 2.21 B).
  const LlmConfig q = load_llm_config("Qwen2-VL-2B-Instruct", test_paths::source_dir());
  EXPECT_EQ(vision_parameter_count(q), 665271296ull);
  EXPECT_EQ(parameter_count(q), 1543714304ull);
  LlmConfig q7 = q;
  q7.vision.out_hidden = 3584;
  EXPECT_EQ(vision_parameter_count(q7), 675759104ull);
  EXPECT_EQ(graph_totals(build_vision_encoder(q, vision_input(q, "56x56", "--image"), Widths{}), 2).params,
            665271296ull);
}

TEST(LlmVision, TheEncodersMacsByHand) {
  // P patches, E embed_dim, M the MLP width, K pixels a patch, H the LM's hidden, D blocks:
  // P K E (patch embedding) + D (P (4E^2 + 2EM) + 2 P^2 E) (qkv, proj, fc1, fc2; scores and
  // context over every patch) + 4 P E^2 + P E H (the merger's P/4 rows of 4E).
  // Tiny at 56x56: P 16, E 64, M 256, K 1176, H 128, D 2: 1,204,224 + 2 x (16 x 49,152 + 32,768)
  // = 1,638,400 + 262,144 + 131,072 = 3,235,840.
  const LlmConfig c = parse_llm_config(kTiny, "vlm.json");
  const Graph g = build_vision_encoder(c, vision_input(c, "56x56", "--image"), Widths{});
  EXPECT_EQ(graph_totals(g, 2).macs, 3235840ull);
  // Qwen2-VL-2B at 448x448: P 1024, E 1280, M 5120, K 1176, H 1536, D 32: 1,541,406,720 + 32 x
  // (1024 x 19,660,800 + 2 x 1024^2 x 1280 = 22,817,013,760) + 6,710,886,400 + 2,013,265,920
  // = 740,409,999,360. (Its 16 x 1024^2 = 2^24 scores are one block; an image past 2^26 scores
  // attends in query blocks, as a long prefill does.)
  const LlmConfig q = load_llm_config("Qwen2-VL-2B-Instruct", test_paths::source_dir());
  EXPECT_EQ(graph_totals(build_vision_encoder(q, vision_input(q, "448x448", "--image"), Widths{}), 2).macs,
            740409999360ull);
}

/// A qwen2 decoder of hidden 128 with a Qwen2.5-VL tower of 2 blocks, hidden_size 64 (4 heads of
/// 16), a SwiGLU MLP of 96, windows of 56 px = 56 / 2 / 14 = 2 x 2 merged tokens (4 x 4 patches),
/// block 1 attending over every patch.
const char* kTiny25 = R"({"model_type": "qwen2_5_vl", "hidden_size": 128, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 256, "vocab_size": 1024,
  "max_position_embeddings": 4096, "tie_word_embeddings": true,
  "vision_config": {"depth": 2, "hidden_size": 64, "num_heads": 4, "intermediate_size": 96, "in_chans": 3,
                    "out_hidden_size": 128, "window_size": 56, "fullatt_block_indexes": [1]}})";

TEST(LlmVision, Qwen25VlReadsItsWindowsAndItsGatedMlp) {
  const LlmConfig c = parse_llm_config(kTiny25, "vlm.json");
  EXPECT_TRUE(c.qkv_bias);            // a qwen2 decoder
  EXPECT_EQ(c.vision.embed_dim, 64);  // vision_config.hidden_size is the tower's width here
  EXPECT_EQ(c.vision.mlp_width(), 96);
  EXPECT_TRUE(c.vision.gated_mlp);
  EXPECT_EQ(c.vision.norm, NormKind::Rms);
  EXPECT_EQ(c.vision.window, 2);
  EXPECT_TRUE(c.vision.windowed(0));
  EXPECT_FALSE(c.vision.windowed(1));
  // The shipped 3B states hidden_size 1280 and out_hidden_size 2048; the rest are
  // Qwen2_5_VLVisionConfig's defaults: depth 32, 16 heads, MLP 3420, windows of 112 / 2 / 14 = 4
  // merged tokens, full attention in blocks 7, 15, 23 and 31.
  const LlmConfig q = load_llm_config("Qwen2.5-VL-3B-Instruct", test_paths::source_dir());
  EXPECT_EQ(q.vision.depth, 32);
  EXPECT_EQ(q.vision.embed_dim, 1280);
  EXPECT_EQ(q.vision.mlp_width(), 3420);
  EXPECT_EQ(q.vision.out_hidden, 2048);
  EXPECT_EQ(q.vision.window, 4);
  int full = 0;
  for (std::int64_t d = 0; d < 32; ++d) full += q.vision.windowed(d) ? 0 : 1;
  EXPECT_EQ(full, 4);
  EXPECT_FALSE(q.vision.windowed(7));
  EXPECT_FALSE(q.vision.windowed(31));
}

TEST(LlmVision, Qwen25VlWindowsCoverTheImageWithNarrowerOnesAtTheEdges) {
  const LlmConfig c = parse_llm_config(kTiny25, "vlm.json");
  // 140x84 stays (5 x 28 by 3 x 28): 10 x 6 = 60 patches, a grid of 5 x 3 merged tokens. Windows
  // of 2 x 2 tokens: 2 full ones (16 patches), the right column's 1 of 2 x 1 tokens (8), the
  // bottom row's 2 of 1 x 2 (8 each), the corner's 1 of 1 x 1 (4): 32 + 8 + 16 + 4 = 60.
  const VisionInput image = vision_input(c, "140x84", "--image");
  ASSERT_EQ(image.patches, 60);
  const auto w = vision_windows(c.vision, image);
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w[0].count, 2);
  EXPECT_EQ(w[0].patches, 16);
  EXPECT_EQ(w[1].count, 1);
  EXPECT_EQ(w[1].patches, 8);
  EXPECT_EQ(w[2].count, 2);
  EXPECT_EQ(w[2].patches, 8);
  EXPECT_EQ(w[3].count, 1);
  EXPECT_EQ(w[3].patches, 4);
  // A grid of whole windows has no edge windows: 112x112 is 4 x 4 tokens, 4 windows of 16 patches.
  const auto whole = vision_windows(c.vision, vision_input(c, "112x112", "--image"));
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].count, 4);
  EXPECT_EQ(whole[0].patches, 16);
}

TEST(LlmVision, Qwen25VlParametersAndMacsByHand) {
  // Tiny: patch embedding 1176 x 64 = 75,264; a block: 2 RMSNorms 128, qkv 3 x 64^2 + 192 =
  // 12,480, proj 4,160, gate, up, down 3 x 64 x 96 + 2 x 96 + 64 = 18,688: 35,456, x 2 = 70,912;
  // merger: ln_q 64, 256 x 256 + 256, 256 x 128 + 128: 98,752. In all 244,928.
  const LlmConfig c = parse_llm_config(kTiny25, "vlm.json");
  EXPECT_EQ(vision_parameter_count(c), 244928ull);
  const VisionInput image = vision_input(c, "140x84", "--image");
  const Graph g = build_vision_encoder(c, image, Widths{});
  EXPECT_EQ(graph_totals(g, 2).params, 244928ull);
  // MACs at 140x84, P 60, E 64, M 96, K 1176, H 128: patch embedding P K E = 4,515,840; each
  // block's GEMMs P (4E^2 + 3EM) = 2,088,960; block 0's windows 2E (2 x 16^2 + 8^2 + 2 x 8^2 +
  // 4^2) = 128 x 720 = 92,160; block 1 over every patch 2 P^2 E = 460,800; the merger 4 P E^2 +
  // P E H = 983,040 + 491,520. In all 10,721,280.
  EXPECT_EQ(graph_totals(g, 2).macs, 10721280ull);
  // Qwen2.5-VL-3B: patch 1,505,280; a block 2,560 + 4,919,040 + 1,639,680 + 3 x 1280 x 3420 +
  // 6,840 + 1,280 = 19,702,200, x 32 = 630,470,400; merger 1,280 + 26,219,520 + 5120 x 2048 +
  // 2048 = 36,708,608. In all 668,684,288 (with its language model's 3,085,938,688: 3.75 B, the
  // model card's figure).
  const LlmConfig q = load_llm_config("Qwen2.5-VL-3B-Instruct", test_paths::source_dir());
  EXPECT_EQ(vision_parameter_count(q), 668684288ull);
  EXPECT_EQ(parameter_count(q), 3085938688ull);
  // At 448x448 (P 1024, 16 windows of 64 patches): 32 x 1024 (4 x 1280^2 + 3 x 1280 x 3420) =
  // 32 x 20,158,873,600; 28 windowed blocks 2 x 1280 x 16 x 64^2 = 167,772,160 each, 4 full ones
  // 2 x 1024^2 x 1280 = 2,684,354,560 each; patch 1,541,406,720; merger 6,710,886,400 +
  // 2,684,354,560. In all 671,455,641,600.
  EXPECT_EQ(graph_totals(build_vision_encoder(q, vision_input(q, "448x448", "--image"), Widths{}), 2).macs,
            671455641600ull);
}

TEST(LlmVision, BadQwen25VlFieldsAreNamed) {
  auto with_vision = [](const std::string& vision) {
    return error_of(R"({"model_type": "qwen2_5_vl", "hidden_size": 128, "num_hidden_layers": 2,
      "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 256, "vocab_size": 1024,
      "max_position_embeddings": 4096, "vision_config": )" +
                    vision + "}");
  };
  std::string e = with_vision(R"({"depth": 4, "hidden_size": 64, "num_heads": 4, "out_hidden_size": 128,
    "fullatt_block_indexes": [1, 4]})");
  EXPECT_NE(e.find("(vision_config.fullatt_block_indexes): expected layer indices from 0 to 3, found"),
            std::string::npos)
      << e;
  e = with_vision(R"({"hidden_size": 64, "num_heads": 4, "out_hidden_size": 128, "window_size": 20})");
  EXPECT_NE(e.find("(vision_config.window_size): expected at least spatial_merge_size x patch_size = 28 px"),
            std::string::npos)
      << e;
  e = with_vision(R"({"hidden_size": 64, "num_heads": 4, "out_hidden_size": 96})");
  EXPECT_NE(e.find("(vision_config.out_hidden_size): expected the language model's hidden_size 128"), std::string::npos)
      << e;
  e = with_vision(R"({"hidden_size": 64, "num_heads": 4, "out_hidden_size": 128, "hidden_act": "gelu"})");
  EXPECT_NE(e.find("(vision_config.hidden_act): expected silu (Qwen2.5-VL's vision MLP), found 'gelu'"),
            std::string::npos)
      << e;
}

/// A gemma3 of text hidden 128 with a SigLIP tower of 2 layers, hidden 64 (4 heads of 16), MLP
/// 96, images resized to 56 x 56 (4 x 4 = 16 patches of 3 x 14 x 14 = 588 pixels), pooled 2 x 2
/// to 4 tokens.
const char* kTinyGemma3 = R"({"model_type": "gemma3", "mm_tokens_per_image": 4,
  "text_config": {"hidden_size": 128, "num_hidden_layers": 2, "intermediate_size": 256, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 32, "vocab_size": 1024, "max_position_embeddings": 4096},
  "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 64, "image_size": 56, "intermediate_size": 96,
    "num_attention_heads": 4, "num_hidden_layers": 2, "patch_size": 14, "vision_use_head": false}})";

TEST(LlmVision, Gemma3ResizesEveryImageToItsSquareAndPoolsItsPatches) {
  const LlmConfig c = parse_llm_config(kTinyGemma3, "g3.json");
  ASSERT_TRUE(c.has_vision());
  EXPECT_EQ(c.vision.kind, VisionKind::Siglip);
  EXPECT_EQ(c.vision.out_hidden, 128);  // the projector ends at the text model's width
  for (const char* image : {"56x56", "640x480", "1x16384"}) {
    const VisionInput v = vision_input(c, image, "--image");
    EXPECT_EQ(v.resized_width, 56) << image;
    EXPECT_EQ(v.resized_height, 56) << image;
    EXPECT_EQ(v.patches, 16) << image;
    EXPECT_EQ(v.tokens, 4) << image;
  }
  EXPECT_NE(image_error(c, "0x10").find("--image: expected each side from 1 to 16384 px, found 0x10"),
            std::string::npos);
  // The shipped gemma-3-4b-it: 896 / 14 = 64 x 64 = 4096 patches, pooled 4 x 4 to 256 tokens.
  const LlmConfig g = load_llm_config("gemma-3-4b-it", test_paths::source_dir());
  const VisionInput v = vision_input(g, "640x480", "--image");
  EXPECT_EQ(v.patches, 4096);
  EXPECT_EQ(v.tokens, 256);
  EXPECT_EQ(g.heads, 8);  // Gemma3TextConfig's default: the 4B's config states none
}

TEST(LlmVision, Gemma3ParametersAndMacsByHand) {
  // Tiny: patch embedding 588 x 64 + 64 = 37,696; positions 16 x 64 = 1,024; a layer: 2
  // LayerNorms 256, q, k, v, o 4 x (64^2 + 64) = 16,640, fc1 64 x 96 + 96, fc2 96 x 64 + 64:
  // 29,344, x 2 = 58,688; post_layernorm 128; the projector's RMSNorm 64 and 64 x 128 = 8,192.
  // In all 105,792.
  const LlmConfig c = parse_llm_config(kTinyGemma3, "g3.json");
  EXPECT_EQ(vision_parameter_count(c), 105792ull);
  const Graph g = build_vision_encoder(c, vision_input(c, "56x56", "--image"), Widths{});
  EXPECT_EQ(graph_totals(g, 2).params, 105792ull);
  // MACs, P 16, E 64, M 96, K 588, H 128, 4 tokens: P K E = 602,112; a layer 4 P E^2 + 2 P E M +
  // 2 P^2 E = 262,144 + 196,608 + 32,768 = 491,520, x 2; the projection 4 x 64 x 128 = 32,768
  // (the pool adds, it does not multiply). In all 1,617,920.
  EXPECT_EQ(graph_totals(g, 2).macs, 1617920ull);
  // gemma-3-4b-it: patch 588 x 1152 + 1152 = 678,528; positions 4096 x 1152 = 4,718,592; a layer
  // 4,608 + 4 x (1152^2 + 1152) + 1152 x 4304 + 4304 + 4304 x 1152 + 1152 = 15,239,504, x 27 =
  // 411,466,608; post_layernorm 2,304; projector 1,152 + 1152 x 2560 = 2,950,272. In all
  // 419,816,304; with the language model's 3,880,263,168, 4,300,079,472 (the model card's 4.3 B).
  const LlmConfig q = load_llm_config("gemma-3-4b-it", test_paths::source_dir());
  EXPECT_EQ(vision_parameter_count(q), 419816304ull);
  EXPECT_EQ(parameter_count(q) + vision_parameter_count(q), 4300079472ull);
  // MACs: 4096 x 588 x 1152 = 2,774,532,096; a layer 4 x 4096 x 1152^2 + 2 x 4096 x 1152 x 4304
  // + 2 x 4096^2 x 1152 = 101,015,617,536, x 27; 256 x 1152 x 2560 = 754,974,720. In all
  // 2,730,951,180,288.
  EXPECT_EQ(graph_totals(build_vision_encoder(q, vision_input(q, "896x896", "--image"), Widths{}), 2).macs,
            2730951180288ull);
}

TEST(LlmVision, BadGemma3VisionFieldsAreNamed) {
  auto with = [](const std::string& top, const std::string& vision) {
    return error_of(R"({"model_type": "gemma3", )" + top + R"("text_config": {"hidden_size": 128,
      "num_hidden_layers": 2, "intermediate_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
      "head_dim": 32}, "vision_config": )" +
                    vision + "}");
  };
  const std::string ok = R"({"hidden_size": 64, "image_size": 56, "num_attention_heads": 4, "patch_size": 14)";
  std::string e = with(R"("mm_tokens_per_image": 3, )", ok + "}");
  EXPECT_NE(e.find("vlm.json (mm_tokens_per_image): expected a square whose side divides the patch grid's side 4 "
                   "(image_size / patch_size), found 3"),
            std::string::npos)
      << e;
  e = with(R"("mm_tokens_per_image": 9, )", ok + "}");
  EXPECT_NE(e.find("found 9"), std::string::npos) << e;
  e = with("", R"({"hidden_size": 64, "image_size": 50, "num_attention_heads": 4, "patch_size": 14})");
  EXPECT_NE(e.find("(vision_config.image_size): expected a multiple of patch_size 14 up to 16384 px, found 50"),
            std::string::npos)
      << e;
  e = with(R"("mm_tokens_per_image": 4, )", ok + R"(, "vision_use_head": true})");
  EXPECT_NE(e.find("(vision_config.vision_use_head): expected false"), std::string::npos) << e;
  e = with(R"("mm_tokens_per_image": 4, )", ok + R"(, "hidden_act": "relu"})");
  EXPECT_NE(e.find("(vision_config.hidden_act): expected a gelu variant (SigLIP's MLP), found 'relu'"),
            std::string::npos)
      << e;
  e = with("", "[2]");
  EXPECT_NE(e.find("(vision_config): expected an object (the vision tower's fields), found array"), std::string::npos)
      << e;
}

}  // namespace
}  // namespace npusim::workloads::llm
