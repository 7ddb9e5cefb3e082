#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "route_kind.h"

// The route kinds' config side, before any test reads a config (as main does).
static const bool kKindsRegistered = (ithaca::route::register_route_kinds(), true);
