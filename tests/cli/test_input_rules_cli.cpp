// The rules every command's arguments follow (sim/cli/commands.cpp's one parser): integer options
// parsed by parse_integer with their range, no argument a command does not take, a file to read
// that is a regular file, comma lists without empty items; and a schedule file combined with
// --parallel tensor refused with its true reason. Each case exits 2 with the option and the value.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/cli_support.h"
#include "tests/support/test_paths.h"

namespace fs = std::filesystem;
using npusim::test::run_npusim;
using npusim::test::scratch;
using npusim::test::write_temp;

namespace {

/// Runs npusim ARGS, expects exit 2 and `message` in its output, and nothing at `out` (if given).
void expect_refused(const std::string& args, const std::string& message, const fs::path& out = {}) {
  std::string log;
  EXPECT_EQ(run_npusim(args, &log), 2) << args << "\n" << log;
  EXPECT_NE(log.find(message), std::string::npos) << args << "\n" << log;
  EXPECT_EQ(log.find("std::"), std::string::npos) << log;
  if (!out.empty()) EXPECT_FALSE(fs::exists(out)) << out;
}

}  // namespace

TEST(InputRulesCli, IntegerOptionsOfEveryCommandGoThroughOneCheckedParser) {
  const fs::path out = scratch("ints");
  // -1 was 4294967295 through boost's unsigned conversion; a fraction, garbage and 2^64 too.
  for (const char* value : {"-1", "1.5", "128x", "18446744073709551616"})
    expect_refused("llm --model Llama-3.2-1B --group-size " + std::string(value) + " --out " + out.string(),
                   "--group-size: expected a whole number from 0 to 1048576, found '" + std::string(value) + "'", out);
  // 2^20 + 1 is one past the range; 2^32 + 1 would be 1 in 32 bits.
  expect_refused("llm --model Llama-3.2-1B --group-size 1048577 --out " + out.string(),
                 "--group-size: expected a whole number from 0 to 1048576, found '1048577'", out);
  expect_refused("llm --model Llama-3.2-1B --prompt 4294967297 --out " + out.string(),
                 "--prompt: expected a whole number from 1 to 1000000, found '4294967297'", out);
  expect_refused("sweep s.yaml -j -2 --out " + out.string(),
                 "--jobs: expected a whole number from 1 to 1024, found '-2'", out);
  expect_refused("validate m.csv -j 0 --out " + out.string(),
                 "--jobs: expected a whole number from 1 to 256, found '0'", out);
  expect_refused("calibrate m.csv --config edge-m --out f.yaml --max-evals 1e3",
                 "--max-evals: expected a whole number from 1 to 100000, found '1e3'");
  expect_refused("serve --port 65536", "--port: expected a whole number from 0 to 65535, found '65536'");
  expect_refused("serve --run-timeout -5", "--run-timeout: expected a whole number from 1 to 86400, found '-5'");
  expect_refused("inspect t.json --top 0", "--top: expected a whole number from 1 to 1000000, found '0'");
  expect_refused("dram --generate random --requests 0x10 --trace t.txt",
                 "--requests: expected a whole number from 1 to 100000000, found '0x10'");
  expect_refused("run --trace-bank-rows -1 --out " + out.string(),
                 "--trace-bank-rows: expected a whole number from 0 to 18446744073709551615, found '-1'", out);
  expect_refused("run --dim past=-3 --out " + out.string(),
                 "--dim past=-3: expected a whole number from 0 to 2147483648, found '-3'", out);
  expect_refused("sweep s.yaml --shard 4/4", "--shard 4/4 (I): expected a whole number from 0 to 3, found '4'");
}

TEST(InputRulesCli, SizesReachTheDocumentedMaximaAndNoFurther) {
  const fs::path out = scratch("sizes");
  // npu.l2.capacity's documented maximum is 1 TiB: 2^40 B is written and accepted; one byte
  // more is refused with the range in TiB.
  std::string log;
  EXPECT_EQ(
      run_npusim("schedule --config edge-s --workload small_cnn --set npu.cores=2 --set 'npu.l2.capacity=1 TiB'", &log),
      0)
      << log;
  expect_refused("schedule --config edge-s --workload small_cnn --set npu.cores=2 --set npu.l2.capacity=1099511627777",
                 "(npu.l2.capacity): expected a size in [0 B, 1 TiB], found '1099511627777'");
  expect_refused("schedule --config edge-s --workload small_cnn --set 'npu.sram.capacity=1.5 TB'",
                 "(npu.sram.capacity): expected a size in [1 B, 1 TiB], found '1.5 TB'");
  expect_refused("serve --run-memory '2 PiB'", "--run-memory: expected 16 MiB to 1 PiB, found '2 PiB'");
}

TEST(InputRulesCli, EveryCommandRefusesAnArgumentItDoesNotTake) {
  expect_refused("keys bogus", "npusim keys: unexpected argument 'bogus' (usage: npusim keys [--json");
  expect_refused("--version extra", "npusim --version: unexpected argument 'extra'");
  expect_refused("help run", "npusim help: unexpected argument 'run'");
  const fs::path out = scratch("extra");
  expect_refused("run stray --out " + out.string(), "npusim run: unexpected argument 'stray' (usage: npusim run ", out);
  expect_refused("llm --model Llama-3.2-1B extra --out " + out.string(),
                 "npusim llm: unexpected argument 'extra' (usage: npusim llm --model", out);
  expect_refused("scalesim a.cfg", "npusim scalesim: unexpected argument 'a.cfg'");
  expect_refused("serve 8080", "npusim serve: unexpected argument '8080'");
  expect_refused("dram extra --trace t.txt", "npusim dram: unexpected argument 'extra'");
  // One positional taken, the second refused.
  expect_refused("inspect a.json b.json", "npusim inspect: unexpected argument 'b.json'");
  expect_refused("sweep a.yaml b.yaml", "npusim sweep: unexpected argument 'b.yaml'");
  expect_refused("validate a.csv b.csv", "npusim validate: unexpected argument 'b.csv'");
  expect_refused("roofline a.json b.json", "npusim roofline: unexpected argument 'b.json'");
}

TEST(InputRulesCli, AFileToReadIsARegularFile) {
  const fs::path dir = scratch("doc-dir");
  fs::create_directories(dir);
  expect_refused("keys --doc " + dir.string(), dir.string() + ": expected a regular file, found a folder");
  const fs::path yaml_dir = scratch("net.yaml");
  fs::create_directories(yaml_dir);
  expect_refused("schedule --config " + yaml_dir.string() + " --workload small_cnn",
                 yaml_dir.string() + ": expected a regular file, found a folder");
  expect_refused("schedule --workload " + yaml_dir.string(),
                 yaml_dir.string() + ": expected a regular file, found a folder");
  expect_refused("dram --trace " + dir.string() + " --out " + scratch("d").string(),
                 dir.string() + ": expected a regular file, found a folder");
  fs::remove_all(dir);
  fs::remove_all(yaml_dir);
}

TEST(InputRulesCli, ACommaListWithAnEmptyItemNamesTheOptionAndThePosition) {
  const fs::path out = scratch("lists");
  expect_refused("compare -c edge-s,,edge-m --workload small_cnn --out " + out.string(),
                 "-c/--config: expected a comma-separated list without empty items, found an empty item 2 in "
                 "'edge-s,,edge-m'",
                 out);
  expect_refused("compare --fusion none,greedy, --workload small_cnn --out " + out.string(),
                 "-f/--fusion: expected a comma-separated list without empty items, found an empty item 3 in "
                 "'none,greedy,'",
                 out);
  expect_refused("compare --parallel ,data --config edge-s --workload small_cnn --out " + out.string(),
                 "--parallel: expected a comma-separated list without empty items, found an empty item 1", out);
  expect_refused("run --input-shape x=1,,3 --workload small_cnn --out " + out.string(),
                 "--input-shape x=1,,3: expected a comma-separated list without empty items, found an empty item 2",
                 out);
  expect_refused("sweep-report d --objectives latency,,energy",
                 "--objectives: expected a comma-separated list without empty items, found an empty item 2");
  expect_refused("calibrate m.csv --config edge-m --out f.yaml --fit npu.clock,",
                 "--fit: expected a comma-separated list without empty items, found an empty item 2");
}

TEST(InputRulesCli, AScheduleFileOfTheUnsplitWorkloadWithParallelTensorSaysWhy) {
  // The schedule small_cnn's greedy plan writes names its ops before any split; --parallel
  // tensor on 2 cores plans the graph whose GEMMs are "op [core 0]" and "op [core 1]".
  const fs::path schedule = scratch("sched.json");
  std::string log;
  ASSERT_EQ(run_npusim("schedule --config edge-s --workload small_cnn --out " + schedule.string(), &log), 0) << log;
  const fs::path out = scratch("tp");
  EXPECT_EQ(run_npusim("run --config edge-s --set npu.cores=2 --workload small_cnn --parallel tensor --fusion file:" +
                           schedule.string() + " --out " + out.string(),
                       &log),
            2)
      << log;
  EXPECT_NE(log.find("is split over the cores by --parallel tensor/auto (the planned graph holds '"), std::string::npos)
      << log;
  EXPECT_NE(log.find(" [core 0]' to '"), std::string::npos) << log;
  EXPECT_NE(log.find(" [core 1]' instead): a schedule file names the ops of the graph it plans"), std::string::npos)
      << log;
  EXPECT_EQ(log.find("not in workload"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(out));
  // Without --parallel the same file plans.
  EXPECT_EQ(run_npusim("schedule --config edge-s --workload small_cnn --fusion file:" + schedule.string(), &log), 0)
      << log;
}

TEST(InputRulesCli, AConfigJsonWithAKeyTwiceOrExpertsOnADenseModelTypeIsRefused) {
  const std::string tiny = std::string(test_paths::data_dir()) + "/llm_tiny.json";
  const std::string text = npusim::read_file(tiny);
  const fs::path out = scratch("llm-out");
  // hidden_size twice (line 4 holds the second): the last would silently win.
  const std::string twice = write_temp("twice.json", text.substr(0, text.rfind('}')) + ",\n \"hidden_size\": 512}\n");
  expect_refused("llm --model " + twice + " --config edge-s --prompt 8 --generate 1 --out " + out.string(),
                 twice + ":4: duplicate key 'hidden_size' (JSON would keep only the last value", out);
  // A llama config with Mixtral's expert fields: npusim builds llama dense, so it refuses them.
  const std::string moe = write_temp(
      "moe.json", text.substr(0, text.rfind('}')) + ", \"num_local_experts\": 8, \"num_experts_per_tok\": 2}");
  expect_refused("llm --model " + moe + " --config edge-s --prompt 8 --generate 1 --out " + out.string(),
                 moe +
                     " (num_local_experts): mixture-of-experts routing is not modelled for model_type 'llama' "
                     "(npusim builds it as a dense decoder), found num_local_experts 8",
                 out);
  // 0 and null mean no experts (dense configs of some families write them): the model runs.
  const std::string zero = write_temp(
      "zero.json", text.substr(0, text.rfind('}')) + ", \"num_local_experts\": 0, \"n_routed_experts\": null}");
  std::string log;
  EXPECT_EQ(run_npusim("llm --model " + zero + " --config edge-s --prompt 8 --generate 1 --quiet --out " + out.string(),
                       &log),
            0)
      << log;
}
