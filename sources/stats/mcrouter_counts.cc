#include "mcrouter_counts.h"

namespace ithaca::stats {

void count_mcrouter_request(const protocol::request& req, command_counters& c) {
  using protocol::command;
  const auto keys = static_cast<std::uint64_t>(req.keys.empty() ? 1 : req.keys.size());
  switch (req.cmd) {
    case command::Get: c.mc_get.add(keys); break;
    case command::MetaGet: c.mc_get.add(); break;
    case command::Gets: c.mc_gets.add(keys); break;
    case command::Gat: c.mc_gat.add(keys); break;
    case command::Gats: c.mc_gats.add(keys); break;
    case command::Set:
    case command::MetaSet: c.mc_set.add(); break;
    case command::Add: c.mc_add.add(); break;
    case command::Replace: c.mc_replace.add(); break;
    case command::Append: c.mc_append.add(); break;
    case command::Prepend: c.mc_prepend.add(); break;
    case command::Cas: c.mc_cas.add(); break;
    case command::Incr: c.mc_incr.add(); break;
    case command::Decr: c.mc_decr.add(); break;
    case command::MetaArithmetic: (req.meta.mode == 'D' || req.meta.mode == '-' ? c.mc_decr : c.mc_incr).add(); break;
    case command::Delete:
    case command::MetaDelete: c.mc_delete.add(); break;
    case command::Touch: c.mc_touch.add(); break;
    case command::FlushAll: c.mc_flushall.add(); break;
    case command::LeaseGet: c.mc_lease_get.add(keys); break;
    case command::LeaseSet: c.mc_lease_set.add(); break;
    default: break;
  }
}

}  // namespace ithaca::stats
