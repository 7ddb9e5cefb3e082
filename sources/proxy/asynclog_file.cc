#include "asynclog_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "jsonm_value.h"

namespace ithaca::proxy {

namespace {

// mcrouter's DEFAULT_ASYNCLOG_LIFETIME: a new file every fifteen minutes.
constexpr int64_t kAsynclogLifetimeS = 15 * 60;

bool asynclog_fail(std::string* why, const std::string& what) {
  if (why) *why = what + ": " + std::strerror(errno);
  return false;
}

}  // namespace

asynclog_file::~asynclog_file() {
  if (fd_ >= 0) ::close(fd_);
}

bool asynclog_file::open_file(std::string* why) {
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  if (fd_ >= 0 && now - opened_at_ <= kAsynclogLifetimeS) return true;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  const std::time_t t = static_cast<std::time_t>(now);
  std::tm date{};
  ::localtime_r(&t, &date);
  char hour[64];
  std::snprintf(hour, sizeof hour, "%04d%02d%02dT%02d-%lld", date.tm_year + 1900, date.tm_mon + 1, date.tm_mday,
                date.tm_hour, static_cast<long long>(now - now % 3600));
  // The spool directory itself may be missing (a cleaner emptied /tmp):
  // made again, as mcrouter's startup makes it.
  ::mkdir(settings_.dir.c_str(), 0777);
  const std::string hour_dir = settings_.dir + "/" + hour;
  if (::mkdir(hour_dir.c_str(), 0777) != 0 && errno != EEXIST) return asynclog_fail(why, hour_dir);
  char name[160];
  std::snprintf(name, sizeof name, "%04d%02d%02dT%02d%02d%02d-%lld-mcrouter-%s-t%ld-%p", date.tm_year + 1900,
                date.tm_mon + 1, date.tm_mday, date.tm_hour, date.tm_min, date.tm_sec, static_cast<long long>(now),
                settings_.router_name.c_str(), static_cast<long>(::syscall(SYS_gettid)), static_cast<void*>(this));
  const std::string path = hour_dir + "/" + name;
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd_ < 0) return asynclog_fail(why, path);
  opened_at_ = now;
  return true;
}

bool asynclog_file::write_delete(std::string_view address, std::string_view pool, std::string_view key,
                                 std::string* why) {
  if (!enabled()) return true;
  // "host:port" or "[v6]:port": the host without its brackets, the port.
  const std::size_t colon = address.rfind(':');
  std::string_view host = address.substr(0, colon);
  const std::string_view port = colon == std::string_view::npos ? std::string_view("0") : address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  // Appended piece by piece (GCC 12 warns falsely on long operator+ chains).
  std::string entry;
  if (settings_.version2) {
    std::string hostport;
    hostport.append("[").append(host).append("]:").append(port);
    entry.append("{\"a\":{\"al\":1},\"f\":\"\",\"h\":").append(config::jsonm::json_quote(hostport));
    entry.append(",\"k\":").append(config::jsonm::json_quote(key));
    entry.append(",\"p\":").append(config::jsonm::json_quote(pool));
    entry.append(",\"r\":").append(config::jsonm::json_quote(settings_.region));
    entry.append(",\"s\":\"mcrouter\"}");
  } else {
    std::string command;
    command.append("delete ").append(key).append("\r\n");
    entry.append("[").append(config::jsonm::json_quote(host)).append(",").append(port).append(",");
    entry.append(config::jsonm::json_quote(command)).append("]");
  }
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  char stamp[48];
  std::snprintf(stamp, sizeof stamp, "%lld.%03lld", static_cast<long long>(ms / 1000),
                static_cast<long long>(ms % 1000));
  std::string line;
  line.append("[\"").append(settings_.version2 ? "AS2.0" : "AS1.0").append("\",").append(stamp);
  line.append(",\"C\",").append(entry).append("]\n");
  if (!open_file(why)) return false;
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return asynclog_fail(why, "asynclog write");
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace ithaca::proxy
