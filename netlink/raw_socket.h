// A netlink socket opened inside a network namespace, and the one
// conversation every protocol on it has: send a request, read its whole
// answer (netlink/raw_reply.h), restart dumps the kernel marks interrupted.
// The protocol (RDMA netlink, generic netlink) builds the requests and
// parses the answers (netlink/raw_message.h).
//
// A plain AF_NETLINK socket, not libnl's nl_sock: nl_connect folds the errno
// of socket() and bind() into libnl's own codes (OpenRdma needs socket()'s
// EPROTONOSUPPORT to say "load ib_core") and shrinks the socket buffers to
// 32 KiB, and libnl's receive path would stand in for the reply reader,
// which keeps what libnl drops. The few system calls need no library.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/fd.h"
#include "netlink/netns.h"
#include "netlink/raw_reply.h"

namespace netlink::raw {

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
  /// `receive_size` must hold the largest single message of the protocol's
  /// answers (the kernel splits dumps to fit the buffer, not single answers).
  static base::Result<Socket> Open(const Netns& ns, int protocol, const std::string& protocol_name,
                                   const std::string& what, size_t receive_size = kDefaultReceiveSize);

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
  /// netlink_dump sizes its datagrams after the largest buffer recvmsg was
  /// given, capped at 32 KiB: this one always holds a whole dump datagram.
  static constexpr size_t kDefaultReceiveSize = 32768;

 private:
  Socket(base::UniqueFd fd, Netns netns, uint32_t portid, size_t receive_size);
  /// One datagram into buffer_: its size, or -1 with errno (ENOSPC when it
  /// did not fit).
  ssize_t Receive();
  void Drain();

  base::UniqueFd fd_;
  Netns netns_;
  uint32_t portid_;
  uint32_t seq_;
  Bytes buffer_;
};

}  // namespace netlink::raw
