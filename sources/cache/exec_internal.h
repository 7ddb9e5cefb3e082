// The executor's parts, one file per protocol family; executor.cc dispatches.
#pragma once

#include "executor.h"

namespace ithaca::cache {

// Classic text commands (get..flush_all) — exec_ascii.cc.
exec_action execute_ascii(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx);
// Binary protocol opcodes — exec_binary.cc.
exec_action execute_binary(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx);
// Meta commands mg ms md ma mn me — exec_meta.cc.
exec_action execute_meta(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx);
// mcrouter's lease-get / lease-set — exec_lease.cc.
exec_action execute_lease(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx);

// Reads a value kept in a temp file into `into` (through mm::blocking_call so
// the worker never blocks on file I/O). False on an I/O error. — exec_value.cc
bool read_large_value(const store::large_value_ref& ref, std::string& into);

}  // namespace ithaca::cache
