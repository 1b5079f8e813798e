// What bounds `npusim serve` (docs/serve.md, "Limits"): whole-request deadlines (a client that
// sends a byte now and then cannot hold a connection slot), a Content-Length over the limit
// refused before its body, heavy work beside runs counted against --max-runs.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/serve/serve_processes.h"
#include "tests/serve/serve_support.h"
#include "tests/support/test_paths.h"

namespace npusim::test {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

/// A raw client: connects, sends `first`, then one byte of `drip` every 200 ms for as long as
/// the server keeps the connection open (at most 15 s); returns everything the server sent.
std::string trickle(int port, const std::string& first, const std::string& drip) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket sock(io);
  sock.connect({boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
  boost::system::error_code ec;
  boost::asio::write(sock, boost::asio::buffer(first), ec);
  std::string reply;
  const auto end = Clock::now() + std::chrono::seconds(15);
  for (std::size_t i = 0; !ec && Clock::now() < end; ++i) {
    pollfd p{sock.native_handle(), POLLIN, 0};
    if (::poll(&p, 1, 200) > 0) {
      char buf[4096];
      const std::size_t n = sock.read_some(boost::asio::buffer(buf), ec);
      reply.append(buf, n);
      continue;
    }
    const char c = drip[i % drip.size()];
    boost::asio::write(sock, boost::asio::buffer(&c, 1), ec);
  }
  return reply;
}

TEST(ServeLimits, AHeaderSentAByteAtATimeIsCutAtTheIdleDeadline) {
  // Each byte arrives 200 ms after the last, well inside any per-read timeout; only a deadline
  // on the whole header (--idle-timeout 1) ends it: 408, then the server closes.
  ServeProcess s({"--idle-timeout", "1"});
  const std::string reply = trickle(s.port(), "GET /api/health HTTP/1.1\r\nHost: x\r\n", "X-Slow: y\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 408", 0), 0u) << reply;
  EXPECT_NE(reply.find("did not arrive within 1 s"), std::string::npos) << reply;
  expect_alive(s);
}

TEST(ServeLimits, ABodySentAByteAtATimeIsCutAtTheRequestDeadline) {
  ServeProcess s({"--request-timeout", "1"});
  const std::string reply =
      trickle(s.port(), "POST /api/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{", " ");
  EXPECT_EQ(reply.rfind("HTTP/1.1 408", 0), 0u) << reply;
  EXPECT_NE(reply.find("request body did not arrive within 1 s"), std::string::npos) << reply;
  expect_alive(s);
}

TEST(ServeLimits, SilentConnectionsFreeTheirSlotsAtTheIdleDeadline) {
  // 64 connections (the server's limit) that never send a byte: while they hold every slot a new
  // client is refused (503); once the 1 s idle deadline closes them, it is served again.
  ServeProcess s({"--idle-timeout", "1"});
  boost::asio::io_context io;
  std::vector<std::unique_ptr<boost::asio::ip::tcp::socket>> silent;
  for (int i = 0; i < 64; ++i) {
    silent.push_back(std::make_unique<boost::asio::ip::tcp::socket>(io));
    silent.back()->connect({boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(s.port())});
  }
  int status = 0;
  for (const auto end = Clock::now() + std::chrono::seconds(15); status != 200 && Clock::now() < end;) {
    status = s.request("GET", "/api/health").status;
    if (status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(status, 200) << "the silent connections still hold every slot";
  // Each silent connection was closed by the server (EOF), not left open.
  std::size_t closed = 0;
  for (auto& sock : silent) {
    char c;
    boost::system::error_code ec;
    pollfd p{sock->native_handle(), POLLIN, 0};
    if (::poll(&p, 1, 5000) > 0) sock->read_some(boost::asio::buffer(&c, 1), ec);
    closed += ec ? 1 : 0;
  }
  EXPECT_EQ(closed, silent.size());
}

TEST(ServeLimits, AContentLengthOverTheLimitIsRefusedBeforeItsBody) {
  // 40 MB announced, nothing sent: the answer comes from the header alone (in a build with
  // assertions, reading Content-Length before the header was whole used to abort the server).
  ServeProcess s;
  const std::string up = s.raw("POST /api/uploads?name=x.onnx HTTP/1.1\r\nHost: x\r\nContent-Length: 40000000\r\n\r\n");
  EXPECT_EQ(up.rfind("HTTP/1.1 413", 0), 0u) << up;
  EXPECT_NE(up.find("upload of 40000000 bytes exceeds the limit of 33554432 bytes"), std::string::npos) << up;
  const std::string body = s.raw("POST /api/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 40000000\r\n\r\n");
  EXPECT_EQ(body.rfind("HTTP/1.1 413", 0), 0u) << body;
  EXPECT_NE(body.find("request body of 40000000 bytes exceeds the limit of 65536 bytes"), std::string::npos) << body;
  expect_alive(s);
}

TEST(ServeLimits, AnUploadCheckCountsAgainstMaxRuns) {
  // --max-runs 1 and one run in flight: the upload's check (a child process running the loaders)
  // is refused like a second run would be; after the run ends, the same upload is taken.
  ServeProcess s({"--max-runs", "1"});
  std::ifstream in(std::string(test_paths::data_dir()) + "/conv_pair.yaml");
  std::stringstream yaml;
  yaml << in.rdbuf();
  const std::string slow = start_held_run(s);
  const HttpReply busy = s.request("POST", "/api/uploads?name=conv_pair.yaml", yaml.str(), "application/x-yaml");
  expect_error(busy, 503, "cannot start checking upload 'conv_pair.yaml'");
  expect_error(busy, 503, "--max-runs");
  EXPECT_EQ(s.request("POST", "/api/runs/" + slow + "/cancel").status, 200);
  EXPECT_EQ(s.wait_run(slow)["status"], "cancelled");
  EXPECT_EQ(s.request("POST", "/api/uploads?name=conv_pair.yaml", yaml.str(), "application/x-yaml").status, 201);
}

}  // namespace
}  // namespace npusim::test
