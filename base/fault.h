// Fault points for the reliability tests: named places before and after every mutating step of ADD and DEL
// where a test can make the plugin fail, or die, without a rebuild. Compiled in only with the CMake option
// ERDMA_CNI_FAULT_HOOKS (on in the test build, off for a release); without it Point() is an inline no-op and
// the binary reads no variable. The environment that drives them: docs/reliability.md, "Fault injection". A
// point is "<when>:<what>#<n>", `what` a journal step's op or "state-write", "state-remove", "share-write",
// "stale-recover"; a failing point returns code 108, ERDMA_CNI_FAULT_ACTION=kill SIGKILLs the process there.
#pragma once

#include <string>
#include <string_view>

#include "base/error.h"

namespace base::fault {

#ifdef ERDMA_CNI_FAULT_HOOKS
inline constexpr bool kEnabled = true;
/// Passes the point `when:what`; fails or kills when it is the chosen one.
Status Point(std::string_view when, std::string_view what);
#else
inline constexpr bool kEnabled = false;
inline Status Point(std::string_view, std::string_view) { return Ok(); }
#endif

}  // namespace base::fault
