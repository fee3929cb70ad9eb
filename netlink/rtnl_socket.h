// One rtnetlink socket bound to one network namespace, with the error
// handling every rtnetlink verb shares: the kernel's errno and extended ACK
// text captured per request, checked sequence numbers, retried dumps.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "netlink/libnl_ptr.h"
#include "netlink/netns.h"

namespace netlink {

struct RtnlExchange;  // what the callbacks learn about the request in flight

class RtnlSocket {
 public:
  /// Creates and connects a NETLINK_ROUTE socket inside `ns` (entering it only
  /// for that), with NETLINK_EXT_ACK and NETLINK_CAP_ACK on.
  static base::Result<RtnlSocket> Open(const Netns& ns);

  RtnlSocket(RtnlSocket&&) noexcept;
  RtnlSocket& operator=(RtnlSocket&&) noexcept;
  ~RtnlSocket();

  nl_sock* get() const { return sk_.get(); }

  /// Runs `call`, a libnl function that sends one request on this socket and
  /// waits for its ACK (rtnl_addr_add, rtnl_route_delete, ...). A negative
  /// result becomes Error{kKernel, "<what>: <strerror>", extack text, errno}.
  base::Status Run(const std::string& what, const std::function<int(nl_sock*)>& call);
  /// Sends `msg` (REQUEST|ACK are added) and waits for the ACK.
  base::Status Request(const std::string& what, nl::MsgPtr msg);
  /// Sends a GET request and returns the objects libnl parses from the answer.
  base::Result<std::vector<nl::ObjectPtr>> Get(const std::string& what, nl::MsgPtr msg);
  /// Runs a dump: `make_request` builds the NLM_F_DUMP request (once per
  /// attempt). A dump the kernel marks NLM_F_DUMP_INTR (the table changed
  /// while it was read) is restarted, at most kDumpRetries times, then fails
  /// with EAGAIN. Every object is kept: no libnl cache, whose hash table
  /// silently drops IPv6 routes that differ only in their device.
  base::Result<std::vector<nl::ObjectPtr>> Dump(const std::string& what,
                                                const std::function<nl::MsgPtr()>& make_request);

  static constexpr int kDumpRetries = 5;

 private:
  explicit RtnlSocket(nl::SockPtr sk);
  void Begin();
  base::Result<std::vector<nl::ObjectPtr>> Transact(const std::string& what, nl::MsgPtr msg, bool dump);
  base::Error Fail(const std::string& what, int nl_error);
  void Drain();

  nl::SockPtr sk_;
  std::unique_ptr<RtnlExchange> ex_;  // the callbacks keep its address: it must not move
};

/// The errno closest to a libnl error code (for failures the kernel did not
/// report itself: out of memory, truncated messages, ...).
int NlErrorToErrno(int nl_error);

}  // namespace netlink
