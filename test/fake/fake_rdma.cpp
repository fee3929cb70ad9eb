// fake::RdmaWorld and its handles: the netlink::Rdma verbs over a fake::World,
// with the errno each one gets from Linux (see fake_rdma.h for the model).
#include "test/fake/fake_rdma.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "netlink/rdma_pairing.h"

namespace fake {

using base::Error;
using base::Result;
using base::Status;
using netlink::NetnsMode;
using netlink::RdmaDevice;
using netlink::RdmaPort;

namespace {}  // namespace

class FakeRdma final : public netlink::Rdma {
 public:
  FakeRdma(RdmaWorld* rw, int ns) : rw_(rw), ns_(ns) {}

  Result<NetnsMode> GetNetnsMode() override { return rw_->mode_; }

  Status SetNetnsMode(NetnsMode mode) override {
    const std::string what = std::string("SetNetnsMode ") + netlink::NetnsModeName(mode);
    if (auto e = Begin(what)) return *e;
    rw_->Reconcile();
    if (mode == rw_->mode_) return base::Ok();
    for (const NetnsState& ns : rw_->world_.Snapshot().netns) {
      if (ns.id != World::kRoot && ns.alive) return Fail(what, EBUSY);
    }
    rw_->mode_ = mode;
    return base::Ok();
  }

  Result<std::vector<RdmaDevice>> ListDevices() override {
    rw_->Reconcile();
    std::vector<RdmaDevice> out;
    for (const RdmaWorld::Device& d : rw_->devices_) {
      if (!rw_->Visible(d, ns_)) continue;
      out.push_back({d.index, d.spec.name, d.spec.node_guid, d.spec.num_ports, d.spec.protocol});
    }
    return out;
  }

  Result<std::vector<RdmaPort>> ListPorts() override {
    rw_->Reconcile();
    std::vector<RdmaPort> out;
    for (const RdmaWorld::Device& d : rw_->devices_) {
      if (!rw_->Visible(d, ns_)) continue;
      for (uint32_t port = 1; port <= d.spec.num_ports; ++port) {
        RdmaPort p;
        p.dev_index = d.index;
        p.dev_name = d.spec.name;
        p.port = port;
        p.state = d.spec.state;
        p.phys_state = d.spec.phys_state;
        // fill_port_info: the netdev only for a socket in the netdev's namespace.
        if (port == 1 && d.spec.netdev_index > 0 && rw_->world_.NetnsOfLink(d.spec.netdev_index) == ns_) {
          p.netdev_index = static_cast<uint32_t>(d.spec.netdev_index);
          p.netdev_name = rw_->world_.LinkByIndex(d.spec.netdev_index)->name;
        }
        out.push_back(std::move(p));
      }
    }
    return out;
  }

  Status MoveDevice(uint32_t dev_index, int netns_fd) override {
    const std::string what = "MoveDevice " + std::to_string(dev_index) + " -> " + rw_->NsName(netns_fd);
    if (auto e = Begin(what)) return *e;
    rw_->Reconcile();
    RdmaWorld::Device* d = rw_->Find(dev_index);
    if (!d || !rw_->Visible(*d, ns_)) return Fail(what, EINVAL);
    if (netns_fd < 0 || static_cast<size_t>(netns_fd) >= rw_->world_.Snapshot().netns.size()) {
      return Fail(what, EBADF);
    }
    if (!rw_->world_.NetnsAlive(netns_fd)) return Fail(what, ENODEV);
    if (rw_->mode_ == NetnsMode::kShared || !d->spec.can_move) return Fail(what, EOPNOTSUPP);
    d->spec.netns = netns_fd;
    return base::Ok();
  }

  Status AddSoftDevice(std::string_view name, std::string_view type, std::string_view netdev_name) override {
    const std::string what = "AddSoftDevice " + std::string(name) + " type " + std::string(type) +
                             " netdev " + std::string(netdev_name);
    if (auto e = Begin(what)) return *e;
    rw_->Reconcile();
    if (name.empty() || name.size() >= 64 || name.find('%') != std::string_view::npos)
      return Fail(what, EINVAL);
    if (!rw_->world_.NetnsAlive(ns_)) return Fail(what, ENODEV);
    auto found = rw_->world_.Kernel(ns_)->FindLink(netdev_name);
    if (!found.ok() || !*found) return Fail(what, ENODEV);
    const netlink::LinkInfo netdev = **found;
    if (type != "rxe" && type != "siw") return Fail(what, EINVAL);  // no rdma_link_ops for it
    for (const RdmaWorld::Device& d : rw_->devices_) {
      if (d.spec.soft && d.spec.netdev_index == netdev.index) return Fail(what, EEXIST);
    }
    for (const RdmaWorld::Device& d : rw_->devices_) {
      if (d.spec.name == name) return Fail(what, ENFILE);
    }
    RdmaDeviceSpec spec;
    spec.name = std::string(name);
    spec.netdev_index = netdev.index;
    spec.can_move = rw_->soft_can_move_;
    spec.soft = true;
    spec.protocol = type == "rxe" ? "roce" : "iw";
    rw_->AddDevice(std::move(spec));
    return base::Ok();
  }

  Status DelDevice(uint32_t dev_index) override {
    const std::string what = "DelDevice " + std::to_string(dev_index);
    if (auto e = Begin(what)) return *e;
    rw_->Reconcile();
    RdmaWorld::Device* d = rw_->Find(dev_index);
    if (!d || !rw_->Visible(*d, ns_) || !d->spec.soft) return Fail(what, EINVAL);
    std::erase_if(rw_->devices_, [&](const RdmaWorld::Device& x) { return x.index == dev_index; });
    return base::Ok();
  }

 private:
  // Counts and logs a mutating call; returns the injected error when this is
  // the call RdmaWorld::FailCall picked.
  std::optional<Error> Begin(const std::string& what) {
    return rw_->Begin(rw_->NsName(ns_) + " " + what, what);
  }

  // The kernel's refusal of the call Begin logged last.
  Error Fail(const std::string& what, int err) { return rw_->Fail(what, err); }

  RdmaWorld* rw_;
  int ns_;
};

RdmaWorld::RdmaWorld(World& world, NetnsMode mode) : world_(world), mode_(mode) {}

RdmaWorld::~RdmaWorld() = default;

std::unique_ptr<netlink::Rdma> RdmaWorld::Rdma(int ns_id) {
  world_.NetnsName(ns_id);  // throws for an unknown id
  return std::make_unique<FakeRdma>(this, ns_id);
}

uint32_t RdmaWorld::AddDevice(RdmaDeviceSpec spec) {
  Reconcile();
  if (spec.name.empty()) throw std::invalid_argument("fake::RdmaWorld::AddDevice: empty name");
  for (const Device& d : devices_) {
    if (d.spec.name == spec.name)
      throw std::invalid_argument("fake::RdmaWorld::AddDevice: " + spec.name + " exists");
  }
  if (!world_.NetnsAlive(spec.netns))
    throw std::invalid_argument("fake::RdmaWorld::AddDevice: namespace deleted");
  Device d;
  if (spec.netdev_index > 0) {
    auto link = world_.LinkByIndex(spec.netdev_index);
    if (!link)
      throw std::invalid_argument("fake::RdmaWorld::AddDevice: no link " + std::to_string(spec.netdev_index));
    if (spec.node_guid.empty()) spec.node_guid = netlink::GuidFromMac(link->mac);
    d.netdev_netns = world_.NetnsOfLink(spec.netdev_index);
  }
  // ib_alloc_device registers every device in init_net.
  if (mode_ == NetnsMode::kShared) spec.netns = World::kRoot;
  d.index = next_index_++;
  d.spec = std::move(spec);
  devices_.push_back(std::move(d));
  return devices_.back().index;
}

int RdmaWorld::NetnsOfDevice(uint32_t index) {
  Reconcile();
  const Device* d = Find(index);
  return d ? d->spec.netns : -1;
}

std::optional<uint32_t> RdmaWorld::DeviceIndex(const std::string& name) {
  Reconcile();
  for (const Device& d : devices_)
    if (d.spec.name == name) return d.index;
  return std::nullopt;
}

std::string RdmaWorld::Describe() {
  Reconcile();
  std::string out;
  for (const Device& d : devices_) {
    out += d.spec.name + " index " + std::to_string(d.index) + " in " + NsName(d.spec.netns) + " guid " +
           (d.spec.node_guid.empty() ? "-" : d.spec.node_guid) + " netdev " +
           std::to_string(d.spec.netdev_index) + (d.spec.soft ? " soft" : "") +
           (d.spec.can_move ? "" : " cannot-move") + "\n";
  }
  out += std::string("mode ") + netlink::NetnsModeName(mode_) + "\n";
  return out;
}

void RdmaWorld::Reconcile() {
  // rxe's netdev notifier unregisters the device on NETDEV_UNREGISTER, which
  // a netns move sends as well as a destroy.
  std::erase_if(devices_, [&](const Device& d) {
    return d.spec.soft && d.spec.netdev_index > 0 &&
           world_.NetnsOfLink(d.spec.netdev_index) != d.netdev_netns;
  });
  // rdma_dev_exit_net sends a dying namespace's devices back to init_net.
  for (Device& d : devices_) {
    if (!world_.NetnsAlive(d.spec.netns)) d.spec.netns = World::kRoot;
  }
}

bool RdmaWorld::Visible(const Device& d, int ns) const {
  if (!world_.NetnsAlive(ns)) return false;
  return mode_ == NetnsMode::kShared || d.spec.netns == ns;
}

RdmaWorld::Device* RdmaWorld::Find(uint32_t index) {
  for (Device& d : devices_)
    if (d.index == index) return &d;
  return nullptr;
}

std::string RdmaWorld::NsName(int id) const {
  try {
    return world_.NetnsName(id);
  } catch (const std::out_of_range&) {
    return "netns#" + std::to_string(id);
  }
}

}  // namespace fake
