// A POST /api/runs that takes server-sent events is answered with the run's events and its
// results on the same connection (docs/serve.md "JSON API"): what the live page sends, so that a
// run costs it one request.
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/serve/serve_support.h"

namespace npusim::test {
namespace {

using nlohmann::json;

/// Everything the server sends on a new connection for `bytes`, until it closes it.
std::string whole_answer(const ServeProcess& s, const std::string& bytes) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket sock(io);
  sock.connect({boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(s.port())});
  boost::asio::write(sock, boost::asio::buffer(bytes));
  std::string out;
  char buf[65536];
  boost::system::error_code ec;
  while (!ec) out.append(buf, sock.read_some(boost::asio::buffer(buf), ec));
  return out;
}

std::string post_events(const std::string& body) {
  return "POST /api/runs HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAccept: text/event-stream\r\nContent-Type: "
         "application/json\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

/// The events of a server-sent event stream: (event, data) in order.
std::vector<std::pair<std::string, std::string>> events(const std::string& stream) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t at = stream.find("\r\n\r\n");
  if (at == std::string::npos) return out;
  at += 4;
  for (std::size_t end; (end = stream.find("\n\n", at)) != std::string::npos; at = end + 2) {
    std::istringstream block(stream.substr(at, end - at));
    std::string line, event, data;
    while (std::getline(block, line)) {
      if (line.rfind("event: ", 0) == 0) event = line.substr(7);
      if (line.rfind("data: ", 0) == 0) data = line.substr(6);
    }
    if (!event.empty()) out.emplace_back(event, data);
  }
  return out;
}

TEST(ServeStream, APostThatTakesEventsIsAnsweredWithTheRunsEventsAndItsResults) {
  ServeProcess s;
  ASSERT_GT(s.port(), 0);
  const std::string stream = whole_answer(
      s, post_events(json({{"config", "edge-s"}, {"workload", "small_cnn"}, {"fusion", "greedy"}}).dump()));
  EXPECT_NE(stream.find("Content-Type: text/event-stream"), std::string::npos) << stream.substr(0, 300);
  const auto ev = events(stream);
  ASSERT_GE(ev.size(), 3u) << stream.substr(0, 600);
  // The run's state first (its id), its results, then its final state: nothing after it.
  const json first = json::parse(ev.front().second), last = json::parse(ev.back().second);
  EXPECT_EQ(ev.front().first, "run");
  EXPECT_EQ(ev.back().first, "run");
  EXPECT_EQ(last["status"], "done") << last;
  EXPECT_EQ(first["id"], last["id"]);
  ASSERT_EQ(ev[ev.size() - 2].first, "result");
  for (std::size_t i = 0; i + 2 < ev.size(); ++i) EXPECT_EQ(ev[i].first, "run") << i;
  // The results are the run's files.
  const json result = json::parse(ev[ev.size() - 2].second);
  const std::string id = last["id"];
  EXPECT_EQ(result["summary"], s.request("GET", "/api/runs/" + id + "/files/summary.json").json());
  EXPECT_EQ(result["roofline"], s.request("GET", "/api/runs/" + id + "/files/roofline.json").json());
  // A request refused is its JSON error, as without events.
  const std::string refused = whole_answer(s, post_events(R"({"workload": "no_such_net"})"));
  EXPECT_EQ(refused.rfind("HTTP/1.1 400", 0), 0u) << refused.substr(0, 300);
  EXPECT_NE(refused.find("no_such_net"), std::string::npos) << refused;
  expect_alive(s);
}

}  // namespace
}  // namespace npusim::test
