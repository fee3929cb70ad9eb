// A stateful, in-memory fake of netlink::Smc for unit tests, living next to
// a fake::World (a namespace id is a World namespace id). Every mutating call
// that reaches the "kernel" is counted and logged so a test can fail the Nth
// one.
//
// Model, as the kernel behaves (net/smc/smc_pnet.c, smc_clc.c, smc_netlink.c):
//  - One pnet table per namespace, in insertion order. An entry dies with
//    its namespace (smc_pnet_net_exit flushes it); it does not die with its
//    netdev, nor move with it: entries are keyed by name, and the netdev
//    need not exist when the entry is added.
//  - AddPnet, ETH entry: EEXIST when the namespace already has an ETH entry
//    for that netdev name, whatever its PNET ID.
//  - AddPnet, IB entry: in root, EEXIST when root already has an IB entry for
//    that device name, whatever its port; in any other namespace always
//    EEXIST, adding nothing (smc_pnet_enter stops before the IB attributes
//    and reports that nothing new was added).
//  - DelPnet removes every entry of the namespace with the PNET ID; ENOENT
//    when none.
//  - The user EID table is one for the whole kernel, whichever namespace
//    asks: at most 4 (ERANGE, checked before duplicates), EEXIST for a
//    duplicate, ENOENT to remove an absent one; kept in insertion order.
//  - Input the real socket refuses before sending (NormalizePnetEntry,
//    NormalizeUeid: kInvalidConfig, EINVAL) and the UEID verbs of a handle
//    without UEID support (EOPNOTSUPP) are neither counted nor logged, as
//    they never reach the kernel.
//  - A handle bound to a deleted namespace lists no entry; AddPnet fails
//    with ENODEV and DelPnet with ENOENT (the real kernel would keep a
//    namespace alive while a socket holds it; the fake lets a test model
//    "gone"). The UEID verbs keep working.
//  - Hardware PNET IDs (s390 only) are not modelled.
#pragma once

#include <cerrno>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "netlink/smc_kernel.h"
#include "test/fake/call_log.h"
#include "test/fake/fake_kernel.h"

namespace fake {

class FakeSmc;

/// The SMC side of a World. Not copyable; it and the World must outlive
/// every handle it gives out. Setup methods throw std::invalid_argument on a
/// bad request (a test bug) and are neither counted nor logged. Mutating
/// calls (CallLog, its own counter): AddPnet, DelPnet, AddUeid, DelUeid.
class SmcWorld : public CallLog {
 public:
  explicit SmcWorld(World& world);
  ~SmcWorld();
  SmcWorld(const SmcWorld&) = delete;
  SmcWorld& operator=(const SmcWorld&) = delete;

  /// A handle speaking to one World namespace, like OpenSmc in it: fails as
  /// OpenSmc does on a kernel without SMC after SetSmcPresent(false)
  /// (Error{kKernel, "...: " + kNoSmcMessage, ..., ENOENT}). The handle's
  /// HasUeid() is fixed when it is opened, as the real one's is.
  base::Result<std::unique_ptr<netlink::Smc>> Open(int ns_id);
  /// Open() that must succeed; throws std::logic_error otherwise.
  std::unique_ptr<netlink::Smc> Smc(int ns_id);

  /// false: the kernel has no SMC (no SMC_PNETID family). Default true.
  void SetSmcPresent(bool present) { smc_present_ = present; }
  /// false: SMC without user EID support (an older kernel). Default true.
  void SetUeidPresent(bool present) { ueid_present_ = present; }

  /// Puts an entry in a namespace's table as if added earlier (normalized;
  /// no duplicate checks beyond the kernel's).
  void AddPnetEntry(int ns_id, const netlink::PnetEntry& entry);
  /// Puts a user EID in the global table as if added earlier.
  void AddUeidEntry(const std::string& ueid);

  /// A namespace's table now (empty for a deleted namespace).
  std::vector<netlink::PnetEntry> PnetTable(int ns_id);
  /// The user EIDs now, trimmed.
  std::vector<std::string> Ueids() const;
  /// One line per pnet entry, namespaces in id order, e.g.
  /// "pod pnet 00163E10F8B0 netdev eth0", then one per user EID
  /// ("ueid ERDMA-SMC"). Compare before/after a rolled-back operation.
  std::string Describe();

 private:
  friend class FakeSmc;

  /// Forgets the tables of namespaces deleted since the last call.
  void Reconcile();
  std::string NsName(int id) const;

  World& world_;
  bool smc_present_ = true;
  bool ueid_present_ = true;
  std::map<int, std::vector<netlink::PnetEntry>> pnet_;  // by namespace id
  std::vector<std::string> ueids_;                       // canonical (NormalizeUeid), insertion order
};

}  // namespace fake
