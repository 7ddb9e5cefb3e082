// UDP socket buffers and the kernel's drop count.
//
// A burst of request datagrams lands in the socket's receive queue faster
// than one worker coroutine answers them; with the kernel's default queue
// (net.core.rmem_default, ~208 KiB: about 270 small datagrams at their ~768
// byte truesize) a 2,000-datagram burst loses most of itself before the
// worker looks. memcached maximizes SO_SNDBUF on its UDP sockets (a binary
// search up to 256 MiB, which the kernel clamps to net.core.wmem_max); we do
// the same for the send side and ask for kUdpReceiveBuffer on the receive
// side (SO_RCVBUFFORCE when the process may, else SO_RCVBUF, which the kernel
// clamps to net.core.rmem_max). What the kernel still drops for a full queue
// is read with SO_MEMINFO (the counter SO_RXQ_OVFL reports) and shown as the
// `udp_kernel_drops` stat.
//
// Threads: size_udp_buffers on the instance thread before the workers start;
// the registry from the worker that owns a socket (add at start of its loop,
// remove before it closes it) and from `stats` on any worker. Lock: the
// registry's mutex, a leaf; the getsockopt calls are made after copying the
// descriptors out, with no lock held.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ithaca::server {

// Receive queue asked for per UDP socket (one per worker per address): about
// 5,000 small request datagrams.
inline constexpr int kUdpReceiveBuffer = 4 << 20;

// Sizes fd's send and receive buffers (see above) and logs the result at info.
void size_udp_buffers(int fd);

// Sockets whose kernel drops the stats count.
void udp_drops_watch(int fd);
void udp_drops_unwatch(int fd);
// Datagrams the kernel dropped on the watched sockets (full receive queue).
uint64_t udp_kernel_drops();

}  // namespace ithaca::server
