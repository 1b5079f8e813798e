#include "sim/serve/server.h"

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>

#include "sim/config/config_keys.h"
#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/core/hardware_config.h"
#include "sim/engine/child.h"
#include "sim/engine/run_options.h"
#include "sim/engine/run_pipeline.h"
#include "sim/scheduler/policy.h"
#include "sim/serve/deadline_stream.h"
#include "sim/serve/http_util.h"
#include "sim/serve/run_job.h"
#include "sim/serve/run_request.h"
#include "sim/serve/tar_writer.h"
#include "sim/serve/timeline.h"
#include "traces/trace_io.h"
#include "workloads/llm/llm_config.h"
#include "workloads/loader.h"

namespace npusim::serve {
namespace fs = std::filesystem;
namespace http = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using nlohmann::json;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;
using engine::run_option;
using engine::RunCommand;

namespace {

/// An error a handler answers with: HTTP status + message, sent as {"error": message}.
struct HttpError {
  http::status status;
  std::string message;
};

Response json_response(http::status s, const json& body) {
  Response r{s, 11};
  r.set(http::field::content_type, "application/json");
  r.set(http::field::cache_control, "no-store");
  r.body() = body.dump() + "\n";
  return r;
}
Response error_response(http::status s, const std::string& message) {
  return json_response(s, {{"error", message}});
}

/// What a handler answers: a response whose body is in `head`, or whose body is streamed from
/// files (`stream`; head's body is then empty).
struct Reply {
  Response head;
  std::optional<StreamedBody> stream;
  Reply(Response r) : head(std::move(r)) {}  // NOLINT: every JSON answer is a Reply
  Reply(Response r, StreamedBody b) : head(std::move(r)), stream(std::move(b)) {}
};

/// Sends `r` (only its headers for a HEAD request). False when the client went away, the
/// deadline passed or a streamed file could not be read (the connection must then close: its
/// body is cut short).
bool send_reply(DeadlineStream& stream, Reply r, bool keep_alive, bool head_only) {
  r.head.keep_alive(keep_alive);
  boost::system::error_code ec;
  if (!r.stream && !head_only) {
    r.head.prepare_payload();
    http::write(stream, r.head, ec);
    return !ec;
  }
  const std::uint64_t size = r.stream ? r.stream->size : r.head.body().size();
  r.head.body().clear();
  r.head.content_length(size);
  http::response_serializer<http::string_body> header(r.head);
  http::write_header(stream, header, ec);
  if (ec || head_only) return !ec;
  try {
    r.stream->write([&](const char* data, std::size_t n) {
      net::write(stream, net::buffer(data, n), ec);
      return !ec;
    });
  } catch (const SimulationError& e) {
    spdlog::error("serve: a streamed answer was cut short: {}", e.what());
    return false;
  }
  return !ec;
}

/// The files of a run folder a client may fetch (what `npusim run` writes).
const std::vector<std::string> kRunFiles = {
    "summary.json", "roofline.json", "trace.json",          "schedule.json",       "report.html",
    "roofline.svg", "roofline.png",  "energy_roofline.svg", "energy_roofline.png", "hardware.json"};

/// "resnet50.onnx" stays; anything outside [A-Za-z0-9_.-] or without a workload extension is refused.
std::string upload_name(const Target& t) {
  const auto it = t.query.find("name");
  const std::string name = it == t.query.end() ? "" : it->second;
  const std::string ext = fs::path(name).extension().string();
  const bool ok_chars =
      !name.empty() && name.size() <= 80 && name[0] != '.' &&
      name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == std::string::npos;
  if (!ok_chars || (ext != ".onnx" && ext != ".yaml" && ext != ".yml" && ext != ".csv"))
    throw HttpError{
        http::status::bad_request,
        "query parameter 'name': expected a file name of letters, digits, '_', '-' and '.' ending in .onnx, .yaml, "
        ".yml or .csv, found '" +
            name.substr(0, 80) + "'"};
  return name;
}

/// The dims an upload is checked with (`dim.NAME=VALUE` query parameters): a dynamic ONNX export
/// does not load with its symbolic dims unbound; a run request binds them again (`dim`).
std::map<std::string, std::int64_t> upload_dims(const Target& t) {
  std::map<std::string, std::int64_t> dims;
  for (const auto& [key, _] : t.query)
    if (key.rfind("dim.", 0) == 0 && key.size() > 4)
      dims[key.substr(4)] = std::int64_t(query_uint(t, key, 0, 0, std::uint64_t(1) << 31));
  return dims;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (std::size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size())
    s.replace(at, from.size(), to);
}

}  // namespace

struct Server::Impl {
  ServeOptions o;
  net::io_context io;
  tcp::acceptor acceptor{io};
  std::atomic<std::size_t> connections{0};
  std::mutex uploads_mu;
  std::map<std::string, fs::path> uploads;  // id -> file
  std::uint64_t next_upload = 1;
  std::mutex timeline_mu;
  std::string timeline_run;  // the run whose trace is cached (the page asks for one run's windows)
  std::shared_ptr<const traces::Trace> timeline_trace;
  RunManager* runs = nullptr;

  void connection(tcp::socket sock);
  /// What `f` answers, or the JSON error its failure maps to (never throws).
  template <typename F>
  Reply guarded(const Request& req, F&& f);
  /// The handler's reply, or the JSON error a failure maps to (never throws).
  Reply answer(const Request& req, const Target& t);
  Reply handle(const Request& req, const Target& t);
  Reply handle_api(const Request& req, const Target& t);
  Reply handle_static(const Request& req, const Target& t);
  Response options_json();
  Response start_run(const Request& req);
  /// Starts the run of a POST /api/runs; returns its id.
  std::string start_run_id(const Request& req);
  Response upload(const Request& req, const Target& t);
  Reply run_resource(const Request& req, const Target& t, const std::string& id, const std::string& rest);
  Response timeline(const RunView& v, const Target& t);
  /// The run's state at every change as server-sent events, until its final state; `with_result`:
  /// a done run's reply (RunManager::result) as an event `result` just before it.
  void stream_events(DeadlineStream& stream, const std::string& id, bool with_result);
  fs::path upload_path(const std::string& id);
};

Server::Server(ServeOptions o) : impl_(std::make_unique<Impl>()) {
  impl_->o = std::move(o);
  runs_ = std::make_unique<RunManager>(impl_->o.work_dir, impl_->o.limits);
  impl_->runs = runs_.get();
}

Server::~Server() = default;

std::string Server::listen() {
  auto& o = impl_->o;
  boost::system::error_code ec;
  const auto addr = net::ip::make_address(o.host == "localhost" ? "127.0.0.1" : o.host, ec);
  if (ec) throw InputError("--host", "expected an IP address such as 127.0.0.1 or 0.0.0.0, found '" + o.host + "'");
  if (!addr.is_loopback() && !o.allow_remote)
    throw InputError("--host",
                     "'" + o.host + "' is not a loopback address; add --allow-remote to serve other machines");
  const tcp::endpoint ep(addr, o.port);
  auto& a = impl_->acceptor;
  a.open(ep.protocol(), ec);
  if (!ec) a.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    throw InputError("--host/--port",
                     "cannot listen on " + o.host + ":" + std::to_string(o.port) + " (" + ec.message() + ")");
  const auto bound = a.local_endpoint();
  const std::string host =
      bound.address().is_v6() ? "[" + bound.address().to_string() + "]" : bound.address().to_string();
  return "http://" + host + ":" + std::to_string(bound.port()) + "/";
}

void Server::serve(const std::atomic<bool>& stop_flag) {
  auto& a = impl_->acceptor;
  while (!stop_flag.load()) {
    pollfd p{a.native_handle(), POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    boost::system::error_code ec;
    tcp::socket sock(impl_->io);
    a.accept(sock, ec);
    if (ec) continue;
    if (impl_->connections.load() >= impl_->o.max_connections) {
      Response r = error_response(http::status::service_unavailable, "too many open connections");
      r.prepare_payload();
      http::write(sock, r, ec);
      continue;
    }
    // Each answer and each event goes out as it is written: with Nagle's algorithm a small write
    // after another waits for the client's delayed acknowledgement (40 ms on Linux), and an
    // event stream is small writes one after another.
    sock.set_option(tcp::no_delay(true), ec);
    ++impl_->connections;
    std::thread([impl = impl_.get(), s = std::move(sock)]() mutable {
      impl->connection(std::move(s));
      --impl->connections;
    }).detach();
  }
}

void Server::Impl::connection(tcp::socket sock) {
  DeadlineStream stream(sock);
  boost::beast::flat_buffer buf;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(16 << 10);
    // No body limit while the header is read: Beast would stop at a large Content-Length before
    // the header is whole (and its content_length() then asserts), and the route (upload or not)
    // that sets the limit is not known yet. Not boost::none: Beast compares Content-Length with
    // the optional, and any number is greater than none.
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    boost::system::error_code ec;
    stream.expires_after(o.idle_timeout);  // a keep-alive connection waits this long for a request
    http::read_header(stream, buf, parser, ec);
    if (ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset ||
        (ec == boost::beast::error::timeout && buf.size() == 0 && !parser.got_some()))
      return;
    auto refuse = [&](http::status s, const std::string& msg) {
      stream.expires_after(std::chrono::seconds(5));
      send_reply(stream, error_response(s, msg), false, false);
      // Read what the client still sends (for at most 5 s), so it sees the answer, not a reset.
      boost::system::error_code sec;
      sock.shutdown(tcp::socket::shutdown_send, sec);
      char sink[65536];
      while (!sec) stream.read_some(net::buffer(sink), sec);
    };
    if (ec == http::error::header_limit)
      return refuse(http::status::request_header_fields_too_large, "request header larger than 16 KiB");
    if (ec == boost::beast::error::timeout)
      return refuse(http::status::request_timeout,
                    "the request header did not arrive within " + std::to_string(o.idle_timeout.count()) + " s");
    if (ec) return refuse(http::status::bad_request, "malformed HTTP request");
    const std::string target(parser.get().target());
    const bool is_upload = target.rfind("/api/uploads", 0) == 0;
    const std::uint64_t limit = is_upload ? o.max_upload_bytes : o.max_body_bytes;
    const auto length = parser.content_length();
    if (length && *length > limit)
      return refuse(http::status::payload_too_large, (is_upload ? "upload of " : "request body of ") +
                                                         std::to_string(*length) + " bytes exceeds the limit of " +
                                                         std::to_string(limit) + " bytes");
    parser.body_limit(limit);
    stream.expires_after(o.request_timeout);
    http::read(stream, buf, parser, ec);
    if (ec == http::error::body_limit)
      return refuse(http::status::payload_too_large,
                    "request body exceeds the limit of " + std::to_string(limit) + " bytes");
    if (ec == boost::beast::error::timeout)
      return refuse(http::status::request_timeout,
                    "the request body did not arrive within " + std::to_string(o.request_timeout.count()) + " s");
    if (ec) return refuse(http::status::bad_request, "malformed HTTP request body");
    Request req = parser.release();
    const bool keep = req.keep_alive();
    const bool head_only = req.method() == http::verb::head;
    stream.expires_after(o.response_timeout);
    std::optional<Target> t;
    try {
      t = parse_target(target);
    } catch (const InputError& e) {  // a query parameter given twice
      if (!send_reply(stream, error_response(http::status::bad_request, e.what()), keep, head_only) || !keep) return;
      continue;
    }
    if (!t) {
      if (!send_reply(stream,
                      error_response(http::status::bad_request, "malformed request target (bad %-escape or NUL)"), keep,
                      head_only) ||
          !keep)
        return;
      continue;
    }
    // Server-sent events keep the connection: /api/runs/ID/events
    const std::string prefix = "/api/runs/", suffix = "/events";
    if (req.method() == http::verb::get && t->path.rfind(prefix, 0) == 0 &&
        t->path.size() > prefix.size() + suffix.size() &&
        t->path.compare(t->path.size() - suffix.size(), suffix.size(), suffix) == 0) {
      const std::string id = t->path.substr(prefix.size(), t->path.size() - prefix.size() - suffix.size());
      if (runs->view(id)) return stream_events(stream, id, false);
      if (!send_reply(stream, error_response(http::status::not_found, "no run '" + id + "'"), keep, false) || !keep)
        return;
      continue;
    }
    // A POST /api/runs that takes server-sent events is answered with the run's events and its
    // results on this connection: the page waits for no second request, nor a third for the files.
    if (req.method() == http::verb::post && t->path == "/api/runs" &&
        req[http::field::accept].find("text/event-stream") != boost::beast::string_view::npos) {
      std::string id;
      Reply refused = guarded(req, [&]() -> Reply {
        id = start_run_id(req);
        return Response{};
      });
      if (!id.empty()) return stream_events(stream, id, true);
      if (!send_reply(stream, std::move(refused), keep, false) || !keep) return;
      continue;
    }
    if (!send_reply(stream, answer(req, *t), keep, head_only) || !keep) return;
  }
}

Reply Server::Impl::answer(const Request& req, const Target& t) {
  return guarded(req, [&] { return handle(req, t); });
}

template <typename F>
Reply Server::Impl::guarded(const Request& req, F&& f) {
  try {
    return f();
  } catch (const HttpError& e) {
    return error_response(e.status, e.message);
  } catch (const InputError& e) {
    return error_response(http::status::bad_request, e.what());
  } catch (const Busy& e) {
    return error_response(http::status::service_unavailable, e.what());
  } catch (const Superseded& e) {
    return error_response(http::status::conflict, e.what());
  } catch (const std::exception& e) {
    spdlog::error("serve: {} {}: {}", std::string(req.method_string()), std::string(req.target()), e.what());
    return error_response(http::status::internal_server_error,
                          "the server could not answer this request; its log says why");
  }
}

Reply Server::Impl::handle(const Request& req, const Target& t) {
  if (t.path.rfind("/api/", 0) == 0 || t.path == "/api") return handle_api(req, t);
  return handle_static(req, t);
}

Reply Server::Impl::handle_static(const Request& req, const Target& t) {
  if (req.method() != http::verb::get && req.method() != http::verb::head)
    throw HttpError{http::status::method_not_allowed, "expected GET for " + t.path};
  if (!fs::exists(o.asset_dir / "index.html"))
    throw HttpError{
        http::status::service_unavailable,
        "the web page is not built (" + (o.asset_dir / "index.html").string() +
            " is missing); build it with scripts/build.sh or: npm --prefix web ci && npm --prefix web run build"};
  const auto file = static_file(o.asset_dir, t.path);
  if (!file) throw HttpError{http::status::not_found, "no file " + t.path.substr(0, 200) + " in the web assets"};
  Response r{http::status::ok, 11};
  r.set(http::field::content_type, mime_type(file->string()));
  // Vite names assets by content hash: they never change under one name.
  r.set(http::field::cache_control, t.path.rfind("/assets/", 0) == 0 ? "max-age=31536000, immutable" : "no-cache");
  return Reply(std::move(r), file_body(*file));
}

Reply Server::Impl::handle_api(const Request& req, const Target& t) {
  const auto method = req.method();
  const auto& p = t.path;
  if (p == "/api/health" && method == http::verb::get)
    return json_response(http::status::ok, {{"ok", true}, {"runs_in_flight", runs->in_flight()}});
  if (p == "/api/options" && method == http::verb::get) return options_json();
  if (p == "/api/runs" && method == http::verb::post) return start_run(req);
  if (p == "/api/uploads" && method == http::verb::post) return upload(req, t);
  const std::string prefix = "/api/runs/";
  if (p.rfind(prefix, 0) == 0) {
    const std::string tail = p.substr(prefix.size());
    const auto slash = tail.find('/');
    return run_resource(req, t, tail.substr(0, slash), slash == std::string::npos ? "" : tail.substr(slash + 1));
  }
  throw HttpError{http::status::not_found,
                  "no API endpoint " + std::string(req.method_string()) + " " + p.substr(0, 200) + " (docs/serve.md)"};
}

/// The names of an enum of the config, as its one table spells them (`/api/options`).
template <typename E>
json names_of() {
  json out = json::array();
  for (const auto& [name, value] : enum_names<E>()) out.push_back(name);
  return out;
}

/// The fusion policies' table (sim/scheduler/policy.h) as `/api/options` gives it: each policy's
/// name, one-line description, whether it simulates finalists (takes `objective`) and whether an
/// LLM run takes it.
json fusion_policies_json() {
  json out = json::array();
  for (const auto& p : sched::fusion_policies())
    out.push_back({{"name", p.name},
                   {"description", p.description},
                   {"simulates_finalists", p.simulates_finalists},
                   {"llm", !p.model_groups}});
  return out;
}

/// The shipped models that take an image (`llm.image`): those whose config has a vision tower.
json vision_models() {
  json out = json::array();
  for (const auto& name : workloads::llm::shipped_config_names(config::data_dir()))
    if (workloads::llm::load_llm_config(name, config::data_dir()).has_vision()) out.push_back(name);
  return out;
}

const engine::RunOption& llm_option(const char* key) {
  return run_option(RunCommand::Llm, key);
}

/// `/api/options`' `llm`: the values and the server's bounds of an LLM request's options, from the
/// run options' table (sim/engine/run_options.h).
json llm_options_json() {
  return {{"models", llm_option("model").choices()},
          {"vision_models", vision_models()},
          {"fusion", llm_option("fusion").choices()},
          {"weight_dtypes", llm_option("weight_dtype").choices()},
          {"kv_dtypes", llm_option("kv_dtype").choices()},
          {"act_dtypes", llm_option("act_dtype").choices()},
          {"max_draft_tokens", llm_option("draft_tokens").serve_limit()},
          {"max_prompt", llm_option("prompt").serve_limit()},
          {"max_context", llm_option("context").serve_limit()},
          {"max_prefill_chunk", llm_option("prefill_chunk").serve_limit()},
          {"max_generate", llm_option("generate").serve_limit()},
          {"max_batch", llm_option("batch").serve_limit()}};
}

/// A run's time limit in seconds, as `/api/options` reports it: whole seconds as an integer.
json timeout_seconds(std::chrono::milliseconds wall_time) {
  if (wall_time.count() % 1000 == 0) return wall_time.count() / 1000;
  return std::chrono::duration<double>(wall_time).count();
}

Response Server::Impl::options_json() {
  json presets = json::array();
  for (const auto& name : config::preset_names())
    presets.push_back({{"name", name}, {"config", to_json(config::load_hardware_config(name))}});
  json dram = json::array();
  for (const auto& e : fs::directory_iterator(fs::path(config::data_dir()) / "configs" / "dram"))
    if (e.path().extension() == ".yaml") dram.push_back(e.path().stem().string());
  std::sort(dram.begin(), dram.end());
  const auto& l = o.limits;
  return json_response(http::status::ok,
                       {{"presets", presets},
                        {"zoo", workloads::zoo_names((fs::path(config::data_dir()) / "workloads" / "zoo").string())},
                        {"dram_presets", dram},
                        {"fusion", sched::fusion_policy_names()},
                        {"fusion_policies", fusion_policies_json()},
                        {"objectives", run_option(RunCommand::Run, "objective").choices()},
                        {"dataflows", names_of<Dataflow>()},
                        {"dtypes", names_of<DType>()},
                        {"operand_buffers", names_of<OperandBufferMode>()},
                        {"keys", config::config_keys_json()},
                        {"llm", llm_options_json()},
                        {"limits",
                         {{"max_runs", l.max_in_flight},
                          {"run_timeout_s", timeout_seconds(l.child.wall_time)},
                          {"run_memory_bytes", l.child.memory_bytes},
                          {"max_upload_bytes", o.max_upload_bytes},
                          {"max_body_bytes", o.max_body_bytes}}}});
}

fs::path Server::Impl::upload_path(const std::string& id) {
  std::lock_guard<std::mutex> lock(uploads_mu);
  const auto it = uploads.find(id);
  if (it == uploads.end())
    throw HttpError{http::status::bad_request,
                    "request field 'upload': no upload '" + id.substr(0, 64) + "' (upload the file again)"};
  return it->second;
}

std::string Server::Impl::start_run_id(const Request& req) {
  const RunRequest r = parse_run_request(req.body());
  const std::string path = r.upload.empty() ? "" : upload_path(r.upload).string();
  return runs->start(r, path);
}

Response Server::Impl::start_run(const Request& req) {
  return json_response(http::status::accepted, to_json(*runs->view(start_run_id(req))));
}

Response Server::Impl::upload(const Request& req, const Target& t) {
  const std::string name = upload_name(t);
  if (req.body().empty()) throw HttpError{http::status::bad_request, name + ": the upload is empty"};
  std::string id;
  fs::path file;
  {
    std::lock_guard<std::mutex> lock(uploads_mu);
    id = "u" + std::to_string(next_upload++);
    file = o.work_dir / "uploads" / id / name;
    // Keep the 16 newest uploads.
    while (uploads.size() >= 16) {
      std::error_code ec;
      fs::remove_all(uploads.begin()->second.parent_path(), ec);
      uploads.erase(uploads.begin());
    }
  }
  fs::create_directories(file.parent_path());
  try {
    write_file_atomic(file.string(), req.body());  // every write checked: a full disk stores nothing
  } catch (const SimulationError&) {
    std::error_code ec;
    fs::remove_all(file.parent_path(), ec);
    throw HttpError{
        http::status::insufficient_storage,
        name + ": the server could not store the upload (its disk is full or not writable); nothing was kept"};
  }
  // The loaders a run uses, in a child with the run limits: a hostile file cannot take the server down.
  engine::ChildOptions limits = o.limits.child;
  limits.wall_time = std::min(limits.wall_time, std::chrono::milliseconds(60000));
  limits.own_process_group = true;
  const RunManager::Slot slot = runs->reserve("checking upload '" + name + "'");
  const engine::ChildResult res =
      engine::run_in_child(spawn_job(upload_check_job(file.string(), upload_dims(t))), limits);
  if (!res.ok()) {
    std::error_code ec;
    fs::remove_all(file.parent_path(), ec);
    std::string msg = describe_failure(res, limits);
    replace_all(msg, file.string(), name);  // the client knows its file by its name, not our path
    throw HttpError{http::status::unprocessable_entity, msg};
  }
  {
    std::lock_guard<std::mutex> lock(uploads_mu);
    uploads[id] = file;  // ids grow, so begin() is the oldest
  }
  return json_response(http::status::created, {{"upload", id}, {"name", name}, {"bytes", req.body().size()}});
}

Reply Server::Impl::run_resource(const Request& req, const Target& t, const std::string& id, const std::string& rest) {
  auto v = runs->view(id);
  if (!v) throw HttpError{http::status::not_found, "no run '" + id.substr(0, 64) + "'"};
  const auto method = req.method();
  if (rest.empty() && method == http::verb::get) return json_response(http::status::ok, to_json(*v));
  if ((rest.empty() && method == http::verb::delete_) || (rest == "cancel" && method == http::verb::post)) {
    const bool cancelled = runs->cancel(id);
    return json_response(http::status::ok, {{"id", id}, {"cancelled", cancelled}});
  }
  if (method != http::verb::get)
    throw HttpError{http::status::method_not_allowed, "expected GET for /api/runs/" + id + "/" + rest};
  if (v->status != RunStatus::Done)
    throw HttpError{http::status::conflict,
                    "run '" + id + "' is " + to_string(v->status) + (v->message.empty() ? "" : ": " + v->message)};
  if (rest == "timeline" && v->request.contains("llm"))
    throw HttpError{http::status::not_found, "run '" + id + "' is an LLM run: it has no unit timeline"};
  if (rest == "timeline") return timeline(*v, t);
  if (rest == "download") {
    Response r{http::status::ok, 11};
    r.set(http::field::content_type, "application/x-tar");
    r.set(http::field::content_disposition, "attachment; filename=\"npusim-" + id + ".tar\"");
    return Reply(std::move(r), tar_folder_stream(runs->folder(id), "npusim-" + id));
  }
  const std::string files = "files/";
  if (rest.rfind(files, 0) == 0) {
    const std::string name = rest.substr(files.size());
    if (std::find(kRunFiles.begin(), kRunFiles.end(), name) == kRunFiles.end())
      throw HttpError{http::status::not_found, "run '" + id + "' has no file '" + name.substr(0, 80) + "'"};
    Response r{http::status::ok, 11};
    r.set(http::field::content_type, mime_type(name));
    // summary.json and roofline.json come from the run's reply; the rest from its folder,
    // written on the first such request.
    if (auto text = runs->result_file(id, name)) {
      r.body() = std::move(*text);
      return r;
    }
    const fs::path file = runs->folder(id) / name;
    if (!fs::exists(file))
      throw HttpError{http::status::not_found, "run '" + id + "' has no file '" + name.substr(0, 80) + "'"};
    return Reply(std::move(r), file_body(file));
  }
  throw HttpError{http::status::not_found, "no resource '" + rest.substr(0, 80) + "' of run '" + id + "'"};
}

Response Server::Impl::timeline(const RunView& v, const Target& t) {
  TimelineWindow w;
  w.begin_ps = query_uint(t, "begin_ps", 0, 0, std::numeric_limits<std::int64_t>::max());
  w.end_ps = query_uint(t, "end_ps", 0, 0, std::numeric_limits<std::int64_t>::max());
  w.bins = std::uint32_t(query_uint(t, "bins", w.bins, kMinTimelineBins, kMaxTimelineBins));
  if (w.end_ps != 0 && w.end_ps <= w.begin_ps)
    throw InputError("query parameter 'end_ps'", "expected more than begin_ps");
  std::shared_ptr<const traces::Trace> trace;
  {
    std::lock_guard<std::mutex> lock(timeline_mu);
    if (timeline_run == v.id) trace = timeline_trace;
  }
  if (!trace) {
    const fs::path folder = runs->folder(v.id);
    const RunManager::Slot slot = runs->reserve("loading the trace of run '" + v.id + "'");
    trace = std::make_shared<traces::Trace>(traces::read_trace_json((folder / "trace.json").string()));
    std::lock_guard<std::mutex> lock(timeline_mu);
    timeline_run = v.id;
    timeline_trace = trace;
  }
  return json_response(http::status::ok, make_timeline(*trace, w));
}

void Server::Impl::stream_events(DeadlineStream& stream, const std::string& id, bool with_result) {
  boost::system::error_code ec;
  stream.expires_after(std::chrono::seconds(60));
  net::write(stream,
             net::buffer(std::string("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
                                     "Connection: close\r\n\r\n")),
             ec);
  std::uint64_t seen = 0;
  bool first = true;
  while (!ec) {
    const auto v = runs->wait_for_change(id, first ? 0 : seen, std::chrono::seconds(first ? 0 : 15));
    if (!v) return;
    std::string msg;
    if (first || v->version > seen)
      msg = "event: run\ndata: " + to_json(*v).dump() + "\n\n";
    else
      msg = ": still running\n\n";  // a comment: keeps proxies from closing an idle stream
    // The reply is one line of compact JSON, so it is one data line as it is. A run already done
    // at the first look still opens with its state (the page reads its id there), then the
    // result, then the final state.
    if (with_result && v->status == RunStatus::Done)
      if (const auto reply = runs->result(id))
        msg = (first ? msg : std::string()) + "event: result\ndata: " + *reply + "\n\n" + msg;
    first = false;
    seen = v->version;
    stream.expires_after(std::chrono::seconds(60));  // a client that stops reading is dropped
    net::write(stream, net::buffer(msg), ec);
    if (v->finished()) return;
  }
}

}  // namespace npusim::serve
