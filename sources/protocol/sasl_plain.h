// SASL PLAIN (RFC 4616): the client's one message, "authzid NUL authcid NUL
// password", split as Cyrus SASL's plain plugin splits it (memcached -S
// answers through Cyrus). [any thread; pure]
#pragma once

#include <string_view>

namespace ithaca::protocol {

struct sasl_plain_message {
  std::string_view authzid;  // who to act as; empty = the authcid
  std::string_view authcid;  // who the password is for
  std::string_view password;
};

// False when the message is not three parts separated by two NULs (Cyrus:
// "Can only find author (no password)", "Got more data than we were
// expecting in the PLAIN plugin"). The views point into `data`.
bool split_sasl_plain(std::string_view data, sasl_plain_message& out);

// The only mechanism ithaca's SASL offers (SASL_LIST_MECHS' answer).
inline constexpr std::string_view kSaslMechanisms = "PLAIN";

}  // namespace ithaca::protocol
