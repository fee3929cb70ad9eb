// fake::SmcWorld and its handles: the netlink::Smc verbs over a fake::World,
// with the errno each one gets from Linux (see fake_smc.h for the model).
#include "test/fake/fake_smc.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "netlink/smc_input.h"

namespace fake {

using base::Error;
using base::Result;
using base::Status;
using netlink::PnetEntry;

namespace {

Error NoUeid(const std::string& what) {
  return Error(base::Code::kKernel, what + ": " + netlink::kNoUeidMessage, {}, EOPNOTSUPP);
}

}  // namespace

class FakeSmc final : public netlink::Smc {
 public:
  FakeSmc(SmcWorld* sw, int ns, bool has_ueid) : sw_(sw), ns_(ns), has_ueid_(has_ueid) {}

  Result<std::vector<PnetEntry>> ListPnet() override { return sw_->PnetTable(ns_); }

  Status AddPnet(const PnetEntry& entry) override {
    auto normalized = netlink::NormalizePnetEntry(entry);
    if (!normalized.ok()) return std::move(normalized).error().WithContext("adding an SMC pnet entry");
    const PnetEntry& e = *normalized;
    const std::string desc = netlink::DescribePnetEntry(e);
    const std::string what = "adding SMC pnet entry " + desc;
    if (auto injected = Begin("AddPnet " + desc, what)) return *injected;
    sw_->Reconcile();
    if (!sw_->world_.NetnsAlive(ns_)) return Fail(what, ENODEV);
    std::vector<PnetEntry>& table = sw_->pnet_[ns_];
    const bool eth = !e.eth_name.empty();
    // smc_pnet_enter returns before looking at IB attributes outside init_net.
    if (!eth && ns_ != World::kRoot) return Fail(what, EEXIST);
    for (const PnetEntry& x : table) {
      if (eth ? x.eth_name == e.eth_name : x.ib_name == e.ib_name) return Fail(what, EEXIST);
    }
    table.push_back(e);
    return base::Ok();
  }

  Status DelPnet(const std::string& pnet_id) override {
    auto id = netlink::NormalizePnetId(pnet_id);
    if (!id.ok()) return std::move(id).error().WithContext("deleting an SMC pnet ID");
    const std::string what = "deleting SMC pnet ID " + *id;
    if (auto injected = Begin("DelPnet " + *id, what)) return *injected;
    sw_->Reconcile();
    auto found = sw_->pnet_.find(ns_);
    if (found == sw_->pnet_.end()) return Fail(what, ENOENT);
    if (std::erase_if(found->second, [&](const PnetEntry& x) { return x.pnet_id == *id; }) == 0) {
      return Fail(what, ENOENT);
    }
    return base::Ok();
  }

  bool HasUeid() const override { return has_ueid_; }

  Result<std::vector<std::string>> ListUeids() override {
    if (!has_ueid_) return NoUeid("listing SMC user EIDs");
    return sw_->Ueids();
  }

  Status AddUeid(std::string ueid) override {
    auto canonical = netlink::NormalizeUeid(ueid);
    if (!canonical.ok()) return std::move(canonical).error().WithContext("adding an SMC user EID");
    const std::string& shown = *canonical;
    const std::string what = "adding SMC user EID " + shown;
    if (!has_ueid_) return NoUeid(what);
    if (auto injected = Begin("AddUeid " + shown, what)) return *injected;
    std::vector<std::string>& table = sw_->ueids_;
    // smc_clc_ueid_add checks the count before looking for a duplicate.
    if (table.size() >= netlink::smcnl::kMaxUeids) return Fail(what, ERANGE);
    if (std::find(table.begin(), table.end(), shown) != table.end()) return Fail(what, EEXIST);
    table.push_back(shown);
    return base::Ok();
  }

  Status DelUeid(std::string ueid) override {
    auto canonical = netlink::NormalizeUeid(ueid);
    if (!canonical.ok()) return std::move(canonical).error().WithContext("removing an SMC user EID");
    const std::string& shown = *canonical;
    const std::string what = "removing SMC user EID " + shown;
    if (!has_ueid_) return NoUeid(what);
    if (auto injected = Begin("DelUeid " + shown, what)) return *injected;
    if (std::erase(sw_->ueids_, shown) == 0) return Fail(what, ENOENT);
    return base::Ok();
  }

 private:
  // Counts and logs a mutating call; returns the injected error when this is
  // the call SmcWorld::FailCall picked.
  std::optional<Error> Begin(const std::string& call, const std::string& what) {
    return sw_->Begin(sw_->NsName(ns_) + " " + call, what);
  }

  // The kernel's refusal of the call Begin logged last.
  Error Fail(const std::string& what, int err) { return sw_->Fail(what, err); }

  SmcWorld* sw_;
  int ns_;
  bool has_ueid_;
};

SmcWorld::SmcWorld(World& world) : world_(world) {}

SmcWorld::~SmcWorld() = default;

Result<std::unique_ptr<netlink::Smc>> SmcWorld::Open(int ns_id) {
  const std::string& name = world_.NetnsName(ns_id);  // throws for an unknown id
  if (!smc_present_) {
    return Error(base::Code::kKernel,
                 "opening an SMC generic netlink socket in " + name + ": " + netlink::kNoSmcMessage,
                 "CTRL_CMD_GETFAMILY SMC_PNETID: " + std::string(std::strerror(ENOENT)), ENOENT);
  }
  return std::unique_ptr<netlink::Smc>(std::make_unique<FakeSmc>(this, ns_id, ueid_present_));
}

std::unique_ptr<netlink::Smc> SmcWorld::Smc(int ns_id) {
  auto smc = Open(ns_id);
  if (!smc.ok()) throw std::logic_error("fake::SmcWorld::Smc: " + smc.error().msg);
  return std::move(smc).value();
}

void SmcWorld::AddPnetEntry(int ns_id, const PnetEntry& entry) {
  Reconcile();
  if (!world_.NetnsAlive(ns_id))
    throw std::invalid_argument("fake::SmcWorld::AddPnetEntry: namespace deleted");
  auto normalized = netlink::NormalizePnetEntry(entry);
  if (!normalized.ok())
    throw std::invalid_argument("fake::SmcWorld::AddPnetEntry: " + normalized.error().msg);
  if (!normalized->ib_name.empty() && ns_id != World::kRoot) {
    throw std::invalid_argument("fake::SmcWorld::AddPnetEntry: IB entries live in root only");
  }
  pnet_[ns_id].push_back(*normalized);
}

void SmcWorld::AddUeidEntry(const std::string& ueid) {
  auto canonical = netlink::NormalizeUeid(ueid);
  if (!canonical.ok()) throw std::invalid_argument("fake::SmcWorld::AddUeidEntry: " + canonical.error().msg);
  if (ueids_.size() >= netlink::smcnl::kMaxUeids) {
    throw std::invalid_argument("fake::SmcWorld::AddUeidEntry: the table is full");
  }
  ueids_.push_back(*canonical);
}

std::vector<PnetEntry> SmcWorld::PnetTable(int ns_id) {
  Reconcile();
  auto found = pnet_.find(ns_id);
  return found == pnet_.end() ? std::vector<PnetEntry>() : found->second;
}

std::vector<std::string> SmcWorld::Ueids() const { return ueids_; }

std::string SmcWorld::Describe() {
  Reconcile();
  std::string out;
  for (const auto& [ns, table] : pnet_) {
    for (const PnetEntry& e : table) out += NsName(ns) + " pnet " + netlink::DescribePnetEntry(e) + "\n";
  }
  for (const std::string& u : Ueids()) out += "ueid " + u + "\n";
  return out;
}

void SmcWorld::Reconcile() {
  // smc_pnet_net_exit flushes a dying namespace's table.
  std::erase_if(pnet_, [&](const auto& kv) { return !world_.NetnsAlive(kv.first); });
}

std::string SmcWorld::NsName(int id) const {
  try {
    return world_.NetnsName(id);
  } catch (const std::out_of_range&) {
    return "netns#" + std::to_string(id);
  }
}

}  // namespace fake
