#include "command_class.h"

namespace ithaca::protocol {

command_class classify(const request& r) {
  switch (r.cmd) {
    case command::Get:
    case command::Gets:
    case command::Gat:
    case command::Gats:
    case command::LeaseGet:
    case command::McMetaget:
    case command::MetaGet: return command_class::Retrieve;
    case command::Touch: return r.proto == protocol_kind::Binary ? command_class::Retrieve : command_class::Touch;
    case command::Set:
    case command::Add:
    case command::Replace:
    case command::Append:
    case command::Prepend:
    case command::Cas:
    case command::LeaseSet:
    case command::MetaSet: return command_class::Store;
    case command::Delete:
    case command::MetaDelete: return command_class::Delete;
    case command::Incr:
    case command::Decr:
    case command::MetaArithmetic: return command_class::Arithmetic;
    case command::FlushAll: return command_class::Flush;
    case command::MetaDebug: return command_class::Debug;
    case command::Unknown:
    case command::Version:
    case command::Verbosity:
    case command::Stats:
    case command::Quit:
    case command::Shutdown:
    case command::CacheMemlimit:
    case command::RefreshCerts:
    case command::Watch:
    case command::Slabs:
    case command::Lru:
    case command::LruCrawler:
    case command::MetaNoop:
    case command::Noop:
    case command::Stat:
    case command::SaslListMechs:
    case command::SaslAuth:
    case command::SaslStep: return command_class::Server;
  }
  return command_class::Server;
}

op_class operation_of(const request& r) {
  switch (r.cmd) {
    case command::Gat:
    case command::Gats:
    case command::Touch: return op_class::Touch;
    default: break;
  }
  switch (classify(r)) {
    case command_class::Retrieve: return op_class::Get;
    case command_class::Store: return op_class::Set;
    case command_class::Delete: return op_class::Delete;
    case command_class::Arithmetic: return op_class::Arithmetic;
    case command_class::Touch: return op_class::Touch;
    default: return op_class::None;
  }
}

bool modifies(const request& r) {
  switch (r.cmd) {
    case command::Get:
    case command::Gets:
    case command::McMetaget:
    case command::MetaDebug: return false;
    case command::MetaGet: return r.meta.has('T') || r.meta.has('N') || r.meta.has('E');
    default: return classify(r) != command_class::Server;
  }
}

bool can_fetch_again(const request& r) {
  if (r.cmd == command::Get || r.cmd == command::Gets || r.cmd == command::McMetaget) return true;
  if (r.cmd != command::MetaGet) return false;
  for (const char f : {'N', 'T', 'R', 'h', 'l', 'E'}) {
    if (r.meta.has(f)) return false;
  }
  return true;
}

bool is_multikey_retrieval(const request& r) {
  return r.proto == protocol_kind::Ascii &&
         (r.cmd == command::Get || r.cmd == command::Gets || r.cmd == command::Gat || r.cmd == command::Gats);
}

}  // namespace ithaca::protocol
