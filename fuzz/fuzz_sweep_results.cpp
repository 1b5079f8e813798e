// A sweep's results.jsonl (or a shard's), as `--resume`, `sweep-merge` and `sweep-report` read it:
// every record checked field by field, then turned into the CSV row it would be written as.
#include "fuzz/fuzz_support.h"
#include "sim/sweep/results.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = npusim::fuzz::as_file(data, size, ".jsonl");
  return npusim::fuzz::expect_input_errors_only([&] {
    for (const auto& r : npusim::sweep::read_records(path)) npusim::sweep::csv_row({}, r);
  });
}
