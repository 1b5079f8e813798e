// Schedules as intent. Tiles npusim wrote are marked derived and derived again on a config where
// they do not fit (a warning names the op); a tile the file fixes is kept and named as the file's
// when it does not fit; a vector head's tile count is `tile_count` (its old spelling `rows` read
// with a warning); the reader refuses unknown versions, duplicate group names and duplicate keys,
// suggests the nearest op name, says which workload a schedule was written for, and names the
// field, expected and found type of a wrong type (docs/schedule-format.md).
#include <gtest/gtest.h>

#include "sim/config/config_loader.h"
#include "tests/support/cli_support.h"
#include "tests/support/plan_support.h"
#include "tests/support/test_paths.h"

using namespace npusim;
using nlohmann::json;
using npusim::test::data;
using npusim::test::run_npusim;
using npusim::test::schedule_error;
using npusim::test::scratch;
using npusim::test::write_temp;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// c1 of conv_chain3 (8 -> 8 channels, 3x3, 32x32) in one tile: the whole 32 x 32 x 8 output.
/// int8 operands: input 8 x 32 x 32 = 8192 B (plus a halo), output 8192 B, weights 576 B: more
/// than 16 KiB, so it does not fit a 16 KiB SRAM, while tiles of a few rows do.
json whole_c1(bool derived) {
  json tile = {{"rows", 32}, {"cols", 8}, {"in_channels", 8}};
  if (derived) tile["derived"] = true;
  return {{"format", "npusim-schedule"}, {"version", 1}, {"groups", {{{"ops", {"c1"}}, {"tiles", {{"c1", tile}}}}}}};
}

}  // namespace

// ---- derived tiles are derived again; the file's own tiles are named as the file's ----

TEST(SchedulePortable, WrittenTilesAreMarkedDerived) {
  const auto hw = config::load_hardware_config("edge-m");
  const auto g = data("conv_chain3");
  const json doc = sched::to_json(sched::make_plan(g, hw, sched::FusionPolicy::Epilogue), g);
  for (const auto& group : doc["groups"])
    for (const auto& [op, tile] : group["tiles"].items()) EXPECT_EQ(tile.value("derived", false), true) << op;
}

TEST(SchedulePortable, DerivedTileThatDoesNotFitIsDerivedAgain) {
  const auto g = data("conv_chain3");
  const auto small = config::load_hardware_config("edge-m", {"npu.sram.capacity=16KiB"});
  // The whole-map tile fits edge-m's SRAM, as written there.
  EXPECT_EQ(schedule_error(whole_c1(true).dump(), g, config::load_hardware_config("edge-m")), "");
  const sched::Plan plan = sched::parse_schedule(whole_c1(true).dump(), "s.json", g, small);
  const sched::Tiling& t = plan.groups.at(0).segments.at(0).tiling;
  EXPECT_LT(t.rows, 32) << "derived again with fewer rows per tile";
  EXPECT_LE(plan.groups[0].sram_bytes, 16u * 1024);
}

TEST(SchedulePortable, FixedTileThatDoesNotFitIsNamedAsTheFiles) {
  const auto g = data("conv_chain3");
  const auto small = config::load_hardware_config("edge-m", {"npu.sram.capacity=16KiB"});
  const std::string e = schedule_error(whole_c1(false).dump(), g, small);
  EXPECT_TRUE(has(e, "s.json: groups[0]")) << e;
  EXPECT_TRUE(has(e, "with the file's tiles")) << e;
  EXPECT_TRUE(has(e, "'c1' needs")) << e;
  EXPECT_TRUE(has(e, "requested tile")) << e;
  EXPECT_FALSE(has(e, "smallest")) << e;  // the file fixed the tile: it is not npusim's smallest
}

TEST(SchedulePortable, CliWarnsNamingTheOpWhoseTileWasDerivedAgain) {
  const auto path = write_temp("c1.json", whole_c1(true).dump());
  const std::string wl = std::string(test_paths::data_dir()) + "/conv_chain3.yaml";
  std::string log;
  ASSERT_EQ(
      run_npusim("schedule --config edge-m --set npu.sram.capacity=16KiB --workload " + wl + " --fusion file:" + path,
                 &log),
      0)
      << log;
  EXPECT_TRUE(has(log, "groups[0]")) << log;
  EXPECT_TRUE(has(log, "derived again: 'c1' rows 32 -> ")) << log;
}

TEST(SchedulePortable, EdgeMScheduleRunsOnEdgeSAndOn128KiB) {
  // MobileNetV2's epilogue schedule written on edge-m (1 MiB SRAM) runs on edge-s (256 KiB): its
  // derived tiles are derived again, where keeping them would refuse it ("'features.0' needs
  // 442144 B of 262144 B").
  const auto file = scratch("mbv2_edge_m.json");
  std::string log;
  ASSERT_EQ(
      run_npusim("schedule --config edge-m --workload mobilenet_v2 --fusion epilogue --out " + file.string(), &log), 0)
      << log;
  for (const std::string config : {"--config edge-s", "--config edge-m --set npu.sram.capacity=128KiB"}) {
    ASSERT_EQ(run_npusim("schedule " + config + " --workload mobilenet_v2 --fusion file:" + file.string(), &log), 0)
        << config << "\n"
        << log;
    EXPECT_TRUE(has(log, "derived again")) << log;
  }
}

// ---- one meaning per field ----

TEST(SchedulePortable, VectorHeadsWriteTileCountAndReadRowsWithAWarning) {
  const auto hw = config::load_hardware_config("edge-m");
  const auto g = data("add_layer_norm");
  const json doc = sched::to_json(sched::make_plan(g, hw, sched::FusionPolicy::None), g);
  for (const auto& group : doc["groups"])
    for (const auto& [op, tile] : group["tiles"].items()) {
      EXPECT_TRUE(tile.contains("tile_count")) << op << ": " << tile.dump();
      EXPECT_FALSE(tile.contains("rows")) << op << ": " << tile.dump();
    }
  // 2048 rows of 768: 16 tiles of 128 rows either way; the old spelling still reads.
  const auto plan_of = [&](const char* field) {
    const json s = {{"groups", {{{"ops", {"ln"}}, {"tiles", {{"ln", {{field, 16}}}}}}}}};
    return sched::parse_schedule(s.dump(), "s.json", g, hw);
  };
  EXPECT_EQ(plan_of("tile_count").groups.at(1).segments.at(0).tiling.tiles, 16u);
  EXPECT_EQ(plan_of("rows").groups.at(1).segments.at(0).tiling.tiles, 16u);
  std::string log;
  const auto path =
      write_temp("ln_rows.json", json{{"groups", {{{"ops", {"ln"}}, {"tiles", {{"ln", {{"rows", 16}}}}}}}}}.dump());
  ASSERT_EQ(run_npusim("schedule --config edge-m --workload " + std::string(test_paths::data_dir()) +
                           "/add_layer_norm.yaml --fusion file:" + path,
                       &log),
            0)
      << log;
  EXPECT_TRUE(has(log, "tiles.ln.rows: a vector head's 'rows' is its number of tiles; read as tile_count")) << log;
}

TEST(SchedulePortable, TileFieldsOfTheOtherHeadKindAreRefused) {
  const auto hw = config::load_hardware_config("edge-m");
  const auto ln = data("add_layer_norm");
  EXPECT_TRUE(
      has(schedule_error(R"({"groups": [{"ops": ["ln"], "tiles": {"ln": {"tile_count": 4, "rows": 4}}}]})", ln, hw),
          "expected tile_count alone, found both"));
  EXPECT_TRUE(has(schedule_error(R"({"groups": [{"ops": ["ln"], "tiles": {"ln": {"cols": 4}}}]})", ln, hw),
                  "tiles.ln.cols: expected tile_count on vector head 'ln'"));
  const auto chain = data("conv_chain3");
  EXPECT_TRUE(has(schedule_error(R"({"groups": [{"ops": ["c1"], "tiles": {"c1": {"tile_count": 4}}}]})", chain, hw),
                  "tiles.c1.tile_count: expected rows, cols, in_channels (per tile) on GEMM head 'c1'"));
}

// ---- the reader lets no mistake through ----

TEST(SchedulePortable, UnknownVersionIsRefused) {
  const auto hw = config::load_hardware_config("edge-m");
  const auto g = data("conv_chain3");
  EXPECT_EQ(schedule_error(R"({"version": 2, "groups": [{"ops": ["c1"]}]})", g, hw),
            "s.json: version: expected 1 (the schedule format this npusim reads), found a number (2)");
  EXPECT_TRUE(has(schedule_error(R"({"version": "1", "groups": []})", g, hw), "found a string (\"1\")"));
  EXPECT_EQ(schedule_error(R"({"version": 1, "groups": [{"ops": ["c1"]}]})", g, hw), "");
}

TEST(SchedulePortable, DuplicateGroupNamesAreRefused) {
  const auto hw = config::load_hardware_config("edge-m");
  const auto g = data("conv_chain3");
  EXPECT_EQ(schedule_error(R"({"groups": [{"name": "a", "ops": ["c1"]}, {"name": "a", "ops": ["c2"]}]})", g, hw),
            "s.json: groups[1] ('a').name: expected a name no other group has, found 'a', the name of groups[0] too");
}

TEST(SchedulePortable, DuplicateJsonKeysAreRefusedWithTheirPath) {
  const auto hw = config::load_hardware_config("edge-m");
  const auto g = data("conv_chain3");
  const std::string e = schedule_error(R"({"groups": [{"ops": ["c1"]}, {"ops": ["c2"], "ops": ["c3"]}]})", g, hw);
  EXPECT_TRUE(has(e, "s.json:1: groups[1]: duplicate key 'ops'")) << e;
  EXPECT_TRUE(has(schedule_error(R"({"groups": [], "groups": []})", g, hw), "s.json:1: duplicate key 'groups'"));
  EXPECT_TRUE(has(schedule_error(R"({"groups": [{"ops": ["c1"], "tiles": {"c1": {"rows": 4, "rows": 8}}}]})", g, hw),
                  "s.json:1: groups[0].tiles.c1: duplicate key 'rows'"));
}

TEST(SchedulePortable, UnknownOpSuggestsTheNearestName) {
  const auto hw = config::load_hardware_config("edge-m");
  const auto g = workloads::load_yaml_workload(write_temp("mm.yaml", R"(
name: mm
inputs:
  - {name: x, shape: [64, 32]}
ops:
  - {name: /fc/MatMul, op: matmul, inputs: [x], out_features: 32}
  - {name: /fc/Relu, op: relu, inputs: [/fc/MatMul]}
outputs: [/fc/Relu]
)"));
  EXPECT_EQ(schedule_error(R"({"groups": [{"ops": ["/fc/Matmul"]}]})", g, hw),
            "s.json: groups[0].ops[0]: unknown op '/fc/Matmul' (not in workload 'mm'); did you mean '/fc/MatMul'?");
  // Nothing near: no suggestion.
  EXPECT_EQ(schedule_error(R"({"groups": [{"ops": ["encoder.layer.0"]}]})", g, hw),
            "s.json: groups[0].ops[0]: unknown op 'encoder.layer.0' (not in workload 'mm')");
}

TEST(SchedulePortable, ScheduleOfAnotherWorkloadSaysWhichAndHowManyOpsAreUnknown) {
  const auto hw = config::load_hardware_config("edge-m");
  const auto chain = data("conv_chain3");
  // conv_pool's schedule: ops conv, relu, pool; none is in conv_chain3.
  const auto pool = data("conv_pool");
  const json doc = sched::to_json(sched::make_plan(pool, hw, sched::FusionPolicy::Epilogue), pool);
  const std::string e = schedule_error(doc.dump(), chain, hw);
  EXPECT_TRUE(has(e, "the file was written for workload 'conv_pool' (3 of its 3 listed ops are not in 'conv_chain3')"))
      << e;
}

TEST(SchedulePortable, WrongTypesNameFieldExpectedAndFoundType) {
  const auto hw = config::load_hardware_config("edge-m");
  const auto g = data("conv_chain3");
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {R"({"groups": [{"name": 5, "ops": ["c1"]}]})", "s.json: groups[0].name: expected a string, found a number (5)"},
      {R"({"groups": [{"ops": ["c1"], "fusion": 1}]})",
       "s.json: groups[0].fusion: expected a string, found a number (1)"},
      {R"({"groups": [{"ops": ["c1", "c2"], "depth_first": {"halo": 3}}]})",
       "s.json: groups[0].depth_first.halo: expected a string, found a number (3)"},
      {R"({"groups": [{"ops": ["c1"], "tiles": {"c1": {"rows": "8"}}}]})",
       "s.json: groups[0].tiles.c1.rows: expected a positive integer, found a string (\"8\")"},
      {R"({"groups": [{"ops": ["c1"], "tiles": {"c1": {"rows": 8, "derived": "yes"}}}]})",
       "s.json: groups[0].tiles.c1.derived: expected true or false, found a string (\"yes\")"},
      {R"({"groups": ["c1"]})", "s.json: groups[0]: expected a group object {name, ops, ...}, found a string (\"c1\")"},
      {R"({"groups": {}})", "s.json.groups: expected an array, found an object ({})"},
  };
  for (const Case& c : cases) EXPECT_EQ(schedule_error(c.text, g, hw), c.message) << c.text;
  // Through the CLI: exit 2, and no library text.
  std::string log;
  const auto path = write_temp("halo.json", cases[2].text);
  EXPECT_EQ(run_npusim("schedule --config edge-m --workload " + std::string(test_paths::data_dir()) +
                           "/conv_chain3.yaml --fusion file:" + path,
                       &log),
            2)
      << log;
  EXPECT_TRUE(has(log, "depth_first.halo: expected a string, found a number (3)")) << log;
  EXPECT_FALSE(has(log, "type must be")) << log;
  EXPECT_FALSE(has(log, "internal")) << log;
}
