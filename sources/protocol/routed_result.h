// PLACEHOLDER until the backend codec lands.
#pragma once
#include "out_buffer.h"
#include "request.h"
namespace ithaca::protocol {
struct routed_result { void clear() {} };
inline void render_routed_reply(const request&, const routed_result&, out_buffer&) {}
}
