// `npusim serve`'s images for vision-language models (docs/serve.md, `llm.image`): a run with an
// image is `npusim llm --image` (the encoder's phase, the image's tokens in the prefill), a bad
// image is refused with the CLI's own message naming the request field, and /api/options says
// which shipped models take one.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "tests/serve/serve_support.h"
#include "tests/support/cli_support.h"
#include "tests/support/test_paths.h"

namespace npusim::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// A Qwen2-VL run small enough for a test: 8 text tokens, 2 generated, the smallest image
/// smart_resize keeps (56 x 56 px: (56 / 14)^2 = 16 patches, merged 2 x 2 into 4 image tokens).
json image_request(const json& image = "56x56") {
  return {{"config", "edge-s"},
          {"fusion", "greedy"},
          {"llm", {{"model", "Qwen2-VL-2B-Instruct"}, {"prompt", 8}, {"generate", 2}, {"image", image}}}};
}

TEST(ServeImage, AnImageRunsTheVisionEncoderAsNpusimLlmDoes) {
  ServeProcess s;
  ASSERT_GT(s.port(), 0);
  const std::string id = start(s, image_request());
  const json state = s.wait_run(id, std::chrono::seconds(280));
  ASSERT_EQ(state["status"], "done") << state.dump();
  // The request's echo keeps the image (the run's child reads the echo: without it, no encoder).
  EXPECT_EQ(state["request"]["llm"]["image"], "56x56");
  const json served = s.request("GET", "/api/runs/" + id + "/files/summary.json").json();
  ASSERT_TRUE(served.contains("llm") && served["llm"].contains("vision")) << served.dump().substr(0, 400);
  const json& v = served["llm"]["vision"];
  EXPECT_EQ(v["image_given"], json::array({56, 56}));
  EXPECT_EQ(v["image"], json::array({56, 56}));
  EXPECT_EQ(v["patches"], 16);
  EXPECT_EQ(v["tokens"], 4);
  EXPECT_EQ(served["llm"]["prompt"], 8);
  EXPECT_EQ(served["llm"]["prefill"]["tokens"], 8 + 4);  // the text and the image's tokens
  EXPECT_GT(v["seconds"].get<double>(), 0);
  EXPECT_GT(v["macs"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(served["llm"]["ttft_seconds"].get<double>(),
                   v["seconds"].get<double>() + served["llm"]["prefill"]["seconds"].get<double>());

  // The same figures as `npusim llm --image` with the same parameters.
  const fs::path out = scratch("image_direct");
  std::string log;
  ASSERT_EQ(run_npusim("llm --config edge-s --fusion greedy --model Qwen2-VL-2B-Instruct --prompt 8 --generate 2 "
                       "--image 56x56 --quiet --out " +
                           out.string(),
                       &log),
            0)
      << log;
  json direct = read_json(out / "summary.json"), mine = served;
  direct["llm"].erase("wall_seconds");
  mine["llm"].erase("wall_seconds");
  EXPECT_EQ(mine, direct);
  fs::remove_all(out);
}

TEST(ServeImage, TheOptionsListTheModelsThatTakeAnImage) {
  ServeProcess s;
  const json o = s.request("GET", "/api/options").json();
  // Read here from the shipped configs themselves: a model takes an image when its config has a
  // vision tower (vision_config).
  json expected = json::array();
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(fs::path(test_paths::source_dir()) / "workloads" / "llm" / "configs"))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  for (const auto& n : names)
    if (read_json(fs::path(test_paths::source_dir()) / "workloads" / "llm" / "configs" / (n + ".json"))
            .contains("vision_config"))
      expected.push_back(n);
  EXPECT_EQ(o["llm"]["vision_models"], expected);
  EXPECT_EQ(o["llm"]["vision_models"],
            json::array({"Qwen2-VL-2B-Instruct", "Qwen2.5-VL-3B-Instruct", "gemma-3-4b-it", "llava-1.5-7b-hf",
                         "llava-onevision-qwen2-0.5b-ov-hf", "llava-v1.6-mistral-7b-hf"}));
}

TEST(ServeImage, BadImagesAreRefusedWithTheCliMessageNamingTheField) {
  ServeProcess s;
  auto post = [&](const json& body) { return s.request("POST", "/api/runs", body.dump()); };
  // Each refusal is npusim llm --image's: the same text after the field's name, exit 2 there, 400 here.
  auto same_as_cli = [&](const std::string& model, const std::string& image, const std::string& text) {
    json body = image_request(image);
    body["llm"]["model"] = model;
    expect_error(post(body), 400, "request field 'llm.image'");
    expect_error(post(body), 400, text);
    std::string log;
    EXPECT_EQ(
        run_npusim("llm --config edge-s --model " + model + " --prompt 8 --generate 2 --image '" + image + "'", &log),
        2)
        << log;
    EXPECT_NE(log.find("--image"), std::string::npos) << log;
    EXPECT_NE(log.find(text), std::string::npos) << log;
  };
  // A text-only model has no vision tower.
  same_as_cli("SmolLM2-360M", "56x56",
              "56x56: expected a model with a vision tower (a config with vision_config, model_type qwen2_vl, "
              "qwen2_5_vl, gemma3, llava, llava_next or llava_onevision), found "
              "model_type 'llama'");
  // The server names the model, not where it keeps the model's file.
  {
    json body = image_request();
    body["llm"]["model"] = "SmolLM2-360M";
    const HttpReply r = post(body);
    expect_error(r, 400, "found model_type 'llama' (SmolLM2-360M)");
    EXPECT_EQ(r.body.find(".json"), std::string::npos) << r.body;
  }
  // Malformed values, sides out of range, an aspect ratio smart_resize refuses.
  for (const char* bad : {"abc", "448", "448x", "x448", "448X448", "448x448x3", "-56x56", "56 x 56", "1234567x56"})
    same_as_cli("Qwen2-VL-2B-Instruct", bad,
                std::string("expected WIDTHxHEIGHT in pixels (such as 448x448), found '") + bad + "'");
  same_as_cli("Qwen2-VL-2B-Instruct", "20x448",
              "expected each side from 28 px (patch_size x spatial_merge_size: smaller images are refused by "
              "Qwen2-VL's smart_resize) to 16384 px, found 20x448");
  same_as_cli("Qwen2-VL-2B-Instruct", "16385x448", "to 16384 px, found 16385x448");
  same_as_cli("Qwen2-VL-2B-Instruct", "28x5656",
              "expected an aspect ratio of at most 200 (smart_resize's limit), found 28x5656");
  // An empty value is malformed too (leave the key out for no image).
  expect_error(post(image_request("")), 400,
               "'llm.image': expected WIDTHxHEIGHT in pixels (such as 448x448), found ''");
  // Not a string.
  expect_error(post(image_request(448)), 400, "'llm.image': expected a string, found a number");
  expect_error(post(image_request(json::array({448, 448}))), 400, "'llm.image': expected a string, found an array");
  // One sequence and no draft beside an image, as --image.
  json batch = image_request();
  batch["llm"]["batch"] = 2;
  expect_error(post(batch), 400,
               "'llm.image': expected llm.batch 1 beside it (one sequence with its image), found llm.batch 2");
  json draft = image_request();
  draft["llm"]["draft"] = "Qwen2-VL-2B-Instruct";
  expect_error(post(draft), 400, "'llm.image': expected no llm.draft beside it");
  // A hostile value of the body's whole size comes back as text, and the server keeps serving.
  expect_error(post(image_request(std::string(60000, 'x'))), 400, "'llm.image': expected WIDTHxHEIGHT");
  expect_alive(s);
}

}  // namespace
}  // namespace npusim::test
