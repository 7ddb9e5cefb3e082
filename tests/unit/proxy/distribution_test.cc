// Distributions: placements recorded from a real nutcracker 0.5.0, shares in
// proportion to weight, how many keys move when the server list changes, the
// live-subset mapping, errors, and concurrent use.
#include <doctest/doctest.h>

#include <cmath>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "distribution/distribution.h"

using namespace ithaca::proxy;
namespace kinds = ithaca::kinds;

namespace {

std::unique_ptr<distribution> make(distribution_kind kind, const std::vector<server_spec>& servers,
                                   hash_kind hash = hash_kind::Md5) {
  std::string error;
  auto d = make_distribution(kind, servers, hash, &error);
  INFO(error);
  REQUIRE(d);
  return d;
}

std::vector<server_spec> named(int n, std::uint32_t weight = 1) {
  std::vector<server_spec> s;
  for (int i = 0; i < n; ++i) s.push_back({"10.0.0." + std::to_string(i + 1) + ":11211", weight});
  return s;
}

std::string key(int i) { return "key:" + std::to_string(i); }

std::vector<std::uint32_t> placements(const distribution& d, int keys) {
  std::vector<std::uint32_t> out;
  out.reserve(keys);
  for (int i = 0; i < keys; ++i) out.push_back(d.locate(key(i)));
  return out;
}

// Each server's share of `keys` keys is within `tolerance` (relative) of its
// weight's share.
void check_shares(const distribution& d, const std::vector<server_spec>& servers, int keys, double tolerance) {
  std::vector<int> count(servers.size());
  for (auto s : placements(d, keys)) ++count.at(s);
  double total = 0;
  for (const auto& s : servers) total += s.weight;
  for (std::size_t i = 0; i < servers.size(); ++i) {
    const double want = keys * servers[i].weight / total;
    CAPTURE(to_string(d.kind()));
    CAPTURE(i);
    CAPTURE(count[i]);
    CAPTURE(want);
    CHECK(std::abs(count[i] - want) <= tolerance * want);
  }
}

}  // namespace

TEST_CASE("ketama: placement recorded from nutcracker 0.5.0") {
  // The pool of test_placement.py's "ketama names" case, hash md5: a
  // nutcracker put key0..key23 on these servers (ports do not matter: names
  // are what ketama hashes).
  const std::vector<server_spec> servers{{"alpha", 1}, {"beta", 1}, {"gamma", 2}, {"delta", 1}, {"epsilon", 4}};
  const std::uint32_t want[] = {4, 2, 4, 4, 0, 1, 1, 4, 2, 2, 4, 4, 4, 4, 4, 4, 4, 2, 0, 3, 4, 2, 0, 1};
  auto d = make(distribution_kind::Ketama, servers);
  for (int i = 0; i < 24; ++i) {
    CAPTURE(i);
    CHECK(d->locate("key" + std::to_string(i)) == want[i]);
  }
  // Listed in another order, the same names get the same keys.
  const std::vector<server_spec> shuffled{servers[3], servers[0], servers[4], servers[2], servers[1]};
  auto e = make(distribution_kind::Ketama, shuffled);
  for (int i = 0; i < 24; ++i) {
    CHECK(shuffled[e->locate("key" + std::to_string(i))].name == servers[want[i]].name);
  }
}

TEST_CASE("modula: placement recorded from nutcracker 0.5.0, servers ordered by name") {
  // nutcracker numbers servers sorted by name, shorter first: b (2 slots),
  // zz, aaa; hash fnv1a_64 % 4 picks the slot. Indices are the list's.
  const std::vector<server_spec> servers{{"zz", 1}, {"b", 2}, {"aaa", 1}};
  const std::uint32_t want[] = {1, 2, 0, 1, 1, 2, 0, 1, 1, 2, 1, 0, 2, 1, 1, 0, 2, 1, 1, 0, 0, 1, 1, 2};
  auto d = make(distribution_kind::Modula, servers, hash_kind::Fnv1a_64);
  for (int i = 0; i < 24; ++i) {
    const std::string k = "key" + std::to_string(i);
    CAPTURE(k);
    CHECK(d->locate(k) == want[i]);
    const std::uint32_t slot = hash_key(hash_kind::Fnv1a_64, k) % 4;
    CHECK(d->pick("", slot) == (slot < 2 ? 1u : slot == 2 ? 0u : 2u));
  }
}

TEST_CASE("libmemcached_ketama keeps the list's order and needs md5") {
  const std::vector<server_spec> servers{{"zz", 1}, {"b", 2}, {"aaa", 1}};
  auto lm = make(distribution_kind::LibmemcachedKetama, servers);
  auto tw = make(distribution_kind::Ketama, servers);
  // Same continuum (same names and weights), so the same server by name.
  for (int i = 0; i < 2000; ++i) CHECK(servers[lm->locate(key(i))].name == servers[tw->locate(key(i))].name);
  std::string error;
  CHECK_FALSE(make_distribution(distribution_kind::LibmemcachedKetama, servers, hash_kind::Crc32, &error));
  CHECK(error.find("md5") != std::string::npos);
}

TEST_CASE("keys spread in proportion to weight") {
  const std::vector<server_spec> weighted{{"a:1", 1}, {"b:1", 2}, {"c:1", 3}, {"d:1", 4}};
  const int keys = 100000;
  // ketama: 160 points per server on average leaves a few percent of noise.
  check_shares(*make(distribution_kind::Ketama, weighted), weighted, keys, 0.15);
  check_shares(*make(distribution_kind::LibmemcachedKetama, weighted), weighted, keys, 0.15);
  check_shares(*make(distribution_kind::Modula, weighted), weighted, keys, 0.05);
  check_shares(*make(distribution_kind::Jump, weighted), weighted, keys, 0.05);
  check_shares(*make(distribution_kind::Rendezvous, weighted), weighted, keys, 0.05);
  check_shares(*make(distribution_kind::Rendezvous, named(7)), named(7), keys, 0.05);
  check_shares(*make(distribution_kind::Jump, named(7), hash_kind::Crc32), named(7), keys, 0.05);
  // random ignores weights, as twemproxy does
  check_shares(*make(distribution_kind::Random, named(4, 9)), named(4), keys, 0.05);
}

TEST_CASE("ketama: adding a server moves about 1/N of the keys, all to it") {
  const int keys = 50000;
  auto before = placements(*make(distribution_kind::Ketama, named(10)), keys);
  auto after = placements(*make(distribution_kind::Ketama, named(11)), keys);
  int moved = 0;
  for (int i = 0; i < keys; ++i) {
    if (before[i] == after[i]) continue;
    ++moved;
    CHECK(after[i] == 10);
  }
  CHECK(moved > keys / 11 * 0.6);
  CHECK(moved < keys / 11 * 1.4);
}

TEST_CASE("jump: appending a server moves about 1/N of the keys, all to it") {
  const int keys = 50000;
  auto before = placements(*make(distribution_kind::Jump, named(10)), keys);
  auto after = placements(*make(distribution_kind::Jump, named(11)), keys);
  int moved = 0;
  for (int i = 0; i < keys; ++i) {
    if (before[i] == after[i]) continue;
    ++moved;
    CHECK(after[i] == 10);
  }
  CHECK(moved > keys / 11 * 0.9);
  CHECK(moved < keys / 11 * 1.1);
}

TEST_CASE("rendezvous: adding or removing a server moves only that server's keys") {
  const int keys = 50000;
  auto servers = named(10);
  servers[3].weight = 3;
  auto before = placements(*make(distribution_kind::Rendezvous, servers), keys);

  auto grown = servers;
  grown.push_back({"10.0.0.99:11211", 2});
  auto after = placements(*make(distribution_kind::Rendezvous, grown), keys);
  int moved = 0;
  for (int i = 0; i < keys; ++i) {
    if (before[i] == after[i]) continue;
    ++moved;
    CHECK(after[i] == 10);
  }
  // The new server's share: 2 of a total weight of 14.
  CHECK(std::abs(moved - keys * 2.0 / 14) < keys * 2.0 / 14 * 0.1);

  auto shrunk = servers;
  shrunk.erase(shrunk.begin() + 3);
  auto without3 = placements(*make(distribution_kind::Rendezvous, shrunk), keys);
  for (int i = 0; i < keys; ++i) {
    const std::uint32_t was = before[i];
    if (was == 3) continue;
    CHECK(without3[i] == (was < 3 ? was : was - 1));
  }
}

TEST_CASE("rendezvous reads the part, not the hash; ketama, modula, jump read the hash") {
  auto r = make(distribution_kind::Rendezvous, named(5));
  auto k = make(distribution_kind::Ketama, named(5));
  CHECK_FALSE(r->reads_hash());
  CHECK(k->reads_hash());
  for (int i = 0; i < 100; ++i) {
    CHECK(r->pick(key(i), 0) == r->pick(key(i), 0xFFFFFFFF));
    CHECK(k->pick("anything", hash_key(hash_kind::Md5, key(i))) == k->locate(key(i)));
  }
}

TEST_CASE("key hash: twemproxy's 0 for one server or an empty part") {
  auto one = make(distribution_kind::Ketama, named(1));
  auto three = make(distribution_kind::Ketama, named(3), hash_kind::Murmur);
  CHECK(one->key_hash("abc") == 0);
  CHECK(three->key_hash("") == 0);
  CHECK(three->key_hash("abc") == hash_key(hash_kind::Murmur, "abc"));
  for (int i = 0; i < 100; ++i) CHECK(one->locate(key(i)) == 0);
}

TEST_CASE("live subset: indices into the full list, as twemproxy's ejection rebuild") {
  const auto servers = named(6);
  auto full = make(distribution_kind::Ketama, servers);
  const std::vector<std::uint32_t> live{0, 1, 3, 4, 5};  // server 2 ejected
  std::string error;
  auto d = make_live_distribution(distribution_kind::Ketama, servers, live, hash_kind::Md5, &error);
  REQUIRE(d);
  CHECK(d->size() == 5);
  const std::vector<server_spec> subset{servers[0], servers[1], servers[3], servers[4], servers[5]};
  auto direct = make(distribution_kind::Ketama, subset);
  for (int i = 0; i < 20000; ++i) {
    const std::uint32_t got = d->locate(key(i));
    CHECK(got != 2);
    CHECK(got == live[direct->locate(key(i))]);
    // Equal weights keep each live server's points: only server 2's keys move.
    const std::uint32_t was = full->locate(key(i));
    if (was != 2) CHECK(got == was);
  }
  for (auto kind : {distribution_kind::Modula, distribution_kind::Jump, distribution_kind::Rendezvous,
                    distribution_kind::Random, distribution_kind::LibmemcachedKetama}) {
    auto sub = make_live_distribution(kind, servers, live, hash_kind::Md5, &error);
    REQUIRE(sub);
    for (int i = 0; i < 2000; ++i) {
      const std::uint32_t got = sub->locate(key(i));
      CHECK(got < 6);
      CHECK(got != 2);
    }
  }
}

TEST_CASE("live subset: bad index lists are refused") {
  const auto servers = named(3);
  std::string error;
  const std::vector<std::uint32_t> none, out_of_range{0, 3}, unordered{1, 0}, repeated{1, 1};
  CHECK_FALSE(make_live_distribution(distribution_kind::Ketama, servers, none, hash_kind::Md5, &error));
  CHECK(error == "no live servers");
  CHECK_FALSE(make_live_distribution(distribution_kind::Ketama, servers, out_of_range, hash_kind::Md5, &error));
  CHECK_FALSE(make_live_distribution(distribution_kind::Ketama, servers, unordered, hash_kind::Md5, &error));
  CHECK_FALSE(make_live_distribution(distribution_kind::Ketama, servers, repeated, hash_kind::Md5, &error));
}

TEST_CASE("bad server lists are refused with a reason") {
  std::string error;
  auto refused = [&](distribution_kind kind, const std::vector<server_spec>& s) {
    error.clear();
    const bool made = make_distribution(kind, s, hash_kind::Md5, &error) != nullptr;
    CAPTURE(error);
    CHECK_FALSE(error.empty());
    return !made;
  };
  CHECK(refused(distribution_kind::Ketama, {}));
  CHECK(refused(distribution_kind::Ketama, {{"a", 1}, {"b", 0}}));
  CHECK(refused(distribution_kind::Ketama, {{"a", 1}, {"", 1}}));
  CHECK(refused(distribution_kind::Modula, {{"a", 1}, {"a", 2}}));  // twemproxy: same name
  CHECK(refused(distribution_kind::Rendezvous, {{"a", 1}, {std::string(256, 'x'), 1}}));
  CHECK(refused(distribution_kind::Modula, {{"a", 0xFFFFFFFFu}, {"b", 1}}));
  CHECK(refused(distribution_kind::Jump, {{"", 0x7FFFFFFFu}, {"", 1}}));
  // random and jump do not use names
  const std::vector<server_spec> unnamed{{"", 1}, {"", 1}};
  CHECK(make_distribution(distribution_kind::Jump, unnamed, hash_kind::Md5, &error));
  CHECK(make_distribution(distribution_kind::Random, unnamed, hash_kind::Md5, nullptr));
}

TEST_CASE("one distribution, many threads") {
  for (auto kind : {distribution_kind::Ketama, distribution_kind::Modula, distribution_kind::Jump,
                    distribution_kind::Rendezvous, distribution_kind::Random}) {
    auto d = make(kind, named(9));
    const auto want = placements(*d, 5000);
    std::vector<int> bad(4);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int round = 0; round < 4; ++round) {
          for (int i = 0; i < 5000; ++i) {
            const std::uint32_t got = d->locate(key(i));
            if (got >= 9 || (kind != distribution_kind::Random && got != want[i])) ++bad[t];
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    CAPTURE(to_string(kind));
    CHECK(bad == std::vector<int>(4, 0));
  }
}

TEST_CASE("server names as twemproxy and libmemcached hash them") {
  CHECK(twemproxy_server_name("127.0.0.1", 11211) == "127.0.0.1");  // libmemcached compatibility
  CHECK(twemproxy_server_name("127.0.0.1", 11212) == "127.0.0.1:11212");
  CHECK(twemproxy_server_name("127.0.0.1", 11212, "cache-1") == "cache-1");
  CHECK(twemproxy_server_name("/run/mc.sock", 0) == "/run/mc.sock:");
  CHECK(libmemcached_server_name("mc1", 11211) == "mc1");
  CHECK(libmemcached_server_name("mc1", 22122) == "mc1:22122");
  CHECK(libmemcached_server_name("/run/mc.sock", 0) == "/run/mc.sock:0");
  CHECK(server_point_name(distribution_kind::LibmemcachedKetama, "h", 1, "ignored") == "h:1");
  CHECK(server_point_name(distribution_kind::Ketama, "h", 1, "n") == "n");
  CHECK(server_point_name(distribution_kind::Rendezvous, "h", 1, "") == "h:1");
}

TEST_CASE("distribution kind names") {
  const char* names[] = {"ketama", "modula",       "random",         "jump",       "rendezvous", "libmemcached_ketama",
                         "ch3",    "weighted_ch3", "mcrouter_crc32", "const_shard"};
  static_assert(std::size(names) == kinds::kDistributionKindCount);
  for (int k = 0; k < kinds::kDistributionKindCount; ++k) {
    distribution_kind parsed = distribution_kind::Random;
    REQUIRE(from_string(names[k], parsed));
    CHECK(static_cast<int>(parsed) == k);
    CHECK(to_string(parsed) == names[k]);
  }
  distribution_kind untouched = distribution_kind::Jump;
  CHECK_FALSE(from_string("consistent", untouched));
  CHECK(untouched == distribution_kind::Jump);
}
