#include "netlink/extack.h"

#include <linux/netlink.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace netlink {
namespace {

// Every read goes through memcpy: the bytes may come from anywhere and need not be aligned.
template <typename T>
T Load(std::span<const uint8_t> bytes, size_t off) {
  T v;
  std::memcpy(&v, bytes.data() + off, sizeof v);
  return v;
}

constexpr size_t Align(size_t n) { return (n + NLMSG_ALIGNTO - 1) & ~size_t{NLMSG_ALIGNTO - 1}; }

void ParseTlvs(std::span<const uint8_t> bytes, size_t pos, AckInfo& info) {
  while (pos + NLA_HDRLEN <= bytes.size()) {
    const auto len = Load<uint16_t>(bytes, pos);
    const auto type = static_cast<uint16_t>(Load<uint16_t>(bytes, pos + 2) & NLA_TYPE_MASK);
    if (len < NLA_HDRLEN || len > bytes.size() - pos) return;
    const auto payload = bytes.subspan(pos + NLA_HDRLEN, len - NLA_HDRLEN);
    if (type == NLMSGERR_ATTR_MSG) {
      // NUL-terminated by the kernel; tolerate a missing terminator.
      const auto* begin = reinterpret_cast<const char*>(payload.data());
      info.msg.assign(begin, std::find(begin, begin + payload.size(), '\0'));
    } else if (type == NLMSGERR_ATTR_OFFS && payload.size() >= sizeof(uint32_t)) {
      info.offset = Load<uint32_t>(payload, 0);
    }
    pos += Align(len);
  }
}

int ToErrno(int32_t error) {
  // The kernel sends -errno; anything it cannot negate is garbage.
  if (error == INT32_MIN) return EPROTO;
  return error < 0 ? -error : error;
}

}  // namespace

std::optional<AckInfo> ParseAck(std::span<const uint8_t> bytes) {
  if (bytes.size() < NLMSG_HDRLEN) return std::nullopt;
  const auto hdr = Load<nlmsghdr>(bytes, 0);
  if (hdr.nlmsg_len < NLMSG_HDRLEN) return std::nullopt;
  if (hdr.nlmsg_len < bytes.size()) bytes = bytes.first(hdr.nlmsg_len);
  if (hdr.nlmsg_type != NLMSG_ERROR && hdr.nlmsg_type != NLMSG_DONE) return std::nullopt;
  if (bytes.size() < NLMSG_HDRLEN + sizeof(int32_t)) return std::nullopt;

  AckInfo info;
  info.error = ToErrno(Load<int32_t>(bytes, NLMSG_HDRLEN));
  if (!(hdr.nlmsg_flags & NLM_F_ACK_TLVS)) return info;

  size_t tlvs = NLMSG_HDRLEN + Align(sizeof(int32_t));
  if (hdr.nlmsg_type == NLMSG_ERROR) {
    // struct nlmsgerr echoes the request's header; without NLM_F_CAPPED the
    // request's payload follows it, padded to the netlink alignment.
    const size_t echoed = NLMSG_HDRLEN + offsetof(nlmsgerr, msg);
    if (bytes.size() < echoed + sizeof(nlmsghdr)) return info;
    const auto request = Load<nlmsghdr>(bytes, echoed);
    tlvs = echoed + sizeof(nlmsghdr);
    if (!(hdr.nlmsg_flags & NLM_F_CAPPED) && request.nlmsg_len > sizeof(nlmsghdr)) {
      tlvs += Align(size_t{request.nlmsg_len} - sizeof(nlmsghdr));
    }
  }
  if (tlvs < bytes.size()) ParseTlvs(bytes, tlvs, info);
  return info;
}

}  // namespace netlink
