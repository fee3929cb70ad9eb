#include "netlink/sysctl.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/fd.h"

namespace netlink {

using base::Code;
using base::Error;

namespace {

class ProcSysctl : public Sysctl {
 public:
  explicit ProcSysctl(Netns ns) : ns_(std::move(ns)) {}

  base::Result<std::optional<std::string>> Read(const std::string& name) override {
    ASSIGN_OR_RETURN(base::UniqueFd fd, OpenIn(name, O_RDONLY));
    if (!fd.valid()) return std::optional<std::string>();
    std::string value;
    char buf[512];
    for (;;) {
      ssize_t n = ::read(fd.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Error(Code::kKernel, "read sysctl " + name + ": " + std::strerror(errno), "", errno);
      if (n == 0) break;
      value.append(buf, static_cast<size_t>(n));
      if (value.size() > 4096) break;
    }
    while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) value.pop_back();
    return std::optional<std::string>(value);
  }

  base::Status Write(const std::string& name, const std::string& value) override {
    ASSIGN_OR_RETURN(base::UniqueFd fd, OpenIn(name, O_WRONLY));
    if (!fd.valid())
      return Error(Code::kKernel, "sysctl " + name + " does not exist in this kernel", "", ENOENT);
    if (::write(fd.get(), value.data(), value.size()) != static_cast<ssize_t>(value.size()))
      return Error(Code::kKernel, "write sysctl " + name + "=" + value + ": " + std::strerror(errno), "",
                   errno);
    return base::Ok();
  }

 private:
  // An invalid fd (and no error) when the sysctl does not exist.
  base::Result<base::UniqueFd> OpenIn(const std::string& name, int flags) {
    if (!IsSafeSysctlName(name))
      return Error(Code::kInvalidConfig, "sysctl name " + name + " is not under net.");
    std::string path = "/proc/sys/" + name;
    for (size_t i = 10; i < path.size(); ++i)
      if (path[i] == '.') path[i] = '/';
    int fd = -1;
    int err = 0;
    {
      ASSIGN_OR_RETURN(auto inside, NetnsSwitch::Enter(ns_));
      fd = ::open(path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW);
      err = errno;
    }
    if (fd < 0 && err != ENOENT)
      return Error(Code::kKernel, "open " + path + ": " + std::strerror(err), "", err);
    return base::UniqueFd(fd);
  }

  Netns ns_;
};

}  // namespace

bool IsSafeSysctlName(const std::string& name) {
  if (name.size() > 256 || name.rfind("net.", 0) != 0) return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string::npos) dot = name.size();
    if (dot == start) return false;  // empty component: "..", a leading or trailing dot
    for (size_t i = start; i < dot; ++i) {
      const char c = name[i];
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
            c == '-'))
        return false;
    }
    start = dot + 1;
  }
  return true;
}

base::Result<std::unique_ptr<Sysctl>> OpenSysctl(const Netns& ns) {
  ASSIGN_OR_RETURN(Netns copy, ns.Dup());
  return std::unique_ptr<Sysctl>(new ProcSysctl(std::move(copy)));
}

}  // namespace netlink
