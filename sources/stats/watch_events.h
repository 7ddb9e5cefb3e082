// The events `watch` shows, each formatted as memcached 1.6.45's logger.c
// prints it (field names and order), then handed to the hub. Each returns at
// once (one relaxed load) when nobody watches its kind; callers that must do
// work to gather the fields test watch::hub::instance().watching(kind) first.
// [any thread; never blocks]
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "watch_hub.h"

namespace ithaca::stats::watch {

inline bool watching(uint32_t k) { return hub::instance().watching(k); }

// memcached's uriencode: alphanumerics and -._~ as they are, the rest %XX.
void append_uri_encoded(std::string& out, std::string_view key);

// type=item_get key= status= clsid= cfd= size= (fetchers). A miss has clsid 0, size 0.
void item_get(std::string_view key, bool found, unsigned clsid, uint64_t cfd, uint64_t size);

// type=item_store key= status= cmd= ttl= clsid= cfd= size= (mutations).
// status: not_stored stored exists not_found too_large no_memory;
// cmd: add set replace append prepend cas.
void item_store(std::string_view key, std::string_view status, std::string_view cmd, int64_t ttl, unsigned clsid,
                uint64_t cfd, uint64_t size);

// type=deleted key= cmd= clsid= size= (deletions). cmd: delete or md.
void deleted(std::string_view key, std::string_view cmd, unsigned clsid, uint64_t size);

// type=eviction key= fetch= ttl= la= clsid= size= (evictions). ttl -1: no expiry.
void eviction(std::string_view key, bool fetched, int64_t ttl, int64_t last_access, unsigned clsid, uint64_t size);

// type=conn_new rip= rport= transport= cfd= / type=conn_close ... reason= cfd=
// (connevents). `peer` is the connection registry's address ("tcp:1.2.3.4:5",
// "tcp:[::1]:5", "unix:/path"). reason: error normal idle_timeout shutdown.
void conn_new(std::string_view peer, uint64_t cfd);
void conn_close(std::string_view peer, std::string_view reason, uint64_t cfd);

}  // namespace ithaca::stats::watch
