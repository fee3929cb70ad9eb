// The in-memory node the fuzz harness runs the plugin against: a
// cni::Backend over fake::World (links, addresses, routes, rules), the RDMA,
// SMC and sysctl fakes, a fake sysfs in a temp dir and a fake IPAM plugin.
// Nothing here touches the kernel.
//
// The node, before every input:
//  - root: lo; eth0 (primary, 172.16.0.10/24, default via 172.16.0.1);
//    eth1 and eth2, ENI stand-ins as a node agent leaves them
//    (10.9.0.10/24 and 10.9.0.11/24 + fd00:9::11/64, noprefixroute, subnet
//    and default routes at metric 200/201; 198.51.100.0/24 via eth1 and,
//    appended, via eth2 at metric 200; 203.0.113.0/24 multipath over both
//    at metric 7), eth3 (an ENI left down), cali0
//    (a veth whose peer is pod0's eth0).
//  - /run/netns/pod0 (also /var/run/netns/pod0): lo and a Terway-like eth0
//    172.16.0.5/24 with a default route; /run/netns/pod1 (also
//    /proc/4242/ns/net): lo only; /run/netns/gone: a deleted namespace.
//    Any other path does not exist.
//  - RDMA (FUZZ_RDMA=none|shared|exclusive, default shared): erdma_0
//    paired with eth1 by the eRDMA GUID rule, mlx5_0 whose port netdev is
//    eth2 (also found through sysfs); FUZZ_SOFT_MOVE=0: soft devices cannot move.
//  - SMC (FUZZ_SMC=0: none; FUZZ_UEID=0: no UEID support); sysctls
//    net.smc.tcp2smc, net.smc.wmem, net.ipv6.conf.all.disable_ipv6 in root
//    and both pods.
//  - SR-IOV: ens1f0 (PCI 0000:3b:00.4) is a PF with two VFs in their
//    defaults: VF 0 (0000:3b:00.5) has the netdev ens1f0v0 on the node (down),
//    VF 1 (0000:3b:00.6) is bound to vfio-pci; the PF applies every setting.
//  - sysfs: eth2 is PCI function 0000:3b:00.1, eth3 0000:3b:00.2; the PF and
//    its VFs with their physfn, virtfnN, driver and net links.
//  - IPAM: any plugin type is "installed" in /opt/cni/bin and /usr/lib/cni
//    (other CNI_PATH entries hold nothing). Type "fail" fails ADD; an `ipam`
//    object may carry "fuzzResult" (returned by ADD as is), "fuzzError" (a
//    message ADD fails with) and "fuzzVersions" (what VERSION answers;
//    default 0.3.0..1.0.0, as Debian's plugins). After SetIpamOutput, ADD
//    prints those bytes and exits with that status instead (ipam::ReadOutput
//    reads them, as it reads a real plugin's).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cni/command/run.h"
#include "test/fake/fake_kernel.h"
#include "test/fake/fake_opener.h"
#include "test/fake/fake_rdma.h"
#include "test/fake/fake_smc.h"
#include "test/fake/fake_vf.h"

namespace fuzz {

inline constexpr const char* kPfPci = "0000:3b:00.4";
inline constexpr const char* kVfPci = "0000:3b:00.5";    // VF 0, netdev ens1f0v0
inline constexpr const char* kVfioPci = "0000:3b:00.6";  // VF 1, on vfio-pci

struct NodeOptions {
  std::optional<netlink::NetnsMode> rdma = netlink::NetnsMode::kShared;  ///< nullopt: no RDMA
  bool soft_devices_move = true;
  bool smc = true;
  bool ueid = true;
};

/// Reads FUZZ_RDMA, FUZZ_SOFT_MOVE, FUZZ_SMC and FUZZ_UEID.
NodeOptions ParseNodeOptions(const std::map<std::string, std::string>& env);

/// Makes the fake sysfs tree under `root` (once per process).
void MakeSysfs(const std::string& root);

/// What an IPAM plugin prints for ADD, and its exit status.
struct IpamOutput {
  std::string bytes;
  int exit = 0;
};

class Node : public cni::Backend {
 public:
  /// `attachments_dir`: the node policy's attachmentsDir, the fuzzer's own (never the node's /run).
  Node(const NodeOptions& opts, std::string sysfs_root, std::string attachments_dir);

  base::Result<std::unique_ptr<netlink::Kernel>> OpenHost() override;
  cni::NetnsOpener& Opener() override { return opener_; }
  std::unique_ptr<ipam::Executor> Ipam(const std::vector<std::string>& cni_path) override;
  void Prepare(cni::Context& ctx) override;
  /// The fuzzer puts dataDir, logFile and the attachment records in its own temp dir: every path is
  /// allowed; the node's devices keep the built-in rule (eth0, the default route's device, is refused).
  base::Result<conf::NodePolicy> NodePolicy(const cni::Getenv& getenv) override;

  /// Every namespace, link, address, route, rule, RDMA device, pnet entry,
  /// UEID and sysctl, as text: equal before and after = nothing changed.
  std::string Everything();

  /// What every IPAM plugin prints for ADD from now on.
  void SetIpamOutput(IpamOutput output) { ipam_output_ = std::move(output); }

 private:
  std::string sysfs_root_;
  std::string attachments_dir_;
  fake::World world_;
  std::unique_ptr<fake::RdmaWorld> rdma_;
  fake::SmcWorld smc_{world_};
  fake::VfWorld vfs_{world_};
  fake::FakeOpener opener_{world_};
  std::optional<IpamOutput> ipam_output_;
};

}  // namespace fuzz
