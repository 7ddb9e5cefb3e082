// codec_roundtrip --port P --backend ascii|meta [--split N]
//
// Test tool for the router codec (not installed): reads a client's bytes on
// stdin, parses them with protocol::parser, runs each request through
// backend_call against the memcached on 127.0.0.1:P (plain blocking socket,
// 10 s receive timeout), renders the reply with render_routed_reply and
// writes the client's reply bytes to stdout. A classic multi-key get is split
// over N calls (default 2: keys by index modulo N) pipelined on the one
// connection, so the merge of several calls into one routed_result and the
// in-order matching of pipelined replies are exercised too.
//
// Requests the router answers itself are answered here as memcached would
// for the tests' purposes: mn -> MN, binary Noop -> an empty success; quit
// ends the input. Others of that kind are skipped.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend_call.h"
#include "backend_reply_parser.h"
#include "parser.h"
#include "reply.h"
#include "routed_result.h"

namespace {

using namespace ithaca::protocol;

struct backend {
  int fd = -1;
  std::string rbuf;
  backend_reply_parser parser;

  bool connect_to(int port) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return false;
    timeval tv{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }

  bool send_all(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  // Feeds the replies of the call's current step until it stops asking for
  // more pieces. Returns the call's progress.
  backend_call::progress drive(backend_call& call, reply_shape shape) {
    for (;;) {
      reply_piece piece;
      std::size_t used = 0;
      const parse_status st = parser.next(rbuf, shape, piece, used);
      if (st == parse_status::Ok) {
        const backend_call::progress p = call.on_piece(piece);
        rbuf.erase(0, used);
        if (p != backend_call::progress::More) return p;
        continue;
      }
      if (st == parse_status::Error) {
        call.fail(call_failure::BadReply);
        return backend_call::progress::BadReply;
      }
      char buf[65536];
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        call.fail(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? call_failure::Timeout
                                                                     : call_failure::ConnectionError);
        return backend_call::progress::Done;
      }
      rbuf.append(buf, static_cast<std::size_t>(n));
    }
  }
};

bool is_text_get(command cmd) {
  return cmd == command::Get || cmd == command::Gets || cmd == command::Gat || cmd == command::Gats;
}

// Runs `req` through `calls` backend calls (one unless it is a classic
// multi-key get) and renders its reply.
bool route(const request& req, backend_protocol proto, std::size_t split, backend& be, out_buffer& out) {
  routed_result result;
  result.prepare(req);
  const std::size_t n = (req.proto == protocol_kind::Ascii && is_text_get(req.cmd) && req.keys.size() > 1)
                            ? std::min(split, req.keys.size())
                            : 1;
  std::vector<std::vector<std::uint32_t>> keys(n);
  if (n > 1) {
    for (std::size_t i = 0; i < req.keys.size(); ++i) keys[i % n].push_back(static_cast<std::uint32_t>(i));
  }
  std::vector<backend_call> calls(n);
  std::vector<reply_shape> shapes(n);
  std::vector<bool> waiting(n, false);
  std::string wbuf;
  // First steps of all calls, pipelined in one write.
  for (std::size_t c = 0; c < n; ++c) {
    const auto p = calls[c].start(req, proto, result, std::span<const std::uint32_t>(keys[c]));
    if (p == backend_call::progress::NextStep) {
      shapes[c] = calls[c].encode(wbuf);
      waiting[c] = true;
    }
  }
  if (!wbuf.empty() && !be.send_all(wbuf)) {
    for (std::size_t c = 0; c < n; ++c) calls[c].fail(call_failure::ConnectionError);
    render_routed_reply(req, result, out);
    return false;
  }
  bool healthy = true;
  for (std::size_t c = 0; c < n; ++c) {
    if (!waiting[c]) continue;
    if (!healthy) {
      calls[c].fail(call_failure::ConnectionError);
      continue;
    }
    for (;;) {
      const auto p = be.drive(calls[c], shapes[c]);
      if (p != backend_call::progress::NextStep) {
        if (p == backend_call::progress::BadReply || !calls[c].done()) healthy = false;
        break;
      }
      wbuf.clear();
      shapes[c] = calls[c].encode(wbuf);
      if (!be.send_all(wbuf)) {
        calls[c].fail(call_failure::ConnectionError);
        healthy = false;
        break;
      }
    }
  }
  render_routed_reply(req, result, out);
  return healthy;
}

int usage() {
  std::fprintf(stderr, "usage: codec_roundtrip --port P --backend ascii|meta [--split N]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int port = 0;
  backend_protocol proto = backend_protocol::Ascii;
  std::size_t split = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view opt = argv[i];
    const std::string_view val = argv[i + 1];
    if (opt == "--port") {
      port = std::atoi(argv[i + 1]);
    } else if (opt == "--backend" && (val == "ascii" || val == "meta")) {
      proto = val == "ascii" ? backend_protocol::Ascii : backend_protocol::Meta;
    } else if (opt == "--split") {
      split = static_cast<std::size_t>(std::max(1, std::atoi(argv[i + 1])));
    } else {
      return usage();
    }
  }
  if (port <= 0 || argc % 2 == 0) return usage();

  const std::string input{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
  backend be;
  if (!be.connect_to(port)) {
    std::perror("codec_roundtrip: connect");
    return 1;
  }
  parser client_parser(parser_settings{});
  request req;
  out_buffer out;
  std::size_t pos = 0;
  bool running = true;
  while (running && pos <= input.size()) {
    const parse_result r = client_parser.parse(std::string_view(input).substr(pos), req);
    pos += r.consumed;
    switch (r.status) {
      case parse_status::NeedMore:
        running = false;
        if (r.consumed > 0) running = true;
        break;
      case parse_status::Error:
        encode_parse_error(out, r, req);
        if (r.close) running = false;
        break;
      case parse_status::Ok:
        switch (req.cmd) {
          case command::MetaNoop: encode_meta(out, meta_code::MN, req, nullptr); break;
          case command::Noop: encode_binary(out, req.opcode, req.opaque, binary_status::NoError, 0, {}, {}, {}); break;
          case command::Quit: running = false; break;
          case command::Version:
          case command::Stats:
          case command::Stat:
          case command::Verbosity:
          case command::Shutdown:
          case command::CacheMemlimit: break;  // the integrator's
          default:
            if (!route(req, proto, split, be, out)) {
              std::fprintf(stderr, "codec_roundtrip: backend connection unusable\n");
              running = false;
            }
            break;
        }
        break;
    }
  }
  const std::string bytes = out.str();
  std::fwrite(bytes.data(), 1, bytes.size(), stdout);
  std::fflush(stdout);
  ::close(be.fd);
  return 0;
}
