// AddressSanitizer must be told about every switch between stacks, or it
// reports false stack-buffer errors (and misses real ones). No-ops otherwise.
#pragma once

#include <cstddef>

#if defined(MM_ASAN)
#include <sanitizer/common_interface_defs.h>
#define MM_ASAN_START_SWITCH(save, bottom, size) __sanitizer_start_switch_fiber((save), (bottom), (size))
#define MM_ASAN_FINISH_SWITCH(save, old_bottom, old_size) \
  __sanitizer_finish_switch_fiber((save), (old_bottom), (old_size))
#else
#define MM_ASAN_START_SWITCH(save, bottom, size) ((void)(save), (void)(bottom), (void)(size))
#define MM_ASAN_FINISH_SWITCH(save, old_bottom, old_size) ((void)(save), (void)(old_bottom), (void)(old_size))
#endif
