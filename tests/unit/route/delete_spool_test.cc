// The worker's side of reliable deletes (proxy/delete_spool.h): the bound in
// bytes per server, the keys it refuses, the counters, the file names. The
// machine's side (files, replay, the prober's gate) is covered over the wire
// by tests/functional/test_reliable_deletes.py.
#include <doctest/doctest.h>

#include "backend_server.h"
#include "delete_spool.h"

using namespace ithaca;

namespace {

std::shared_ptr<proxy::backend_server> server_at(const std::string& pool, const std::string& address) {
  config::backend_server spec;
  spec.address = address;
  return std::make_shared<proxy::backend_server>(pool, spec, proxy::server_settings{}, 1);
}

}  // namespace

TEST_CASE("spool: a delete is counted and reserves key + 1 bytes") {
  proxy::delete_spool spool(proxy::spool_settings{"/nonexistent", 100});  // not started: records only queue
  auto s = server_at("main", "127.0.0.1:1");
  CHECK(spool.spool(s, "abc"));
  CHECK(spool.spool(s, "de"));
  CHECK(s->spool().spooled.load() == 2);
  CHECK(s->spool().bytes.load() == 4 + 3);
  CHECK(s->spool().dropped.load() == 0);
}

TEST_CASE("spool: past the bound a delete is dropped and counted, per server") {
  proxy::delete_spool spool(proxy::spool_settings{"/nonexistent", 10});
  auto a = server_at("main", "127.0.0.1:1");
  auto b = server_at("main", "127.0.0.1:2");
  CHECK(spool.spool(a, "1234"));   // 5
  CHECK(spool.spool(a, "5678"));   // 10: exactly the bound
  CHECK_FALSE(spool.spool(a, "9"));  // 12 > 10
  CHECK(a->spool().dropped.load() == 1);
  CHECK(a->spool().bytes.load() == 10);
  CHECK(spool.spool(b, "1234"));  // another server has a bound of its own
  CHECK(b->spool().dropped.load() == 0);
}

TEST_CASE("spool: keys the text protocol cannot carry are dropped") {
  proxy::delete_spool spool(proxy::spool_settings{"/nonexistent", 1000});
  auto s = server_at("main", "127.0.0.1:1");
  CHECK_FALSE(spool.spool(s, "a b"));
  CHECK_FALSE(spool.spool(s, std::string_view("a\nb")));
  CHECK_FALSE(spool.spool(s, ""));
  CHECK_FALSE(spool.spool(s, std::string(251, 'k')));
  CHECK(s->spool().dropped.load() == 4);
  CHECK(s->spool().bytes.load() == 0);
  CHECK(spool.spool(s, std::string(250, 'k')));
}

TEST_CASE("spool: file names keep letters, digits, dots and dashes") {
  CHECK(proxy::spool_file_name(*server_at("main", "127.0.0.1:11211")) == "main_127.0.0.1_11211.spool");
  CHECK(proxy::spool_file_name(*server_at("a/b", "[::1]:11211")) == "a_b____1__11211.spool");
  CHECK(proxy::spool_file_name(*server_at("p", "unix:/run/mc.sock")) == "p_unix__run_mc.sock.spool");
}
