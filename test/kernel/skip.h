// Skipping a kernel test that needs a feature this kernel lacks. Catch2 v2
// has no SKIP: KT_SKIP prints the reason, notes the skip and returns from the
// test case; main then exits 77 when nothing failed, which ctest (one test
// case per process) reports as skipped, never as passed.
#pragma once

#include <catch2/catch.hpp>

namespace kt {
void NoteSkip();
bool AnySkipped();
}  // namespace kt

#define KT_SKIP(reason)                       \
  do {                                        \
    WARN("SKIPPED: " << reason); /* NOLINT */ \
    ::kt::NoteSkip();                         \
    return;                                   \
  } while (0)
