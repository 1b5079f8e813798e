// SCALE-Sim topology CSVs (docs/scalesim.md section 2). Two formats, told apart by the header:
// conv rows "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels,
// Num Filter, Strides," (an optional ninth column is the column stride) and GEMM rows
// "Layer, M, N, K,". Each row becomes one conv2d or matmul op with its own input, as SCALE-Sim
// simulates every layer on its own: no padding, the ifmap read from memory, and a layer whose
// name contains "DP" is depthwise (SCALE-Sim runs it as one single-channel layer per channel).
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>
#include <unordered_set>
#include <vector>

#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "workloads/loader.h"

namespace npusim::workloads {
namespace {

enum class Format { Conv, Gemm };

const std::vector<std::string> kConvFields{"IFMAP Height", "IFMAP Width", "Filter Height", "Filter Width",
                                           "Channels",     "Num Filter",  "Strides",       "Stride Width"};
const std::vector<std::string> kGemmFields{"M", "N", "K"};
constexpr std::int64_t kMaxField = 2147483647;  // 2^31 - 1
/// SCALE-Sim's marker for a depthwise layer: a case-sensitive substring of the layer name.
constexpr const char* kDepthwiseMarker = "DP";

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

/// Splits a CSV row. SCALE-Sim drops whatever follows the last comma (rows end with a comma,
/// sometimes followed by a "#dw" remark); we drop it only when it is empty or a '#' remark, so
/// a row without the trailing comma keeps its last value.
std::vector<std::string> split_row(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream ss(line);
  for (std::string f; std::getline(ss, f, ',');) fields.push_back(trim(f));
  if (!line.empty() && line.back() == ',') fields.push_back("");
  if (!fields.empty() && (fields.back().empty() || fields.back().front() == '#')) fields.pop_back();
  return fields;
}

struct Row {
  int line = 0;
  std::string name;
  std::vector<std::int64_t> values;  // conv: H W FH FW C F SH SW; gemm: M N K
};

class TopologyReader {
 public:
  explicit TopologyReader(std::string path) : path_(std::move(path)) {}

  Graph read() {
    std::istringstream in(read_file(path_));
    std::string line;
    int number = 0;
    bool have_header = false;
    while (std::getline(in, line)) {
      ++number;
      line = trim(line);
      if (line.empty()) continue;
      if (!have_header) {
        format_ = detect_format(split_row(line), number);
        have_header = true;
        continue;
      }
      add_row(parse_row(split_row(line), number));
    }
    if (!have_header) throw InputError(path_, "expected a SCALE-Sim topology header, found an empty file");
    if (graph_.ops().empty()) throw InputError(path_, "expected at least one layer row, found none");
    graph_.name = std::filesystem::path(path_).stem().string();
    graph_.finalize(path_);
    return std::move(graph_);
  }

 private:
  std::string where(int line, const std::string& layer = "", const std::string& field = "") const {
    std::string w = path_ + ":" + std::to_string(line);
    if (!layer.empty() || !field.empty()) {
      w += " (";
      if (!layer.empty()) w += "layer '" + layer + "'";
      if (!field.empty()) w += (layer.empty() ? "" : ", ") + std::string("field '") + field + "'";
      w += ")";
    }
    return w;
  }

  Format detect_format(const std::vector<std::string>& header, int line) const {
    if (header.size() == 1 + kGemmFields.size()) return Format::Gemm;
    if (header.size() >= kConvFields.size()) return Format::Conv;
    throw InputError(where(line),
                     "expected a header of 8 conv columns (Layer name, IFMAP Height, IFMAP Width, "
                     "Filter Height, Filter Width, Channels, Num Filter, Strides) or 4 GEMM columns "
                     "(Layer, M, N, K), found " +
                         std::to_string(header.size()) + " columns");
  }

  /// A decimal integer in [1, kMaxField]. SCALE-Sim addresses its operands with 32-bit integers,
  /// so no field of a layer it can run is larger; the bound also keeps H - F + S and the
  /// products of fields from wrapping (docs/scalesim.md section 2).
  std::int64_t positive(const std::string& text, int line, const std::string& layer, const std::string& field) const {
    std::int64_t v = 0;
    bool ok = !text.empty() && text.size() <= 10;
    for (char c : text) {
      ok = ok && std::isdigit(static_cast<unsigned char>(c));
      if (ok) v = v * 10 + (c - '0');
    }
    if (!ok || v < 1 || v > kMaxField) {
      throw InputError(where(line, layer, field),
                       "expected an integer from 1 to " + std::to_string(kMaxField) + ", found '" + text + "'");
    }
    return v;
  }

  Row parse_row(const std::vector<std::string>& fields, int line) const {
    const std::vector<std::string>& names = format_ == Format::Gemm ? kGemmFields : kConvFields;
    // The column stride is optional: it defaults to the row stride, as in SCALE-Sim.
    const std::size_t required = format_ == Format::Gemm ? names.size() : names.size() - 1;
    Row row;
    row.line = line;
    row.name = fields.empty() ? "" : fields[0];
    if (row.name.empty()) throw InputError(where(line, "", "Layer name"), "expected a layer name, found none");
    if (fields.size() < 1 + required) {
      throw InputError(where(line, row.name, names[fields.size() - 1]), "expected " + std::to_string(1 + required) +
                                                                            " comma-separated fields, found " +
                                                                            std::to_string(fields.size()));
    }
    const std::size_t count = std::min(fields.size() - 1, names.size());  // extra columns ignored
    for (std::size_t i = 0; i < count; ++i) row.values.push_back(positive(fields[i + 1], line, row.name, names[i]));
    if (format_ == Format::Conv && row.values.size() == required) row.values.push_back(row.values[6]);
    return row;
  }

  /// Layer names need not be unique in SCALE-Sim; graph names must be.
  std::string unique_name(const std::string& name) {
    std::string n = name;
    for (int i = 2; !used_names_.insert(n).second; ++i) n = name + "_" + std::to_string(i);
    return n;
  }

  int add_tensor(const std::string& name, Shape shape, bool constant) {
    Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.is_constant = constant;
    return graph_.add_tensor(std::move(t));
  }

  void add_row(const Row& row) {
    Op op;
    op.name = unique_name(row.name);
    op.source_line = row.line;
    const auto& v = row.values;
    if (format_ == Format::Gemm) {
      const std::int64_t m = v[0], n = v[1], k = v[2];
      op.kind = OpKind::MatMul;
      op.inputs = {add_tensor(op.name + ".ifmap", {m, k}, false), add_tensor(op.name + ".filter", {k, n}, true)};
    } else {
      const std::int64_t h = v[0], w = v[1], fh = v[2], fw = v[3], c = v[4], f = v[5];
      if (fh > h || fw > w) {
        throw InputError(where(row.line, row.name, fh > h ? "Filter Height" : "Filter Width"),
                         "expected a filter no larger than the ifmap (no padding in SCALE-Sim), found " +
                             std::to_string(fh) + "x" + std::to_string(fw) + " on " + std::to_string(h) + "x" +
                             std::to_string(w));
      }
      // SCALE-Sim runs a DP layer as `Channels` layers of one channel and `Num Filter` filters:
      // a depthwise conv with channel multiplier `Num Filter`.
      const bool depthwise = row.name.find(kDepthwiseMarker) != std::string::npos;
      op.kind = OpKind::Conv2d;
      op.attrs.kernel = {fh, fw};
      op.attrs.stride = {v[6], v[7]};
      op.attrs.groups = depthwise ? c : 1;
      op.attrs.out_channels = depthwise ? c * f : f;
      op.inputs = {add_tensor(op.name + ".ifmap", {1, c, h, w}, false),
                   add_tensor(op.name + ".filter", {op.attrs.out_channels, depthwise ? 1 : c, fh, fw}, true)};
    }
    Tensor out;
    out.name = op.name + ".ofmap";
    op.outputs = {graph_.add_tensor(std::move(out))};
    graph_.add_op(std::move(op));
  }

  std::string path_;
  Format format_ = Format::Conv;
  Graph graph_;
  std::unordered_set<std::string> used_names_;
};

}  // namespace

Graph load_scalesim_topology(const std::string& path, const LoadOptions&) {
  return TopologyReader(path).read();
}

}  // namespace npusim::workloads
