// The shared enums' name tables (sources/kinds/): every value has a name that
// parses back to it, an unknown name changes nothing, and the names come in
// the table's order (the order the config's error messages list them in).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "backend_protocol.h"
#include "binding_protocol.h"
#include "distribution_kind.h"
#include "hash_kind.h"

namespace kinds = ithaca::kinds;

namespace {

// Every value 0..count-1 of E round-trips through its name.
template <class E>
void check_round_trip(int count) {
  for (int v = 0; v < count; ++v) {
    const E value = static_cast<E>(v);
    const std::string name = to_string(value);
    CAPTURE(name);
    CHECK(name != "?");
    E parsed = static_cast<E>(count - 1 - v);
    REQUIRE(from_string(name, parsed));
    CHECK(parsed == value);
  }
}

}  // namespace

TEST_CASE("every shared enum's value has a name that parses back to it") {
  check_round_trip<kinds::hash_kind>(kinds::kHashKindCount);
  check_round_trip<kinds::distribution_kind>(kinds::kDistributionKindCount);
  check_round_trip<kinds::backend_protocol>(kinds::kBackendProtocolCount);
  check_round_trip<kinds::binding_protocol>(kinds::kBindingProtocolCount);
}

TEST_CASE("an unknown name leaves the value alone; a value out of the enum is '?'") {
  kinds::hash_kind h = kinds::hash_kind::Murmur;
  CHECK_FALSE(from_string("MD5", h));
  CHECK_FALSE(from_string("", h));
  CHECK_FALSE(from_string("md5 ", h));
  CHECK(h == kinds::hash_kind::Murmur);
  CHECK(std::string(to_string(static_cast<kinds::distribution_kind>(200))) == "?");
}

TEST_CASE("names come in the table's order, which is the messages' order") {
  CHECK(kinds::names_of<kinds::backend_protocol>() == std::vector<std::string>{"auto", "ascii", "meta"});
  CHECK(kinds::names_of<kinds::binding_protocol>() == std::vector<std::string>{"auto", "ascii", "binary"});
  CHECK(kinds::names_of<kinds::hash_kind>().front() == "one_at_a_time");
  CHECK(kinds::names_of<kinds::distribution_kind>().back() == "const_shard");
  static_assert(std::string_view(to_string(kinds::hash_kind::Fnv1a_64)) == "fnv1a_64");
}
