// LLaVA (model_type llava): its language model read from text_config with the defaults of that
// model's transformers class, its CLIP or SigLIP tower run up to vision_feature_layer, the feature
// selection and the two-layer projector; parameters, image tokens and encoder MACs by hand.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/test_paths.h"
#include "tests/workloads/llm_config_errors.h"
#include "workloads/llm/llm_config.h"
#include "workloads/llm/llm_graph.h"

namespace npusim::workloads::llm {
namespace {

/// A llama of hidden 128 under a CLIP tower of 3 layers, hidden 64 (4 heads of 16), MLP 96,
/// images of 56 x 56 px (4 x 4 = 16 patches of 3 x 14 x 14 = 588 pixels, and the class row: 17
/// rows), read at the second-to-last layer (2 blocks run), the class row dropped: 16 tokens.
const char* kTinyLlava = R"({"model_type": "llava", "projector_hidden_act": "gelu",
  "vision_feature_layer": -2, "vision_feature_select_strategy": "default",
  "text_config": {"model_type": "llama", "hidden_size": 128, "num_hidden_layers": 2, "intermediate_size": 256,
    "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1024, "max_position_embeddings": 4096},
  "vision_config": {"model_type": "clip_vision_model", "hidden_size": 64, "image_size": 56, "intermediate_size": 96,
    "num_attention_heads": 4, "num_hidden_layers": 3, "patch_size": 14}})";

/// kTinyLlava with `key` set to `value` at the top level (a JSON text).
std::string tiny_with(const std::string& key, const std::string& value) {
  nlohmann::json j = nlohmann::json::parse(kTinyLlava);
  j[key] = nlohmann::json::parse(value);
  return j.dump();
}

TEST(LlmLlava, ReadsItsLanguageModelFromTextConfigAndItsClipTower) {
  const LlmConfig c = parse_llm_config(kTinyLlava, "llava.json");
  EXPECT_EQ(c.model_type, "llava");
  EXPECT_EQ(c.hidden, 128);
  EXPECT_EQ(c.kv_heads, 2);
  EXPECT_EQ(c.head_dim, 32);
  EXPECT_EQ(c.field_prefix, "text_config.");
  ASSERT_TRUE(c.has_vision());
  EXPECT_EQ(c.vision.kind, VisionKind::Clip);
  EXPECT_EQ(c.vision.projector, VisionProjector::LlavaMlp);
  EXPECT_EQ(c.vision.stored_depth, 3);
  EXPECT_EQ(c.vision.depth, 2);  // hidden_states[-2]: the output of block 2 of 3
  EXPECT_EQ(c.vision.out_hidden, 128);
  // Every image resized to 56 x 56: 16 patches, 16 tokens (17 rows less the class row).
  for (const char* image : {"56x56", "640x480"}) {
    const VisionInput v = vision_input(c, image, "--image");
    EXPECT_EQ(v.patches, 16) << image;
    EXPECT_EQ(v.tokens, 16) << image;
  }
  // "full" keeps the class row: 17 tokens; a positive layer counts blocks from the embeddings.
  const LlmConfig full = parse_llm_config(tiny_with("vision_feature_select_strategy", "\"full\""), "llava.json");
  EXPECT_EQ(vision_input(full, "56x56", "--image").tokens, 17);
  EXPECT_EQ(parse_llm_config(tiny_with("vision_feature_layer", "1"), "llava.json").vision.depth, 1);
  EXPECT_EQ(parse_llm_config(tiny_with("vision_feature_layer", "-1"), "llava.json").vision.depth, 3);
}

TEST(LlmLlava, ParametersCountTheCheckpointAndTheGraphWhatRuns) {
  // Patch embedding 588 x 64 (CLIP's has no bias) = 37,632; the class row 64; positions 17 x 64 =
  // 1,088; pre_layrnorm 128; a layer: 2 LayerNorms 256, q, k, v, o 4 x (64^2 + 64) = 16,640, fc1
  // 64 x 96 + 96 = 6,240, fc2 96 x 64 + 64 = 6,208: 29,344, x 3 = 88,032; post_layernorm 128; the
  // projector 64 x 128 + 128 + 128 x 128 + 128 = 24,832. In all 151,904.
  const LlmConfig c = parse_llm_config(kTinyLlava, "llava.json");
  EXPECT_EQ(vision_parameter_count(c), 151904ull);
  // The encoder reads the blocks it runs: one block and post_layernorm fewer, 151,904 - 29,344 - 128.
  const Graph g = build_vision_encoder(c, vision_input(c, "56x56", "--image"), Widths{});
  EXPECT_EQ(graph_totals(g, 2).params, 122432ull);
  // MACs, P 16, R 17 rows, E 64, M 96, K 588, H 128: P K E = 602,112; a block 4 R E^2 + 2 R E M +
  // 2 R^2 E = 278,528 + 208,896 + 36,992 = 524,416, x 2; the projector 16 x 64 x 128 + 16 x 128 x
  // 128 = 393,216. In all 2,044,160.
  EXPECT_EQ(graph_totals(g, 2).macs, 2044160ull);
}

TEST(LlmLlava, ListedFeatureLayersAreConcatenatedBeforeTheProjector) {
  // vision_feature_layer [-2, 1]: the outputs of blocks 2 and 1, concatenated to rows of 2 x 64
  // = 128; the tower runs to block 2, as with -2. linear_1 reads 128 wide: 128 x 128 + 128 where
  // one layer had 64 x 128 + 128, 8,192 parameters more: 151,904 + 8,192 = 160,096 in the
  // checkpoint, 122,432 + 8,192 = 130,624 in the graph; MACs 16 x 64 x 128 = 131,072 more:
  // 2,044,160 + 131,072 = 2,175,232.
  const LlmConfig c = parse_llm_config(tiny_with("vision_feature_layer", "[-2, 1]"), "llava.json");
  EXPECT_EQ(c.vision.depth, 2);
  EXPECT_EQ(c.vision.feature_layers, (std::vector<std::int64_t>{2, 1}));
  EXPECT_EQ(c.vision.feature_width(), 128);
  EXPECT_EQ(vision_parameter_count(c), 160096ull);
  const Graph g = build_vision_encoder(c, vision_input(c, "56x56", "--image"), Widths{});
  EXPECT_EQ(graph_totals(g, 2).params, 130624ull);
  EXPECT_EQ(graph_totals(g, 2).macs, 2175232ull);
  const int cat = g.find_op("multi_modal_projector.feature_layers");
  ASSERT_GE(cat, 0);
  EXPECT_EQ(g.tensor(g.op(cat).outputs[0]).shape, (Shape{17, 128}));
  // The deepest listed layer sets how far the tower runs: [-1, -3] runs all 3 blocks.
  EXPECT_EQ(parse_llm_config(tiny_with("vision_feature_layer", "[-1, -3]"), "llava.json").vision.depth, 3);
}

TEST(LlmLlava, TheShippedLlava15TakesLlamaDefaultsForWhatItsTextConfigOmits) {
  const LlmConfig c = load_llm_config("llava-1.5-7b-hf", test_paths::source_dir());
  // LlamaConfig's defaults beside the stated vocab_size 32064 and max_position_embeddings 4096.
  EXPECT_EQ(c.hidden, 4096);
  EXPECT_EQ(c.layers, 32);
  EXPECT_EQ(c.heads, 32);
  EXPECT_EQ(c.kv_heads, 32);
  EXPECT_EQ(c.intermediate, 11008);
  EXPECT_EQ(c.vocab, 32064);
  EXPECT_EQ(c.max_positions, 4096);
  // The language model: embeddings and head 2 x 32064 x 4096 = 262,668,288; a layer 4 x 4096^2 +
  // 3 x 4096 x 11008 + 2 x 4096 = 202,383,360, x 32 = 6,476,267,520; the final norm 4,096:
  // 6,738,939,904. CLIP ViT-L/14 at 336 px: 588 x 1024 + 1024 (class) + 577 x 1024 + 2,048 (pre) +
  // 24 x 12,596,224 + 2,048 (post) = 303,507,456; the projector 1024 x 4096 + 4096 + 4096^2 + 4096
  // = 20,979,712. In all 7,063,427,072: the model card's 7.06 B.
  EXPECT_EQ(parameter_count(c), 6738939904ull);
  EXPECT_EQ(vision_parameter_count(c), 303507456ull + 20979712ull);
  EXPECT_EQ(parameter_count(c) + vision_parameter_count(c), 7063427072ull);
  // 24 x 24 = 576 patches, 576 image tokens (the class row dropped), whatever the image's size.
  const VisionInput v = vision_input(c, "1280x720", "--image");
  EXPECT_EQ(v.patches, 576);
  EXPECT_EQ(v.tokens, 576);
  // MACs, R 577, E 1024, M 4096: 576 x 588 x 1024 = 346,816,512; a block 4 x 577 x 1024^2 + 2 x 577
  // x 1024 x 4096 + 2 x 577^2 x 1024 = 7,942,178,816, x 23 (layer -2) = 182,670,112,768; the
  // projector 576 x 1024 x 4096 + 576 x 4096^2 = 12,079,595,520. In all 195,096,524,800.
  EXPECT_EQ(graph_totals(build_vision_encoder(c, v, Widths{}), 2).macs, 195096524800ull);
}

TEST(LlmLlava, ASiglipTowerBeforeAQwen2KeepsEveryPatchUnderFull) {
  // llava-interleave's shape: SigLIP (no class row, a patch bias) at 56 px, every layer read, all rows kept.
  const char* j = R"({"model_type": "llava", "vision_feature_layer": -1, "vision_feature_select_strategy": "full",
    "text_config": {"model_type": "qwen2", "hidden_size": 128, "num_hidden_layers": 2, "intermediate_size": 256,
      "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1024, "max_position_embeddings": 4096},
    "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 64, "image_size": 56,
      "intermediate_size": 96, "num_attention_heads": 4, "num_hidden_layers": 2, "patch_size": 14}})";
  const LlmConfig c = parse_llm_config(j, "llava.json");
  EXPECT_EQ(c.vision.kind, VisionKind::Siglip);
  EXPECT_TRUE(c.qkv_bias);  // qwen2's
  EXPECT_EQ(c.vision.depth, 2);
  EXPECT_EQ(vision_input(c, "56x56", "--image").tokens, 16);
  // 588 x 64 + 64 = 37,696; positions 16 x 64 = 1,024; 2 x 29,344; post_layernorm 128; projector 24,832.
  EXPECT_EQ(vision_parameter_count(c), 37696ull + 1024 + 58688 + 128 + 24832);
}

TEST(LlmLlava, AnImageSizeNotAMultipleOfThePatchLeavesTheLastPixelsUnread) {
  // llava-interleave's SigLIP: 384 px in patches of 14 is 27 x 27 = 729 patches (the convolution's
  // stride is its kernel: 6 px a side unread), every row kept, 729 tokens.
  const char* j = R"({"model_type": "llava", "vision_feature_layer": -1, "vision_feature_select_strategy": "full",
    "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 64, "image_size": 384,
      "intermediate_size": 96, "num_attention_heads": 4, "num_hidden_layers": 2, "patch_size": 14}})";
  const LlmConfig c = parse_llm_config(j, "llava.json");
  const VisionInput v = vision_input(c, "640x480", "--image");
  EXPECT_EQ(v.patches, 729);
  EXPECT_EQ(v.tokens, 729);
}

TEST(LlmLlava, BadLlavaFieldsAreNamedWithExpectedAndFound) {
  auto error = [](const std::string& json) { return config_error(json, "llava.json"); };
  std::string e = error(tiny_with("vision_feature_layer", "[-2, -5]"));
  EXPECT_NE(e.find("llava.json (vision_feature_layer): expected a block's output, 1 to 3 or -3 to -1 (or a list of "
                   "them), found -5"),
            std::string::npos)
      << e;
  e = error(tiny_with("vision_feature_layer", "[]"));
  EXPECT_NE(e.find("(vision_feature_layer): expected 1 to 64 layers in the list, found 0"), std::string::npos) << e;
  e = error(tiny_with("vision_feature_layer", "[1, \"2\"]"));
  EXPECT_NE(e.find("found \"2\""), std::string::npos) << e;
  e = error(tiny_with("vision_feature_layer", "4"));
  EXPECT_NE(
      e.find("(vision_feature_layer): expected a block's output, 1 to 3 or -3 to -1 (or a list of them), found 4"),
      std::string::npos)
      << e;
  e = error(tiny_with("vision_feature_layer", "18446744073709551615"));  // 2^64 - 1: not -1
  EXPECT_NE(e.find("found 18446744073709551615"), std::string::npos) << e;
  e = error(tiny_with("vision_feature_layer", "0"));
  EXPECT_NE(e.find("found 0"), std::string::npos) << e;
  e = error(tiny_with("vision_feature_select_strategy", "\"cls\""));
  EXPECT_NE(e.find("(vision_feature_select_strategy): expected one of default, full, found 'cls'"), std::string::npos)
      << e;
  e = error(tiny_with("projector_hidden_act", "\"relu\""));
  EXPECT_NE(e.find("(projector_hidden_act): expected a gelu variant (LLaVA's projector), found 'relu'"),
            std::string::npos)
      << e;
  e = error(R"({"model_type": "llava", "text_config": {"model_type": "gpt2"}})");
  EXPECT_NE(e.find("(text_config.model_type): expected one of llama, mistral, qwen2, qwen3, found 'gpt2'"),
            std::string::npos)
      << e;
  e = error(R"({"model_type": "llava", "text_config": {"hidden_size": 100}})");
  EXPECT_NE(e.find("(text_config.hidden_size): expected a multiple of num_attention_heads 32"), std::string::npos) << e;
  e = error(R"({"model_type": "llava", "vision_config": {"model_type": "vit"}})");
  EXPECT_NE(e.find("(vision_config.model_type): expected one of clip_vision_model, siglip_vision_model, found 'vit'"),
            std::string::npos)
      << e;
  e = error(R"({"model_type": "llava", "vision_config": {"image_size": 16}})");
  EXPECT_NE(e.find("(vision_config.image_size): expected at least patch_size 32 and at most 16384 px, found 16"),
            std::string::npos)
      << e;
  e = error(R"({"model_type": "llava", "text_config": 7})");
  EXPECT_NE(e.find("(text_config): expected an object (the language model's fields), found number"), std::string::npos)
      << e;
}

}  // namespace
}  // namespace npusim::workloads::llm
