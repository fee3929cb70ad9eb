#include "netlink/raw_message.h"

#include <netlink/msg.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace netlink::raw {

Request::Request(uint16_t type, uint16_t flags, uint32_t seq) : msg_(nlmsg_alloc_size(kMaxSize)) {
  ok_ = msg_ && nlmsg_put(msg_.get(), NL_AUTO_PORT, seq, type, 0, flags) != nullptr;
}

void* Request::PutExtraHeader(size_t size) {
  // nlmsg_alloc_size zeroes the buffer; nlmsg_reserve zeroes the padding.
  void* header = ok_ ? nlmsg_reserve(msg_.get(), size, NLMSG_ALIGNTO) : nullptr;
  ok_ = header != nullptr;
  return header;
}

void Request::PutU8(uint16_t type, uint8_t v) { ok_ = ok_ && nla_put_u8(msg_.get(), type, v) == 0; }

void Request::PutU32(uint16_t type, uint32_t v) { ok_ = ok_ && nla_put_u32(msg_.get(), type, v) == 0; }

void Request::PutString(uint16_t type, const std::string& s) {
  ok_ = ok_ && nla_put_string(msg_.get(), type, s.c_str()) == 0;
}

void Request::PutBytes(uint16_t type, const void* data, size_t size) {
  ok_ = ok_ && size <= kMaxSize && nla_put(msg_.get(), type, static_cast<int>(size), data) == 0;
}

nlattr* Request::BeginNest(uint16_t type) {
  nlattr* nest = ok_ ? nla_nest_start(msg_.get(), type) : nullptr;
  ok_ = nest != nullptr;
  return nest;
}

void Request::EndNest(nlattr* nest) { ok_ = ok_ && nest && nla_nest_end(msg_.get(), nest) == 0; }

Bytes Request::Finish() && {
  if (!ok_) return {};
  const nlmsghdr* hdr = nlmsg_hdr(msg_.get());
  const auto* begin = reinterpret_cast<const uint8_t*>(hdr);
  return Bytes(begin, begin + hdr->nlmsg_len);
}

std::optional<std::string> WalkAttrs(const uint8_t* base, size_t off, size_t end,
                                     const std::function<std::optional<std::string>(const nlattr*)>& each) {
  while (off < end) {
    const auto* attr = reinterpret_cast<const nlattr*>(base + off);
    // nla_ok reads the header only once it knows there are 4 bytes left. Runs are at most 64 KiB (nlmsg_len
    // of a received message), so the length fits nla_ok's int.
    const int remaining = static_cast<int>(std::min<size_t>(end - off, 1 << 30));
    if (!nla_ok(attr, remaining)) return "truncated attribute at offset " + std::to_string(off);
    if (auto problem = each(attr)) return problem;
    off += NLA_ALIGN(size_t{attr->nla_len});
  }
  return std::nullopt;
}

std::optional<std::string> IndexAttrs(const uint8_t* base, size_t off, size_t end,
                                      std::span<const nla_policy> policy, std::span<const nlattr*> tb) {
  std::fill(tb.begin(), tb.end(), nullptr);
  return WalkAttrs(base, off, end, [&](const nlattr* attr) -> std::optional<std::string> {
    const auto type = static_cast<size_t>(nla_type(attr));
    if (type >= policy.size() || type >= tb.size() || policy[type].type == NLA_UNSPEC) return std::nullopt;
    const int len = nla_len(attr);
    // nla_validate checks the one attribute (its length bounds the walk) against the entry for its type. A
    // nest must hold at least one attribute header if it holds anything, which libnl does not check.
    const bool bad_nest = policy[type].type == NLA_NESTED && len > 0 && len < NLA_HDRLEN;
    if (bad_nest ||
        nla_validate(attr, attr->nla_len, static_cast<int>(policy.size() - 1), policy.data()) < 0) {
      return "attribute " + std::to_string(type) + " has a bad payload (" + std::to_string(len) + " bytes)";
    }
    tb[type] = attr;
    return std::nullopt;
  });
}

std::optional<std::string> CopyMessage(std::span<const uint8_t> msg, size_t headers, Bytes& out) {
  nlmsghdr hdr{};
  if (msg.size() < sizeof hdr) return std::to_string(msg.size()) + " bytes, shorter than a header";
  std::memcpy(&hdr, msg.data(), sizeof hdr);
  if (hdr.nlmsg_len < std::max(headers, sizeof hdr) || hdr.nlmsg_len > msg.size()) {
    return "nlmsg_len " + std::to_string(hdr.nlmsg_len) + " with " + std::to_string(msg.size()) +
           " bytes at hand" + (headers > sizeof hdr ? " (headers need " + std::to_string(headers) + ")" : "");
  }
  out.assign(msg.begin(), msg.begin() + hdr.nlmsg_len);
  return std::nullopt;
}

std::string AttrString(const nlattr* attr) {
  if (!attr) return {};
  // Validated: NUL-terminated within its payload.
  return nla_get_string(attr);
}

}  // namespace netlink::raw
