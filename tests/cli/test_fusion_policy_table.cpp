// The fusion policies are one table (sim/scheduler/policy.h) that every front end reads: each name
// of the table is taken by the CLI, sweep files, the server's request check and the engine's
// argument check (Python's), listed by --help and docs/scheduling.md, and an unknown name is
// refused by each of them with the table's names. (/api/options: tests/serve/test_serve_api.cpp.)
#include <algorithm>
#include <cctype>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/engine/run_pipeline.h"
#include "sim/scheduler/policy.h"
#include "sim/serve/run_request.h"
#include "sim/sweep/sweep_file.h"
#include "tests/support/cli_support.h"
#include "tests/support/text_support.h"
#include "workloads/llm/llm_config.h"
#include "tests/support/test_paths.h"

namespace npusim::test {
namespace {

using nlohmann::json;

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

sweep::SweepSpec sweep_of(const std::string& fusion) {
  return sweep::load_sweep(write_temp(
      "policy_" + fusion + ".yaml",
      "base: edge-s\nworkloads: [small_cnn]\nfusion: [" + fusion + "]\naxes:\n  npu.mac_array.rows: [16]\n"));
}

serve::RunRequest request_of(const std::string& fusion) {
  return serve::parse_run_request(json{{"config", "edge-s"}, {"workload", "small_cnn"}, {"fusion", fusion}}.dump());
}

serve::RunRequest llm_request_of(const std::string& fusion) {
  // A shipped model that edge-s holds (DeepSeek-V2-Lite's 15.7 GB does not: refused for its DRAM).
  const std::string model = "SmolLM2-360M";
  return serve::parse_run_request(
      json{{"config", "edge-s"}, {"fusion", fusion}, {"llm", {{"model", model}, {"prompt", 4}, {"generate", 1}}}}
          .dump());
}

TEST(FusionPolicyTable, NamesItsPoliciesOnceEachWithADescription) {
  const auto names = sched::fusion_policy_names();
  EXPECT_EQ(names, (std::vector<std::string>{"none", "epilogue", "greedy", "search", "as-is"}));
  for (const auto& p : sched::fusion_policies()) {
    EXPECT_EQ(std::count(names.begin(), names.end(), std::string(p.name)), 1) << p.name;
    EXPECT_FALSE(p.description.empty()) << p.name;
    EXPECT_NE(p.plan, nullptr) << p.name;
    EXPECT_EQ(sched::to_string(p.policy), p.name);  // schedule.json's and summary.json's spelling
    EXPECT_EQ(&sched::fusion_policy(p.name, "test"), &p);
  }
  EXPECT_EQ(sched::fusion_policy_names(true), (std::vector<std::string>{"none", "epilogue", "greedy", "search"}));
  EXPECT_EQ(sched::fusion_policy_list(), "none, epilogue, greedy, search, as-is");
}

TEST(FusionPolicyTable, EveryFrontEndTakesEveryNameOfTheTable) {
  for (const auto& p : sched::fusion_policies()) {
    const std::string name(p.name);
    SCOPED_TRACE(name);
    EXPECT_EQ(sched::parse_fusion_policy(name, "--fusion"), p.policy);
    // The CLI's, and Python's (spelled with its keywords), one argument check.
    EXPECT_NO_THROW(engine::check_run_arguments({name}, ""));
    EXPECT_NO_THROW(engine::check_run_arguments({name}, "", {"fusion", "objective"}));
    EXPECT_EQ(sweep_of(name).fusion, std::vector<std::string>{name});
    EXPECT_EQ(request_of(name).fusion, name);
    if (p.model_groups)
      EXPECT_NE(message_of([&] { llm_request_of(name); }).find("expected one of " + sched::fusion_policy_list(true)),
                std::string::npos);
    else
      EXPECT_EQ(llm_request_of(name).llm->fusion, name);
    // The objective goes with the policies that simulate finalists, in every front end.
    const json with_objective = {{"workload", "small_cnn"}, {"fusion", name}, {"objective", "dram-bytes"}};
    if (p.simulates_finalists) {
      EXPECT_NO_THROW(engine::check_run_arguments({name}, "dram-bytes"));
      EXPECT_EQ(serve::parse_run_request(with_objective.dump()).objective, "dram-bytes");
    } else {
      EXPECT_THROW(engine::check_run_arguments({name}, "dram-bytes"), InputError);
      EXPECT_THROW(serve::parse_run_request(with_objective.dump()), InputError);
    }
  }
}

TEST(FusionPolicyTable, TheCommandLinePlansEveryNameAndListsThemInItsHelp) {
  std::string out;
  for (const auto& name : sched::fusion_policy_names()) {
    if (sched::fusion_policy(name, "test").simulates_finalists) continue;  // planned as greedy's neighbours are
    EXPECT_EQ(run_npusim("schedule --config edge-s --workload small_cnn --fusion " + name, &out), 0) << name << out;
  }
  for (const char* command : {"run", "schedule", "compare"}) {
    ASSERT_EQ(run_npusim(std::string(command) + " --help", &out), 0) << out;
    EXPECT_NE(one_line(out).find("fusion policy: " + sched::fusion_policy_list() + ", or file:PATH"), std::string::npos)
        << command << out;
  }
  ASSERT_EQ(run_npusim("llm --help", &out), 0) << out;
  EXPECT_NE(one_line(out).find("fusion policy: " + sched::fusion_policy_list(true) + " "), std::string::npos) << out;
}

TEST(FusionPolicyTable, AnUnknownNameIsRefusedEverywhereWithTheTablesNames) {
  const std::string list = sched::fusion_policy_list();
  const std::string expected = "expected a fusion policy (" + list + ", file:PATH), found 'fastest'";
  EXPECT_NE(message_of([] { engine::check_run_arguments({"fastest"}, ""); }).find("--fusion: " + expected),
            std::string::npos);
  EXPECT_NE(message_of([] {
              engine::check_run_arguments({"fastest"}, "", {"fusion", "objective"});
            }).find("fusion: " + expected),
            std::string::npos);
  EXPECT_NE(message_of([] { sweep_of("fastest"); }).find(expected), std::string::npos);
  EXPECT_NE(message_of([] {
              request_of("fastest");
            }).find("request field 'fusion': expected one of " + list + ", found 'fastest'"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              llm_request_of("fastest");
            }).find("request field 'fusion': expected one of " + sched::fusion_policy_list(true)),
            std::string::npos);
  std::string out;
  EXPECT_EQ(run_npusim("schedule --config edge-s --workload small_cnn --fusion fastest", &out), 2);
  EXPECT_NE(out.find(expected), std::string::npos) << out;
}

// docs/scheduling.md's "Policies" table has a row for each policy of the table and no other.
TEST(FusionPolicyTable, TheSchedulingDocListsEveryPolicy) {
  std::ifstream in(std::string(test_paths::source_dir()) + "/docs/scheduling.md");
  ASSERT_TRUE(in) << "docs/scheduling.md";
  std::vector<std::string> rows;
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) in_table = line == "## Policies";
    if (!in_table || line.rfind("| `", 0) != 0) continue;
    const std::string name = line.substr(3, line.find('`', 3) - 3);
    if (name != "file:PATH") rows.push_back(name);
  }
  EXPECT_EQ(rows, sched::fusion_policy_names());
}

}  // namespace
}  // namespace npusim::test
