#include "watch_events.h"

#include <charconv>

namespace ithaca::stats::watch {

namespace {

// One line's body, built on the producer's thread. thread_local: no
// allocation once it has grown to the longest line.
std::string& body() {
  thread_local std::string b;
  b.clear();
  return b;
}

template <class T>
void append_number(std::string& out, T v) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
  (void)ec;  // 24 bytes hold any 64-bit number
  out.append(digits, end);
}

void field(std::string& out, std::string_view name, std::string_view v) {
  out += ' ';
  out += name;
  out += '=';
  out += v;
}

template <class T>
void number_field(std::string& out, std::string_view name, T v) {
  field(out, name, {});
  append_number(out, v);
}

void key_field(std::string& out, std::string_view key) {
  out += " key=";
  append_uri_encoded(out, key);
}

// "tcp:1.2.3.4:5" -> rip=1.2.3.4 rport=5 transport=tcp; unix -> rip=unix rport=0 transport=local.
void endpoint_fields(std::string& out, std::string_view peer) {
  std::string_view rip = "unix";
  std::string_view rport = "0";
  std::string_view transport = "local";
  if (peer.starts_with("tcp:") || peer.starts_with("udp:")) {
    transport = peer.substr(0, 3);
    const std::string_view hostport = peer.substr(4);
    const std::size_t colon = hostport.rfind(':');
    if (colon != std::string_view::npos) {
      rip = hostport.substr(0, colon);
      rport = hostport.substr(colon + 1);
      if (rip.size() >= 2 && rip.front() == '[' && rip.back() == ']') rip = rip.substr(1, rip.size() - 2);
    }
  }
  field(out, "rip", rip);
  field(out, "rport", rport);
  field(out, "transport", transport);
}

}  // namespace

void append_uri_encoded(std::string& out, std::string_view key) {
  constexpr char kHex[] = "0123456789ABCDEF";
  for (const char ch : key) {
    const auto c = static_cast<unsigned char>(ch);
    const bool plain = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
                       c == '.' || c == '_' || c == '~';
    if (plain) {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
}

void item_get(std::string_view key, bool found, unsigned clsid, uint64_t cfd, uint64_t size) {
  if (!watching(kFetchers)) return;
  std::string& b = body();
  b += "type=item_get";
  key_field(b, key);
  field(b, "status", found ? "found" : "not_found");
  number_field(b, "clsid", clsid);
  number_field(b, "cfd", cfd);
  number_field(b, "size", size);
  hub::instance().emit(kFetchers, b);
}

void item_store(std::string_view key, std::string_view status, std::string_view cmd, int64_t ttl, unsigned clsid,
                uint64_t cfd, uint64_t size) {
  if (!watching(kMutations)) return;
  std::string& b = body();
  b += "type=item_store";
  key_field(b, key);
  field(b, "status", status);
  field(b, "cmd", cmd);
  number_field(b, "ttl", ttl);
  number_field(b, "clsid", clsid);
  number_field(b, "cfd", cfd);
  number_field(b, "size", size);
  hub::instance().emit(kMutations, b);
}

void deleted(std::string_view key, std::string_view cmd, unsigned clsid, uint64_t size) {
  if (!watching(kDeletions)) return;
  std::string& b = body();
  b += "type=deleted";
  key_field(b, key);
  field(b, "cmd", cmd);
  number_field(b, "clsid", clsid);
  number_field(b, "size", size);
  hub::instance().emit(kDeletions, b);
}

void eviction(std::string_view key, bool fetched, int64_t ttl, int64_t last_access, unsigned clsid, uint64_t size) {
  if (!watching(kEvictions)) return;
  std::string& b = body();
  b += "type=eviction";
  key_field(b, key);
  field(b, "fetch", fetched ? "yes" : "no");
  number_field(b, "ttl", ttl);
  number_field(b, "la", last_access);
  number_field(b, "clsid", clsid);
  number_field(b, "size", size);
  hub::instance().emit(kEvictions, b);
}

void conn_new(std::string_view peer, uint64_t cfd) {
  if (!watching(kConnEvents)) return;
  std::string& b = body();
  b += "type=conn_new";
  endpoint_fields(b, peer);
  number_field(b, "cfd", cfd);
  hub::instance().emit(kConnEvents, b);
}

void conn_close(std::string_view peer, std::string_view reason, uint64_t cfd) {
  if (!watching(kConnEvents)) return;
  std::string& b = body();
  b += "type=conn_close";
  endpoint_fields(b, peer);
  field(b, "reason", reason);
  number_field(b, "cfd", cfd);
  hub::instance().emit(kConnEvents, b);
}

}  // namespace ithaca::stats::watch
