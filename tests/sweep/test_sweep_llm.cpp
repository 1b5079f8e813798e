// Sweeps of language models (`llm:`) and of parallel modes (`parallel:`): each point equals the
// `npusim llm` / `npusim run --parallel` run of its spec figure for figure, tokens/s is a maximised
// Pareto objective, shards merge to the local run, and bad input names the sweep file's line.
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/core/errors.h"
#include "sim/sweep/expand.h"
#include "sim/sweep/results.h"
#include "sim/sweep/sweep_file.h"
#include "tests/support/cli_support.h"

namespace fs = std::filesystem;
using namespace npusim::sweep;
using nlohmann::json;
using npusim::test::read_json;
using npusim::test::run_npusim;
using npusim::test::scratch;
using npusim::test::write_temp;

namespace {

/// A small Llama (tests/engine/test_llm_run.cpp's kSmall): hidden 256, 4 layers, 8 heads of 32
/// over 4 KV heads, tied head.
const char* kSmall = R"({"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 4,
  "num_attention_heads": 8, "num_key_value_heads": 4, "intermediate_size": 768, "vocab_size": 2048,
  "max_position_embeddings": 4096, "tie_word_embeddings": true})";

/// A 2 x 2 LLM sweep: prompt 16 or 32 (a knob) x a 16- or 32-row MAC array (an axis), int4
/// weights, 2 decode steps.
std::string llm_sweep(const std::string& model, const std::string& extra = "") {
  return write_temp("llm_sweep.yaml", "base: edge-s\nllm:\n  model: [" + model +
                                          "]\n  prompt: [16, 32]\n  generate: [2]\n  weight_dtype: [int4]\n"
                                          "axes:\n  npu.mac_array.rows: [16, 32]\n" +
                                          extra);
}

std::string thrown(const std::function<void()>& f) {
  try {
    f();
  } catch (const npusim::InputError& e) {
    return e.what();
  }
  return "";
}

/// The llm block without the wall time (the one figure two runs of one spec differ in).
json without_wall(json block) {
  block.erase("wall_seconds");
  return block;
}

/// The CSV's rows as header name -> cell, in file order.
std::vector<std::map<std::string, std::string>> csv_rows(const fs::path& csv) {
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream hs(line);
  for (std::string c; std::getline(hs, c, ',');) header.push_back(c);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::stringstream ls(line);
    std::map<std::string, std::string> row;
    std::size_t i = 0;
    for (std::string c; std::getline(ls, c, ',') && i < header.size(); ++i) row[header[i]] = c;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

TEST(LlmSweep, PointsAreTheModelTimesItsKnobsWithStableKeys) {
  const std::string model = write_temp("small.json", kSmall);
  const SweepSpec s = load_sweep(llm_sweep(model));
  ASSERT_TRUE(s.llm);
  const auto points = expand(s);
  // 2 rows x 1 model x 2 prompts (x 1 generate x 1 width) = 4 points, the axis outermost.
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[1].key(s), "base=edge-s;workload=" + model +
                                  ";fusion=greedy;llm.prompt=32;llm.generate=2;llm.weight_dtype=int4;"
                                  "npu.mac_array.rows=16");
  EXPECT_EQ(points[1].to_json(s)["llm"], (json{{"prompt", "32"}, {"generate", "2"}, {"weight_dtype", "int4"}}));
  EXPECT_EQ(points[2].value(s, 0), "32");
  EXPECT_EQ(points[2].knob(s, 0), "16");
  // The spec a point runs is the one `npusim llm` would get from those flags.
  const auto spec = llm_spec(s, model, points[3].knobs, "greedy", points[3].overrides(s));
  EXPECT_EQ(spec.prompt, 32);
  EXPECT_EQ(spec.generate, 2);
  EXPECT_EQ(spec.weight_dtype, "int4");
  EXPECT_EQ(spec.overrides, std::vector<std::string>{"npu.mac_array.rows=32"});
  // The default objectives of an LLM sweep are its own.
  EXPECT_EQ(s.objectives, (std::vector<std::string>{"ttft", "tokens_per_second", "area"}));
}

TEST(LlmSweep, AContextKnobSetsTheTokensCachedBeforeThePrompt) {
  const std::string model = write_temp("small_ctx.json", kSmall);
  const SweepSpec s = load_sweep(write_temp("ctx.yaml", "base: edge-s\nllm:\n  model: [" + model +
                                                            "]\n  context: [0, 2048]\n  prompt: [16]\n"
                                                            "  generate: [2]\naxes:\n  npu.mac_array.rows: [16]\n"));
  const auto points = expand(s);
  ASSERT_EQ(points.size(), 2u);  // 1 row x 1 model x 2 contexts
  const auto spec = llm_spec(s, model, points[1].knobs, "greedy", points[1].overrides(s));
  EXPECT_EQ(spec.context, 2048);
  EXPECT_EQ(spec.prompt, 16);
  // 4090 cached + 16 + 2 = 4108 > the model's 4096 positions: refused before any point runs.
  const std::string e = thrown([&] {
    load_sweep(write_temp("ctx_bad.yaml", "base: edge-s\nllm:\n  model: [" + model +
                                              "]\n  context: [4090]\n  prompt: [16]\n  generate: [2]\n"
                                              "axes:\n  npu.mac_array.rows: [16]\n"));
  });
  EXPECT_NE(e.find("--context 4090 + --prompt 16 + --generate 2"), std::string::npos) << e;
}

TEST(LlmSweep, APrefillChunkKnobRunsThePromptInChunks) {
  const std::string model = write_temp("small_chunk.json", kSmall);
  const SweepSpec s = load_sweep(write_temp("chunk.yaml", "base: edge-s\nllm:\n  model: [" + model +
                                                              "]\n  prompt: [64]\n  prefill_chunk: [0, 16]\n"
                                                              "  generate: [2]\naxes:\n  npu.mac_array.rows: [16]\n"));
  const auto points = expand(s);
  ASSERT_EQ(points.size(), 2u);  // 1 row x 1 model x 2 chunk sizes
  EXPECT_EQ(llm_spec(s, model, points[0].knobs, "greedy", points[0].overrides(s)).prefill_chunk, 0);
  EXPECT_EQ(llm_spec(s, model, points[1].knobs, "greedy", points[1].overrides(s)).prefill_chunk, 16);
  // Checked at load as --prefill-chunk is.
  const std::string e = thrown([&] {
    load_sweep(write_temp("chunk_bad.yaml", "base: edge-s\nllm:\n  model: [" + model +
                                                "]\n  prefill_chunk: [-4]\naxes:\n  npu.mac_array.rows: [16]\n"));
  });
  EXPECT_NE(e.find("prefill_chunk"), std::string::npos) << e;
}

TEST(LlmSweep, BadInputNamesTheLine) {
  const std::string model = write_temp("small.json", kSmall);
  // Line 2 is `llm:`, 3 `  model: ...` (where the llm map's node starts), 4 the first knob.
  std::string e = thrown([&] {
    load_sweep(write_temp("bad1.yaml", "base: edge-s\nllm:\n  model: [" + model +
                                           "]\n  temperature: [0.7]\naxes:\n"
                                           "  npu.mac_array.rows: [16]\n"));
  });
  EXPECT_NE(e.find(":4 (llm.temperature): unknown knob 'temperature'; known: model, prompt"), std::string::npos) << e;
  e = thrown([&] {
    load_sweep(write_temp("bad2.yaml", "base: edge-s\nllm:\n  model: [" + model +
                                           "]\n  weight_dtype: [int4, int3]\n"
                                           "axes:\n  npu.mac_array.rows: [16]\n"));
  });
  EXPECT_NE(e.find(":3 (llm): model '" + model + "', weight_dtype int3: --weight-dtype int3: expected int4, int8"),
            std::string::npos)
      << e;
  e = thrown([&] {
    load_sweep(write_temp("bad3.yaml", "base: edge-s\nllm:\n  model: [" + model +
                                           "]\n  prompt: [4000]\n"
                                           "  generate: [200]\naxes:\n  npu.mac_array.rows: [16]\n"));
  });
  EXPECT_NE(e.find("prompt 4000, generate 200"), std::string::npos) << e;  // 4200 > 4096 positions
  EXPECT_NE(e.find("max_position_embeddings"), std::string::npos) << e;
  // Speculation: an acceptance with no draft knob means nothing (line 4); a draft's probability
  // out of [0, 1] is refused at its line (5).
  e = thrown([&] {
    load_sweep(write_temp("bad4.yaml", "base: edge-s\nllm:\n  model: [" + model +
                                           "]\n  acceptance: [0.5]\naxes:\n  npu.mac_array.rows: [16]\n"));
  });
  EXPECT_NE(e.find(":4 (llm.acceptance): expected a 'draft:' knob beside it"), std::string::npos) << e;
  e = thrown([&] {
    load_sweep(write_temp("bad5.yaml", "base: edge-s\nllm:\n  model: [" + model + "]\n  draft: [none, " + model +
                                           "]\n  acceptance: [0.5, 1.5]\naxes:\n  npu.mac_array.rows: [16]\n"));
  });
  EXPECT_NE(e.find(":5 (llm.acceptance): expected a probability from 0 to 1 for llm.acceptance, found '1.5'"),
            std::string::npos)
      << e;
  e = thrown([&] {
    load_sweep(write_temp("bad6.yaml", "base: edge-s\nllm:\n  model: [" + model +
                                           "]\n  kv_dtype: [int8, fp16]\n  kv_group_size: [64]\naxes:\n"
                                           "  npu.mac_array.rows: [16]\n"));
  });
  EXPECT_NE(e.find(":5 (llm.kv_group_size): expected a 'kv_dtype:' knob holding int4 beside it"), std::string::npos)
      << e;
  // The check builds the graphs each point would: an embedding of 2048 x 10^12 elements is over
  // the 2^40 bound, refused before any point runs (not every point failing after).
  std::string huge = kSmall;
  huge.replace(huge.find("\"hidden_size\": 256"), 18, "\"hidden_size\": 1000000000000");
  const std::string huge_model = write_temp("huge.json", huge);
  e = thrown([&] { load_sweep(llm_sweep(huge_model)); });
  EXPECT_NE(e.find("(llm): model '" + huge_model + "'"), std::string::npos) << e;
  EXPECT_NE(e.find("expected at most 2^40 = 1099511627776 elements in a tensor"), std::string::npos) << e;
  e = thrown([&] {
    load_sweep(write_temp("bad4.yaml", "base: edge-s\nllm:\n  model: [" + model +
                                           "]\n  prompt: [sixteen]\n"
                                           "axes:\n  npu.mac_array.rows: [16]\n"));
  });
  EXPECT_NE(e.find(":4 (llm.prompt): expected a whole number from 1 to 1000000, found 'sixteen'"), std::string::npos)
      << e;
  e = thrown([&] {
    load_sweep(write_temp("bad5.yaml", "base: edge-s\nworkloads: [small_cnn]\nllm:\n  model: [" + model +
                                           "]\naxes:\n  npu.mac_array.rows: [16]\n"));
  });
  EXPECT_NE(e.find(":4 (llm): expected 'workloads:' or 'llm:', found both"), std::string::npos) << e;
  e = thrown([&] { load_sweep(llm_sweep(model, "objectives: [latency, energy]\n")); });
  EXPECT_NE(e.find("expected objectives among area, ttft, tokens_per_second, energy_per_token (an LLM sweep), "
                   "found 'latency'"),
            std::string::npos)
      << e;
  e = thrown([&] { load_sweep(llm_sweep(model, "parallel: [data]\n")); });
  EXPECT_NE(e.find("(parallel): expected with 'workloads:', found 'llm:'"), std::string::npos) << e;
  e = thrown([&] {
    load_sweep(write_temp("bad6.yaml", "base: edge-s\nllm:\n  prompt: [16]\naxes:\n  npu.mac_array.rows: [16]\n"));
  });
  EXPECT_NE(e.find("(llm.model): expected 'model:'"), std::string::npos) << e;
  // A workload sweep keeps its objectives.
  e = thrown([&] {
    load_sweep(write_temp("bad7.yaml",
                          "base: edge-s\nworkloads: [small_cnn]\naxes:\n  npu.mac_array.rows: [16]\n"
                          "objectives: [ttft, area]\n"));
  });
  EXPECT_NE(e.find("expected objectives among latency, energy, area, found 'ttft'"), std::string::npos) << e;
  e = thrown([&] {
    load_sweep(write_temp("bad8.yaml",
                          "base: edge-s\nworkloads: [small_cnn]\nparallel: [none, spread]\naxes:\n"
                          "  npu.mac_array.rows: [16]\n"));
  });
  EXPECT_NE(e.find(":3 (parallel): expected none, data, pipeline, tensor or auto, found 'spread'"), std::string::npos)
      << e;
}

TEST(LlmSweep, TwoByTwoEqualsTheIndividualRunsFigureForFigure) {
  const std::string model = write_temp("small.json", kSmall);
  const std::string file = llm_sweep(model, "objectives: [ttft, tokens_per_second]\n");
  const fs::path out = scratch("llm_sweep_out");
  std::string log;
  ASSERT_EQ(run_npusim("sweep " + file + " --out " + out.string() + " -j 2 --no-progress", &log), 0) << log;
  const auto records = read_records((out / "results.jsonl").string());
  ASSERT_EQ(records.size(), 4u);
  const auto rows = csv_rows(out / "results.csv");
  ASSERT_EQ(rows.size(), 4u);
  for (std::size_t i = 0; i < records.size(); ++i) {
    const json& r = records[i];
    ASSERT_EQ(r["status"], "ok") << r.dump();
    const std::string rows_value = r["config"]["npu.mac_array.rows"], prompt = r["llm"]["prompt"];
    const fs::path cli = scratch("llm_cli_" + std::to_string(i));
    ASSERT_EQ(run_npusim("llm --quiet --model " + model + " --config edge-s --set npu.mac_array.rows=" + rows_value +
                             " --prompt " + prompt + " --generate 2 --weight-dtype int4 --out " + cli.string(),
                         &log),
              0)
        << log;
    const json expected = read_json(cli / "summary.json");
    EXPECT_EQ(without_wall(r["summary"]["llm"]), without_wall(expected["llm"])) << i;
    // The config's area beside the llm block: the prefill run's own area_mm2.
    EXPECT_EQ(r["summary"]["area_mm2"], read_json(cli / "prefill" / "summary.json")["area_mm2"]) << i;
    EXPECT_TRUE(r["summary"]["area_mm2"].is_number());
    // The CSV row carries the llm block's scalars.
    const auto& row = rows[i];
    EXPECT_EQ(row.at("llm.prompt"), prompt);
    EXPECT_EQ(row.at("npu.mac_array.rows"), rows_value);
    // (The CSV writes 10 significant digits.)
    auto near = [&](const char* column, const json& v) {
      EXPECT_NEAR(std::stod(row.at(column)), v.get<double>(), 1e-9 * v.get<double>()) << column;
    };
    near("ttft_seconds", expected["llm"]["ttft_seconds"]);
    near("tokens_per_second", expected["llm"]["decode"]["tokens_per_second"]);
    near("decode_seconds", expected["llm"]["decode"]["seconds"]);
    near("kv_cache_bytes", expected["llm"]["kv_cache_bytes"]);
    near("weight_bytes", expected["llm"]["weight_bytes"]);
  }

  // The Pareto report: TTFT minimised, tokens/s maximised, a front per model and prompt (the
  // work; the array size is the design). A point is on the front when no other of its prompt
  // has a TTFT no longer and tokens/s no lower, one of them strictly.
  ASSERT_EQ(run_npusim("sweep-report " + out.string(), &log), 0) << log;
  std::map<std::string, bool> on_front;
  for (const auto& a : records) {
    const double ta = a["summary"]["llm"]["ttft_seconds"], sa = a["summary"]["llm"]["decode"]["tokens_per_second"];
    bool dominated = false;
    for (const auto& b : records) {
      if (b["llm"]["prompt"] != a["llm"]["prompt"]) continue;
      const double tb = b["summary"]["llm"]["ttft_seconds"], sb = b["summary"]["llm"]["decode"]["tokens_per_second"];
      dominated = dominated || (tb <= ta && sb >= sa && (tb < ta || sb > sa));
    }
    on_front[a["id"]] = !dominated;
  }
  std::size_t front = 0;
  for (const auto& row : csv_rows(out / "report" / "pareto.csv")) {
    EXPECT_EQ(row.at("on_front") == "1", on_front.at(row.at("id"))) << row.at("id");
    front += row.at("on_front") == "1";
  }
  EXPECT_GE(front, 1u);
  const std::string html = npusim::read_file((out / "report" / "report.html").string());
  EXPECT_NE(html.find("decode tokens/s (maximised)"), std::string::npos);
  EXPECT_NE(html.find(" prompt=16 generate=2</h2>"), std::string::npos);  // one front per prompt
  EXPECT_NE(html.find(" prompt=32 generate=2</h2>"), std::string::npos);

  // Shards (what the Slurm array's tasks run) merge to the local run's figures.
  const fs::path sharded = scratch("llm_sweep_sharded");
  for (const char* shard : {"0/2", "1/2"})
    ASSERT_EQ(run_npusim("sweep " + file + " --out " + sharded.string() + " --shard " + shard + " --no-progress", &log),
              0)
        << log;
  ASSERT_EQ(run_npusim("sweep-merge " + sharded.string(), &log), 0) << log;
  // (The local run records points as they finish, -j 2; the merge in index order: match by key.)
  std::map<std::string, json> local;
  for (const auto& r : records) local[r["key"]] = r;
  const auto merged = read_records((sharded / "results.jsonl").string());
  ASSERT_EQ(merged.size(), 4u);
  for (const auto& m : merged) {
    ASSERT_EQ(local.count(m["key"]), 1u) << m["key"];
    EXPECT_EQ(without_wall(m["summary"]["llm"]), without_wall(local.at(m["key"])["summary"]["llm"])) << m["key"];
  }
  const auto first_line = [](const fs::path& p) {
    const std::string text = npusim::read_file(p.string());
    return text.substr(0, text.find('\n'));
  };
  EXPECT_EQ(first_line(sharded / "results.csv"), first_line(out / "results.csv"));  // the same header
}

TEST(ParallelSweep, ADataPointEqualsNpusimRunParallelData) {
  // A batch-2 pair of convs on 2 cores: none (one core runs the batch) and data (a batch of 1
  // on each core).
  const std::string cnn = write_temp("cnn_b2.yaml", R"(name: cnn
inputs:
  - {name: image, shape: [2, 16, 28, 28]}
ops:
  - {name: conv1, op: conv2d, inputs: [image], out_channels: 16, kernel: 3, stride: 1, padding: 1}
  - {name: relu1, op: relu, inputs: [conv1]}
  - {name: conv2, op: conv2d, inputs: [relu1], out_channels: 16, kernel: 3, stride: 1, padding: 1}
outputs: [conv2]
)");
  const std::string file = write_temp("par_sweep.yaml", "base: edge-m\nworkloads: [" + cnn +
                                                            "]\nset:\n  npu.cores: 2\nparallel: [none, data]\naxes:\n"
                                                            "  npu.mac_array.rows: [16, 32]\n");
  const SweepSpec s = load_sweep(file);
  const auto points = expand(s);
  ASSERT_EQ(points.size(), 4u);  // 2 rows x 2 modes, the mode innermost
  EXPECT_EQ(points[1].key(s),
            "base=edge-m;set:npu.cores=2;workload=" + cnn + ";fusion=greedy;parallel=data;npu.mac_array.rows=16");
  const fs::path out = scratch("par_sweep_out");
  std::string log;
  ASSERT_EQ(run_npusim("sweep " + file + " --out " + out.string() + " --no-progress", &log), 0) << log;
  const auto records = read_records((out / "results.jsonl").string());
  ASSERT_EQ(records.size(), 4u);
  const auto rows = csv_rows(out / "results.csv");
  for (std::size_t i = 0; i < 4; ++i) {
    const json& r = records[i];
    ASSERT_EQ(r["status"], "ok") << r.dump();
    const std::string mode = r["parallel"], rows_value = r["config"]["npu.mac_array.rows"];
    EXPECT_EQ(rows[i].at("parallel"), mode);
    const fs::path cli = scratch("par_cli_" + std::to_string(i));
    ASSERT_EQ(run_npusim("run -w " + cnn + " --config edge-m --set npu.cores=2 --set npu.mac_array.rows=" + rows_value +
                             " --parallel " + mode + " --out " + cli.string(),
                         &log),
              0)
        << log;
    const json expected = read_json(cli / "summary.json");
    for (const char* key : {"cycles", "macs", "dram_read_bytes", "dram_write_bytes", "energy_j"})
      EXPECT_EQ(r["summary"][key], expected[key]) << i << " " << key;
    EXPECT_EQ(r["summary"].value("parallel", json()), expected.value("parallel", json())) << i;
    // 2 convs x 2 images x 28 x 28 x 16 x 16 x 9 MACs, whichever core runs them.
    EXPECT_EQ(r["summary"]["macs"], 2u * 2 * 28 * 28 * 16 * 16 * 9);
  }
  EXPECT_EQ(records[1]["summary"]["parallel"]["mode"], "data");
  EXPECT_EQ(records[1]["summary"]["parallel"]["replicas"], 2);
  // Two cores each running half the batch finish before one core running all of it.
  EXPECT_LT(records[1]["summary"]["cycles"].get<std::uint64_t>(), records[0]["summary"]["cycles"].get<std::uint64_t>());
}
