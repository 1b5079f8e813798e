#pragma once
// A blocking TCP socket with one deadline for a whole exchange, for Beast's synchronous reads and
// writes. A socket timeout (SO_RCVTIMEO) bounds each read alone, so a client that sends one byte
// every few seconds could hold a connection slot forever; here every read and write waits at
// most until the deadline the server set for the whole request (or response), then fails with
// beast::error::timeout.
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/system/system_error.hpp>

namespace npusim::serve {

class DeadlineStream {
 public:
  using Clock = std::chrono::steady_clock;
  using executor_type = boost::asio::ip::tcp::socket::executor_type;

  explicit DeadlineStream(boost::asio::ip::tcp::socket& socket) : socket_(socket) {}
  executor_type get_executor() { return socket_.get_executor(); }
  boost::asio::ip::tcp::socket& socket() { return socket_; }

  /// Every read and write from now on must end within `d`.
  void expires_after(Clock::duration d) { deadline_ = Clock::now() + d; }
  bool expired() const { return Clock::now() >= deadline_; }

  template <class MutableBuffers>
  std::size_t read_some(const MutableBuffers& buffers, boost::system::error_code& ec) {
    if (!wait(POLLIN, ec)) return 0;
    return socket_.read_some(buffers, ec);
  }
  template <class MutableBuffers>
  std::size_t read_some(const MutableBuffers& buffers) {
    boost::system::error_code ec;
    const std::size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }
  template <class ConstBuffers>
  std::size_t write_some(const ConstBuffers& buffers, boost::system::error_code& ec) {
    if (!wait(POLLOUT, ec)) return 0;
    return socket_.write_some(buffers, ec);
  }
  template <class ConstBuffers>
  std::size_t write_some(const ConstBuffers& buffers) {
    boost::system::error_code ec;
    const std::size_t n = write_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

 private:
  /// Waits until the socket is ready for `events` or the deadline passes (ec = timeout).
  bool wait(short events, boost::system::error_code& ec) {
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
      if (left <= 0) {
        ec = boost::beast::error::timeout;
        return false;
      }
      pollfd p{socket_.native_handle(), events, 0};
      const int r = ::poll(&p, 1, int(std::min<long long>(left, 1000)));
      if (r > 0) return true;  // ready, or an error/hang-up the read or write itself reports
      if (r < 0 && errno != EINTR) {
        ec = boost::system::error_code(errno, boost::system::system_category());
        return false;
      }
    }
  }

  boost::asio::ip::tcp::socket& socket_;
  Clock::time_point deadline_ = Clock::now();
};

}  // namespace npusim::serve
