#include "test/fake/fake_vf.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace fake {

using base::Result;
using base::Status;
using netlink::VfSettings;
using netlink::VfState;

namespace {

std::string Guid(uint32_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "00:00:00:00:00:00:%02x:%02x", (n >> 8) & 0xff, n & 0xff);
  return buf;
}

bool Multicast(const std::string& mac) {
  unsigned first = 0;
  return std::sscanf(mac.c_str(), "%2x", &first) == 1 && (first & 1);
}

std::string OnOff(const std::optional<bool>& b) { return b ? (*b ? "on" : "off") : "?"; }

}  // namespace

class FakeVf final : public netlink::Vf {
 public:
  explicit FakeVf(VfWorld& w) : w_(w) {}

  Result<std::vector<VfState>> List(int pf_index) override {
    const std::string what = "List " + std::to_string(pf_index);
    if (w_.world_.NetnsOfLink(pf_index) != World::kRoot)
      return base::Error(base::Code::kKernel, what + ": " + std::strerror(ENODEV), "", ENODEV);
    auto it = w_.pfs_.find(pf_index);
    if (it == w_.pfs_.end()) return std::vector<VfState>();
    std::vector<VfState> out = it->second.vfs;
    for (VfState& v : out) {
      if (!it->second.spec.reports_flags) v.spoofchk = v.trust = std::nullopt;
      if (!it->second.spec.reports_guids) v.node_guid = v.port_guid = "";
    }
    return out;
  }

  Status Set(int pf_index, const VfSettings& s) override {
    const std::string what = "Set " + std::to_string(pf_index) + " " + netlink::DescribeVfSettings(s);
    if (auto e = w_.Begin(what, what)) return *e;
    if (w_.world_.NetnsOfLink(pf_index) != World::kRoot) return w_.Fail(what, ENODEV);
    auto it = w_.pfs_.find(pf_index);
    if (it == w_.pfs_.end()) return w_.Fail(what, EOPNOTSUPP);
    VfWorld::Pf& pf = it->second;
    if (s.vf >= pf.vfs.size()) return w_.Fail(what, EINVAL);
    VfState& v = pf.vfs[s.vf];
    auto lacks = [&](const char* member) { return pf.spec.unsupported.count(member) > 0; };
    if (s.mac) {
      if (lacks("mac") || pf.spec.infiniband) return w_.Fail(what, EOPNOTSUPP);
      if (Multicast(*s.mac)) return w_.Fail(what, EINVAL);
      v.mac = *s.mac;
      auto nd = pf.netdevs.find(s.vf);
      if (pf.spec.follow_mac && nd != pf.netdevs.end() && *s.mac != "00:00:00:00:00:00" &&
          w_.world_.LinkByIndex(nd->second))
        w_.world_.SetLinkMac(nd->second, *s.mac);
    }
    if (s.vlan) {
      if (lacks("vlan")) return w_.Fail(what, EOPNOTSUPP);
      if (s.vlan->vlan > 4095 || s.vlan->qos > 7) return w_.Fail(what, EINVAL);
      v.vlan = s.vlan->vlan;
      v.qos = s.vlan->qos;
    }
    if (s.rate) {
      if (lacks("rate")) return w_.Fail(what, EOPNOTSUPP);
      if (s.rate->max_tx_rate != 0 && s.rate->min_tx_rate > s.rate->max_tx_rate) return w_.Fail(what, EINVAL);
      v.min_tx_rate = s.rate->min_tx_rate;
      v.max_tx_rate = s.rate->max_tx_rate;
    }
    if (s.spoofchk) {
      if (lacks("spoofchk")) return w_.Fail(what, EOPNOTSUPP);
      v.spoofchk = *s.spoofchk;
    }
    if (s.link_state) {
      if (lacks("state")) return w_.Fail(what, EOPNOTSUPP);
      if (*s.link_state > 2) return w_.Fail(what, EINVAL);
      v.link_state = *s.link_state;
    }
    if (s.trust) {
      if (lacks("trust")) return w_.Fail(what, EOPNOTSUPP);
      v.trust = *s.trust;
    }
    for (const auto* guid : {&s.node_guid, &s.port_guid}) {
      if (!*guid) continue;
      if (lacks("guid") || !pf.spec.infiniband) return w_.Fail(what, EOPNOTSUPP);
      (guid == &s.node_guid ? v.node_guid : v.port_guid) = **guid;
    }
    return base::Ok();
  }

 private:
  VfWorld& w_;
};

void VfWorld::AddPf(int pf_index, uint32_t num_vfs, PfSpec spec) {
  if (!world_.LinkByIndex(pf_index))
    throw std::invalid_argument("fake::VfWorld::AddPf: no link " + std::to_string(pf_index));
  Pf pf;
  pf.spec = std::move(spec);
  for (uint32_t i = 0; i < num_vfs; ++i) {
    VfState v;
    v.vf = i;
    v.mac = pf.spec.infiniband ? "" : "00:00:00:00:00:00";
    v.spoofchk = true;
    v.trust = false;
    v.link_state = netlink::kVfLinkStateAuto;
    if (pf.spec.infiniband) v.node_guid = v.port_guid = Guid(i + 1);
    pf.vfs.push_back(v);
  }
  pfs_[pf_index] = std::move(pf);
}

void VfWorld::BindNetdev(int pf_index, uint32_t vf, int netdev_index) {
  pfs_.at(pf_index).netdevs[vf] = netdev_index;
}

void VfWorld::SetState(int pf_index, const VfState& state) { pfs_.at(pf_index).vfs.at(state.vf) = state; }

VfState VfWorld::State(int pf_index, uint32_t vf) const { return pfs_.at(pf_index).vfs.at(vf); }

std::unique_ptr<netlink::Vf> VfWorld::Vf() { return std::make_unique<FakeVf>(*this); }

std::string VfWorld::Describe() const {
  std::string out;
  for (const auto& [index, pf] : pfs_) {
    for (const VfState& v : pf.vfs) {
      out += "pf " + std::to_string(index) + " vf " + std::to_string(v.vf) + " mac " + v.mac + " vlan " +
             std::to_string(v.vlan) + " qos " + std::to_string(v.qos) + " rate " +
             std::to_string(v.min_tx_rate) + "-" + std::to_string(v.max_tx_rate) + " spoofchk " +
             OnOff(v.spoofchk) + " trust " + OnOff(v.trust) + " state " +
             (v.link_state ? std::to_string(*v.link_state) : "?") + " guid " + v.node_guid + "/" +
             v.port_guid + "\n";
    }
  }
  return out;
}

}  // namespace fake
