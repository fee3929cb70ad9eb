// Fault points for the reliability tests: named places before and after every mutating step of ADD and DEL
// where a test can make the plugin fail, or die, without a rebuild. Compiled in only with the CMake option
// ERDMA_CNI_FAULT_HOOKS (on in the test build, off for a release); without it Point() is an inline no-op and
// the binary reads no variable.
//
// Test interface (environment of the plugin process):
//   ERDMA_CNI_FAULT=<point>          e.g. "after:addr#1", "before:state-write#3"
//   ERDMA_CNI_FAULT_ACTION=fail|kill  fail: the point returns an error (code 108);
//                                     kill: the process SIGKILLs itself there
//   ERDMA_CNI_FAULT_TRACE=<file>     append every point passed, one per line
// A point's name is "<when>:<what>#<n>": when = before|after (ADD steps and state writes) or
// undo-before|undo-after (rollback and DEL); what = the journal step's op ("move", "child", "addr", ...),
// "state-write", "state-remove", "share-write" or "stale-recover" (an ADD finishing a lost DEL); n counts the
// passes of that when:what in this process from 1.
#pragma once

#include <string>
#include <string_view>
#include <vector>

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
