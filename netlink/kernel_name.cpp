#include "netlink/kernel_name.h"

namespace netlink {

std::optional<std::string> KernelNameProblem(std::string_view name, const char* what, size_t limit) {
  if (name.empty()) return std::string(what) + " is empty";
  if (name.find('\0') != std::string_view::npos) return std::string(what) + " contains a NUL byte";
  if (name.size() >= limit) {
    return std::string(what) + " '" + std::string(name) + "' is longer than " + std::to_string(limit - 1) +
           " bytes";
  }
  return std::nullopt;
}

}  // namespace netlink
