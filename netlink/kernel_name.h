// The check every name handed to the kernel in a fixed-size buffer needs.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace netlink {

/// Why the kernel would not take `name` whole, or nullopt: it must be non-empty, hold no NUL and be shorter
/// than `limit` bytes (its NUL counts). `what` names it in the message ("the netdev name").
std::optional<std::string> KernelNameProblem(std::string_view name, const char* what, size_t limit);

}  // namespace netlink
