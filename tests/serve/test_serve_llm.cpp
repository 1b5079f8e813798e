// `npusim serve` beyond one workload run (docs/serve.md): LLM runs (`llm` in the run request, as
// `npusim llm`), and `dim`, `kv_cache` and `parallel` in workload runs (as `npusim run`'s --dim,
// --kv-cache and --parallel): the same figures as the CLI, bad fields refused naming the field.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/serve/serve_support.h"
#include "tests/support/cli_support.h"
#include "tests/workloads/decoder_models.h"
#include "tests/workloads/onnx_builder.h"
#include "tests/support/test_paths.h"

namespace npusim::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using workloads::testing::OnnxBuilder;

/// summary.json without the one figure that differs between two runs of the same spec: the
/// wall time the run took.
json without_wall_time(json s) {
  s["llm"].erase("wall_seconds");
  return s;
}

TEST(ServeLlm, AnLlmRunReturnsTheSummaryOfNpusimLlm) {
  ServeProcess s;
  ASSERT_GT(s.port(), 0);
  // 7 generated tokens, 5 decode steps simulated (the default sample: steps 0, 2, 3, 5, 6, rounded
  // from 0, 1.5, 3, 4.5, 6): with the prefill 6 phases.
  const std::string id = start(
      s,
      {{"config", "edge-s"},
       {"fusion", "greedy"},
       {"set", {{"npu.sram.capacity", "512 KiB"}}},
       {"llm",
        {{"model", "SmolLM2-360M"}, {"prompt", 8}, {"generate", 7}, {"weight_dtype", "int4"}, {"kv_dtype", "int8"}}}});
  const json state = s.wait_run(id, std::chrono::seconds(280));
  ASSERT_EQ(state["status"], "done") << state.dump();
  EXPECT_EQ(state["commands_total"], 6) << "progress counts the phases: the prefill and 5 decode steps";
  EXPECT_EQ(state["request"]["llm"]["model"], "SmolLM2-360M");
  const json served = s.request("GET", "/api/runs/" + id + "/files/summary.json").json();
  ASSERT_TRUE(served.contains("llm")) << served.dump().substr(0, 400);

  const fs::path out = scratch("llm_direct");
  std::string log;
  ASSERT_EQ(run_npusim("llm --config edge-s --fusion greedy --set 'npu.sram.capacity=512 KiB' --model SmolLM2-360M "
                       "--prompt 8 --generate 7 --weight-dtype int4 --kv-dtype int8 --quiet --out " +
                           out.string(),
                       &log),
            0)
      << log;
  const json direct = read_json(out / "summary.json");
  EXPECT_EQ(served["llm"]["decode"]["steps"].size(), 7u);
  EXPECT_EQ(served["llm"]["ttft_seconds"], direct["llm"]["ttft_seconds"]);
  EXPECT_EQ(without_wall_time(served), without_wall_time(direct));  // the same phases, the same figures

  // The roofs the page draws the phases on: the resolved config, SRAM override included.
  const json hw = s.request("GET", "/api/runs/" + id + "/files/hardware.json").json();
  EXPECT_EQ(hw["sram"]["capacity_bytes"], 512 * 1024);
  EXPECT_GT(hw["mac_array"]["peak_ops_per_second"].get<double>(), 0);
  // No unit timeline: an LLM run is several simulations.
  expect_error(s.request("GET", "/api/runs/" + id + "/timeline"), 404, "LLM run");
  // The download: what `npusim llm --out` writes.
  const HttpReply tar = s.request("GET", "/api/runs/" + id + "/download");
  EXPECT_EQ(tar.status, 200);
  for (const char* f : {"summary.json", "hardware.json", "prefill/summary.json", "decode/summary.json"})
    EXPECT_NE(tar.body.find(std::string("npusim-") + id + "/" + f), std::string::npos) << f;
  fs::remove_all(out);
}

TEST(ServeLlm, AnLlmRunInChunksIsTheChunkedRunOfNpusimLlm) {
  // llm.prefill_chunk 4 on a prompt of 10: chunks of 4, 4 and 2 tokens (npusim llm --prefill-chunk).
  ServeProcess s;
  const std::string id =
      start(s, {{"config", "edge-s"},
                {"llm", {{"model", "SmolLM2-360M"}, {"prompt", 10}, {"prefill_chunk", 4}, {"generate", 1}}}});
  const json state = s.wait_run(id, std::chrono::seconds(280));
  ASSERT_EQ(state["status"], "done") << state.dump();
  EXPECT_EQ(state["request"]["llm"]["prefill_chunk"], 4);
  const json served = s.request("GET", "/api/runs/" + id + "/files/summary.json").json();
  EXPECT_EQ(served["llm"]["prefill"]["chunks"]["size"], 4);
  EXPECT_EQ(served["llm"]["prefill"]["chunks"]["count"], 3);

  const fs::path out = scratch("llm_chunks_direct");
  std::string log;
  ASSERT_EQ(run_npusim("llm --config edge-s --model SmolLM2-360M --prompt 10 --prefill-chunk 4 --generate 1 --quiet "
                       "--out " +
                           out.string(),
                       &log),
            0)
      << log;
  EXPECT_EQ(without_wall_time(served), without_wall_time(read_json(out / "summary.json")));
  fs::remove_all(out);
}

TEST(ServeLlm, TheOptionsListTheShippedModels) {
  ServeProcess s;
  const json o = s.request("GET", "/api/options").json();
  const json models = o["llm"]["models"];
  EXPECT_NE(std::find(models.begin(), models.end(), "SmolLM2-360M"), models.end()) << models;
  EXPECT_NE(std::find(models.begin(), models.end(), "Llama-3.2-1B"), models.end()) << models;
  EXPECT_EQ(o["llm"]["max_prompt"], 2048);
  EXPECT_EQ(o["llm"]["max_context"], 32768);
  EXPECT_EQ(o["llm"]["max_prefill_chunk"], 2048);
  EXPECT_EQ(o["llm"]["max_generate"], 1024);
}

TEST(ServeLlm, BadLlmFieldsAreRefusedNamingTheField) {
  ServeProcess s;
  auto post = [&](const json& body) { return s.request("POST", "/api/runs", body.dump()); };
  const json ok = {{"model", "SmolLM2-360M"}, {"prompt", 16}, {"generate", 4}};
  auto with = [&](const char* key, const json& v) {
    json l = ok;
    l[key] = v;
    return json{{"llm", l}};
  };
  expect_error(post(with("prompt", 0)), 400, "'llm.prompt': expected an integer from 1 to 2048, found 0");
  expect_error(post(with("prompt", 4096)), 400, "'llm.prompt': expected an integer from 1 to 2048, found 4096");
  expect_error(post(with("prompt", "16")), 400, "'llm.prompt': expected an integer from 1 to 2048, found a string");
  expect_error(post(with("prompt", 1.5)), 400, "'llm.prompt'");
  expect_error(post(with("prompt", json::parse("18446744073709551615"))), 400, "'llm.prompt'");
  expect_error(post(with("generate", 1025)), 400, "'llm.generate': expected an integer from 0 to 1024");
  expect_error(post(with("context", -1)), 400, "'llm.context': expected an integer from 0 to 32768, found -1");
  expect_error(post(with("context", 32769)), 400, "'llm.context': expected an integer from 0 to 32768, found 32769");
  expect_error(post(with("prefill_chunk", -1)), 400,
               "'llm.prefill_chunk': expected an integer from 0 to 2048, found -1");
  expect_error(post(with("prefill_chunk", 2049)), 400, "'llm.prefill_chunk': expected an integer from 0 to 2048");
  // SmolLM2-360M holds 8192 positions: 8180 cached + 16 + 4 do not fit.
  expect_error(post(with("context", 8180)), 400, "max_position_embeddings");
  expect_error(post(with("batch", 9)), 400, "'llm.batch': expected an integer from 1 to 8");
  expect_error(post(with("model", "../../etc/passwd")), 400, "'llm.model': expected one of");
  expect_error(post(with("model", 3)), 400, "'llm.model': expected a string");
  expect_error(post(with("weight_dtype", "int3")), 400, "'llm.weight_dtype': expected one of int4, int8, fp16, bf16");
  expect_error(post(with("kv_dtype", "int2")), 400, "'llm.kv_dtype': expected one of int4, int8, fp16, bf16");
  expect_error(post(with("act_dtype", "int4")), 400, "'llm.act_dtype': expected one of int8, fp16, bf16");
  expect_error(post(with("expert_routing", "random")), 400,
               "'llm.expert_routing': expected one of uniform, concentrated");
  expect_error(post(with("draft", "../x.json")), 400, "'llm.draft': expected one of");
  expect_error(post(with("acceptance", 0.5)), 400, "'llm.acceptance': expected llm.draft beside it");
  // SmolLM2-360M's 49,152 tokens are not Qwen2.5-0.5B's 151,936: no draft for it.
  expect_error(post(with("draft", "Qwen2.5-0.5B")), 400, "expected a draft model with the vocabulary of SmolLM2-360M");
  {
    json l = ok;
    l["draft"] = "SmolLM2-360M";
    l["acceptance"] = 2;
    expect_error(post({{"llm", l}}), 400, "'llm.acceptance': expected a probability from 0 to 1, found 2");
    l["acceptance"] = 0.5;
    l["draft_tokens"] = 17;
    expect_error(post({{"llm", l}}), 400, "'llm.draft_tokens': expected an integer from 1 to 16, found 17");
  }
  expect_error(post(with("temperature", 1)), 400, "unknown key 'temperature'");
  expect_error(post({{"llm", "SmolLM2-360M"}}), 400, "'llm': expected an object, found a string");
  expect_error(post({{"llm", {{"prompt", 16}}}}), 400, "'llm.model'");
  expect_error(post({{"llm", ok}, {"workload", "small_cnn"}}), 400, "'workload': expected no 'workload' with 'llm'");
  expect_error(post({{"llm", ok}, {"parallel", "data"}}), 400, "'parallel': expected no 'parallel' with 'llm'");
  expect_error(post({{"llm", ok}, {"fusion", "as-is"}}), 400, "'fusion': expected one of none, epilogue, greedy");
  expect_error(post({{"llm", ok}, {"set", {{"npu.sram.banks", 0}}}}), 400, "npu.sram.banks");
  expect_alive(s);
}

TEST(ServeRunFields, BadDimKvCacheAndParallelAreRefusedNamingTheField) {
  ServeProcess s;
  auto post = [&](const json& body) { return s.request("POST", "/api/runs", body.dump()); };
  expect_error(post({{"parallel", "spread"}}), 400, "request field 'parallel'");
  expect_error(post({{"parallel", 2}}), 400, "'parallel': expected a string");
  expect_error(post({{"kv_cache", "paste"}}), 400, "'kv_cache': expected one of append, copy, found 'paste'");
  expect_error(post({{"dim", {{"past", -1}}}}), 400, "'dim.past': expected an integer from 0 to 2147483648, found -1");
  expect_error(post({{"dim", {{"past", "13"}}}}), 400, "'dim.past': expected an integer");
  expect_error(post({{"dim", 13}}), 400, "'dim': expected an object");
  // The zoo is YAML: its shapes are fixed, as `npusim run --dim` says of a YAML workload.
  expect_error(post({{"workload", "small_cnn"}, {"dim", {{"past", 13}}}}), 400,
               "'dim': expected an uploaded ONNX workload");
  expect_error(post({{"workload", "small_cnn"}, {"kv_cache", "copy"}}), 400, "'kv_cache': expected an uploaded ONNX");
  expect_alive(s);
}

TEST(ServeRunFields, ParallelDataGivesTheSummaryOfTheCli) {
  // small_cnn with a batch of 2 on two cores: each core runs one image (docs/multicore.md).
  std::string yaml = read_file((fs::path(test_paths::source_dir()) / "workloads" / "zoo" / "small_cnn.yaml").string());
  const auto at = yaml.find("shape: [1, 3, 64, 64]");
  ASSERT_NE(at, std::string::npos);
  yaml.replace(at, std::string("shape: [1, 3, 64, 64]").size(), "shape: [2, 3, 64, 64]");
  const std::string file = write_temp("small_cnn_b2.yaml", yaml);
  ServeProcess s;
  const HttpReply up = s.request("POST", "/api/uploads?name=small_cnn_b2.yaml", yaml, "application/yaml");
  ASSERT_EQ(up.status, 201) << up.body;
  const std::string id = start(
      s, {{"config", "edge-s"}, {"upload", up.json()["upload"]}, {"parallel", "data"}, {"set", {{"npu.cores", 2}}}});
  ASSERT_EQ(s.wait_run(id)["status"], "done");
  const json served = s.request("GET", "/api/runs/" + id + "/files/summary.json").json();
  const fs::path out = scratch("parallel_direct");
  ASSERT_EQ(
      run_npusim("run --config edge-s --workload " + file + " --parallel data --set npu.cores=2 --out " + out.string()),
      0);
  json direct = read_json(out / "summary.json");
  ASSERT_TRUE(direct.contains("cores"));
  EXPECT_EQ(direct["cores"].size(), 2u);
  // The workload is named by its file: the upload's name, the scratch file's for the CLI.
  EXPECT_EQ(served["workload"], "small_cnn_b2");
  direct["workload"] = served["workload"];
  EXPECT_EQ(served, direct);
  fs::remove_all(out);
}

/// A projection and GroupQueryAttention (4 query heads on 2 KV heads of 8) over the cache
/// past_k / past_v [1, 2, past, 8], `past` symbolic (tests/cli/test_onnx_decoder_cli.cpp).
std::string gqa_decoder() {
  return npusim::workloads::testing::grouped_query_attention().write("serve_gqa.onnx");
}

TEST(ServeRunFields, DimAndKvCacheBindAnUploadedDecoderAsTheCliDoes) {
  const std::string model = gqa_decoder();
  ServeProcess s;
  const std::string bytes = read_file(model);
  // Unbound, the symbolic cache length does not load: the check needs it too (dim.NAME).
  expect_error(s.request("POST", "/api/uploads?name=gqa.onnx", bytes, "application/octet-stream"), 422, "past");
  const HttpReply up = s.request("POST", "/api/uploads?name=gqa.onnx&dim.past=0", bytes, "application/octet-stream");
  ASSERT_EQ(up.status, 201) << up.body;
  std::uint64_t writes[2] = {0, 0};
  for (int copy = 0; copy < 2; ++copy) {
    json req = {{"config", "edge-s"}, {"upload", up.json()["upload"]}, {"fusion", "none"}, {"dim", {{"past", 13}}}};
    if (copy) req["kv_cache"] = "copy";
    const std::string id = start(s, req);
    ASSERT_EQ(s.wait_run(id)["status"], "done");
    const json served = s.request("GET", "/api/runs/" + id + "/files/summary.json").json();
    // past = 13: T = 16; projection 3 * 32 * 64 = 6144 MACs, attention 2 * (4 * 3 * 16 * 8) = 3072.
    EXPECT_EQ(served["macs"], 9216) << copy;
    writes[copy] = served["dram_write_bytes"].get<std::uint64_t>();
    const fs::path out = scratch(copy ? "serve_kv_copy" : "serve_kv_append");
    ASSERT_EQ(run_npusim("run --config edge-s --workload " + model + " --fusion none --dim past=13" +
                         (copy ? " --kv-cache copy" : "") + " --out " + out.string()),
              0);
    EXPECT_EQ(served["dram_write_bytes"], read_json(out / "summary.json")["dram_write_bytes"]) << copy;
    fs::remove_all(out);
  }
  // The copy rewrites both caches, present [1, 2, 16, 8] int8 = 256 B each: 512 B more.
  EXPECT_EQ(writes[1] - writes[0], 512u);
}

}  // namespace
}  // namespace npusim::test
