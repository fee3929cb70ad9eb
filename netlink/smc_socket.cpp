#include "netlink/smc_socket.h"

#include <linux/netlink.h>
#include <linux/smc.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "netlink/smc_codec.h"
#include "netlink/transport.h"

namespace netlink {
namespace {

using base::Error;
using base::Result;
using base::Status;
using smcnl::Bytes;

class SmcSocket final : public Smc {
 public:
  explicit SmcSocket(Socket sock) : sock_(std::move(sock)) {}

  /// Resolves the two family ids and probes for the UEID commands.
  Status Resolve() {
    ASSIGN_OR_RETURN(std::optional<uint16_t> pnet, GetFamily(smcnl::kPnetFamily));
    if (!pnet) {
      return Error(base::Code::kKernel, kNoSmcMessage,
                   "CTRL_CMD_GETFAMILY SMC_PNETID: " + std::string(std::strerror(ENOENT)), ENOENT);
    }
    pnet_family_ = *pnet;
    // Whether the family has the UEID commands is asked of it, not guessed from a version: a command it
    // lacks answers EOPNOTSUPP.
    ASSIGN_OR_RETURN(std::optional<uint16_t> gen, GetFamily(smcnl::kGenFamily));
    if (!gen) return base::Ok();
    auto probe = sock_.DumpBytes("probing SMC_NETLINK_DUMP_UEID",
                                 [&](uint32_t seq) { return smcnl::BuildUeidDump(seq, *gen); });
    if (probe.ok()) {
      gen_family_ = *gen;
    } else if (probe.error().sys_errno != EOPNOTSUPP) {
      return std::move(probe).error();
    }
    return base::Ok();
  }

  Result<std::vector<PnetEntry>> ListPnet() override {
    const std::string what = "listing the SMC pnet table";
    return sock_.DumpParsed<PnetEntry>(
        what, [this](uint32_t seq) { return smcnl::BuildPnetDump(seq, pnet_family_); },
        [this](const Bytes& m) { return smcnl::ParsePnetEntry(m, pnet_family_); });
  }

  Status AddPnet(const PnetEntry& entry) override {
    auto normalized = NormalizePnetEntry(entry);
    if (!normalized.ok()) return std::move(normalized).error().WithContext("adding an SMC pnet entry");
    const std::string what = "adding SMC pnet entry " + DescribePnetEntry(*normalized);
    Status done = sock_.Command(
        what, [&](uint32_t seq) { return smcnl::BuildPnetAdd(seq, pnet_family_, *normalized); });
    if (!done.ok() && done.error().sys_errno == EEXIST && !normalized->ib_name.empty()) {
      // Outside the root namespace the kernel ignores IB attributes and says EEXIST: misleading alone.
      Error e = std::move(done).error();
      if (!e.details.empty()) e.details += "; ";
      e.details +=
          "the kernel also answers EEXIST for an IB entry added outside the initial network namespace, "
          "and for a device port with a hardware PNET ID";
      return e;
    }
    return done;
  }

  Status DelPnet(const std::string& pnet_id) override {
    auto id = NormalizePnetId(pnet_id);
    if (!id.ok()) return std::move(id).error().WithContext("deleting an SMC pnet ID");
    const std::string what = "deleting SMC pnet ID " + *id;
    return sock_.Command(what, [&](uint32_t seq) { return smcnl::BuildPnetDel(seq, pnet_family_, *id); });
  }

  bool HasUeid() const override { return gen_family_ != 0; }

  Result<std::vector<std::string>> ListUeids() override {
    const std::string what = "listing SMC user EIDs";
    if (!HasUeid()) return NoUeid(what);
    return sock_.DumpParsed<std::string>(
        what, [this](uint32_t seq) { return smcnl::BuildUeidDump(seq, gen_family_); },
        [this](const Bytes& m) { return smcnl::ParseUeid(m, gen_family_); });
  }

  Status AddUeid(std::string ueid) override {
    auto canonical = NormalizeUeid(ueid);
    if (!canonical.ok()) return std::move(canonical).error().WithContext("adding an SMC user EID");
    const std::string what = "adding SMC user EID " + *canonical;
    if (!HasUeid()) return NoUeid(what);
    return sock_.Command(what,
                         [&](uint32_t seq) { return smcnl::BuildUeidAdd(seq, gen_family_, *canonical); });
  }

  Status DelUeid(std::string ueid) override {
    auto canonical = NormalizeUeid(ueid);
    if (!canonical.ok()) return std::move(canonical).error().WithContext("removing an SMC user EID");
    const std::string what = "removing SMC user EID " + *canonical;
    if (!HasUeid()) return NoUeid(what);
    Status done = sock_.Command(
        what, [&](uint32_t seq) { return smcnl::BuildUeidRemove(seq, gen_family_, *canonical); });
    // s390: the last UEID removed, the kernel falls back to the system EID (Smc::DelUeid).
    if (!done.ok() && done.error().sys_errno == EAGAIN) return base::Ok();
    return done;
  }

 private:
  static Error NoUeid(const std::string& what) {
    return Error(base::Code::kKernel, what + ": " + kNoUeidMessage, {}, EOPNOTSUPP);
  }

  /// The family id, or nullopt when nlctrl does not know it (ENOENT).
  Result<std::optional<uint16_t>> GetFamily(const char* name) {
    auto id = sock_.ResolveFamily(name);
    if (!id.ok() && id.error().sys_errno == ENOENT) return std::optional<uint16_t>();
    if (!id.ok()) return std::move(id).error();
    return std::optional<uint16_t>(*id);
  }

  Socket sock_;
  uint16_t pnet_family_ = 0;
  uint16_t gen_family_ = 0;  // 0: no user EID support
};

}  // namespace

base::Result<std::unique_ptr<Smc>> OpenSmc(const Netns& ns) {
  const std::string what = "opening an SMC generic netlink socket in " + ns.path();
  // SMC_PNETID reads and writes the pnet table of the socket's namespace.
  ASSIGN_OR_RETURN(Socket sock, Socket::Open(ns, NETLINK_GENERIC, what));
  auto smc = std::make_unique<SmcSocket>(std::move(sock));
  if (Status resolved = smc->Resolve(); !resolved.ok()) return std::move(resolved).error().WithContext(what);
  return std::unique_ptr<Smc>(std::move(smc));
}

}  // namespace netlink
