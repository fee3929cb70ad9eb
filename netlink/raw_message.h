// Laying out one netlink request, and walking the attributes of one answer, with libnl's nlmsg_* and nla_*
// functions: the byte-level half of the protocol codecs (netlink/rdma_codec.h, netlink/smc_codec.h,
// netlink/vf_codec.h), which stay pure functions over buffers.
#pragma once

#include <linux/netlink.h>
#include <netlink/attr.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "netlink/libnl_ptr.h"

namespace netlink::raw {

using Bytes = std::vector<uint8_t>;  ///< one whole netlink message

inline constexpr uint16_t kCommand = NLM_F_REQUEST | NLM_F_ACK;  ///< a command the kernel ACKs
inline constexpr uint16_t kDump = NLM_F_REQUEST | NLM_F_DUMP;    ///< a dump, ended by NLMSG_DONE

/// One request in a buffer of its own: nlmsghdr (pid 0, the kernel fills in
/// the sender), an optional family header, then attributes.
class Request {
 public:
  static constexpr size_t kMaxSize = 256;  ///< enough for every request erdma-cni sends

  Request(uint16_t type, uint16_t flags, uint32_t seq);
  /// Reserves `size` zeroed bytes after nlmsghdr (genlmsghdr, ...), padded to the netlink alignment; call
  /// before any attribute. nullptr when out of memory (then Finish() gives nothing).
  void* PutExtraHeader(size_t size);
  void PutU8(uint16_t type, uint8_t v);
  void PutU32(uint16_t type, uint32_t v);
  /// A NUL-terminated string attribute.
  void PutString(uint16_t type, const std::string& s);
  /// An attribute holding `size` bytes (a kernel struct) as they are.
  void PutBytes(uint16_t type, const void* data, size_t size);
  /// Opens a nested attribute; the attributes put until EndNest go inside. libnl marks it NLA_F_NESTED, which
  /// rtnetlink's IFLA_VFINFO_LIST and IFLA_VF_INFO accept (nla_type masks it). nullptr (and Finish() gives
  /// nothing) when it does not fit.
  nlattr* BeginNest(uint16_t type);
  /// Closes `nest`. libnl drops a nest that ended up empty: callers put at least one attribute in each.
  void EndNest(nlattr* nest);
  /// The message, or nothing when an attribute did not fit: callers validate
  /// their inputs first, so that does not happen.
  Bytes Finish() &&;

 private:
  nl::MsgPtr msg_;
  bool ok_ = true;
};

// --- attributes of an answer ------------------------------------------------

/// Policy entries for the attribute tables of the parsers: the payload each attribute must have (checked by
/// libnl's nla_validate). Integers are exact: a u32 of 2 or 8 bytes is as wrong as one of 3.
constexpr nla_policy PolicyU8() { return {NLA_U8, 1, 1}; }
constexpr nla_policy PolicyU32() { return {NLA_U32, 4, 4}; }
constexpr nla_policy PolicyU64() { return {NLA_U64, 8, 8}; }
/// At least one byte, the last a NUL.
constexpr nla_policy PolicyString() { return {NLA_STRING, 0, 0}; }
/// Empty, or holding at least one attribute header.
constexpr nla_policy PolicyNested() { return {NLA_NESTED, 0, 0}; }
/// Any number of bytes (a link-layer address).
constexpr nla_policy PolicyBinary() { return {NLA_BINARY, 0, 0}; }
/// A kernel struct of at least `size` bytes: the kernel's own policies for struct attributes (nla_policy
/// .len) set a minimum, so a struct that grows a member at its end still reads.
constexpr nla_policy PolicyStruct(uint16_t size) { return {NLA_BINARY, size, 0}; }

/// Calls `each` on every attribute of the run [off, end) of `base` after checking that it is whole (nla_ok: a
/// header, nla_len covering it and within the run); stops at the first problem `each` reports. "truncated
/// attribute at offset N" for one that is not. Never reads outside the run.
std::optional<std::string> WalkAttrs(const uint8_t* base, size_t off, size_t end,
                                     const std::function<std::optional<std::string>(const nlattr*)>& each);

/// Walks the run [off, end) of `base` and indexes in `tb` (one slot per type, as many as `policy` has
/// entries) every attribute whose policy entry is not NLA_UNSPEC, after validating its payload against it;
/// others are skipped. "attribute T has a bad payload (N bytes)" for one that fails.
std::optional<std::string> IndexAttrs(const uint8_t* base, size_t off, size_t end,
                                      std::span<const nla_policy> policy, std::span<const nlattr*> tb);

/// Copies the message at the start of `msg` (nlmsg_len bytes, at least `headers`) into `out`: the caller's
/// bytes need not be aligned for nlattr, and libnl's nla_* must not step outside them. The problem otherwise:
/// "N bytes, shorter than a header" or "nlmsg_len L with N bytes at hand" (" (headers need H)" added when
/// `headers` is more than nlmsghdr).
std::optional<std::string> CopyMessage(std::span<const uint8_t> msg, size_t headers, Bytes& out);

/// The payload of a string attribute validated with PolicyString(); empty for nullptr.
std::string AttrString(const nlattr* attr);

}  // namespace netlink::raw
