#pragma once
// The ketama continuum: points (a 32-bit value and the server owning it)
// sorted by value. A key goes to the first point at or after its hash,
// wrapping to the first point past the last: twemproxy's ketama_dispatch and
// libmemcached's dispatch_host, which are the same binary search.

#include <cstdint>
#include <string_view>
#include <vector>

namespace ithaca::proxy {

class continuum {
 public:
  void reserve(std::size_t points) { points_.reserve(points); }

  // Adds the 4 points of one ketama name: the 4 little-endian words of
  // md5(name), all owned by `server`.
  void add_md5_points(std::string_view name, std::uint32_t server);

  // Sorts the points by (value, server). twemproxy sorts by value with
  // glibc's qsort, which (glibc 2.36, Debian bookworm) is a stable merge
  // sort over points added in server order; libmemcached breaks ties by
  // server index. Both are this order. Call once, after the last add.
  void seal();

  // The server owning the first point whose value is >= hash, or the first
  // point's server when there is none. Needs at least one point.
  std::uint32_t find(std::uint32_t hash) const;

  std::size_t size() const { return points_.size(); }

 private:
  struct point {
    std::uint32_t value;
    std::uint32_t server;
  };
  std::vector<point> points_;
};

}  // namespace ithaca::proxy
