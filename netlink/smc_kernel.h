// The syscall boundary for SMC (Shared Memory Communications over RDMA): the SMC pnet table and the SMC user
// EIDs, for one network namespace, as netlink::Rdma is for RDMA devices. The real implementation
// (smc_socket.h) speaks the generic netlink families SMC_PNETID and SMC_GEN_NETLINK on a plain netlink socket
// opened inside that namespace; tests use a stateful fake (test/fake/fake_smc.h). The kernel's rules for the
// pnet and EID tables: docs/smc-r.md, "Kernel requirements".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"

namespace netlink {

/// One SMC pnet table entry: a PNET ID bound to a netdev (`smc_pnet -a ID -I eth0`) or to a port of an RDMA
/// device (`smc_pnet -a ID -D mlx5_0 -P 1`). Exactly one of eth_name and ib_name is set.
struct PnetEntry {
  std::string pnet_id;   ///< 1-16 characters A-Z 0-9, as the kernel stores it (upper case)
  std::string eth_name;  ///< the netdev name; empty for an IB entry
  std::string ib_name;   ///< the RDMA (or ISM) device name; empty for an ETH entry
  uint8_t ib_port = 0;   ///< 1 or 2 for an IB entry; 0 for an ETH entry

  bool operator==(const PnetEntry&) const = default;
};

/// The message OpenSmc fails with when the kernel has no SMC at all.
inline constexpr const char* kNoSmcMessage =
    "kernel has no SMC (generic netlink family SMC_PNETID not registered; load the smc module, "
    "CONFIG_SMC)";
/// The message the user EID verbs fail with (EOPNOTSUPP) when !HasUeid().
inline constexpr const char* kNoUeidMessage =
    "kernel has no SMC user EID support (generic netlink family SMC_GEN_NETLINK missing or without "
    "SMC_NETLINK_ADD_UEID; needs a newer kernel)";

/// SMC verbs for one network namespace. Errors carry Code::kKernel, a message "<verb> <what>: <strerror>",
/// the kernel's extended ACK text in details and the errno in sys_errno. Input the kernel would refuse (a
/// PNET ID or UEID with bad characters, a name too long, an entry that is neither ETH nor IB) fails before
/// anything is sent with Code::kInvalidConfig and EINVAL.
class Smc {
 public:
  virtual ~Smc() = default;

  /// The pnet table of this namespace in the kernel's order (insertion).
  virtual base::Result<std::vector<PnetEntry>> ListPnet() = 0;
  /// SMC_PNETID_ADD of one entry; the PNET ID is normalized first (NormalizePnetId: trimmed, upper-cased).
  /// EEXIST when this namespace already has an ETH entry for the netdev name (under any PNET ID) or an IB
  /// entry for the device (any port), when the device has a hardware PNET ID, and for any IB entry outside
  /// the initial namespace.
  virtual base::Status AddPnet(const PnetEntry& entry) = 0;
  /// SMC_PNETID_DEL: removes every entry of this namespace with this PNET ID (normalized as for AddPnet; the
  /// kernel itself compares it verbatim). In the initial namespace it also clears the PNET ID that user
  /// entries applied to RDMA/ISM device ports. ENOENT when nothing matched.
  virtual base::Status DelPnet(const std::string& pnet_id) = 0;

  /// Whether the kernel has the user EID verbs below (SMC_GEN_NETLINK with SMC_NETLINK_ADD_UEID); without
  /// them they fail with EOPNOTSUPP and kNoUeidMessage.
  virtual bool HasUeid() const = 0;
  /// The global user EID table, each trimmed of its padding ("ERDMA-SMC").
  virtual base::Result<std::vector<std::string>> ListUeids() = 0;
  /// SMC_NETLINK_ADD_UEID of NormalizeUeid(ueid). EEXIST when present, ERANGE when the table already holds 4.
  virtual base::Status AddUeid(std::string ueid) = 0;
  /// SMC_NETLINK_REMOVE_UEID of NormalizeUeid(ueid); ENOENT when absent. (On s390 the kernel answers EAGAIN
  /// when it removed the last UEID and fell back to the system EID; that is success.)
  virtual base::Status DelUeid(std::string ueid) = 0;
};

}  // namespace netlink
