#include "netlink/rdma_socket.h"

#include <linux/netlink.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <utility>

#include "netlink/rdma_codec.h"
#include "netlink/transport.h"

namespace netlink {
namespace {

using base::Error;
using base::Result;
using base::Status;
using nldev::Bytes;

class RdmaSocket final : public Rdma {
 public:
  RdmaSocket(Socket sock, Netns netns) : sock_(std::move(sock)), netns_(std::move(netns)) {}

  Result<NetnsMode> GetNetnsMode() override {
    const std::string what = "RDMA_NLDEV_CMD_SYS_GET";
    ASSIGN_OR_RETURN(std::vector<Bytes> answer,
                     sock_.Exchange(what, [](uint32_t seq) { return nldev::BuildSysGet(seq); }));
    if (answer.empty()) return SysError(what, EBADMSG, "the kernel acknowledged without an answer");
    return WithWhat(nldev::ParseSysGet(answer.front()), what);
  }

  Status SetNetnsMode(NetnsMode mode) override {
    const std::string what = std::string("RDMA_NLDEV_CMD_SYS_SET netns ") + NetnsModeName(mode);
    return sock_.Command(what, [mode](uint32_t seq) { return nldev::BuildSysSet(seq, mode); });
  }

  Result<std::vector<RdmaDevice>> ListDevices() override {
    const std::string what = "RDMA_NLDEV_CMD_GET dump";
    return sock_.DumpParsed<RdmaDevice>(
        what, [](uint32_t seq) { return nldev::BuildDeviceDump(seq); }, nldev::ParseDevice);
  }

  Result<std::vector<RdmaPort>> ListPorts() override {
    ASSIGN_OR_RETURN(std::vector<RdmaDevice> devices, ListDevices());
    std::vector<RdmaPort> out;
    for (const RdmaDevice& d : devices) {
      const std::string what =
          "RDMA_NLDEV_CMD_PORT_GET dump dev " + std::to_string(d.index) + " (" + d.name + ")";
      // The kernel dumps ports one device at a time.
      auto ports = sock_.DumpParsed<RdmaPort>(
          what, [&](uint32_t seq) { return nldev::BuildPortDump(seq, d.index); }, nldev::ParsePort);
      if (!ports.ok()) {
        // nldev answers EINVAL for an index it cannot see: the device went
        // away (or left this namespace) between the two dumps.
        if (ports.error().sys_errno == EINVAL) {
          ASSIGN_OR_RETURN(bool still_there, HasDevice(d.index));
          if (!still_there) continue;
        }
        return std::move(ports).error();
      }
      out.insert(out.end(), ports->begin(), ports->end());
    }
    return out;
  }

  Status MoveDevice(uint32_t dev_index, int netns_fd) override {
    const std::string what =
        "RDMA_NLDEV_CMD_SET dev " + std::to_string(dev_index) + " netns fd " + std::to_string(netns_fd);
    if (netns_fd < 0) return SysError(what, EBADF);
    // The kernel moves a device only out of the calling thread's namespace, not the socket's (else ENODEV).
    auto inside = NetnsSwitch::Enter(netns_);
    if (!inside.ok())
      return std::move(inside).error().WithContext(what + " (entering " + netns_.path() + ")");
    return sock_.Command(what,
                         [&](uint32_t seq) { return nldev::BuildMoveDevice(seq, dev_index, netns_fd); });
  }

  Status AddSoftDevice(std::string_view name, std::string_view type, std::string_view netdev_name) override {
    const std::string what = "RDMA_NLDEV_CMD_NEWLINK " + std::string(name) + " type " + std::string(type) +
                             " netdev " + std::string(netdev_name);
    return sock_.Command(what,
                         [&](uint32_t seq) { return nldev::BuildNewLink(seq, name, type, netdev_name); });
  }

  Status DelDevice(uint32_t dev_index) override {
    const std::string what = "RDMA_NLDEV_CMD_DELLINK dev " + std::to_string(dev_index);
    return sock_.Command(what, [dev_index](uint32_t seq) { return nldev::BuildDelLink(seq, dev_index); });
  }

 private:
  Result<bool> HasDevice(uint32_t index) {
    ASSIGN_OR_RETURN(std::vector<RdmaDevice> devices, ListDevices());
    return std::any_of(devices.begin(), devices.end(), [&](const RdmaDevice& d) { return d.index == index; });
  }

  // The socket, and the namespace it lives in, entered for MoveDevice.
  Socket sock_;
  Netns netns_;
};

}  // namespace

base::Result<std::unique_ptr<Rdma>> OpenRdma(const Netns& ns) {
  const std::string what = "opening an RDMA netlink socket in " + ns.path();
  auto sock = Socket::Open(ns, NETLINK_RDMA, what);
  if (!sock.ok()) {
    // No kernel socket for the protocol: ib_core registers it.
    if (sock.error().sys_errno == EPROTONOSUPPORT) {
      return Error(base::Code::kKernel, what + ": kernel has no RDMA netlink (NETLINK_RDMA); load ib_core",
                   sock.error().details, EPROTONOSUPPORT);
    }
    return std::move(sock).error();
  }
  // A handle of the namespace as the socket saw it, opened from inside.
  std::optional<Netns> here;
  {
    auto inside = NetnsSwitch::Enter(ns);
    if (!inside.ok()) return std::move(inside).error().WithContext(what);
    auto self = Netns::Open("/proc/thread-self/ns/net", "the RDMA netlink socket's network namespace");
    if (!self.ok()) return std::move(self).error().WithContext(what);
    here.emplace(std::move(self).value());
  }
  return std::unique_ptr<Rdma>(std::make_unique<RdmaSocket>(std::move(sock).value(), std::move(*here)));
}

}  // namespace netlink
