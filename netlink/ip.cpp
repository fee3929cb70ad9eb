#include "netlink/ip.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <charconv>

namespace netlink {

std::optional<IpAddress> IpAddress::Parse(std::string_view text) {
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  // inet_pton stops at a NUL: "10.0.0.1\0junk" must not parse as 10.0.0.1.
  if (text.find('\0') != std::string_view::npos) return std::nullopt;
  char buf[INET6_ADDRSTRLEN];
  text.copy(buf, text.size());
  buf[text.size()] = '\0';
  IpAddress a;
  for (const int family : {AF_INET, AF_INET6}) {
    if (inet_pton(family, buf, a.bytes.data()) == 1) {
      a.family = family;
      return a;
    }
  }
  return std::nullopt;
}

std::string IpAddress::ToString() const {
  if (family == AF_INET) {
    // to_chars, not inet_ntop: glibc formats IPv4 with sprintf, and a state holds dozens.
    std::string out;
    out.reserve(INET_ADDRSTRLEN);
    for (size_t i = 0; i < 4; ++i) {
      if (i > 0) out += '.';
      char octet[4];
      out.append(octet, std::to_chars(octet, octet + sizeof octet, bytes[i]).ptr);
    }
    return out;
  }
  if (family != AF_INET6) return "";
  char buf[INET6_ADDRSTRLEN];
  if (!inet_ntop(family, bytes.data(), buf, sizeof buf)) return "";
  return buf;
}

bool IpAddress::IsUnspecified() const {
  return std::all_of(bytes.begin(), bytes.begin() + ByteLength(), [](uint8_t b) { return b == 0; });
}

bool IpAddress::IsLinkLocal() const {
  if (family == AF_INET) return bytes[0] == 169 && bytes[1] == 254;
  if (family == AF_INET6) return bytes[0] == 0xfe && (bytes[1] & 0xc0) == 0x80;
  return false;
}

std::optional<IpPrefix> IpPrefix::Parse(std::string_view text, bool allow_bare) {
  const size_t slash = text.find('/');
  auto addr = IpAddress::Parse(text.substr(0, slash));
  if (!addr) return std::nullopt;
  IpPrefix p{*addr, addr->BitLength()};
  if (slash == std::string_view::npos) {
    if (!allow_bare) return std::nullopt;
    return p;
  }
  std::string_view len = text.substr(slash + 1);
  // Decimal digits only (from_chars takes "-0"), no leading zero.
  if (len.empty() || len.size() > 3 || (len.size() > 1 && len[0] == '0') ||
      len.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  int n = -1;
  std::from_chars(len.data(), len.data() + len.size(), n);
  if (n < 0 || n > addr->BitLength()) return std::nullopt;
  p.len = n;
  return p;
}

std::string IpPrefix::ToString() const { return addr.ToString() + "/" + std::to_string(len); }

IpPrefix IpPrefix::Network() const {
  IpPrefix n = *this;
  // A hand-built prefix may carry any len; never index outside the address.
  const int from = len < 0 ? 0 : len;
  for (int bit = from; bit < addr.BitLength(); ++bit)
    n.addr.bytes[bit / 8] &= static_cast<uint8_t>(~(0x80 >> (bit % 8)));
  return n;
}

bool IpPrefix::Contains(const IpAddress& a) const {
  if (a.family != addr.family) return false;
  IpPrefix other{a, len};
  return other.Network().addr == Network().addr;
}

}  // namespace netlink
