#include "netlink/raw_reply.h"

#include <linux/netlink.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "netlink/extack.h"

namespace netlink::raw {
namespace {

base::Error Malformed(const std::string& why) {
  return base::Error(base::Code::kKernel, "malformed netlink reply: " + why, {}, EBADMSG);
}

}  // namespace

// Not libnl's nl_recvmsgs: it takes the NLMSG_DONE that ends a dump which
// failed part way for a clean end, and reports NLM_F_DUMP_INTR only after
// the whole dump as a failure. This reader keeps both, and the extended ACK.
base::Status ReadDatagram(std::span<const uint8_t> datagram, uint32_t seq, uint32_t portid, Reply& reply) {
  size_t off = 0;
  while (off < datagram.size() && !reply.complete) {
    const auto rest = datagram.subspan(off);
    nlmsghdr hdr{};
    if (rest.size() < sizeof hdr) {
      return Malformed(std::to_string(rest.size()) + " stray bytes after the last message");
    }
    std::memcpy(&hdr, rest.data(), sizeof hdr);
    if (hdr.nlmsg_len < sizeof hdr || hdr.nlmsg_len > rest.size()) {
      return Malformed("a message of nlmsg_len " + std::to_string(hdr.nlmsg_len) + " with " +
                       std::to_string(rest.size()) + " bytes left in the datagram");
    }
    const auto msg = rest.first(hdr.nlmsg_len);
    if (hdr.nlmsg_seq != seq || (portid != 0 && hdr.nlmsg_pid != 0 && hdr.nlmsg_pid != portid)) {
      return base::Error(base::Code::kKernel,
                         "netlink answer for another request (sequence number " +
                             std::to_string(hdr.nlmsg_seq) + ", port " + std::to_string(hdr.nlmsg_pid) +
                             "; expected " + std::to_string(seq) + ", " + std::to_string(portid) + ")",
                         {}, EPROTO);
    }
    if (hdr.nlmsg_flags & NLM_F_DUMP_INTR) reply.interrupted = true;
    switch (hdr.nlmsg_type) {
      case NLMSG_NOOP: break;
      case NLMSG_ERROR:
      case NLMSG_DONE: {
        std::optional<AckInfo> ack = ParseAck(msg);
        // A bare NLMSG_DONE (no error code) is still a clean end of dump.
        if (!ack && hdr.nlmsg_type == NLMSG_DONE && hdr.nlmsg_len == sizeof hdr) ack = AckInfo{};
        if (!ack) return Malformed("an NLMSG_ERROR too short for its error code");
        reply.error = ack->error;
        reply.extack = std::move(ack->msg);
        reply.complete = true;
        break;
      }
      case NLMSG_OVERRUN:
        return base::Error(base::Code::kKernel,
                           "netlink: the kernel dropped part of its answer (NLMSG_OVERRUN)", {}, ENOBUFS);
      default:
        if (hdr.nlmsg_type < NLMSG_MIN_TYPE) {
          return Malformed("unknown control message type " + std::to_string(hdr.nlmsg_type));
        }
        reply.messages.emplace_back(msg.begin(), msg.end());
    }
    off += NLMSG_ALIGN(size_t{hdr.nlmsg_len});
  }
  return base::Ok();
}

}  // namespace netlink::raw
