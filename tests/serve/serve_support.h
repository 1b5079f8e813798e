#pragma once
// A real `npusim serve` on an ephemeral loopback port for the API tests, and a small blocking
// HTTP client (Boost.Beast) to talk to it.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/test_paths.h"

namespace npusim::test {

struct HttpReply {
  int status = 0;
  std::string body;
  std::string content_type;
  nlohmann::json json() const { return nlohmann::json::parse(body, nullptr, false); }
};

/// `npusim serve --port 0 ARGS...`, started in the constructor (URL read from its first line),
/// stopped with SIGTERM in the destructor.
class ServeProcess {
 public:
  explicit ServeProcess(const std::vector<std::string>& extra = {}) {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], 1);
      close(fds[0]);
      std::vector<std::string> args = {test_paths::npusim_binary(), "serve", "--port", "0"};
      args.insert(args.end(), extra.begin(), extra.end());
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    out_ = fdopen(fds[0], "r");
    char line[1024];
    while (out_ && std::fgets(line, sizeof line, out_)) {
      const std::string l = line;
      const auto at = l.find("http://127.0.0.1:");
      if (at == std::string::npos) continue;
      port_ = std::stoi(l.substr(at + 17));
      const auto wd = l.find("work folder ");
      if (wd != std::string::npos) work_dir_ = l.substr(wd + 12, l.find(';', wd) - wd - 12);
      break;
    }
  }
  ~ServeProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    if (out_) std::fclose(out_);
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  /// The work folder the server printed (its temporary one unless --work-dir).
  const std::string& work_dir() const { return work_dir_; }

  /// Sends `sig`, waits for the server to end and returns its wait status; `rest` receives what it
  /// printed after its first line.
  int stop(int sig, std::string* rest = nullptr) {
    kill(pid_, sig);
    std::string text;
    char line[1024];
    while (out_ && std::fgets(line, sizeof line, out_)) text += line;
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    if (rest) *rest = text;
    return status;
  }

  /// One request on a new connection; status 0 when the server did not answer.
  HttpReply request(const std::string& method, const std::string& target, const std::string& body = "",
                    const std::string& content_type = "application/json") const {
    namespace http = boost::beast::http;
    HttpReply r;
    try {
      boost::asio::io_context io;
      boost::asio::ip::tcp::socket sock(io);
      sock.connect({boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port_)});
      http::request<http::string_body> req{http::string_to_verb(method), target, 11};
      req.set(http::field::host, "127.0.0.1");
      if (!body.empty()) req.set(http::field::content_type, content_type);
      req.body() = body;
      req.prepare_payload();
      http::write(sock, req);
      boost::beast::flat_buffer buf;
      http::response_parser<http::string_body> parser;
      parser.body_limit(256u << 20);
      http::read(sock, buf, parser);
      r.status = parser.get().result_int();
      r.body = parser.get().body();
      r.content_type = std::string(parser.get()[http::field::content_type]);
    } catch (const std::exception&) {
      r.status = 0;
    }
    return r;
  }
  /// Raw bytes on a new connection (for requests a client library would not send); the reply's text.
  std::string raw(const std::string& bytes) const {
    try {
      boost::asio::io_context io;
      boost::asio::ip::tcp::socket sock(io);
      sock.connect({boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port_)});
      boost::asio::write(sock, boost::asio::buffer(bytes));
      std::string out;
      char buf[4096];
      boost::system::error_code ec;
      for (;;) {
        const std::size_t n = sock.read_some(boost::asio::buffer(buf), ec);
        if (ec) break;
        out.append(buf, n);
        if (out.find("\r\n\r\n") != std::string::npos && out.find("}\n") != std::string::npos) break;
      }
      return out;
    } catch (const std::exception&) {
      return "";
    }
  }

  /// Polls GET /api/runs/ID until the run is no longer running (at most `limit`).
  nlohmann::json wait_run(const std::string& id, std::chrono::seconds limit = std::chrono::seconds(120)) const {
    const auto end = std::chrono::steady_clock::now() + limit;
    nlohmann::json j;
    while (std::chrono::steady_clock::now() < end) {
      j = request("GET", "/api/runs/" + id).json();
      if (j.is_object() && j.value("status", "") != "running") return j;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return j;
  }

 private:
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
  int port_ = 0;
  std::string work_dir_;
};

/// A run that stays in flight for seconds (tests of limits and cancellation): eight sequences of
/// a language model's 2048-token prefill and 1024 decode steps on edge-m, about 7 s in the
/// release build. Tests that need it in flight longer than that hold it (start_held_run in
/// serve_processes.h): runs get faster, and a fast machine must not end a test's run too soon.
inline nlohmann::json slow_run_request() {
  return {{"config", "edge-m"},
          {"fusion", "greedy"},
          {"llm", {{"model", "Llama-3.2-1B"}, {"prompt", 2048}, {"generate", 1024}, {"batch", 8}}}};
}

/// The server answers a health check: it is still serving after whatever came before.
inline void expect_alive(const ServeProcess& s) {
  const HttpReply r = s.request("GET", "/api/health");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.json()["ok"], true);
}

/// A 4xx reply whose body is {"error": "..."} containing `needle`.
inline void expect_error(const HttpReply& r, int status, const std::string& needle) {
  EXPECT_EQ(r.status, status) << r.body;
  const nlohmann::json j = r.json();
  ASSERT_TRUE(j.is_object()) << r.body;
  ASSERT_TRUE(j.contains("error")) << r.body;
  EXPECT_NE(j["error"].get<std::string>().find(needle), std::string::npos) << j["error"];
  // Library text stays out of what a client reads.
  for (const char* lib : {"std::", "what()", "json.exception", "boost"})
    EXPECT_EQ(r.body.find(lib), std::string::npos) << r.body;
}

inline std::string start(const ServeProcess& s, const nlohmann::json& body) {
  const HttpReply r = s.request("POST", "/api/runs", body.dump());
  EXPECT_EQ(r.status, 202) << r.body;
  return r.json().value("id", "");
}

}  // namespace npusim::test
