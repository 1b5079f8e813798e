#pragma once
// `npusim serve`: an HTTP/1.1 server (Boost.Beast, one thread per connection) for the live page.
// It serves the built front end from the asset folder and the JSON API of docs/serve.md: start a
// run, follow its progress (server-sent events), read its results, download its folder, upload
// a workload. Runs are child processes of the server (RunManager); heavy work beside runs
// (upload checks, output folders, timeline traces) counts against the same limit; every request
// and answer has a whole-exchange deadline; files and downloads are streamed, not built in memory.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "sim/serve/run_manager.h"

namespace npusim::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";
  unsigned short port = 8080;  // 0: any free port (the printed URL says which)
  bool allow_remote = false;
  std::filesystem::path asset_dir;  // the built web/ app (web/dist)
  std::filesystem::path work_dir;   // run folders and uploads
  RunLimits limits;
  std::uint64_t max_body_bytes = 64 << 10;    // any request but an upload
  std::uint64_t max_upload_bytes = 32 << 20;  // POST /api/uploads
  std::size_t max_connections = 64;
  // Whole-exchange deadlines (sim/serve/deadline_stream.h): a slow or silent client cannot hold
  // one of the max_connections slots longer than these.
  std::chrono::seconds idle_timeout{10};      // the next request's header, from the end of the last answer
  std::chrono::seconds request_timeout{60};   // a request's body, from the end of its header
  std::chrono::seconds response_timeout{60};  // one whole answer (a streamed download included)
};

class Server {
 public:
  explicit Server(ServeOptions o);
  ~Server();
  /// Binds and listens; returns the URL. Throws InputError for a host that needs --allow-remote
  /// or that cannot be bound.
  std::string listen();
  /// Accepts connections until stop() (or a signal handler's flag) is set.
  void serve(const std::atomic<bool>& stop_flag);
  RunManager& runs() { return *runs_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<RunManager> runs_;
};

}  // namespace npusim::serve
