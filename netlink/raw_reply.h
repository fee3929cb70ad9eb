// Reading the kernel's answer to one netlink request out of the datagrams it
// arrives in: data messages, the ACK or NLMSG_ERROR (with its extended ACK
// text), NLMSG_DONE, NLM_F_DUMP_INTR, sequence number and port checks. Pure:
// bytes in, a Reply out, no socket. Shared by the protocols spoken over a
// raw::Socket (RDMA netlink, generic netlink); the protocol's own parsers
// then read the data messages.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"

namespace netlink::raw {

using Bytes = std::vector<uint8_t>;

/// The answer to one request, assembled from the datagrams it came in.
struct Reply {
  bool complete = false;        ///< the ACK, an NLMSG_ERROR or the NLMSG_DONE arrived
  bool interrupted = false;     ///< a message carried NLM_F_DUMP_INTR: restart the dump
  int error = 0;                ///< the kernel's errno; 0 = success
  std::string extack;           ///< its extended ACK text, if any
  std::vector<Bytes> messages;  ///< the data messages, each whole, in order
};

/// Adds one received datagram to `reply`. Each message must be whole, carry
/// `seq` and, when both are non-zero, the socket's `portid`; otherwise
/// Error{kKernel, "malformed netlink reply: ...", EBADMSG} for a malformed
/// datagram, EPROTO for a stray message and ENOBUFS for NLMSG_OVERRUN, and
/// the caller should drain the socket. Messages after the one that completed
/// the reply are ignored. Never reads outside `datagram`, which need not be
/// aligned.
base::Status ReadDatagram(std::span<const uint8_t> datagram, uint32_t seq, uint32_t portid, Reply& reply);

}  // namespace netlink::raw
