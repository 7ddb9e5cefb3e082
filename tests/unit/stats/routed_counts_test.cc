// memcached's command counters for routed requests (flow/routed_counts.h): each
// outcome counted as memcached counts the command it answered.
#include <doctest/doctest.h>

#include <initializer_list>
#include <memory>
#include <string_view>

#include "routed_counts.h"

using namespace ithaca;
using protocol::command;
using protocol::protocol_kind;
using protocol::routed_outcome;

namespace {

protocol::request make(command cmd, std::initializer_list<std::string_view> keys,
                       protocol_kind proto = protocol_kind::Ascii) {
  protocol::request r;
  r.cmd = cmd;
  r.proto = proto;
  for (std::string_view k : keys) r.keys.push_back(k);
  return r;
}

// Counters are atomics (not copyable): each count gets a block of its own.
std::unique_ptr<stats::command_counters> count(const protocol::request& req, const protocol::routed_result& res) {
  auto c = std::make_unique<stats::command_counters>();
  stats::count_routed(req, res, *c);
  return c;
}

protocol::routed_result with(const protocol::request& req, routed_outcome o) {
  protocol::routed_result r;
  r.prepare(req);
  r.outcome = o;
  return r;
}

}  // namespace

TEST_CASE("a multi-get counts each key: found ones as hits, the rest as misses") {
  const auto req = make(command::Get, {"a", "b", "c"});
  auto res = with(req, routed_outcome::Hits);
  res.set_hit(0, 0, 0, "x");
  res.set_hit(2, 0, 0, "y");
  const auto c = count(req, res);
  CHECK(c->cmd_get.get() == 3);
  CHECK(c->routed_get_hits.get() == 2);
  CHECK(c->routed_get_misses.get() == 1);
  CHECK(c->cmd_touch.get() == 0);
}

TEST_CASE("keys of a server that failed among others were looked up nowhere") {
  const auto req = make(command::Get, {"a", "b", "c"});
  auto res = with(req, routed_outcome::Hits);
  res.set_hit(0, 0, 0, "x");
  res.failed_keys = 1;
  const auto c = count(req, res);
  CHECK(c->cmd_get.get() == 2);
  CHECK(c->routed_get_hits.get() == 1);
  CHECK(c->routed_get_misses.get() == 1);
}

TEST_CASE("gat, gats and binary touch count as touches, as memcached does") {
  for (command cmd : {command::Gat, command::Gats}) {
    const auto req = make(cmd, {"a", "b"});
    auto res = with(req, routed_outcome::Hits);
    res.set_hit(1, 0, 0, "x");
    const auto c = count(req, res);
    CHECK(c->cmd_touch.get() == 2);
    CHECK(c->routed_touch_hits.get() == 1);
    CHECK(c->routed_touch_misses.get() == 1);
    CHECK(c->cmd_get.get() == 0);
  }
  const auto bin = make(command::Touch, {"a"}, protocol_kind::Binary);
  CHECK(count(bin, with(bin, routed_outcome::Hits))->routed_touch_misses.get() == 1);
  const auto ascii = make(command::Touch, {"a"});
  CHECK(count(ascii, with(ascii, routed_outcome::Touched))->routed_touch_hits.get() == 1);
  CHECK(count(ascii, with(ascii, routed_outcome::NotFound))->routed_touch_misses.get() == 1);
}

TEST_CASE("stores count in cmd_set whatever the server decided; cas by its answer") {
  const auto set = make(command::Set, {"a"});
  for (routed_outcome o : {routed_outcome::Stored, routed_outcome::NotStored}) {
    const auto c = count(set, with(set, o));
    CHECK(c->cmd_set.get() == 1);
    CHECK(c->routed_cas_hits.get() == 0);
  }
  const auto cas = make(command::Cas, {"a"});
  CHECK(count(cas, with(cas, routed_outcome::Stored))->routed_cas_hits.get() == 1);
  CHECK(count(cas, with(cas, routed_outcome::Exists))->routed_cas_badval.get() == 1);
  CHECK(count(cas, with(cas, routed_outcome::NotFound))->routed_cas_misses.get() == 1);
  CHECK(count(cas, with(cas, routed_outcome::NotFound))->cmd_set.get() == 1);
  // The server never answered: memcached saw nothing to count.
  const auto failed = count(set, with(set, routed_outcome::Failed));
  CHECK(failed->cmd_set.get() == 0);
  CHECK(count(set, with(set, routed_outcome::ErrorLine))->cmd_set.get() == 0);
}

TEST_CASE("deletes, arithmetic and flush") {
  const auto del = make(command::Delete, {"a"});
  CHECK(count(del, with(del, routed_outcome::Deleted))->routed_delete_hits.get() == 1);
  CHECK(count(del, with(del, routed_outcome::NotFound))->routed_delete_misses.get() == 1);
  const auto incr = make(command::Incr, {"a"});
  CHECK(count(incr, with(incr, routed_outcome::Number))->routed_incr_hits.get() == 1);
  CHECK(count(incr, with(incr, routed_outcome::NotFound))->routed_incr_misses.get() == 1);
  const auto non_numeric = count(incr, with(incr, routed_outcome::NonNumeric));
  CHECK(non_numeric->routed_incr_hits.get() + non_numeric->routed_incr_misses.get() == 0);
  const auto decr = make(command::Decr, {"a"});
  CHECK(count(decr, with(decr, routed_outcome::Number))->routed_decr_hits.get() == 1);
  const auto flush = make(command::FlushAll, {});
  CHECK(count(flush, with(flush, routed_outcome::Ok))->cmd_flush.get() == 1);
}

TEST_CASE("a meta reply passed through is read by its code, and quiet mode's silence") {
  auto meta = [](command cmd, char mode = 0, std::string_view flags = "") {
    auto r = make(cmd, {"k"}, protocol_kind::Meta);
    r.meta.mode = mode;
    for (char f : flags) r.meta.set(f);
    return r;
  };
  auto raw = [](const protocol::request& req, std::string_view reply) {
    auto r = with(req, routed_outcome::Raw);
    r.raw = reply;
    return r;
  };
  const auto mg = meta(command::MetaGet);
  CHECK(count(mg, raw(mg, "VA 1\r\nx\r\n"))->routed_get_hits.get() == 1);
  CHECK(count(mg, raw(mg, "EN\r\n"))->routed_get_misses.get() == 1);
  CHECK(count(mg, raw(mg, ""))->routed_get_misses.get() == 1);  // q hid the EN
  CHECK(count(mg, raw(mg, "HD\r\n"))->cmd_meta.get() == 1);
  const auto mgt = meta(command::MetaGet, 0, "T");
  CHECK(count(mgt, raw(mgt, "HD\r\n"))->routed_touch_hits.get() == 1);
  const auto ms = meta(command::MetaSet, 0, "C");
  CHECK(count(ms, raw(ms, "EX\r\n"))->routed_cas_badval.get() == 1);
  CHECK(count(ms, raw(ms, ""))->routed_cas_hits.get() == 1);  // q hid the HD
  const auto append = meta(command::MetaSet, 'A', "C");
  CHECK(count(append, raw(append, "HD\r\n"))->routed_cas_hits.get() == 0);
  CHECK(count(append, raw(append, "NS\r\n"))->cmd_set.get() == 1);
  const auto md = meta(command::MetaDelete);
  CHECK(count(md, raw(md, "NF\r\n"))->routed_delete_misses.get() == 1);
  CHECK(count(md, raw(md, ""))->routed_delete_hits.get() == 1);
  const auto ma = meta(command::MetaArithmetic, 'D');
  CHECK(count(ma, raw(ma, "HD\r\n"))->routed_decr_hits.get() == 1);
  CHECK(count(ma, raw(ma, "NF\r\n"))->routed_decr_misses.get() == 1);
  const auto mn = meta(command::MetaNoop);
  const auto none = count(mn, raw(mn, "MN\r\n"));
  CHECK(none->cmd_get.get() + none->cmd_set.get() == 0);
}
