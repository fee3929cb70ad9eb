#include "netlink/smc_socket.h"

#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <linux/smc.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <functional>
#include <optional>
#include <span>
#include <utility>

#include "netlink/smc_codec.h"

namespace netlink {
namespace {

using base::Error;
using base::Result;
using base::Status;
using smcnl::Bytes;

struct MnlClose {
  void operator()(mnl_socket* s) const { mnl_socket_close(s); }
};
using MnlPtr = std::unique_ptr<mnl_socket, MnlClose>;

// netlink_dump sizes its datagrams after the largest buffer recvmsg was
// given, capped at 32 KiB: this one always holds a whole datagram.
constexpr size_t kReceiveSize = 32768;
constexpr int kDumpRetries = 5;

Error SysError(const std::string& what, int err, std::string details = {}) {
  return Error(base::Code::kKernel, what + ": " + std::strerror(err), std::move(details), err);
}

template <typename T>
Result<T> WithWhat(Result<T> r, const std::string& what) {
  if (r.ok()) return r;
  return std::move(r).error().WithContext(what);
}

class SmcSocket final : public Smc {
 public:
  explicit SmcSocket(MnlPtr sock)
      : sock_(std::move(sock)),
        portid_(mnl_socket_get_portid(sock_.get())),
        seq_(static_cast<uint32_t>(std::time(nullptr))) {}

  /// Resolves the two family ids; OpenSmc's only kernel conversation.
  Status Resolve() {
    ASSIGN_OR_RETURN(std::optional<smcnl::Family> pnet, GetFamily(smcnl::kPnetFamily));
    if (!pnet) {
      return Error(base::Code::kKernel, kNoSmcMessage,
                   "CTRL_CMD_GETFAMILY SMC_PNETID: " + std::string(std::strerror(ENOENT)), ENOENT);
    }
    pnet_family_ = pnet->id;
    // SMC_GEN_NETLINK came after SMC_PNETID (5.11), and its UEID commands
    // after that: ask the family for them rather than guess from a version.
    ASSIGN_OR_RETURN(std::optional<smcnl::Family> gen, GetFamily(smcnl::kGenFamily));
    if (gen && gen->HasOp(SMC_NETLINK_DUMP_UEID) && gen->HasOp(SMC_NETLINK_ADD_UEID) &&
        gen->HasOp(SMC_NETLINK_REMOVE_UEID)) {
      gen_family_ = gen->id;
    }
    return base::Ok();
  }

  Result<std::vector<PnetEntry>> ListPnet() override {
    const std::string what = "listing the SMC pnet table";
    ASSIGN_OR_RETURN(std::vector<Bytes> messages,
                     Dump(what, [this](uint32_t seq) { return smcnl::BuildPnetDump(seq, pnet_family_); }));
    std::vector<PnetEntry> out;
    for (const Bytes& m : messages) {
      ASSIGN_OR_RETURN(PnetEntry e, WithWhat(smcnl::ParsePnetEntry(m, pnet_family_), what));
      out.push_back(std::move(e));
    }
    return out;
  }

  Status AddPnet(const PnetEntry& entry) override {
    auto normalized = NormalizePnetEntry(entry);
    if (!normalized.ok()) return std::move(normalized).error().WithContext("adding an SMC pnet entry");
    const std::string what = "adding SMC pnet entry " + DescribePnetEntry(*normalized);
    Status done =
        Command(what, [&](uint32_t seq) { return smcnl::BuildPnetAdd(seq, pnet_family_, *normalized); });
    if (!done.ok() && done.error().sys_errno == EEXIST && !normalized->ib_name.empty()) {
      // smc_pnet_enter ignores IB attributes outside init_net and then,
      // having added nothing, says EEXIST: the errno alone is misleading.
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
    return Command(what, [&](uint32_t seq) { return smcnl::BuildPnetDel(seq, pnet_family_, *id); });
  }

  bool HasUeid() const override { return gen_family_ != 0; }

  Result<std::vector<std::string>> ListUeids() override {
    const std::string what = "listing SMC user EIDs";
    if (!HasUeid()) return NoUeid(what);
    ASSIGN_OR_RETURN(std::vector<Bytes> messages,
                     Dump(what, [this](uint32_t seq) { return smcnl::BuildUeidDump(seq, gen_family_); }));
    std::vector<std::string> out;
    for (const Bytes& m : messages) {
      ASSIGN_OR_RETURN(std::string u, WithWhat(smcnl::ParseUeid(m, gen_family_), what));
      out.push_back(std::move(u));
    }
    return out;
  }

  Status AddUeid(std::string ueid) override {
    auto canonical = NormalizeUeid(ueid);
    if (!canonical.ok()) return std::move(canonical).error().WithContext("adding an SMC user EID");
    const std::string what = "adding SMC user EID " + *canonical;
    if (!HasUeid()) return NoUeid(what);
    return Command(what, [&](uint32_t seq) { return smcnl::BuildUeidAdd(seq, gen_family_, *canonical); });
  }

  Status DelUeid(std::string ueid) override {
    auto canonical = NormalizeUeid(ueid);
    if (!canonical.ok()) return std::move(canonical).error().WithContext("removing an SMC user EID");
    const std::string what = "removing SMC user EID " + *canonical;
    if (!HasUeid()) return NoUeid(what);
    Status done =
        Command(what, [&](uint32_t seq) { return smcnl::BuildUeidRemove(seq, gen_family_, *canonical); });
    // smc_clc_ueid_remove on s390: "indicate success and enabling of seid".
    if (!done.ok() && done.error().sys_errno == EAGAIN) return base::Ok();
    return done;
  }

 private:
  using Builder = std::function<Result<Bytes>(uint32_t seq)>;

  static Error NoUeid(const std::string& what) {
    return Error(base::Code::kKernel, what + ": " + kNoUeidMessage, {}, EOPNOTSUPP);
  }

  /// The family, or nullopt when nlctrl does not know it (ENOENT).
  Result<std::optional<smcnl::Family>> GetFamily(const char* name) {
    const std::string what = std::string("CTRL_CMD_GETFAMILY ") + name;
    auto reply = Exchange(what, [name](uint32_t seq) { return smcnl::BuildGetFamily(seq, name); });
    if (!reply.ok()) {
      if (reply.error().sys_errno == ENOENT) return std::optional<smcnl::Family>();
      return std::move(reply).error();
    }
    if (reply->messages.empty()) return SysError(what, EBADMSG, "the kernel acknowledged without an answer");
    ASSIGN_OR_RETURN(smcnl::Family f, WithWhat(smcnl::ParseFamily(reply->messages.front()), what));
    return std::optional<smcnl::Family>(std::move(f));
  }

  /// Sends one request and reads its whole answer. The kernel's refusal
  /// becomes Error{kKernel, "<what>: <strerror>", extack text, errno}.
  Result<smcnl::Reply> Exchange(const std::string& what, const Builder& build) {
    const uint32_t seq = ++seq_;
    ASSIGN_OR_RETURN(const Bytes request, WithWhat(build(seq), what));
    if (mnl_socket_sendto(sock_.get(), request.data(), request.size()) < 0) {
      const int err = errno;
      return SysError(what, err, "sendto");
    }
    smcnl::Reply reply;
    while (!reply.complete) {
      const ssize_t n = mnl_socket_recvfrom(sock_.get(), buffer_.data(), buffer_.size());
      if (n < 0) {
        const int err = errno;
        if (err == EINTR) continue;
        Drain();
        // libmnl says ENOSPC when a datagram did not fit (MSG_TRUNC).
        return SysError(what, err, "recvmsg");
      }
      Status read = smcnl::ReadDatagram(std::span<const uint8_t>(buffer_.data(), static_cast<size_t>(n)), seq,
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

  /// A dump the kernel marks NLM_F_DUMP_INTR is restarted, at most
  /// kDumpRetries times, then fails with EAGAIN. (The SMC dumps do not set
  /// cb->seq today, so the kernel never marks them; a later one may.)
  Result<std::vector<Bytes>> Dump(const std::string& what, const Builder& build) {
    for (int attempt = 0;; ++attempt) {
      ASSIGN_OR_RETURN(smcnl::Reply reply, Exchange(what, build));
      if (!reply.interrupted) return std::move(reply.messages);
      if (attempt == kDumpRetries) {
        return SysError(what, EAGAIN,
                        "the kernel interrupted the dump " + std::to_string(kDumpRetries + 1) +
                            " times in a row (the table kept changing)");
      }
    }
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
  uint32_t portid_;
  uint32_t seq_;
  uint16_t pnet_family_ = 0;
  uint16_t gen_family_ = 0;  // 0: no user EID support
  Bytes buffer_ = Bytes(kReceiveSize);
};

}  // namespace

base::Result<std::unique_ptr<Smc>> OpenSmc(const Netns& ns) {
  const std::string what = "opening an SMC generic netlink socket in " + ns.path();
  MnlPtr sock;
  {
    // A netlink socket belongs to the namespace it was created in for the
    // rest of its life, and genl_info_net() — whose pnet table SMC_PNETID
    // reads and writes — is that namespace, so the switch lasts only for
    // socket().
    auto inside = NetnsSwitch::Enter(ns);
    if (!inside.ok()) return std::move(inside).error().WithContext(what);
    sock.reset(mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC));
    if (!sock) {
      const int err = errno;
      return SysError(what, err, "socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC)");
    }
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
  auto smc = std::make_unique<SmcSocket>(std::move(sock));
  if (Status resolved = smc->Resolve(); !resolved.ok()) return std::move(resolved).error().WithContext(what);
  return std::unique_ptr<Smc>(std::move(smc));
}

}  // namespace netlink
