// A libmnl netlink socket opened inside a network namespace, and the one
// conversation every protocol on it has: send a request, read its whole
// answer (netlink/mnl_reply.h), restart dumps the kernel marks interrupted.
// The protocol (RDMA netlink, generic netlink) builds the requests and
// parses the answers.
#pragma once

#include <libmnl/libmnl.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "netlink/mnl_reply.h"
#include "netlink/netns.h"

namespace netlink::mnl {

/// Error{kKernel, "<what>: <strerror(err)>", details, err}: how the sockets
/// report a failed call or the kernel's refusal.
base::Error SysError(const std::string& what, int err, std::string details = {});

/// `r`, its error (if any) with `what` in front.
template <typename T>
base::Result<T> WithWhat(base::Result<T> r, const std::string& what) {
  if (r.ok()) return r;
  return std::move(r).error().WithContext(what);
}

/// Builds one request with the given sequence number.
using Builder = std::function<base::Result<Bytes>(uint32_t seq)>;

class Socket {
 public:
  /// Opens a socket of netlink `protocol` (NETLINK_RDMA, ...; `protocol_name`
  /// for messages) inside `ns`, switching into it just for socket(): a
  /// netlink socket belongs to the namespace it was created in for the rest
  /// of its life. Binds it and turns on NETLINK_EXT_ACK and NETLINK_CAP_ACK
  /// where the kernel has them. Errors are Error{kKernel, "<what>: ...",
  /// errno}; socket() failing keeps its errno (EPROTONOSUPPORT: no kernel
  /// side for the protocol) with details "socket(...): <strerror>".
  static base::Result<Socket> Open(const Netns& ns, int protocol, const std::string& protocol_name,
                                   const std::string& what);

  /// The namespace the socket lives in (opened from inside it).
  const Netns& netns() const { return netns_; }

  /// Sends one request and reads its whole answer. The kernel's refusal
  /// becomes Error{kKernel, "<what>: <strerror>", extack text, errno}.
  base::Result<Reply> Exchange(const std::string& what, const Builder& build);
  /// Exchange for a request whose answer is only an ACK.
  base::Status Command(const std::string& what, const Builder& build);
  /// The data messages of a dump. One the kernel marks NLM_F_DUMP_INTR (the
  /// list changed while it was read) is restarted, at most kDumpRetries
  /// times, then fails with EAGAIN.
  base::Result<std::vector<Bytes>> Dump(const std::string& what, const Builder& build);

  static constexpr int kDumpRetries = 5;

 private:
  struct Close {
    void operator()(mnl_socket* s) const { mnl_socket_close(s); }
  };
  using Ptr = std::unique_ptr<mnl_socket, Close>;

  Socket(Ptr sock, Netns netns);
  void Drain();

  Ptr sock_;
  Netns netns_;
  uint32_t portid_;
  uint32_t seq_;
  Bytes buffer_;
};

}  // namespace netlink::mnl
