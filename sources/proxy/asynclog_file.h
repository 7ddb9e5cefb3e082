// mcrouter's asynclog (AsyncLog.cpp) beside ithaca's own spool: with
// mcrouter's -a DIR, every delete the spool machine writes to its spool is
// also written as mcrouter writes a failed delete, for the tools that read
// mcrouter's spool (mcreplay). ithaca still replays its own spool itself
// (delete_spool.h); a delete replayed twice is harmless.
//
// Layout, as mcrouter's: DIR/YYYYMMDDTHH-HOURSTART/ (local time; HOURSTART
// the hour's first second, epoch) holds files
// YYYYMMDDTHHMMSS-NOW-mcrouter-ROUTER-tTID-ID, a new one every 15 minutes,
// one JSON line per delete:
//   ["AS1.0", SECONDS.mmm, "C", ["HOST", PORT, "delete KEY\r\n"]]
// or, with --use-asynclog-version2,
//   ["AS2.0", SECONDS.mmm, "C", {"s": "mcrouter", "f": "", "r": REGION,
//     "h": "[HOST]:PORT", "p": POOL, "k": KEY, "a": {"al": 1}}]
// REGION: the default route's ("/region/cluster/"), POOL the pool's name.
//
// Thread: the spool machine only (blocking file I/O is its job).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ithaca::proxy {

struct asynclog_settings {
  std::string dir;  // "": off
  bool version2 = false;
  std::string router_name = "0";  // the first -p port
  std::string region = ".";       // the default route's region
};

class asynclog_file {
 public:
  explicit asynclog_file(asynclog_settings settings) : settings_(std::move(settings)) {}
  ~asynclog_file();
  asynclog_file(const asynclog_file&) = delete;
  asynclog_file& operator=(const asynclog_file&) = delete;

  bool enabled() const { return !settings_.dir.empty(); }
  // Appends one delete of `key` sent to `address` ("host:port",
  // "[v6]:port") of `pool`. False with *why when it could not.
  bool write_delete(std::string_view address, std::string_view pool, std::string_view key, std::string* why);

 private:
  bool open_file(std::string* why);

  asynclog_settings settings_;
  int fd_ = -1;
  int64_t opened_at_ = 0;  // seconds
};

}  // namespace ithaca::proxy
