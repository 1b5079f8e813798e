#pragma once
// A sweep's points: the config points drawn from the axes (grid, random or Latin hypercube,
// filtered by the constraints) times the workloads, fusion policies and search objectives.
// Deterministic: the same file and seed give the same points in the same order on every machine.
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sweep/sweep_file.h"

namespace npusim::sweep {

/// Indices into each axis's values, one per axis in the sweep file's order (4 bytes an axis:
/// the largest grid the docs allow, 2^20 points, stays in tens of MiB).
using ConfigPoint = std::vector<std::uint32_t>;

/// One point: a config point, a workload (or a language model and its knobs), a policy, a
/// search objective and a parallel mode. The strings are views into the SweepSpec, which must
/// outlive its points.
struct Point {
  std::size_t index = 0;      // position in the expansion
  ConfigPoint config;         // index of each axis's value
  std::string_view workload;  // the workload, or the language model of an `llm:` sweep
  std::string_view fusion;
  std::string_view objective;        // search objective ("" = not a search point or default)
  std::string_view parallel;         // parallel mode ("" = the sweep has no `parallel:`)
  std::vector<std::uint32_t> knobs;  // `llm:` sweeps: index of each knob's value

  /// The value of axis `a` as written in the file.
  const std::string& value(const SweepSpec& s, std::size_t a) const { return s.axes[a].values[config[a]]; }
  /// The value of LLM knob `k` as written in the file.
  const std::string& knob(const SweepSpec& s, std::size_t k) const { return s.llm_knobs[k].values[knobs[k]]; }
  /// Stable identity of the point: base config, fixed overrides, workload, policy, parallel
  /// mode and LLM knobs (when the sweep has them) and every axis value. Resume and merge match
  /// points by this, so a reordered file still skips what is done.
  std::string key(const SweepSpec& s) const;
  /// "p000042": the folder and log name of the point.
  std::string id() const;
  /// The --set overrides of the point: the file's `set:` then its axis values.
  std::vector<std::string> overrides(const SweepSpec& s) const;
  nlohmann::json to_json(const SweepSpec& s) const;
};

/// The config points of the spec's sampling, constraints applied. Throws InputError when no
/// point is left, naming the constraints' lines.
std::vector<ConfigPoint> config_points(const SweepSpec& s);

/// Every point of the sweep (config points x workloads x LLM knob combinations x fusion x
/// search objectives x parallel modes).
std::vector<Point> expand(const SweepSpec& s);

/// A uniform index below n from a 64-bit Mersenne Twister: the same on every platform, unlike
/// std::uniform_int_distribution (modulo bias is below n / 2^64).
inline std::size_t draw_below(std::mt19937_64& rng, std::size_t n) {
  return static_cast<std::size_t>(rng() % n);
}

}  // namespace npusim::sweep
