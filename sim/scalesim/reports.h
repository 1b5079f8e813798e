#pragma once
// SCALE-Sim's three CSV reports, written with its column names, row layout and number format.
#include <string>
#include <vector>

#include "sim/scalesim/layer_model.h"

namespace npusim::scalesim {

/// A double as Python's str()/repr() prints it (shortest round-trip digits; fixed notation for
/// decimal exponents -4..15, else "1e+16" style; integral values keep ".0"), so the reports
/// read the same as SCALE-Sim's.
std::string python_float(double v);

std::string compute_report(const std::vector<LayerReport>& layers);          ///< COMPUTE_REPORT.csv
std::string bandwidth_report(const std::vector<LayerReport>& layers);        ///< BANDWIDTH_REPORT.csv
std::string detailed_access_report(const std::vector<LayerReport>& layers);  ///< DETAILED_ACCESS_REPORT.csv

/// Writes the three reports into the existing folder `dir`, each atomically.
void write_reports(const std::string& dir, const std::vector<LayerReport>& layers);

}  // namespace npusim::scalesim
