// netlink::OpenRdma against the real kernel. Where the kernel has no RDMA
// netlink (no ib_core, as on the development machines) only the "missing
// feature" error can be checked; the rest runs in the VM harness and says
// SKIPPED, naming the feature, where it cannot run. `rdma -j` (iproute2) is
// the independent witness.
#include "netlink/rdma_socket.h"

#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <memory>
#include <optional>
#include <string>

#include "netlink/netns.h"
#include "netlink/rdma_kernel.h"
#include "test/kernel/require_ok.h"
#include "test/kernel/scratch_netns.h"
#include "test/kernel/skip.h"

namespace test_kernel_rdma_socket_test {

namespace {

using netlink::NetnsMode;
using netlink::Rdma;
using netlink::RdmaDevice;
using netlink::RdmaPort;
using rt_test::ScratchNetns;

/// Whether this kernel speaks RDMA netlink at all, asked without the code under test.
bool KernelHasRdmaNetlink() {
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

std::unique_ptr<Rdma> OpenIn(const std::string& path) {
  auto ns = netlink::Netns::Open(path, "test netns");
  REQUIRE_OK(ns);
  auto rdma = netlink::OpenRdma(*ns);
  REQUIRE_OK(rdma);
  return std::move(rdma).value();
}

const RdmaDevice* ByName(const std::vector<RdmaDevice>& devices, const std::string& name) {
  auto it = std::find_if(devices.begin(), devices.end(), [&](const RdmaDevice& d) { return d.name == name; });
  return it == devices.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("opening RDMA netlink on a kernel without it names NETLINK_RDMA and ib_core", "[rdma]") {
  if (KernelHasRdmaNetlink()) {
    KT_SKIP("this kernel has RDMA netlink (NETLINK_RDMA), so its absence cannot be tested here");
  }
  auto here = netlink::Netns::Current();
  REQUIRE_OK(here);
  auto rdma = netlink::OpenRdma(*here);
  REQUIRE_FALSE(rdma.ok());
  CHECK(rdma.error().sys_errno == EPROTONOSUPPORT);
  CHECK(rdma.error().code == base::Code::kKernel);
  CHECK(rdma.error().msg.find("kernel has no RDMA netlink (NETLINK_RDMA); load ib_core") !=
        std::string::npos);
  CHECK(rdma.error().msg.find(here->path()) != std::string::npos);
}

TEST_CASE("RDMA netlink reads the netns mode and lists devices and ports as rdma does", "[rdma]") {
  if (!KernelHasRdmaNetlink()) {
    KT_SKIP("kernel has no RDMA netlink (NETLINK_RDMA; ib_core not loaded)");
  }
  auto rdma = OpenIn("/proc/self/ns/net");
  auto mode = rdma->GetNetnsMode();
  REQUIRE_OK(mode);
  const std::string sys = rt_test::Must("rdma sys show");
  CHECK(sys.find(std::string("netns ") + netlink::NetnsModeName(*mode)) != std::string::npos);

  auto devices = rdma->ListDevices();
  REQUIRE_OK(devices);
  const nlohmann::json witness = nlohmann::json::parse(rt_test::Must("rdma -j dev show"));
  REQUIRE(witness.size() == devices->size());
  for (const nlohmann::json& w : witness) {
    const RdmaDevice* d = ByName(*devices, w["ifname"].get<std::string>());
    REQUIRE(d);
    CHECK(d->index == w["ifindex"].get<uint32_t>());
    if (w.contains("node_guid")) CHECK(d->node_guid == w["node_guid"].get<std::string>());
  }

  auto ports = rdma->ListPorts();
  REQUIRE_OK(ports);
  const nlohmann::json links = nlohmann::json::parse(rt_test::Must("rdma -j link show"));
  CHECK(links.size() == ports->size());
  for (const nlohmann::json& l : links) {
    auto it = std::find_if(ports->begin(), ports->end(), [&](const RdmaPort& p) {
      return p.dev_name == l["ifname"].get<std::string>() && p.port == l["port"].get<uint32_t>();
    });
    REQUIRE(it != ports->end());
    CHECK(it->netdev_name == (l.contains("netdev") ? l["netdev"].get<std::string>() : std::string()));
  }
}

TEST_CASE("a Soft-RoCE device made on a scratch veth shows its netdev on its port and goes away again",
          "[rdma]") {
  if (!KernelHasRdmaNetlink()) {
    KT_SKIP("kernel has no RDMA netlink (NETLINK_RDMA; ib_core not loaded)");
  }
  ScratchNetns ns;
  ns.Ip("link add ecni-rxe-a type veth peer name ecni-rxe-b");
  ns.Ip("link set ecni-rxe-a up");
  const uint32_t ifindex = ns.Json("link show dev ecni-rxe-a")[0]["ifindex"].get<uint32_t>();
  auto pod = OpenIn(ns.path());
  auto host = OpenIn("/proc/self/ns/net");
  const std::string name = "ecni_rxe" + std::to_string(::getpid() % 100000);
  auto added = pod->AddSoftDevice(name, "rxe", "ecni-rxe-a");
  if (!added.ok() && added.error().sys_errno == EINVAL) {
    KT_SKIP("the kernel has no Soft-RoCE (rdma_rxe): " << added.error().msg);
  }
  REQUIRE_OK(added);

  // Shared mode: every namespace sees it. Exclusive: it lives in exactly one
  // namespace (ib_core has registered new devices in the root one).
  auto mode = pod->GetNetnsMode();
  REQUIRE_OK(mode);
  auto in_pod = pod->ListDevices();
  auto in_host = host->ListDevices();
  REQUIRE_OK(in_pod);
  REQUIRE_OK(in_host);
  const RdmaDevice* seen_by_host = ByName(*in_host, name);
  const RdmaDevice* seen_by_pod = ByName(*in_pod, name);
  REQUIRE((seen_by_host || seen_by_pod));
  if (*mode == NetnsMode::kShared) {
    CHECK((seen_by_host && seen_by_pod));
  } else {
    CHECK((seen_by_host == nullptr) != (seen_by_pod == nullptr));
    WARN("exclusive mode: the new rxe device lives in the " << (seen_by_host ? "root" : "calling")
                                                            << " namespace");
  }
  const uint32_t index = (seen_by_host ? seen_by_host : seen_by_pod)->index;
  const bool in_pod_ns = *mode == NetnsMode::kShared || seen_by_pod;
  Rdma& owner = in_pod_ns ? *pod : *host;
  Rdma& other = in_pod_ns ? *host : *pod;

  // The port shows its netdev to the netdev's namespace only.
  auto ports = owner.ListPorts();
  REQUIRE_OK(ports);
  auto port =
      std::find_if(ports->begin(), ports->end(), [&](const RdmaPort& p) { return p.dev_index == index; });
  REQUIRE(port != ports->end());
  CHECK(port->netdev_index == (in_pod_ns ? ifindex : 0));
  CHECK(port->netdev_name == (in_pod_ns ? "ecni-rxe-a" : ""));

  if (*mode == NetnsMode::kExclusive) {
    // The move, asked from the namespace the device is in, with the other's fd.
    auto pod_ns = netlink::Netns::Open(ns.path(), "test netns");
    auto host_ns = netlink::Netns::Current();
    REQUIRE_OK(pod_ns);
    REQUIRE_OK(host_ns);
    const int there = in_pod_ns ? host_ns->fd() : pod_ns->fd();
    const int back = in_pod_ns ? pod_ns->fd() : host_ns->fd();
    auto moved = owner.MoveDevice(index, there);
    if (!moved.ok() && moved.error().sys_errno == EOPNOTSUPP) {
      WARN("rxe on this kernel cannot change namespace: " << moved.error().msg);
    } else {
      REQUIRE_OK(moved);
      CHECK(ByName(*other.ListDevices(), name));
      CHECK_FALSE(ByName(*owner.ListDevices(), name));
      REQUIRE_OK(other.MoveDevice(index, back));
      CHECK(ByName(*owner.ListDevices(), name));
    }
  }

  REQUIRE_OK(owner.DelDevice(index));
  CHECK_FALSE(ByName(*owner.ListDevices(), name));
  auto again = owner.DelDevice(index);
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().sys_errno == EINVAL);
}

TEST_CASE("moving an RDMA device in shared mode is refused with EOPNOTSUPP", "[rdma]") {
  if (!KernelHasRdmaNetlink()) {
    KT_SKIP("kernel has no RDMA netlink (NETLINK_RDMA; ib_core not loaded)");
  }
  auto host = OpenIn("/proc/self/ns/net");
  auto mode = host->GetNetnsMode();
  REQUIRE_OK(mode);
  auto devices = host->ListDevices();
  REQUIRE_OK(devices);
  if (*mode != NetnsMode::kShared || devices->empty()) {
    KT_SKIP("needs shared netns mode and an RDMA device (mode " << netlink::NetnsModeName(*mode) << ", "
                                                                << devices->size() << " devices)");
  }
  ScratchNetns ns;
  auto target = netlink::Netns::Open(ns.path(), "test netns");
  REQUIRE_OK(target);
  auto moved = host->MoveDevice(devices->front().index, target->fd());
  REQUIRE_FALSE(moved.ok());
  CHECK(moved.error().sys_errno == EOPNOTSUPP);
  CHECK(moved.error().msg.find("RDMA_NLDEV_CMD_SET dev " + std::to_string(devices->front().index)) == 0);
}

}  // namespace test_kernel_rdma_socket_test
