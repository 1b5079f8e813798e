// schedule.json's objects have fixed fields: an unknown one anywhere (a segment, a tiles entry,
// depth_first, not_fused, search, the top level) is an exit-2 error naming it and its path, and
// every schedule npusim writes still reads back (docs/schedule-format.md).
#include <gtest/gtest.h>

#include <set>

#include "sim/config/config_loader.h"
#include "sim/scheduler/fusion.h"
#include "tests/support/cli_support.h"
#include "tests/support/plan_support.h"
#include "tests/support/test_paths.h"
#include "workloads/loader.h"

using namespace npusim;
using nlohmann::json;
using npusim::test::data;
using npusim::test::schedule_error;

namespace {

/// Greedy's schedule of conv_chain3 as npusim writes it (informational fields included).
json written(const workloads::Graph& g, const HardwareConfig& hw, sched::FusionPolicy policy) {
  return sched::to_json(sched::make_plan(g, hw, policy), g);
}

std::string error_of(const json& doc, const workloads::Graph& g, const HardwareConfig& hw) {
  return schedule_error(doc.dump(), g, hw);
}

}  // namespace

TEST(ScheduleFields, EveryWrittenScheduleReadsBack) {
  const auto hw = config::load_hardware_config("edge-m");
  for (const char* name : {"conv_chain3", "conv_pool", "attention_head", "matmul_gelu_erf", "residual_block"}) {
    const auto g = data(name);
    for (const auto policy : {sched::FusionPolicy::None, sched::FusionPolicy::Epilogue, sched::FusionPolicy::Greedy,
                              sched::FusionPolicy::Search}) {
      const json doc = written(g, hw, policy);
      EXPECT_EQ(error_of(doc, g, hw), "") << name << ": " << doc.dump(1);
    }
  }
  // A depth-first group (rows, halo, weights_resident) reads back too.
  const auto chain = data("conv_chain3");
  const json df =
      json::parse(R"({"groups": [{"ops": ["c1", "c2", "c3"], "depth_first": {"rows": 8, "halo": "cache"}}]})");
  const json doc = sched::to_json(sched::parse_schedule(df.dump(), "s.json", chain, hw), chain);
  ASSERT_TRUE(doc["groups"][0].contains("depth_first")) << doc.dump(1);
  EXPECT_EQ(error_of(doc, chain, hw), "") << doc.dump(1);
}

TEST(ScheduleFields, AnUnknownFieldAnywhereIsAnErrorNamingItsPath) {
  const auto hw = config::load_hardware_config("edge-m");
  const auto g = data("conv_chain3");
  const json base = written(g, hw, sched::FusionPolicy::Greedy);
  ASSERT_FALSE(base["groups"][0]["segments"].empty());
  const std::string group = "s.json: groups[0] ('" + base["groups"][0]["name"].get<std::string>() + "')";
  struct Case {
    std::string pointer, field, expected;
  };
  const std::vector<Case> cases = {
      {"/groups/0/segments/0", "loop_ordr", group + ".segments[0].loop_ordr: unknown field 'loop_ordr'; known: ops,"},
      {"/groups/0/tiles/c1", "colls", group + ".tiles.c1.colls: unknown field 'colls'; known: rows, cols, in_channels"},
      {"/not_fused/0", "becuase", "s.json: not_fused[0].becuase: unknown field 'becuase'; known: from, to, reason"},
      {"", "groupz", "s.json: groupz: unknown field 'groupz'; known: format, version, groups"},
  };
  for (const auto& c : cases) {
    json doc = base;
    if (c.pointer == "/not_fused/0" && doc["not_fused"].empty()) doc["not_fused"].push_back({{"from", "c1"}});
    doc[json::json_pointer(c.pointer)][c.field] = 1;
    const std::string err = error_of(doc, g, hw);
    EXPECT_EQ(err.rfind(c.expected, 0), 0u) << "expected: " << c.expected << "\nfound: " << err;
  }
  // depth_first and search's blocks.
  json df = json::parse(R"({"groups": [{"ops": ["c1", "c2", "c3"], "depth_first": {"rows": 8, "hallo": "cache"}}]})");
  EXPECT_EQ(error_of(df, g, hw).rfind("s.json: groups[0].depth_first.hallo: unknown field 'hallo'", 0), 0u)
      << error_of(df, g, hw);
  json search = written(g, hw, sched::FusionPolicy::Search);
  ASSERT_TRUE(search.contains("search"));
  search["search"]["simulated"].push_back({{"candidate", "x"}, {"cost", 1}});
  const std::size_t last = search["search"]["simulated"].size() - 1;
  EXPECT_EQ(error_of(search, g, hw)
                .rfind("s.json: search.simulated[" + std::to_string(last) + "].cost: unknown field 'cost'", 0),
            0u)
      << error_of(search, g, hw);
  search = written(g, hw, sched::FusionPolicy::Search);
  search["search"]["objectve"] = "cycles";
  EXPECT_EQ(error_of(search, g, hw).rfind("s.json: search.objectve: unknown field 'objectve'", 0), 0u);
  // An informational list that is not a list of objects is named too.
  json bad = base;
  bad["not_fused"] = json::object();
  EXPECT_EQ(error_of(bad, g, hw).rfind("s.json: not_fused: expected an array, found {}", 0), 0u)
      << error_of(bad, g, hw);
  bad = base;
  bad["groups"][0]["segments"] = json::array({7});
  EXPECT_EQ(error_of(bad, g, hw).rfind(group + ".segments[0]: expected an object, found 7", 0), 0u)
      << error_of(bad, g, hw);
}

// Through the CLI: exit 2, the message on stderr, no run folder.
TEST(ScheduleFields, TheCliExitsTwoOnAnUnknownSegmentField) {
  const auto dir = test::scratch("schedule_fields");
  std::filesystem::create_directories(dir);
  ASSERT_EQ(test::run_npusim("schedule -w small_cnn -o " + (dir / "s.json").string()), 0);
  json doc = test::read_json(dir / "s.json");
  doc["groups"][0]["segments"][0]["tilez"] = 3;
  std::ofstream(dir / "s.json") << doc.dump();
  std::string out;
  EXPECT_EQ(
      test::run_npusim("run -w small_cnn -f file:" + (dir / "s.json").string() + " -o " + (dir / "run").string(), &out),
      2);
  EXPECT_NE(out.find(".segments[0].tilez: unknown field 'tilez'"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir / "run"));
  std::filesystem::remove_all(dir);
}

// A prologue (elementwise ops run on a GEMM's input blocks) is written in its segment and reads
// back; an unknown field inside it is named; a huge wrong value is shown cut short.
TEST(ScheduleFields, APrologueReadsBackAndItsFieldsAreChecked) {
  const auto hw = config::load_hardware_config("edge-m");
  const auto g = data("scale_matmul");
  json doc = written(g, hw, sched::FusionPolicy::Greedy);
  ASSERT_TRUE(doc["groups"][0]["segments"][0].contains("prologue")) << doc.dump(1);
  EXPECT_EQ(error_of(doc, g, hw), "");
  const std::string group = "s.json: groups[0] ('" + doc["groups"][0]["name"].get<std::string>() + "')";
  doc["groups"][0]["segments"][0]["prologue"]["mood"] = "spill";
  EXPECT_EQ(error_of(doc, g, hw).rfind(group + ".segments[0].prologue.mood: unknown field 'mood'", 0), 0u)
      << error_of(doc, g, hw);
  doc = written(g, hw, sched::FusionPolicy::Greedy);
  doc["groups"][0]["segments"] = std::string(100000, 'x');
  const std::string err = error_of(doc, g, hw);
  EXPECT_EQ(err.rfind(group + ".segments: expected an array, found \"xxx", 0), 0u) << err.substr(0, 200);
  EXPECT_LT(err.size(), 300u);  // 80 characters of the value at most
}

TEST(ScheduleFields, SiblingsThatShareAnInputAreOneGroupAndUnrelatedOpsAreNot) {
  // q, k and v read x and nothing of each other: one piece of the graph through their shared
  // input (the group loads x once). u reads y, which none of them reads: {q, u} is two tasks.
  const auto g = workloads::parse_yaml_workload(R"(
name: siblings
inputs:
  - {name: x, shape: [16, 64]}
  - {name: y, shape: [16, 64]}
ops:
  - {name: q, op: matmul, inputs: [x], out_features: 64}
  - {name: k, op: matmul, inputs: [x], out_features: 64}
  - {name: v, op: matmul, inputs: [x], out_features: 64}
  - {name: u, op: relu, inputs: [y]}
outputs: [q, k, v, u]
)",
                                                "siblings.yaml");
  const auto hw = config::load_hardware_config("edge-m");
  EXPECT_EQ(schedule_error(R"({"groups": [{"ops": ["q", "k", "v"]}, {"ops": ["u"]}]})", g, hw), "");
  EXPECT_NE(schedule_error(R"({"groups": [{"ops": ["q", "u"]}, {"ops": ["k"]}, {"ops": ["v"]}]})", g, hw)
                .find("group is not connected"),
            std::string::npos);
  // The search groups no unrelated neighbours, so what it writes reads back.
  const auto search = sched::make_plan(g, hw, sched::FusionPolicy::Search);
  for (const auto& gp : search.groups) {
    const auto ops = gp.ops();
    EXPECT_TRUE(sched::ops_connected(g, std::set<int>(ops.begin(), ops.end()))) << gp.name;
  }
  EXPECT_EQ(error_of(written(g, hw, sched::FusionPolicy::Search), g, hw), "");
}

TEST(ScheduleFields, WhatTheSearchWritesForZooTransformersReadsBack) {
  // BERT's and ViT's Q, K and V projections read one hidden state: the search groups them, and
  // its schedule.json named the group "not connected" when read back.
  for (const char* name : {"bert_base_layer", "vit_s16_block"})
    for (const char* config : {"edge-s", "edge-m"}) {
      const auto hw = config::load_hardware_config(config);
      const auto g = workloads::load_workload(name, std::string(test_paths::source_dir()) + "/workloads/zoo");
      EXPECT_EQ(error_of(written(g, hw, sched::FusionPolicy::Search), g, hw), "") << name << " on " << config;
    }
}
