#pragma once
// Slurm job arrays for a sweep: one array task per shard, each running
// `npusim sweep SWEEP --out DIR --shard $SLURM_ARRAY_TASK_ID/N --resume`.
#include <string>

namespace npusim::sweep {

struct SlurmOptions {
  std::string sweep_file, out;  // made absolute: tasks may start in another folder
  unsigned array_size = 1;      // shards = array tasks
  std::string partition;        // "" = the cluster's default
  bool keep_runs = false;
  std::string npusim;  // the binary the tasks run
};

/// The sbatch script's text.
std::string slurm_script(const SlurmOptions& o);

/// Writes DIR/slurm/sweep.sbatch; returns its path.
std::string write_slurm_script(const SlurmOptions& o);

/// Submits the script with `sbatch --parsable`; returns the job id. Throws SimulationError with
/// sbatch's output when it fails or is not installed.
std::string submit_slurm(const std::string& script_path);

}  // namespace npusim::sweep
