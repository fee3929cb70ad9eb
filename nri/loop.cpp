#include "nri/loop.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/file.h"

namespace nri {

using base::Code;
using base::Error;

base::Result<base::UniqueFd> Connect(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path)
    return Error(Code::kInvalidConfig, "NRI socket " + path + ": not a unix socket path (1..107 bytes)");
  std::memcpy(addr.sun_path, path.data(), path.size());
  base::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return base::SysError("socket", errno);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    return base::SysError("connect to the runtime's NRI socket " + path, errno);
  return fd;
}

base::Status Serve(int fd, Session& session) {
  RETURN_IF_ERROR(base::WriteAll(fd, session.Start(), "the NRI socket"));
  char buf[64 << 10];
  std::string out;
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) return Error(Code::kIo, "the runtime closed the NRI connection");
    if (n < 0) {
      if (errno == EINTR) continue;
      return base::SysError("read the NRI socket", errno);
    }
    out.clear();
    RETURN_IF_ERROR(session.Feed(std::string_view(buf, static_cast<size_t>(n)), &out));
    if (!out.empty()) RETURN_IF_ERROR(base::WriteAll(fd, out, "the NRI socket"));
  }
}

}  // namespace nri
