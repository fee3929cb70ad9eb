#include "netlink/mnl_socket.h"

#include <linux/netlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>
#include <span>
#include <utility>

namespace netlink::mnl {
namespace {

using base::Error;
using base::Result;
using base::Status;

// netlink_dump sizes its datagrams after the largest buffer recvmsg was
// given, capped at 32 KiB: this one always holds a whole datagram.
constexpr size_t kReceiveSize = 32768;
// The calling thread's namespace, as in netns.cpp.
constexpr const char* kThreadNetns = "/proc/thread-self/ns/net";

}  // namespace

Error SysError(const std::string& what, int err, std::string details) {
  return Error(base::Code::kKernel, what + ": " + std::strerror(err), std::move(details), err);
}

Socket::Socket(Ptr sock, Netns netns)
    : sock_(std::move(sock)),
      netns_(std::move(netns)),
      portid_(mnl_socket_get_portid(sock_.get())),
      seq_(static_cast<uint32_t>(std::time(nullptr))),
      buffer_(kReceiveSize) {}

Result<Socket> Socket::Open(const Netns& ns, int protocol, const std::string& protocol_name,
                            const std::string& what) {
  Ptr sock;
  std::optional<Netns> self;
  {
    // The switch lasts only for socket(): the socket stays in `ns` after.
    auto inside = NetnsSwitch::Enter(ns);
    if (!inside.ok()) return std::move(inside).error().WithContext(what);
    sock.reset(mnl_socket_open2(protocol, SOCK_CLOEXEC));
    if (!sock) {
      const int err = errno;
      return SysError(
          what, err,
          "socket(AF_NETLINK, SOCK_RAW, " + protocol_name + "): " + std::string(std::strerror(err)));
    }
    auto here = Netns::Open(kThreadNetns, "the " + protocol_name + " socket's network namespace");
    if (!here.ok()) return std::move(here).error().WithContext(what);
    self.emplace(std::move(here).value());
  }
  if (mnl_socket_bind(sock.get(), 0, MNL_SOCKET_AUTOPID) < 0) {
    const int err = errno;
    return SysError(what, err, "bind");
  }
  // EXT_ACK: the kernel explains its errors in text. CAP_ACK: it does not
  // echo the whole request back in every error. Kernels before 4.12 lack
  // both; the errno alone still works there.
  for (int opt : {NETLINK_EXT_ACK, NETLINK_CAP_ACK}) {
    int one = 1;
    if (mnl_socket_setsockopt(sock.get(), opt, &one, sizeof one) < 0 && errno != ENOPROTOOPT) {
      const int err = errno;
      return SysError(what, err, "setsockopt");
    }
  }
  return Socket(std::move(sock), std::move(*self));
}

Result<Reply> Socket::Exchange(const std::string& what, const Builder& build) {
  const uint32_t seq = ++seq_;
  ASSIGN_OR_RETURN(const Bytes request, WithWhat(build(seq), what));
  if (mnl_socket_sendto(sock_.get(), request.data(), request.size()) < 0) {
    const int err = errno;
    return SysError(what, err, "sendto");
  }
  Reply reply;
  while (!reply.complete) {
    const ssize_t n = mnl_socket_recvfrom(sock_.get(), buffer_.data(), buffer_.size());
    if (n < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      Drain();
      // libmnl says ENOSPC when a datagram did not fit (MSG_TRUNC).
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

void Socket::Drain() {
  // One byte with MSG_TRUNC discards a whole datagram; each recv also lets
  // the kernel queue the next part of an unfinished dump.
  const int fd = mnl_socket_get_fd(sock_.get());
  char byte;
  for (int i = 0; i < 100000; ++i) {
    if (::recv(fd, &byte, sizeof byte, MSG_DONTWAIT | MSG_TRUNC) < 0) break;
  }
}

}  // namespace netlink::mnl
