// Reliable deletes' spool (proxy/delete_spool.h): the worker's side (the
// bound in bytes per server, the keys it refuses, the file names), and the
// machine's answers: a record is answered written only once it is in the
// file, and not written (counted dropped, its bytes given back) when the
// directory cannot take it or its deadline has passed. The replay and the
// prober's gate are covered over the wire by
// tests/functional/test_reliable_deletes.py.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "backend_server.h"
#include "delete_spool.h"
#include "spool_file.h"

using namespace ithaca;

namespace {

std::shared_ptr<proxy::backend_server> server_at(const std::string& pool, const std::string& address) {
  config::backend_server spec;
  spec.address = address;
  return std::make_shared<proxy::backend_server>(pool, spec, proxy::server_settings{}, 1);
}

// A spool that is not started: records only queue.
bool queue(proxy::delete_spool& spool, const std::shared_ptr<proxy::backend_server>& s, std::string_view key) {
  return spool.submit(s, key, nullptr, 0, -1);
}

// A fresh directory under /tmp, removed with what it holds.
struct temp_dir {
  std::filesystem::path path;
  temp_dir() {
    char tmpl[] = "/tmp/ithaca-spool-test-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~temp_dir() { std::filesystem::remove_all(path); }
};

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Polls the mailbox (from this plain thread: nobody is woken) until `n`
// outcomes are there, for at most 5 s.
std::vector<proxy::spool_mailbox::outcome> wait_outcomes(proxy::spool_mailbox& box, std::size_t n) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    {
      std::lock_guard lock(box.mu);
      if (box.done.size() >= n || std::chrono::steady_clock::now() > until) return box.done;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

struct running_spool {
  proxy::delete_spool spool;
  std::shared_ptr<proxy::spool_mailbox> box = std::make_shared<proxy::spool_mailbox>();
  explicit running_spool(const std::string& dir, bool fsync = false)
      : spool(proxy::spool_settings{dir, 1 << 20, fsync}) {
    REQUIRE(spool.start(mm::machine_config{}));
  }
};

int64_t in_a_minute() { return mm::deadline_after(60000); }

}  // namespace

TEST_CASE("spool: a queued delete reserves key + 1 bytes; counted spooled only once written") {
  proxy::delete_spool spool(proxy::spool_settings{"/nonexistent", 100});  // not started: records only queue
  auto s = server_at("main", "127.0.0.1:1");
  CHECK(queue(spool, s, "abc"));
  CHECK(queue(spool, s, "de"));
  CHECK(s->spool().bytes.load() == 4 + 3);
  CHECK(s->spool().spooled.load() == 0);
  CHECK(s->spool().dropped.load() == 0);
}

TEST_CASE("spool: past the bound a delete is dropped and counted, per server") {
  proxy::delete_spool spool(proxy::spool_settings{"/nonexistent", 10});
  auto a = server_at("main", "127.0.0.1:1");
  auto b = server_at("main", "127.0.0.1:2");
  CHECK(queue(spool, a, "1234"));     // 5
  CHECK(queue(spool, a, "5678"));     // 10: exactly the bound
  CHECK_FALSE(queue(spool, a, "9"));  // 12 > 10
  CHECK(a->spool().dropped.load() == 1);
  CHECK(a->spool().bytes.load() == 10);
  CHECK(queue(spool, b, "1234"));  // another server has a bound of its own
  CHECK(b->spool().dropped.load() == 0);
}

TEST_CASE("spool: keys the text protocol cannot carry are dropped") {
  proxy::delete_spool spool(proxy::spool_settings{"/nonexistent", 1000});
  auto s = server_at("main", "127.0.0.1:1");
  CHECK_FALSE(queue(spool, s, "a b"));
  CHECK_FALSE(queue(spool, s, std::string_view("a\nb")));
  CHECK_FALSE(queue(spool, s, ""));
  CHECK_FALSE(queue(spool, s, std::string(251, 'k')));
  CHECK(s->spool().dropped.load() == 4);
  CHECK(s->spool().bytes.load() == 0);
  CHECK(queue(spool, s, std::string(250, 'k')));
}

TEST_CASE("spool: file names keep letters, digits, dots and dashes") {
  CHECK(proxy::spool_file_name(*server_at("main", "127.0.0.1:11211")) == "main_127.0.0.1_11211.spool");
  CHECK(proxy::spool_file_name(*server_at("a/b", "[::1]:11211")) == "a_b____1__11211.spool");
  CHECK(proxy::spool_file_name(*server_at("p", "unix:/run/mc.sock")) == "p_unix__run_mc.sock.spool");
}

TEST_CASE("spool machine: a record is in the file when it is answered written, in order") {
  temp_dir d;
  running_spool r(d.path.string());
  auto s = server_at("main", "127.0.0.1:1");
  const auto file = d.path / proxy::spool_file_name(*s);
  CHECK(r.spool.submit(s, "k1", r.box, 1, in_a_minute()));
  auto got = wait_outcomes(*r.box, 1);
  REQUIRE(got.size() == 1);
  CHECK((got[0].seq == 1 && got[0].written));
  CHECK(read_file(file) == "k1\n");  // already there when the answer came
  CHECK(r.spool.submit(s, "k2", r.box, 2, in_a_minute()));
  CHECK(r.spool.submit(s, "k3", r.box, 3, in_a_minute()));
  got = wait_outcomes(*r.box, 3);
  REQUIRE(got.size() == 3);
  CHECK((got[1].seq == 2 && got[2].seq == 3 && got[1].written && got[2].written));
  CHECK(read_file(file) == "k1\nk2\nk3\n");
  CHECK(s->spool().spooled.load() == 3);
  CHECK(s->spool().bytes.load() == 9);
  r.spool.stop();
}

TEST_CASE("spool machine: a directory that became a file answers not written, counted dropped") {
  temp_dir d;
  const auto dir = d.path / "spool";
  std::filesystem::create_directory(dir);
  running_spool r(dir.string());
  std::filesystem::remove(dir);
  std::ofstream(dir) << "not a directory\n";
  auto s = server_at("main", "127.0.0.1:1");
  CHECK(r.spool.submit(s, "gone", r.box, 7, in_a_minute()));
  auto got = wait_outcomes(*r.box, 1);
  REQUIRE(got.size() == 1);
  CHECK((got[0].seq == 7 && !got[0].written));
  CHECK(s->spool().spooled.load() == 0);
  CHECK(s->spool().dropped.load() == 1);
  CHECK(s->spool().bytes.load() == 0);
  // Usable again (the directory is made again): written.
  std::filesystem::remove(dir);
  CHECK(r.spool.submit(s, "back", r.box, 8, in_a_minute()));
  got = wait_outcomes(*r.box, 2);
  REQUIRE(got.size() == 2);
  CHECK(got[1].written);
  CHECK(read_file(dir / proxy::spool_file_name(*s)) == "back\n");
  r.spool.stop();
}

TEST_CASE("spool machine: a record reached after its deadline is not written") {
  temp_dir d;
  running_spool r(d.path.string());
  auto s = server_at("main", "127.0.0.1:1");
  CHECK(r.spool.submit(s, "late", r.box, 1, mm::deadline_after(0) - 1));
  auto got = wait_outcomes(*r.box, 1);
  REQUIRE(got.size() == 1);
  CHECK(!got[0].written);
  CHECK(!std::filesystem::exists(d.path / proxy::spool_file_name(*s)));
  CHECK(s->spool().dropped.load() == 1);
  CHECK(s->spool().bytes.load() == 0);
  r.spool.stop();
}

TEST_CASE("spool machine: with fsync, a batch is answered once synced") {
  temp_dir d;
  running_spool r(d.path.string(), /*fsync=*/true);
  auto s = server_at("main", "127.0.0.1:1");
  std::string want;
  for (uint64_t i = 1; i <= 20; ++i) {
    // (Appended, not "f" + to_string(i): GCC 12 warns -Wrestrict on that.)
    std::string key("f");
    key += std::to_string(i);
    CHECK(r.spool.submit(s, key, r.box, i, in_a_minute()));
    want += key;
    want += '\n';
  }
  auto got = wait_outcomes(*r.box, 20);
  REQUIRE(got.size() == 20);
  for (uint64_t i = 0; i < 20; ++i) CHECK((got[i].seq == i + 1 && got[i].written));
  CHECK(read_file(d.path / proxy::spool_file_name(*s)) == want);
  r.spool.stop();
}

TEST_CASE("spool file: a write that fails half way leaves no partial record") {
  temp_dir d;
  const auto path = d.path / "f.spool";
  std::string why;
  const int fd = proxy::spool_open(d.path.string(), path.string(), &why);
  REQUIRE(fd >= 0);
  CHECK(proxy::spool_append(fd, 0, "abc\n", &why));
  // A file size limit two bytes further: the next record is written in part,
  // then refused (EFBIG; SIGXFSZ ignored for that).
  struct rlimit old {};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  auto* was = ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit low = old;
  low.rlim_cur = 6;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &low) == 0);
  const bool ok = proxy::spool_append(fd, 4, "defgh\n", &why);
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, was);
  CHECK_FALSE(ok);
  CHECK(!why.empty());
  CHECK(read_file(path) == "abc\n");  // cut back: the next record starts clean
  CHECK(proxy::spool_append(fd, 4, "ij\n", &why));
  CHECK(read_file(path) == "abc\nij\n");
  ::close(fd);
}
