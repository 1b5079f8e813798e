// `npusim scalesim`: SCALE-Sim's config and topology files run in SCALE-Sim's own model
// (reference folds, 1-byte words, three SRAMs), written as its three CSV reports, with npusim's
// overlapped-fold cycles and partial-sum traffic printed beside them (docs/scalesim.md).
#include <iostream>

#include <boost/program_options.hpp>

#include "models/mac_array/fold_model.h"
#include "sim/cli/commands.h"
#include "sim/engine/interrupts.h"
#include "sim/engine/output_dir.h"
#include "sim/core/errors.h"
#include "sim/scalesim/layer_model.h"
#include "sim/scalesim/reports.h"
#include "workloads/loader.h"

namespace npusim::cli {
using namespace npusim::engine;  // the CLI is the top floor: every command stands on the engine
namespace po = boost::program_options;

namespace {

const char* kUsage =
    "usage: npusim scalesim --config FILE.cfg --topology FILE.csv [--gemm] [--out DIR]\n"
    "Runs a SCALE-Sim config and topology in SCALE-Sim's model and writes COMPUTE_REPORT.csv,\n"
    "BANDWIDTH_REPORT.csv and DETAILED_ACCESS_REPORT.csv into DIR.";

struct Options {
  std::string config, topology, out;
  bool gemm = false;
};

/// Parses `args`; returns false when --help was printed.
bool parse_options(const std::vector<std::string>& args, Options& o) {
  po::options_description d("npusim scalesim options");
  d.add_options()("config,c", po::value(&o.config), "SCALE-Sim .cfg file")(
      "topology,t", po::value(&o.topology), "SCALE-Sim topology CSV (conv or GEMM rows)")(
      "gemm", po::bool_switch(&o.gemm), "the topology has GEMM rows (Layer, M, N, K), as SCALE-Sim's -i gemm")(
      "out,o", po::value(&o.out)->default_value("npusim-out/scalesim"), "output folder");
  if (!parse_command_line(args, d, kUsage)) return false;
  if (o.config.empty()) throw InputError("--config", "expected a SCALE-Sim .cfg file, found none");
  if (o.topology.empty()) throw InputError("--topology", "expected a SCALE-Sim topology .csv file, found none");
  return true;
}

std::vector<scalesim::Layer> load_layers(const Options& o) {
  const workloads::Graph g = workloads::load_scalesim_topology(o.topology, {});
  if (o.gemm) {
    for (const auto& op : g.ops()) {
      if (op.kind != workloads::OpKind::MatMul)
        throw InputError(o.topology + ":" + std::to_string(op.source_line),
                         "expected GEMM rows (Layer, M, N, K) with --gemm, found a conv row (layer '" + op.name + "')");
    }
  }
  return scalesim::layers_from_graph(g, o.topology);
}

}  // namespace

int scalesim_command(const std::vector<std::string>& args) {
  Options o;
  if (!parse_options(args, o)) return 0;
  // The output folder is checked and locked first (a bad --out fails at once), then everything is
  // read and computed before the first file is written in its temporary sibling, which takes the
  // folder's name only when whole (sim/engine/output_dir.h): bad input or a signal leaves no output.
  OutputDir out(o.out);
  set_stage("reading the SCALE-Sim config and topology");
  const scalesim::ScaleSimConfig cfg = scalesim::load_scalesim_config(o.config);
  const std::vector<scalesim::Layer> layers = load_layers(o);
  std::vector<scalesim::LayerReport> reports;
  reports.reserve(layers.size());
  std::uint64_t total = 0, stalls = 0, overlapped = 0, psum = 0, macs = 0;
  // Each layer's counts fit in 64 bits (simulate_layer checks); their sums over the file must too.
  auto accumulate = [&](std::uint64_t& sum, std::uint64_t v, const char* what) {
    if (__builtin_add_overflow(sum, v, &sum))
      throw InputError(o.topology,
                       std::string("expected a topology whose total ") + what + " fits in 64 bits, found an overflow");
  };
  set_stage("simulating the layers");
  for (const auto& layer : layers) {
    reports.push_back(scalesim::simulate_layer(layer, cfg));
    const auto& r = reports.back();
    accumulate(total, r.total_cycles, "cycle count");
    accumulate(stalls, r.stall_cycles, "stall count");
    accumulate(overlapped, r.overlapped_cycles, "cycle count");
    accumulate(psum, r.psum_words, "partial-sum count");
    accumulate(macs, r.macs, "MAC count");
  }
  set_stage("writing the reports");
  scalesim::write_reports(out.path().string(), reports);
  out.commit();
  const bool calc = cfg.interface == scalesim::InterfaceBandwidth::Calc;
  std::cout << "npusim scalesim: " << cfg.run_name << ", " << layers.size() << " layers on a " << cfg.rows << "x"
            << cfg.cols << " array, " << to_string(cfg.dataflow) << ", " << (calc ? "CALC" : "USER") << "\n"
            << "  Total Cycles (SCALE-Sim model)      " << total << " cycles (" << stalls << " stall)\n"
            << "  overlapped fold model (npusim)      " << overlapped << " cycles of compute\n"
            << "  MACs                                " << macs << "\n"
            << "  partial sums spilled and read back  " << psum << " words each way (not in SCALE-Sim's reports)\n"
            << "reports: " << o.out << "/COMPUTE_REPORT.csv, BANDWIDTH_REPORT.csv, DETAILED_ACCESS_REPORT.csv\n";
  return 0;
}

}  // namespace npusim::cli
