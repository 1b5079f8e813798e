// The run options' table (sim/engine/run_options.h) against the front ends that read it: the
// CLI's --help declares every option of its command with the table's description, the server
// takes exactly the table's `serve` keys of an LLM request within their bounds and serves them in
// /api/options' shape, and a sweep file's `llm:` knobs are the table's `sweep` options.
// (Python: tests/python/test_run_options.py; the docs: tests/engine/test_run_options.cpp.)
#include <algorithm>

#include <gtest/gtest.h>

#include "sim/core/errors.h"
#include "sim/engine/run_options.h"
#include "sim/serve/run_request.h"
#include "sim/sweep/sweep_file.h"
#include "tests/support/cli_support.h"
#include "tests/support/text_support.h"

namespace npusim::test {
namespace {

using engine::RunCommand;
using nlohmann::json;

std::string refusal(const json& llm) {
  try {
    serve::parse_run_request(json{{"config", "edge-s"}, {"llm", llm}}.dump());
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(RunOptionsTable, EveryCommandsHelpDeclaresItsOptionsWithTheTablesWords) {
  for (const auto& [command, name] : {std::pair{RunCommand::Run, "run"}, std::pair{RunCommand::Llm, "llm"}}) {
    std::string out;
    ASSERT_EQ(run_npusim(std::string(name) + " --help", &out), 0) << out;
    const std::string help = one_line(out);
    for (const auto& o : engine::run_options()) {
      if (o.command != command) continue;
      EXPECT_NE(help.find(o.flag), std::string::npos) << name << " " << o.flag;
      EXPECT_NE(help.find(one_line(o.help())), std::string::npos) << name << " " << o.flag << "\n" << help;
    }
  }
}

TEST(RunOptionsTable, LlmsUsageListsTheTablesValues) {
  std::string out;
  ASSERT_EQ(run_npusim("llm --help", &out), 0) << out;
  for (const char* key : {"weight_dtype", "kv_dtype", "act_dtype", "expert_routing", "parallel"}) {
    const auto& o = engine::run_option(RunCommand::Llm, key);
    std::string values;
    for (const auto& v : o.choices()) values += (values.empty() ? "" : "|") + v;
    EXPECT_NE(out.find("[" + o.flag + " " + values + "]"), std::string::npos) << key << "\n" << out;
  }
}

TEST(RunOptionsTable, TheServerTakesTheTablesServeKeysWithinTheirBounds) {
  const std::string keys = [] {
    std::string s;
    for (const auto& k : engine::run_option_keys(RunCommand::Llm, engine::kServe)) s += (s.empty() ? "" : ", ") + k;
    return s;
  }();
  EXPECT_NE(refusal({{"model", "SmolLM2-360M"}, {"temperature", 1}}).find("(expected " + keys + ")"),
            std::string::npos);
  for (const auto& o : engine::run_options()) {
    if (o.command != RunCommand::Llm || !o.takes(engine::kServe) || o.kind != engine::OptionKind::Integer) continue;
    SCOPED_TRACE(o.key);
    json l = {{"model", "SmolLM2-360M"}, {o.key, o.serve_limit() + 1}};
    if (o.key == "draft_tokens") l["draft"] = "SmolLM2-360M";
    EXPECT_NE(refusal(l).find("'llm." + o.key + "': expected an integer from " + o.range_text(true)), std::string::npos)
        << refusal(l);
  }
  for (const char* key : {"weight_dtype", "kv_dtype", "act_dtype", "expert_routing"}) {
    const auto& o = engine::run_option(RunCommand::Llm, key);
    EXPECT_NE(refusal({{"model", "SmolLM2-360M"}, {key, "int3"}}).find("expected one of " + o.range_text()),
              std::string::npos)
        << key;
  }
}

TEST(RunOptionsTable, ASweepsLlmKnobsAreTheTablesSweepOptions) {
  std::vector<std::string> knobs = engine::run_option_keys(RunCommand::Llm, engine::kSweep);
  knobs.erase(std::remove(knobs.begin(), knobs.end(), "model"), knobs.end());
  EXPECT_EQ(sweep::llm_knob_names(), knobs);
  // Each integer knob is refused one past the table's range, naming its line.
  for (const auto& o : engine::run_options()) {
    if (o.command != RunCommand::Llm || !o.takes(engine::kSweep) || o.kind != engine::OptionKind::Integer) continue;
    // The knobs that mean nothing alone come with the one they need.
    const std::string beside = o.key == "kv_group_size"  ? "  kv_dtype: [int4]\n"
                               : o.key == "draft_tokens" ? "  draft: [SmolLM2-360M]\n"
                                                         : "";
    const std::string path =
        write_temp("knob_" + o.key + ".yaml", "base: edge-s\nllm:\n  model: SmolLM2-360M\n" + beside + "  " + o.key +
                                                  ": [" + std::to_string(std::int64_t(o.max) + 1) +
                                                  "]\naxes:\n  npu.mac_array.rows: [16]\n");
    try {
      sweep::load_sweep(path);
      ADD_FAILURE() << o.key << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("(llm." + o.key + "): expected a whole number from " + o.range_text()),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace npusim::test
