// What a person reads (log lines, `erdma-cni diag`) carries text from the runtime (CNI_ARGS, container IDs),
// the kernel (interface names, sysctl values) and pods. Escaped, none of it can start a new log line or send
// an escape sequence to a terminal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace base {

/// `s` with every byte that could forge a line or drive a terminal written as an escape: \n \r \t and \\ as
/// themselves, other C0 controls, DEL, the C1 controls (U+0080..U+009F) and bytes that are not valid UTF-8 as
/// \xNN. Printable ASCII and valid UTF-8 otherwise pass unchanged; the result is unambiguous (a backslash in
/// the input becomes \\).
std::string EscapeForDisplay(std::string_view s);

/// The length of the valid UTF-8 sequence of two or more bytes at s[i] (overlong forms, surrogates and code
/// points past U+10FFFF refused), or 0 (ASCII included).
size_t Utf8Length(std::string_view s, size_t i);

/// The value of an ASCII hex digit in either case (no locale); -1 for any other byte.
int HexValue(char c);
/// `n` bytes as lower-case hex pairs separated by ':' ("00:16:3e:10:f8:b0").
std::string HexWithColons(const uint8_t* bytes, size_t n);

}  // namespace base
