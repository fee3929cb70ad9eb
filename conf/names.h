// Checks for names that end up in the kernel or in file names, and the splitting and joining of text they
// use. Shared by the config parser and the CNI environment parser.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace conf {

/// A name the kernel accepts for a netdev (dev_valid_name): 1..15 bytes, not
/// "." or "..", no '/', ':', whitespace or control characters; and valid
/// UTF-8, which the kernel does not ask for but a CNI result (JSON) needs.
bool IsValidIfName(std::string_view name);

/// Well-formed UTF-8: no stray continuation bytes, overlong forms, surrogates or code points past U+10FFFF.
bool IsValidUtf8(std::string_view s);

/// A single path component that is safe to create: non-empty, at most
/// `max_bytes`, no '/', not "." or "..", no control characters (NUL included).
bool IsPlainFileName(std::string_view name, size_t max_bytes = 255);

/// An ASCII hex digit, in either case (no locale).
inline bool IsHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/// True when `s` holds a byte below 0x20 or 0x7f (NUL included).
bool HasControlChar(std::string_view s);

/// `s` with A-Z lowered, whatever the locale.
std::string AsciiLower(std::string_view s);

/// "aa:bb:cc:dd:ee:ff" in any case, returned lower case; nullopt otherwise.
std::optional<std::string> NormalizeMac(std::string_view s);

/// A PCI address "[dddd:]bb:dd.f" as sysfs spells it, "%04x:%02x:%02x.%d"; nullopt otherwise. The domain may
/// be wider than 4 digits (VMD domains are 10000 and up).
std::optional<std::string> NormalizePci(std::string_view s);

/// Printable ASCII without whitespace, at most 256 bytes: device IDs become file and sysfs lookups.
bool IsValidDeviceId(std::string_view s);

/// The directories erdma-cni keeps in dataDir beside the networks' state
/// directories ("devices": claims, "children": shares): not network names.
bool IsReservedDataDirName(std::string_view name);
/// Longest network name ("name"): it is a directory's name in dataDir.
inline constexpr size_t kMaxNetworkNameBytes = 128;

/// Longest CNI_CONTAINERID an ADD accepts: the ID is part of the state file's name, which with the interface
/// name, separators and a temp-file suffix must stay under NAME_MAX (255). DEL, CHECK and GC accept
/// kMaxLegacyContainerIdBytes, so that older erdma-cni's attachments still go.
inline constexpr size_t kMaxContainerIdBytes = 192;
inline constexpr size_t kMaxLegacyContainerIdBytes = 256;

/// The CNI spec's (and libcni's) container ID, ^[a-zA-Z0-9][a-zA-Z0-9_.\-]*$,
/// at most `max_bytes`, without "..".
bool IsValidContainerId(std::string_view id, size_t max_bytes = kMaxContainerIdBytes);

/// What CNI_NETNS may be: an absolute path of UTF-8 without control characters.
bool IsValidNetnsPath(std::string_view p);

/// An absolute path without control characters or ".." components.
bool IsSafeAbsolutePath(std::string_view p);

/// `s` without the spaces and tabs around it.
std::string_view TrimBlanks(std::string_view s);

/// The pieces of `s` between the `sep`s, empty ones included: "" is one empty piece, "a," is "a" and "".
std::vector<std::string_view> Split(std::string_view s, char sep);

/// The strings of `v` with `sep` between them (none after empty ones at the start).
std::string Join(const std::vector<std::string>& v, std::string_view sep);

}  // namespace conf
