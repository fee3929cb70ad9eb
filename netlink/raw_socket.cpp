#include "netlink/raw_socket.h"

#include <linux/netlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>
#include <span>
#include <utility>

namespace netlink::raw {
namespace {

using base::Error;
using base::Result;
using base::Status;

// The calling thread's namespace, as in netns.cpp.
constexpr const char* kThreadNetns = "/proc/thread-self/ns/net";

}  // namespace

Error SysError(const std::string& what, int err, std::string details) {
  return Error(base::Code::kKernel, what + ": " + std::strerror(err), std::move(details), err);
}

Socket::Socket(base::UniqueFd fd, Netns netns, uint32_t portid, size_t receive_size)
    : fd_(std::move(fd)),
      netns_(std::move(netns)),
      portid_(portid),
      seq_(static_cast<uint32_t>(std::time(nullptr))),
      buffer_(receive_size) {}

Result<Socket> Socket::Open(const Netns& ns, int protocol, const std::string& protocol_name,
                            const std::string& what, size_t receive_size) {
  base::UniqueFd fd;
  std::optional<Netns> self;
  {
    // The switch lasts only for socket(): the socket stays in `ns` after.
    auto inside = NetnsSwitch::Enter(ns);
    if (!inside.ok()) return std::move(inside).error().WithContext(what);
    fd.Reset(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol));
    if (!fd.valid()) {
      const int err = errno;
      return SysError(
          what, err,
          "socket(AF_NETLINK, SOCK_RAW, " + protocol_name + "): " + std::string(std::strerror(err)));
    }
    auto here = Netns::Open(kThreadNetns, "the " + protocol_name + " socket's network namespace");
    if (!here.ok()) return std::move(here).error().WithContext(what);
    self.emplace(std::move(here).value());
  }
  // Port 0: the kernel picks a free one; getsockname tells which.
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&local), sizeof local) < 0) {
    const int err = errno;
    return SysError(what, err, "bind");
  }
  socklen_t local_len = sizeof local;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &local_len) < 0) {
    const int err = errno;
    return SysError(what, err, "getsockname");
  }
  if (local_len != sizeof local || local.nl_family != AF_NETLINK) {
    return SysError(what, EINVAL, "getsockname: not a netlink address");
  }
  // EXT_ACK: the kernel explains its errors in text. CAP_ACK: it does not
  // echo the whole request back in every error. Kernels before 4.12 lack
  // both; the errno alone still works there.
  for (int opt : {NETLINK_EXT_ACK, NETLINK_CAP_ACK}) {
    int one = 1;
    if (::setsockopt(fd.get(), SOL_NETLINK, opt, &one, sizeof one) < 0 && errno != ENOPROTOOPT) {
      const int err = errno;
      return SysError(what, err, "setsockopt");
    }
  }
  return Socket(std::move(fd), std::move(*self), local.nl_pid, receive_size);
}

Result<Reply> Socket::Exchange(const std::string& what, const Builder& build) {
  const uint32_t seq = ++seq_;
  ASSIGN_OR_RETURN(const Bytes request, WithWhat(build(seq), what));
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd_.get(), request.data(), request.size(), 0, reinterpret_cast<const sockaddr*>(&kernel),
               sizeof kernel) < 0) {
    const int err = errno;
    return SysError(what, err, "sendto");
  }
  Reply reply;
  while (!reply.complete) {
    const ssize_t n = Receive();
    if (n < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      Drain();
      return SysError(what, err, "recvmsg");
    }
    Status read =
        ReadDatagram(std::span<const uint8_t>(buffer_.data(), static_cast<size_t>(n)), seq, portid_, reply);
    if (!read.ok()) {
      // The rest of the answer may still be queued; a later request would
      // read it as its own.
      Drain();
      return std::move(read).error().WithContext(what);
    }
  }
  if (reply.error != 0) return SysError(what, reply.error, std::move(reply.extack));
  return reply;
}

Status Socket::Command(const std::string& what, const Builder& build) {
  auto reply = Exchange(what, build);
  if (!reply.ok()) return std::move(reply).error();
  return base::Ok();
}

Result<std::vector<Bytes>> Socket::Dump(const std::string& what, const Builder& build) {
  for (int attempt = 0;; ++attempt) {
    ASSIGN_OR_RETURN(Reply reply, Exchange(what, build));
    if (!reply.interrupted) return std::move(reply.messages);
    if (attempt == kDumpRetries) {
      return SysError(what, EAGAIN,
                      "the kernel interrupted the dump " + std::to_string(kDumpRetries + 1) +
                          " times in a row (the list kept changing)");
    }
  }
}

ssize_t Socket::Receive() {
  sockaddr_nl from{};
  iovec iov{buffer_.data(), buffer_.size()};
  msghdr msg{};
  msg.msg_name = &from;
  msg.msg_namelen = sizeof from;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  const ssize_t n = ::recvmsg(fd_.get(), &msg, 0);
  if (n < 0) return n;
  // A datagram cut short (it cannot be: see Open's receive_size) would lose the
  // end of the answer; say so rather than parse half of it.
  if (msg.msg_flags & MSG_TRUNC) {
    errno = ENOSPC;
    return -1;
  }
  if (msg.msg_namelen != sizeof from) {
    errno = EINVAL;
    return -1;
  }
  return n;
}

void Socket::Drain() {
  // One byte with MSG_TRUNC discards a whole datagram; each recv also lets
  // the kernel queue the next part of an unfinished dump.
  char byte;
  for (int i = 0; i < 100000; ++i) {
    if (::recv(fd_.get(), &byte, sizeof byte, MSG_DONTWAIT | MSG_TRUNC) < 0) break;
  }
}

}  // namespace netlink::raw
