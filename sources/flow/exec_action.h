// What the connection does after a request: shared by every route and by the
// two request loops (the TCP/unix client coroutine, the UDP datagram loop).
#pragma once

namespace ithaca::flow {

enum class exec_action {
  Continue,  // go on with the next request
  Close,     // quit: flush the replies, then close the connection
  Shutdown,  // shutdown (when enabled): flush, close, stop the server
  Watch      // `watch`: flush, then the connection only receives log lines (server/watcher.h)
};

}  // namespace ithaca::flow
