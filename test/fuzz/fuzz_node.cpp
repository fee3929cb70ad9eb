#include "test/fuzz/fuzz_node.h"

#include <sys/socket.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>

#include "netlink/ip.h"

namespace fuzz {
namespace {

using base::Code;
using base::Error;
using netlink::IpAddress;
using netlink::IpPrefix;
using nlohmann::json;

IpPrefix P(const char* s) { return *IpPrefix::Parse(s); }
IpAddress A(const char* s) { return *IpAddress::Parse(s); }

// An IPAM plugin as the spec describes one, without a process: found on
// CNI_PATH, versions checked, results in the version it was asked for.
class FakeIpam : public ipam::Executor {
 public:
  FakeIpam(std::vector<std::string> cni_path, const std::optional<IpamOutput>* output)
      : cni_path_(std::move(cni_path)), output_(output) {}

  base::Result<json> Run(const std::string& type, const std::string& command,
                         const std::string& config) override {
    const bool installed = std::any_of(cni_path_.begin(), cni_path_.end(), [](const std::string& d) {
      return d == "/opt/cni/bin" || d == "/usr/lib/cni";
    });
    if (!installed) return Error(Code::kIpam, "ipam.type: plugin \"" + type + "\" not found in CNI_PATH");
    const json cfg = json::parse(config, nullptr, false);
    const json* ipam = nullptr;
    if (cfg.is_object())
      if (auto it = cfg.find("ipam"); it != cfg.end() && it->is_object()) ipam = &*it;

    std::vector<std::string> versions = {"0.3.0", "0.3.1", "0.4.0", "1.0.0"};
    if (ipam)
      if (auto it = ipam->find("fuzzVersions"); it != ipam->end() && it->is_array()) {
        versions.clear();
        for (const auto& v : *it)
          if (v.is_string()) versions.push_back(v.get<std::string>());
      }
    if (command == "VERSION") return json{{"cniVersion", "1.0.0"}, {"supportedVersions", versions}};

    std::string version;
    if (cfg.is_object())
      if (auto it = cfg.find("cniVersion"); it != cfg.end() && it->is_string())
        version = it->get<std::string>();
    if (std::find(versions.begin(), versions.end(), version) == versions.end())
      return Error(Code::kIpam,
                   "ipam " + type + ": incompatible CNI versions; config is \"" + version + "\"");
    if (command != "ADD") return json();
    if (type == "fail") return Error(Code::kIpam, "ipam " + type + ": no IP addresses available");
    // Bytes an @ipam section made the plugin print, read as a real run's are.
    if (*output_) return ipam::ReadOutput(type, command, (*output_)->bytes, ((*output_)->exit & 0xff) << 8);
    if (ipam) {
      if (auto it = ipam->find("fuzzError"); it != ipam->end() && it->is_string())
        return Error(Code::kIpam, "ipam " + type + ": " + it->get<std::string>());
      if (auto it = ipam->find("fuzzResult"); it != ipam->end()) return *it;
    }
    json ip = {{"address", "10.9.0.150/24"}, {"gateway", "10.9.0.1"}};
    if (version < "1.0.0") ip["version"] = "4";
    return json{{"cniVersion", version},
                {"ips", json::array({ip})},
                {"routes", json::array({{{"dst", "0.0.0.0/0"}}})}};
  }

 private:
  std::vector<std::string> cni_path_;
  const std::optional<IpamOutput>* output_;
};

netlink::AddrInfo Addr(int index, const char* prefix, uint32_t flags) {
  return {index, P(prefix), netlink::kScopeUniverse, flags, {}};
}

netlink::RouteInfo Route(const char* dst, int oif, uint32_t metric, const char* gw = nullptr) {
  netlink::RouteInfo r;
  r.dst = P(dst);
  r.oif = oif;
  r.metric = metric;
  r.protocol = netlink::kProtoBoot;
  if (gw)
    r.gateway = A(gw);
  else if (r.family() == AF_INET)
    r.scope = netlink::kScopeLink;
  return r;
}

void Must(const base::Status& s) {
  if (!s.ok()) throw std::logic_error("fuzz node setup: " + s.error().msg);
}

}  // namespace

NodeOptions ParseNodeOptions(const std::map<std::string, std::string>& env) {
  NodeOptions o;
  auto get = [&](const char* k) -> std::string {
    auto it = env.find(k);
    return it == env.end() ? "" : it->second;
  };
  const std::string rdma = get("FUZZ_RDMA");
  if (rdma == "none") o.rdma = std::nullopt;
  if (rdma == "exclusive") o.rdma = netlink::NetnsMode::kExclusive;
  o.soft_devices_move = get("FUZZ_SOFT_MOVE") != "0";
  o.smc = get("FUZZ_SMC") != "0";
  o.ueid = get("FUZZ_UEID") != "0";
  return o;
}

void MakeSysfs(const std::string& root) {
  namespace fs = std::filesystem;
  const fs::path r(root);
  fs::create_directories(r / "bus/pci/devices/0000:3b:00.1/net/eth2");
  fs::create_directories(r / "bus/pci/devices/0000:3b:00.1/infiniband/mlx5_0");
  fs::create_directories(r / "bus/pci/devices/0000:3b:00.2/net/eth3");
  fs::create_directories(r / "bus/pci/devices/0000:3b:00.2/infiniband/mlx5_1");
  for (const char* dev : {"eth2", "eth3"}) fs::create_directories(r / "class/net" / dev);
  std::error_code ec;  // already there from an earlier run in this process: fine
  fs::create_directory_symlink("../../../bus/pci/devices/0000:3b:00.1", r / "class/net/eth2/device", ec);
  fs::create_directory_symlink("../../../bus/pci/devices/0000:3b:00.2", r / "class/net/eth3/device", ec);

  // An SR-IOV PF (ens1f0, the uplink "p0") with VF 0 (netdev ens1f0v0) and
  // VF 1 on vfio-pci, linked as the kernel links them.
  const fs::path pci = r / "bus/pci/devices";
  fs::create_directories(pci / kPfPci / "net/ens1f0");
  std::ofstream(pci / kPfPci / "net/ens1f0/phys_port_name") << "p0\n";
  fs::create_directories(pci / kVfPci / "net/ens1f0v0");
  fs::create_directories(pci / kVfioPci);
  fs::create_symlink("../../../bus/pci/drivers/mlx5_core", pci / kPfPci / "driver", ec);
  fs::create_symlink("../../../bus/pci/drivers/mlx5_core", pci / kVfPci / "driver", ec);
  fs::create_symlink("../../../bus/pci/drivers/vfio-pci", pci / kVfioPci / "driver", ec);
  int n = 0;
  for (const char* vf : {kVfPci, kVfioPci}) {
    fs::create_directory_symlink(std::string("../") + kPfPci, pci / vf / "physfn", ec);
    fs::create_directory_symlink(std::string("../") + vf, pci / kPfPci / ("virtfn" + std::to_string(n++)),
                                 ec);
  }
  fs::create_directories(r / "class/net/ens1f0v0");
  fs::create_directory_symlink(std::string("../../../bus/pci/devices/") + kVfPci,
                               r / "class/net/ens1f0v0/device", ec);
}

Node::Node(const NodeOptions& opts, std::string sysfs_root, std::string attachments_dir)
    : sysfs_root_(std::move(sysfs_root)), attachments_dir_(std::move(attachments_dir)) {
  using fake::World;
  auto host = world_.Kernel(World::kRoot);
  world_.AddLink(World::kRoot, {0, "lo", "", 65536, true, ""});
  const int eth0 = world_.AddLink(World::kRoot, {0, "eth0", "00:16:3e:00:00:01", 1500, true, ""});
  Must(host->AddAddr(Addr(eth0, "172.16.0.10/24", 0)));
  Must(host->AddRoute(Route("0.0.0.0/0", eth0, 0, "172.16.0.1")));
  const int eth1 = world_.AddLink(World::kRoot, {0, "eth1", "00:16:3e:10:f8:b0", 1500, true, ""});
  Must(host->AddAddr(Addr(eth1, "10.9.0.10/24", netlink::kAddrFlagNoPrefixRoute)));
  Must(host->AddRoute(Route("10.9.0.0/24", eth1, 200)));
  Must(host->AddRoute(Route("0.0.0.0/0", eth1, 200, "10.9.0.1")));
  const int eth2 = world_.AddLink(World::kRoot, {0, "eth2", "00:16:3e:10:f8:b1", 9000, true, ""});
  Must(host->AddAddr(Addr(eth2, "10.9.0.11/24", netlink::kAddrFlagNoPrefixRoute)));
  Must(host->AddAddr(Addr(eth2, "fd00:9::11/64", netlink::kAddrFlagNoPrefixRoute | netlink::kAddrFlagNoDad)));
  Must(host->AddRoute(Route("10.9.0.0/24", eth2, 201)));
  Must(host->AddRoute(Route("0.0.0.0/0", eth2, 201, "10.9.0.1")));
  Must(host->AddRoute(Route("fd00:9::/64", eth2, 201)));
  // Routes DEL must put back next to others of their destination and metric:
  // one appended through eth2 after eth1's, and a multipath route over both.
  Must(host->AddRoute(Route("198.51.100.0/24", eth1, 200, "10.9.0.1")));
  Must(host->AppendRoute(Route("198.51.100.0/24", eth2, 200, "10.9.0.1")));
  netlink::RouteInfo multi = Route("203.0.113.0/24", eth1, 7, "10.9.0.1");
  multi.nexthops = {{A("10.9.0.1"), eth1, 1}, {A("10.9.0.1"), eth2, 3}};
  Must(host->AddRoute(multi));
  world_.AddLink(World::kRoot, {0, "eth3", "00:16:3e:10:f8:b2", 1500, false, ""});
  const int pf = world_.AddLink(World::kRoot, {0, "ens1f0", "b8:59:9f:00:00:10", 1500, true, ""});
  const int vf0 = world_.AddLink(World::kRoot, {0, "ens1f0v0", "52:54:00:aa:00:02", 1500, false, ""});
  vfs_.AddPf(pf, 2);
  vfs_.BindNetdev(pf, 0, vf0);
  opener_.EnableVf(&vfs_);

  const int pod0 = world_.AddNetns("pod0");
  const int pod1 = world_.AddNetns("pod1");
  const int gone = world_.AddNetns("gone");
  world_.DeleteNetns(gone);
  for (int ns : {pod0, pod1}) world_.AddLink(ns, {0, "lo", "", 65536, true, ""});
  auto [cali, pod_eth0] = world_.AddVeth(World::kRoot, {0, "cali0", "ee:ee:ee:ee:ee:ee", 1500, true, ""},
                                         pod0, {0, "eth0", "0a:58:ac:10:00:05", 1500, true, ""});
  (void)cali;
  auto pod = world_.Kernel(pod0);
  Must(pod->AddAddr(Addr(pod_eth0, "172.16.0.5/24", 0)));
  Must(pod->AddRoute(Route("0.0.0.0/0", pod_eth0, 0, "172.16.0.1")));
  opener_.Map("/run/netns/pod0", pod0);
  opener_.Map("/var/run/netns/pod0", pod0);
  opener_.Map("/run/netns/pod1", pod1);
  opener_.Map("/proc/4242/ns/net", pod1);
  opener_.Map("/run/netns/gone", gone);

  if (opts.rdma) {
    rdma_ = std::make_unique<fake::RdmaWorld>(world_, *opts.rdma);
    rdma_->SetSoftDevicesCanMove(opts.soft_devices_move);
    fake::RdmaDeviceSpec erdma;
    erdma.name = "erdma_0";
    erdma.node_guid = "0216:3eff:fe10:f8b0";  // eth1's MAC by the eRDMA rule
    rdma_->AddDevice(erdma);
    fake::RdmaDeviceSpec mlx;
    mlx.name = "mlx5_0";
    mlx.netdev_index = eth2;
    rdma_->AddDevice(mlx);
    fake::RdmaDeviceSpec mlx1;  // paired through sysfs only
    mlx1.name = "mlx5_1";
    mlx1.node_guid = "0000:0000:0000:0001";
    mlx1.state = netlink::kPortStateDown;
    rdma_->AddDevice(mlx1);
    opener_.EnableRdma(rdma_.get());
  }
  smc_.SetSmcPresent(opts.smc);
  smc_.SetUeidPresent(opts.ueid);
  if (opts.smc) opener_.EnableSmc(&smc_);
  for (int ns : {World::kRoot, pod0, pod1}) {
    opener_.sysctls.Set(ns, "net.smc.tcp2smc", "0");
    opener_.sysctls.Set(ns, "net.smc.wmem", "65536");
    opener_.sysctls.Set(ns, "net.ipv6.conf.all.disable_ipv6", "0");
  }
  world_.ClearCalls();
}

base::Result<std::unique_ptr<netlink::Kernel>> Node::OpenHost() { return world_.Kernel(fake::World::kRoot); }

std::unique_ptr<ipam::Executor> Node::Ipam(const std::vector<std::string>& cni_path) {
  return std::make_unique<FakeIpam>(cni_path, &ipam_output_);
}

void Node::Prepare(cni::Context& ctx) {
  ctx.sysfs_root = sysfs_root_;
  ctx.lock_wait_ms = 50;
}

std::string Node::Everything() {
  std::string out = world_.Snapshot().Describe();
  if (rdma_) out += rdma_->Describe();
  out += smc_.Describe();
  out += vfs_.Describe();
  out += opener_.sysctls.Describe();
  return out;
}

base::Result<conf::NodePolicy> Node::NodePolicy(const cni::Getenv& getenv) {
  (void)getenv;
  conf::NodePolicy p;
  p.data_dirs = {"/"};
  p.log_files = {"/"};
  p.attachments_dir = attachments_dir_;
  p.source = "the fuzzer's node policy";
  return p;
}

}  // namespace fuzz
