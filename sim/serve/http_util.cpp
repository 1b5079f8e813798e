#include "sim/serve/http_util.h"

#include <algorithm>
#include <fstream>
#include <system_error>

#include "sim/core/errors.h"
#include "sim/core/units.h"

namespace npusim::serve {
namespace fs = std::filesystem;

namespace {

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> decode(const std::string& s, bool plus_is_space) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      const int a = hex(s[i + 1]), b = hex(s[i + 2]);
      if (a < 0 || b < 0) return std::nullopt;
      c = char(a * 16 + b);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      c = ' ';
    }
    if (c == '\0') return std::nullopt;
    out += c;
  }
  return out;
}

bool is_within(const fs::path& root, const fs::path& p) {
  auto r = root.begin(), q = p.begin();
  for (; r != root.end(); ++r, ++q)
    if (q == p.end() || *r != *q) return false;
  return true;
}

}  // namespace

std::optional<Target> parse_target(const std::string& target) {
  if (target.empty() || target[0] != '/') return std::nullopt;
  const auto qm = target.find('?');
  Target t;
  auto path = decode(target.substr(0, qm), false);
  if (!path) return std::nullopt;
  t.path = *path;
  if (qm == std::string::npos) return t;
  const std::string q = target.substr(qm + 1);
  for (std::size_t at = 0; at <= q.size();) {
    auto amp = q.find('&', at);
    if (amp == std::string::npos) amp = q.size();
    const std::string pair = q.substr(at, amp - at);
    if (!pair.empty()) {
      const auto eq = pair.find('=');
      auto k = decode(pair.substr(0, eq), true);
      auto v = decode(eq == std::string::npos ? "" : pair.substr(eq + 1), true);
      if (!k || !v) return std::nullopt;
      if (!t.query.emplace(*k, *v).second)
        throw InputError("query parameter '" + k->substr(0, 64) + "'",
                         "expected once, found it given twice (each query parameter takes one value)");
    }
    at = amp + 1;
  }
  return t;
}

std::optional<fs::path> static_file(const fs::path& root, const std::string& url_path) {
  if (url_path.empty() || url_path[0] != '/') return std::nullopt;
  // Refuse ".." and backslashes outright: a path that needs them is not one of ours.
  for (std::size_t at = 1; at <= url_path.size();) {
    auto slash = url_path.find('/', at);
    if (slash == std::string::npos) slash = url_path.size();
    const std::string seg = url_path.substr(at, slash - at);
    if (seg == ".." || seg == "." || seg.find('\\') != std::string::npos) return std::nullopt;
    at = slash + 1;
  }
  std::error_code ec;
  const fs::path canon_root = fs::canonical(root, ec);
  if (ec) return std::nullopt;
  fs::path p = canon_root / fs::path(url_path.substr(1)).relative_path();
  if (url_path == "/" || url_path.back() == '/') p /= "index.html";
  const fs::path canon = fs::canonical(p, ec);  // resolves symlinks: the real file must be inside
  if (ec || !is_within(canon_root, canon) || !fs::is_regular_file(canon, ec)) return std::nullopt;
  return canon;
}

bool copy_file_bytes(std::istream& in, std::uint64_t size, const fs::path& path, const ByteSink& sink) {
  char chunk[64 << 10];
  while (size > 0) {
    const auto want = std::streamsize(std::min<std::uint64_t>(size, sizeof chunk));
    in.read(chunk, want);
    if (in.gcount() != want)
      throw SimulationError("cannot read " + path.string() + ": it is shorter than when it was listed");
    if (!sink(chunk, std::size_t(want))) return false;
    size -= std::uint64_t(want);
  }
  return true;
}

StreamedBody file_body(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) throw SimulationError("cannot read " + path.string() + " (" + ec.message() + ")");
  return {size, [path, size](const ByteSink& sink) {
            std::ifstream in(path, std::ios::binary);
            if (!in) throw SimulationError("cannot open " + path.string());
            copy_file_bytes(in, size, path, sink);
          }};
}

std::string mime_type(const std::string& name) {
  const std::string ext = fs::path(name).extension().string();
  if (ext == ".html") return "text/html; charset=utf-8";
  if (ext == ".js" || ext == ".mjs") return "text/javascript; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".json") return "application/json";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".png") return "image/png";
  if (ext == ".ico") return "image/x-icon";
  if (ext == ".tar") return "application/x-tar";
  return "application/octet-stream";
}

std::uint64_t query_uint(const Target& t, const std::string& key, std::uint64_t fallback, std::uint64_t min,
                         std::uint64_t max) {
  const auto it = t.query.find(key);
  if (it == t.query.end()) return fallback;
  return parse_unsigned(it->second, "query parameter '" + key + "'", min, max);
}

}  // namespace npusim::serve
