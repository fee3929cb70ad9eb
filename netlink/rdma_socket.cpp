#include "netlink/rdma_socket.h"

#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <functional>
#include <optional>
#include <span>
#include <utility>

#include "netlink/rdma_codec.h"

namespace netlink {
namespace {

using base::Error;
using base::Result;
using base::Status;
using nldev::Bytes;

struct MnlClose {
  void operator()(mnl_socket* s) const { mnl_socket_close(s); }
};
using MnlPtr = std::unique_ptr<mnl_socket, MnlClose>;

// netlink_dump sizes its datagrams after the largest buffer recvmsg was
// given, capped at 32 KiB: this one always holds a whole datagram.
constexpr size_t kReceiveSize = 32768;
constexpr int kDumpRetries = 5;
// The calling thread's namespace, as in netns.cpp.
constexpr const char* kThreadNetns = "/proc/thread-self/ns/net";

Error SysError(const std::string& what, int err, std::string details = {}) {
  return Error(base::Code::kKernel, what + ": " + std::strerror(err), std::move(details), err);
}

template <typename T>
Result<T> WithWhat(Result<T> r, const std::string& what) {
  if (r.ok()) return r;
  return std::move(r).error().WithContext(what);
}

class RdmaSocket final : public Rdma {
 public:
  RdmaSocket(MnlPtr sock, Netns netns, std::string where)
      : sock_(std::move(sock)),
        netns_(std::move(netns)),
        where_(std::move(where)),
        portid_(mnl_socket_get_portid(sock_.get())),
        seq_(static_cast<uint32_t>(std::time(nullptr))) {}

  Result<NetnsMode> GetNetnsMode() override {
    const std::string what = "RDMA_NLDEV_CMD_SYS_GET";
    ASSIGN_OR_RETURN(nldev::Reply reply,
                     Exchange(what, [](uint32_t seq) { return nldev::BuildSysGet(seq); }));
    if (reply.messages.empty()) return SysError(what, EBADMSG, "the kernel acknowledged without an answer");
    return WithWhat(nldev::ParseSysGet(reply.messages.front()), what);
  }

  Status SetNetnsMode(NetnsMode mode) override {
    const std::string what = std::string("RDMA_NLDEV_CMD_SYS_SET netns ") + NetnsModeName(mode);
    return Command(what, [mode](uint32_t seq) { return nldev::BuildSysSet(seq, mode); });
  }

  Result<std::vector<RdmaDevice>> ListDevices() override {
    const std::string what = "RDMA_NLDEV_CMD_GET dump";
    ASSIGN_OR_RETURN(std::vector<Bytes> messages,
                     Dump(what, [](uint32_t seq) { return nldev::BuildDeviceDump(seq); }));
    std::vector<RdmaDevice> out;
    for (const Bytes& m : messages) {
      ASSIGN_OR_RETURN(RdmaDevice d, WithWhat(nldev::ParseDevice(m), what));
      out.push_back(std::move(d));
    }
    return out;
  }

  Result<std::vector<RdmaPort>> ListPorts() override {
    ASSIGN_OR_RETURN(std::vector<RdmaDevice> devices, ListDevices());
    std::vector<RdmaPort> out;
    for (const RdmaDevice& d : devices) {
      const std::string what =
          "RDMA_NLDEV_CMD_PORT_GET dump dev " + std::to_string(d.index) + " (" + d.name + ")";
      // The kernel dumps ports one device at a time.
      auto messages = Dump(what, [&](uint32_t seq) { return nldev::BuildPortDump(seq, d.index); });
      if (!messages.ok()) {
        // nldev answers EINVAL for an index it cannot see: the device went
        // away (or left this namespace) between the two dumps.
        if (messages.error().sys_errno == EINVAL) {
          ASSIGN_OR_RETURN(bool still_there, HasDevice(d.index));
          if (!still_there) continue;
        }
        return std::move(messages).error();
      }
      for (const Bytes& m : *messages) {
        ASSIGN_OR_RETURN(RdmaPort p, WithWhat(nldev::ParsePort(m), what));
        out.push_back(std::move(p));
      }
    }
    return out;
  }

  Status MoveDevice(uint32_t dev_index, int netns_fd) override {
    const std::string what =
        "RDMA_NLDEV_CMD_SET dev " + std::to_string(dev_index) + " netns fd " + std::to_string(netns_fd);
    if (netns_fd < 0) return SysError(what, EBADF);
    // rdma_dev_change_netns moves a device only out of the namespace of the
    // *calling thread* (current->nsproxy->net_ns), not the socket's; asked
    // from anywhere else the kernel answers ENODEV. So the request goes out
    // from inside this handle's namespace.
    auto inside = NetnsSwitch::Enter(netns_);
    if (!inside.ok()) return std::move(inside).error().WithContext(what + " (entering " + where_ + ")");
    return Command(what, [&](uint32_t seq) { return nldev::BuildMoveDevice(seq, dev_index, netns_fd); });
  }

  Status AddSoftDevice(std::string_view name, std::string_view type, std::string_view netdev_name) override {
    const std::string what = "RDMA_NLDEV_CMD_NEWLINK " + std::string(name) + " type " + std::string(type) +
                             " netdev " + std::string(netdev_name);
    return Command(what, [&](uint32_t seq) { return nldev::BuildNewLink(seq, name, type, netdev_name); });
  }

  Status DelDevice(uint32_t dev_index) override {
    const std::string what = "RDMA_NLDEV_CMD_DELLINK dev " + std::to_string(dev_index);
    return Command(what, [dev_index](uint32_t seq) { return nldev::BuildDelLink(seq, dev_index); });
  }

 private:
  using Builder = std::function<Result<Bytes>(uint32_t seq)>;

  /// Sends one request and reads its whole answer. The kernel's refusal
  /// becomes Error{kKernel, "<what>: <strerror>", extack text, errno}.
  Result<nldev::Reply> Exchange(const std::string& what, const Builder& build) {
    const uint32_t seq = ++seq_;
    ASSIGN_OR_RETURN(const Bytes request, WithWhat(build(seq), what));
    if (mnl_socket_sendto(sock_.get(), request.data(), request.size()) < 0) {
      const int err = errno;
      return SysError(what, err, "sendto");
    }
    nldev::Reply reply;
    while (!reply.complete) {
      const ssize_t n = mnl_socket_recvfrom(sock_.get(), buffer_.data(), buffer_.size());
      if (n < 0) {
        const int err = errno;
        if (err == EINTR) continue;
        Drain();
        // libmnl says ENOSPC when a datagram did not fit (MSG_TRUNC).
        return SysError(what, err, "recvmsg");
      }
      Status read = nldev::ReadDatagram(std::span<const uint8_t>(buffer_.data(), static_cast<size_t>(n)), seq,
                                        portid_, reply);
      if (!read.ok()) {
        // The rest of the answer may still be queued; a later request
        // would read it as its own.
        Drain();
        return std::move(read).error().WithContext(what);
      }
    }
    if (reply.error != 0) return SysError(what, reply.error, std::move(reply.extack));
    return reply;
  }

  Status Command(const std::string& what, const Builder& build) {
    auto reply = Exchange(what, build);
    if (!reply.ok()) return std::move(reply).error();
    return base::Ok();
  }

  /// A dump the kernel marks NLM_F_DUMP_INTR (the list changed while it was
  /// read) is restarted, at most kDumpRetries times, then fails with EAGAIN.
  Result<std::vector<Bytes>> Dump(const std::string& what, const Builder& build) {
    for (int attempt = 0;; ++attempt) {
      ASSIGN_OR_RETURN(nldev::Reply reply, Exchange(what, build));
      if (!reply.interrupted) return std::move(reply.messages);
      if (attempt == kDumpRetries) {
        return SysError(what, EAGAIN,
                        "the kernel interrupted the dump " + std::to_string(kDumpRetries + 1) +
                            " times in a row (the device list kept changing)");
      }
    }
  }

  Result<bool> HasDevice(uint32_t index) {
    ASSIGN_OR_RETURN(std::vector<RdmaDevice> devices, ListDevices());
    for (const RdmaDevice& d : devices)
      if (d.index == index) return true;
    return false;
  }

  void Drain() {
    // One byte with MSG_TRUNC discards a whole datagram; each recv also lets
    // the kernel queue the next part of an unfinished dump.
    const int fd = mnl_socket_get_fd(sock_.get());
    char byte;
    for (int i = 0; i < 100000; ++i) {
      if (::recv(fd, &byte, sizeof byte, MSG_DONTWAIT | MSG_TRUNC) < 0) break;
    }
  }

  MnlPtr sock_;
  Netns netns_;        // the namespace the socket lives in, entered for MoveDevice
  std::string where_;  // the path it was opened by, for messages
  uint32_t portid_;
  uint32_t seq_;
  Bytes buffer_ = Bytes(kReceiveSize);
};

}  // namespace

base::Result<std::unique_ptr<Rdma>> OpenRdma(const Netns& ns) {
  const std::string what = "opening an RDMA netlink socket in " + ns.path();
  MnlPtr sock;
  std::optional<Netns> self;
  {
    // A netlink socket belongs to the namespace it was created in for the
    // rest of its life, so the switch lasts only for socket().
    auto inside = NetnsSwitch::Enter(ns);
    if (!inside.ok()) return std::move(inside).error().WithContext(what);
    sock.reset(mnl_socket_open2(NETLINK_RDMA, SOCK_CLOEXEC));
    if (!sock) {
      const int err = errno;
      const std::string call =
          std::string("socket(AF_NETLINK, SOCK_RAW, NETLINK_RDMA): ") + std::strerror(err);
      // netlink_create: no kernel socket registered for the protocol, even
      // after request_module. ib_core registers it.
      if (err == EPROTONOSUPPORT) {
        return Error(base::Code::kKernel, what + ": kernel has no RDMA netlink (NETLINK_RDMA); load ib_core",
                     call, err);
      }
      return SysError(what, err, call);
    }
    auto here = Netns::Open(kThreadNetns, "the RDMA socket's network namespace");
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
  return std::unique_ptr<Rdma>(std::make_unique<RdmaSocket>(std::move(sock), std::move(*self), ns.path()));
}

}  // namespace netlink
