// Everything machinarium's own files share.
#pragma once
#include "machine_impl.h"
