#include "large_value.h"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>
#include <vector>

namespace ithaca::store {

namespace {

std::atomic<uint64_t> g_file_bytes{0};

int open_unlinked(const std::string& dir) noexcept
{
#ifdef O_TMPFILE
    int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
    // EOPNOTSUPP / EISDIR / EINVAL: the filesystem or kernel lacks O_TMPFILE; fall back.
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
        return -1;
#endif
    std::string path = dir + "/ithaca-large-XXXXXX";
    std::vector<char> buf(path.begin(), path.end());
    buf.push_back('\0');
    int fd2 = ::mkostemp(buf.data(), O_CLOEXEC);
    if (fd2 < 0)
        return -1;
    ::unlink(buf.data());  // at once: the file lives only as long as the descriptor
    return fd2;
}

}  // namespace

large_value* large_value::create(const std::string& dir, std::string_view data) noexcept
{
    int fd = open_unlinked(dir);
    if (fd < 0)
        return nullptr;
    size_t done = 0;
    while (done < data.size()) {
        ssize_t n = ::pwrite(fd, data.data() + done, data.size() - done, static_cast<off_t>(done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int saved = errno ? errno : EIO;
            ::close(fd);
            errno = saved;
            return nullptr;
        }
        done += static_cast<size_t>(n);
    }
    auto* v = new (std::nothrow) large_value(fd, data.size());
    if (!v) {
        ::close(fd);
        errno = ENOMEM;
        return nullptr;
    }
    g_file_bytes.fetch_add(data.size(), std::memory_order_relaxed);
    return v;
}

large_value::~large_value()
{
    g_file_bytes.fetch_sub(size_, std::memory_order_relaxed);
    ::close(fd_);
}

void large_value::unref() noexcept
{
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1)
        delete this;
}

ssize_t large_value::read(uint64_t offset, char* buf, size_t len) const noexcept
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = ::pread(fd_, buf + done, len - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        done += static_cast<size_t>(n);
    }
    return static_cast<ssize_t>(done);
}

uint64_t large_value::file_bytes() noexcept
{
    return g_file_bytes.load(std::memory_order_relaxed);
}

bool large_value_ref::read_all(std::string& out) const
{
    if (!v_)
        return false;
    out.resize(v_->size());
    return v_->read(0, out.data(), out.size()) == static_cast<ssize_t>(out.size());
}

}  // namespace ithaca::store
