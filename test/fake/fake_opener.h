// A cni::NetnsOpener over a fake::World: netns paths are mapped to World
// namespaces; RDMA, SMC and SR-IOV VFs are there only when enabled; sysctls
// live in an in-memory SysctlWorld. An unmapped path, or one whose namespace was
// deleted, fails like a missing netns file (kInvalidEnv, ENOENT).
#pragma once

#include <cerrno>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "cni/core/context.h"
#include "test/fake/fake_kernel.h"
#include "test/fake/fake_rdma.h"
#include "test/fake/fake_smc.h"
#include "test/fake/fake_sysctl.h"
#include "test/fake/fake_vf.h"

namespace fake {

class FakeOpener : public cni::NetnsOpener {
 public:
  explicit FakeOpener(World& w) : world_(w) {}
  void Map(const std::string& path, int id) { paths_[path] = id; }
  void Forget(const std::string& path) { paths_.erase(path); }
  void EnableRdma(RdmaWorld* rdma) { rdma_ = rdma; }
  void EnableSmc(SmcWorld* smc) { smc_ = smc; }
  void EnableVf(VfWorld* vf) { vf_ = vf; }
  SysctlWorld sysctls;

  base::Result<std::unique_ptr<netlink::Kernel>> Open(const std::string& path) override {
    ASSIGN_OR_RETURN(int id, Lookup(path));
    return world_.Kernel(id);
  }
  base::Result<std::unique_ptr<netlink::Sysctl>> OpenSysctl(const std::string& path) override {
    ASSIGN_OR_RETURN(int id, Lookup(path));
    return sysctls.Open(id);
  }
  base::Result<std::unique_ptr<netlink::Smc>> OpenSmc(const std::string& path) override {
    if (!smc_) return base::Error(base::Code::kKernel, "kernel has no SMC", "", ENOENT);
    if (path.empty()) return smc_->Open(World::kRoot);
    ASSIGN_OR_RETURN(int id, Lookup(path));
    return smc_->Open(id);
  }
  base::Result<std::unique_ptr<netlink::Rdma>> OpenRdma(const std::string& path) override {
    if (!rdma_)
      return base::Error(
          base::Code::kKernel,
          "opening an RDMA netlink socket in the node: kernel has no RDMA netlink (NETLINK_RDMA); "
          "load ib_core",
          "", EPROTONOSUPPORT);  // netlink::OpenRdma's words
    if (path.empty()) return rdma_->Rdma(World::kRoot);
    ASSIGN_OR_RETURN(int id, Lookup(path));
    return rdma_->Rdma(id);
  }
  base::Result<std::unique_ptr<netlink::Vf>> OpenVf() override {
    if (!vf_) return base::Error(base::Code::kKernel, "fake: no VfWorld on this node", "", EPROTONOSUPPORT);
    return vf_->Vf();
  }
  /// A World namespace's identity: device kFakeNsDev, inode its id + 1.
  static constexpr uint64_t kFakeNsDev = 0xfa4e;
  std::optional<netlink::NetnsId> Identify(const netlink::Kernel& pod) override {
    if (pod.NetnsFd() < 0) return std::nullopt;
    const auto n = static_cast<uint64_t>(pod.NetnsFd()) + 1;
    return netlink::NetnsId{kFakeNsDev, n, n};
  }
  /// Alive while the path is mapped to a live World namespace, or the
  /// identified namespace lives (whatever path names it).
  bool MayExist(const std::string& path, const std::optional<netlink::NetnsId>& id,
                std::string* kept_by) override {
    if (kept_by) *kept_by = "fake";
    if (Lookup(path).ok()) return true;
    if (!id || id->dev != kFakeNsDev || id->ino == 0) return false;
    try {
      return world_.NetnsAlive(static_cast<int>(id->ino - 1));
    } catch (const std::out_of_range&) {
      return false;
    }
  }

 private:
  base::Result<int> Lookup(const std::string& path) {
    auto it = paths_.find(path);
    if (it == paths_.end() || !world_.NetnsAlive(it->second))
      return base::Error(base::Code::kInvalidEnv, "CNI_NETNS: " + path + " does not exist", "", ENOENT);
    return it->second;
  }

  World& world_;
  RdmaWorld* rdma_ = nullptr;
  SmcWorld* smc_ = nullptr;
  VfWorld* vf_ = nullptr;
  std::map<std::string, int> paths_;
};

}  // namespace fake
