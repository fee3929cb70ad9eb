// Fault points for the reliability tests: named places before and after every mutating step of ADD and DEL
// where a test can make the plugin fail, or die, without a rebuild (docs/reliability.md, "Fault injection").
// Compiled in only with the CMake option ERDMA_CNI_FAULT_HOOKS; without it Point() is an inline no-op and the
// binary reads no variable.
#pragma once

#include <string>
#include <string_view>

#include "base/error.h"

namespace base::fault {

#ifdef ERDMA_CNI_FAULT_HOOKS
inline constexpr bool kEnabled = true;
/// Passes the point `when:what` ("<when>:<what>#<n>"); fails (code 108) or kills when it is the chosen one.
Status Point(std::string_view when, std::string_view what);
#else
inline constexpr bool kEnabled = false;
inline Status Point(std::string_view, std::string_view) { return Ok(); }
#endif

}  // namespace base::fault
