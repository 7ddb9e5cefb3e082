// Replication records: the memcached binary packets yrmcds streams to its
// slaves, byte for byte (yrmcds src/memcache/replication.cpp):
//   SetQ    (0x11) extras = flags (4) + exptime (4), key, value
//   Touch   (0x1c) extras = exptime (4), key
//   DeleteQ (0x14) no extras, key
// Header: magic 0x80, data type 0, vbucket 0, opaque 0, CAS 0. The exptime is
// an absolute unix time (0 = never), as yrmcds keeps it internally; a slave
// reads it with memcached's rule (above 30 days = absolute), so master and
// slave clocks must agree, as with yrmcds.
//
// Encoders write into a caller's buffer of exactly *_size() bytes (the store
// observer, observer.h, writes them straight into the hand-off ring, under
// the bucket lock: no allocation, no lock, no I/O).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ithaca::replication {

inline constexpr size_t kHeaderSize = 24;
inline constexpr size_t kSetExtras = 8;
inline constexpr size_t kTouchExtras = 4;

constexpr size_t set_size(size_t key_len, size_t value_len) { return kHeaderSize + kSetExtras + key_len + value_len; }
constexpr size_t touch_size(size_t key_len) { return kHeaderSize + kTouchExtras + key_len; }
constexpr size_t delete_size(size_t key_len) { return kHeaderSize + key_len; }

// SetQ without its value (header, extras, key): set_size(key, 0) bytes. The
// header announces `value_len` value bytes, which the caller appends.
size_t encode_set_prefix(char* out, std::string_view key, uint32_t flags, uint32_t exptime, size_t value_len);
size_t encode_set(char* out, std::string_view key, uint32_t flags, uint32_t exptime, std::string_view value);
size_t encode_touch(char* out, std::string_view key, uint32_t exptime);
size_t encode_delete(char* out, std::string_view key);

// The semi-synchronous confirmation (`replication.ack: slave`, not in
// yrmcds), sent only when the master asks for it:
//   master -> slave: a binary Noop request (0x0a, magic 0x80, no body) whose
//                    CAS field carries a stream position;
//   slave -> master: the Noop response (magic 0x81, status 0, same CAS), sent
//                    once the slave has applied every record before the request.
// Both are kAckSize bytes.
inline constexpr size_t kAckSize = kHeaderSize;
size_t encode_ack_request(char* out, uint64_t position);
size_t encode_ack_response(char* out, uint64_t position);

// Takeover (server/takeover_server.h): the old process ends the stream to
// the new one with an ack request for this position, which no stream
// reaches; the new process stops following there (slave.h takeover_follow).
inline constexpr uint64_t kHandoverPosition = UINT64_MAX;

// The wire exptime of an item: its deadline as a unix time, 0 for never.
uint32_t wire_exptime(int64_t unix_deadline);

}  // namespace ithaca::replication
