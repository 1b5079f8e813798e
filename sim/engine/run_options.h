#pragma once
// The options of a run, declared once (as the config keys are, sim/config/config_keys.h): for
// `npusim run`-style runs and for `npusim llm`, each option's key, CLI flag, kind, valid values or
// range, default and one-line meaning. Every front end reads it: the CLI's option declarations and
// --help, the server's request checks and /api/options, sweep files' `llm:` knobs, the Python
// module's checks (npusim.run_options()), and docs/run-options.md's and docs/serve.md's tables,
// which are generated from it (scripts/update-config-doc.sh; tests/engine/test_run_options.cpp
// fails when a doc and the table disagree).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace npusim::engine {

/// The command whose options these are: `npusim run` (and compare, schedule) or `npusim llm`.
enum class RunCommand { Run, Llm };

/// What an option's value is, which decides its parser.
enum class OptionKind {
  Choice,   // one of choices()
  Integer,  // a whole number in [min, max]
  Number,   // a number in [min, max] (min excluded when min_open)
  Flag,     // given or not (true or false in JSON and sweep files)
  Text,     // a name or a path; choices(), when there are some, are the names a client may send
  List,     // repeatable: one item per use
};

/// The front ends that take an option besides the CLI (every option has a flag).
enum RunFront : unsigned {
  kServe = 1,   // a POST /api/runs request (an LLM option: in its `llm` object)
  kSweep = 2,   // a sweep file (an LLM option: a knob of `llm:`)
  kPython = 4,  // a keyword of npusim.simulate / plan / load / llm
};

/// One option of a run.
struct RunOption {
  RunCommand command = RunCommand::Run;
  std::string key;   // the name in sweep files, the server's JSON and Python: "draft_tokens"
  std::string flag;  // the CLI's: "--draft-tokens"
  OptionKind kind = OptionKind::Text;
  double min = 0, max = 0;  // an Integer's or a Number's range
  bool min_open = false;    // a Number whose min is excluded (a fraction above 0)
  /// The server's bound when it is tighter than `max` (a request's run time stays in minutes); 0: max.
  double serve_max = 0;
  std::vector<std::string> values;                      // a Choice's fixed values, in help order
  std::vector<std::string> (*values_from)() = nullptr;  // or the table they come from
  std::string default_text;                             // as the docs show it
  std::string unit;                                     // "tokens", "" when none
  /// One line; "{values}" stands for choices() joined by ", " (help texts and docs).
  std::string description;
  unsigned fronts = 0;  // RunFront bits

  /// The valid values: `values`, or those of the table `values_from` reads.
  std::vector<std::string> choices() const;
  /// The description with its values written out (--help, docs, Python).
  std::string help() const;
  bool takes(RunFront front) const { return (fronts & front) != 0; }
  /// The largest value a server request may give (serve_max, else max).
  std::int64_t serve_limit() const;
  /// The valid values as a sentence lists them: "append or copy", "int8, fp16 or bf16".
  std::string or_list() const;
  /// Throws InputError(where, "expected VALUES, found 'value'") when `value` is not a choice.
  void check(const std::string& value, const std::string& where) const;
  /// A Number's value written as `text` (the whole text a number in the range); InputError(where,
  /// "expected a probability from 0 to 1`of`, found '1.5'") else.
  double parse_number(const std::string& text, const std::string& where, const std::string& of = "") const;
  /// The valid values or range in words: "1 to 64", "int4, int8, fp16, bf16"; "" when free text.
  std::string range_text(bool serve = false) const;
};

/// Every option, `run`'s first, in the order help texts and docs list them.
const std::vector<RunOption>& run_options();

/// The option `key` of `command`; std::logic_error when the table has none (a front end reads
/// only declared options).
const RunOption& run_option(RunCommand command, std::string_view key);

/// The keys of `command`'s options that `front` takes, in table order.
std::vector<std::string> run_option_keys(RunCommand command, RunFront front);

/// The table as JSON (npusim.run_options() in Python): per option command, key, flag, kind,
/// default, unit, description, fronts, and min/max/serve_max or values where it has them.
nlohmann::json run_options_json();

/// The command that rewrites the generated tables of docs/run-options.md and docs/serve.md.
inline constexpr const char* kRegenerateOptionsDoc = "scripts/update-config-doc.sh";

/// `doc` (read from `where`) with every generated run-option table it holds rewritten from the
/// table: "run options" and "llm options" (docs/run-options.md), "serve llm keys" (docs/serve.md).
std::string with_generated_option_tables(const std::string& doc, const std::string& where);
/// Whether `doc` holds any of those tables.
bool has_generated_option_tables(const std::string& doc);

}  // namespace npusim::engine
