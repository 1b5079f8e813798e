#include "sim/sweep/slurm.h"

#include <sys/wait.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <filesystem>

#include "sim/core/errors.h"
#include "sim/core/file_util.h"

namespace npusim::sweep {
namespace fs = std::filesystem;

namespace {

/// A word for bash: single-quoted, with ' written as '\''.
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// A value written into an #SBATCH line, which sbatch reads without a shell's quoting: only
/// letters, digits and `_ . - / + , : @` pass (a newline would add a line every array task
/// runs; a space or quote would change the option). Throws InputError naming `flag`.
void check_sbatch_value(const std::string& value, const std::string& flag) {
  for (unsigned char c : value)
    if (!(std::isalnum(c) || std::string("_.-/+,:@").find(char(c)) != std::string::npos)) {
      char shown[16];
      std::snprintf(shown, sizeof shown, c >= 0x20 && c < 0x7f ? "'%c'" : "byte 0x%02x", c);
      throw InputError(flag + " " + (value.size() > 80 ? value.substr(0, 80) + "..." : value),
                       std::string("expected only letters, digits and _ . - / + , : @ (it is written into the "
                                   "Slurm script's #SBATCH lines), found ") +
                           shown);
    }
}

}  // namespace

std::string slurm_script(const SlurmOptions& o) {
  const std::string logs = (fs::path(o.out) / "slurm").string();
  check_sbatch_value(o.partition, "--partition");
  check_sbatch_value(logs, "--out");
  std::string s =
      "#!/bin/bash\n"
      "# Written by npusim sweep --slurm: one array task per shard of the sweep.\n"
      "#SBATCH --job-name=npusim-sweep\n"
      "#SBATCH --array=0-" +
      std::to_string(o.array_size - 1) +
      "\n"
      "#SBATCH --cpus-per-task=1\n"
      "#SBATCH --output=" +
      logs + "/task-%A_%a.out\n";
  if (!o.partition.empty()) s += "#SBATCH --partition=" + o.partition + "\n";
  s += "set -euo pipefail\n"
       "# --resume: a re-submitted array skips the points its shard already recorded.\n"
       "exec " +
       shell_quote(o.npusim) + " sweep " + shell_quote(o.sweep_file) + " --out " + shell_quote(o.out) +
       " --shard \"${SLURM_ARRAY_TASK_ID}/" + std::to_string(o.array_size) +
       "\" --resume -j \"${SLURM_CPUS_PER_TASK:-1}\"" + " --no-progress" + (o.keep_runs ? " --keep-runs" : "") + "\n";
  return s;
}

std::string write_slurm_script(const SlurmOptions& o) {
  const fs::path dir = fs::path(o.out) / "slurm";
  fs::create_directories(dir);
  const std::string path = (dir / "sweep.sbatch").string();
  write_file_atomic(path, slurm_script(o));
  fs::permissions(path, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);
  return path;
}

std::string submit_slurm(const std::string& script_path) {
  const std::string cmd = "sbatch --parsable " + shell_quote(script_path) + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) throw SimulationError("cannot start sbatch");
  std::string output;
  std::array<char, 256> buf{};
  while (std::fgets(buf.data(), buf.size(), p)) output += buf.data();
  const int status = ::pclose(p);
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.pop_back();
  if (status != 0 || output.empty())
    throw SimulationError("sbatch failed (" +
                          (WIFEXITED(status) && WEXITSTATUS(status) == 127 ? std::string("not installed") : output) +
                          "); the script is " + script_path + " (submit it by hand, or use --dry-run)");
  return output.substr(0, output.find(';'));  // "jobid[;cluster]"
}

}  // namespace npusim::sweep
