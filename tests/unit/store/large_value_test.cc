#include <doctest/doctest.h>

#include <cstdlib>
#include <dirent.h>
#include <string>
#include <unistd.h>

#include "helpers.h"

using namespace ithaca::store;
using namespace ithaca::store::test;

namespace {

struct temp_dir {
    std::string path;
    temp_dir()
    {
        char tmpl[] = "/tmp/ithaca-store-test-XXXXXX";
        REQUIRE(mkdtemp(tmpl) != nullptr);
        path = tmpl;
    }
    ~temp_dir() { rmdir(path.c_str()); }
    int entries() const
    {
        int n = 0;
        DIR* d = opendir(path.c_str());
        while (dirent* e = readdir(d))
            n += std::string_view(e->d_name) != "." && std::string_view(e->d_name) != "..";
        closedir(d);
        return n;
    }
    // Descriptors of this process open on files in the directory (deleted or O_TMPFILE).
    int open_files() const
    {
        int n = 0;
        DIR* d = opendir("/proc/self/fd");
        while (dirent* e = readdir(d)) {
            char buf[512];
            std::string link = std::string("/proc/self/fd/") + e->d_name;
            ssize_t len = readlink(link.c_str(), buf, sizeof buf - 1);
            if (len > 0 && std::string_view(buf, static_cast<size_t>(len)).starts_with(path + "/"))
                ++n;
        }
        closedir(d);
        return n;
    }
};

std::string pattern(size_t n, char seed)
{
    std::string s(n, ' ');
    for (size_t i = 0; i < n; ++i)
        s[i] = static_cast<char>(seed + static_cast<char>(i % 23));
    return s;
}

}  // namespace

TEST_CASE("large values live in unlinked temp files and read back")
{
    temp_dir dir;
    store_config c = small_config();
    c.large_value_threshold = 1000;
    c.temp_dir = dir.path;
    store s(c);
    auto now = at_sec(1);
    const std::string big = pattern(50000, 'a');
    CHECK(put(s, "big", big, now, 0, 9) == store_status::Stored);
    CHECK(dir.entries() == 0);
    CHECK(dir.open_files() == 1);
    CHECK(s.stats().large_values == 1);
    CHECK(large_value::file_bytes() >= big.size());
    CHECK(s.mem_used() < 1000);  // only the header counts toward memory

    get_result r;
    s.get("big", now, {}, r);
    REQUIRE(r.status == get_status::Hit);
    REQUIRE(r.large);
    CHECK(r.flags == 9);
    CHECK(r.value.empty());
    CHECK(r.large->size() == big.size());
    char part[100];
    CHECK(r.large->read(1234, part, sizeof part) == 100);
    CHECK(std::string_view(part, 100) == std::string_view(big).substr(1234, 100));
    std::string all;
    CHECK(r.large.read_all(all));
    CHECK(all == big);

    // Replaced by another large value: the old file stays readable through the handle.
    const std::string big2 = pattern(3000, 'A');
    put(s, "big", big2, now);
    CHECK(dir.open_files() == 2);
    CHECK(r.large.read_all(all));
    CHECK(all == big);
    r.large.reset();
    CHECK(dir.open_files() == 1);
    CHECK(fetch(s, "big", now) == big2);

    // Append onto a large value.
    CHECK(put(s, "big", "tail", now, 0, 0, store_mode::Append) == store_status::Stored);
    CHECK(fetch(s, "big", now) == big2 + "tail");
    CHECK(dir.open_files() == 1);

    // Replaced by a small value, then a large again, then removed.
    put(s, "big", "small", now);
    CHECK(dir.open_files() == 0);
    CHECK(fetch(s, "big", now) == "small");
    put(s, "big", big, now);
    CHECK(dir.open_files() == 1);
    CHECK(s.remove("big", now) == remove_status::Deleted);
    CHECK(dir.open_files() == 0);
    CHECK(dir.entries() == 0);
    CHECK(s.mem_used() == 0);
}

TEST_CASE("large value: a bad temp dir fails the store cleanly")
{
    store_config c = small_config();
    c.large_value_threshold = 10;
    c.temp_dir = "/nonexistent/ithaca";
    store s(c);
    CHECK(put(s, "k", std::string(100, 'x'), at_sec(1)) == store_status::OutOfMemory);
    CHECK(s.stats().large_value_errors == 1);
    CHECK(put(s, "k", "tiny", at_sec(1)) == store_status::Stored);
    CHECK(s.mem_used() > 0);
}
