// IP address and prefix value types shared by the kernel interface, IPAM, the state file and results.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace netlink {

/// An IPv4 or IPv6 address. family is AF_INET or AF_INET6 (0 = unset).
struct IpAddress {
  int family = 0;
  std::array<uint8_t, 16> bytes{};

  /// Parses dotted quad or RFC 5952 text; nullopt on anything else.
  static std::optional<IpAddress> Parse(std::string_view text);
  std::string ToString() const;
  int BitLength() const { return family == 10 /*AF_INET6*/ ? 128 : 32; }
  size_t ByteLength() const { return family == 10 /*AF_INET6*/ ? 16 : 4; }
  bool IsUnspecified() const;
  bool IsLinkLocal() const;  ///< 169.254/16 or fe80::/10

  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads the defaulted <=>.
  auto operator<=>(const IpAddress&) const = default;
};

/// An address with a prefix length, e.g. 10.9.0.5/24 (host bits kept).
struct IpPrefix {
  IpAddress addr;
  int len = 0;

  /// Parses "addr/len"; a bare address gets the full length when allow_bare.
  static std::optional<IpPrefix> Parse(std::string_view text, bool allow_bare = false);
  std::string ToString() const;
  /// The network: host bits cleared.
  IpPrefix Network() const;
  /// The host route for addr: /32 or /128.
  IpPrefix Host() const { return IpPrefix{addr, addr.BitLength()}; }
  bool IsDefault() const { return len == 0; }
  bool Contains(const IpAddress& a) const;

  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads the defaulted <=>.
  auto operator<=>(const IpPrefix&) const = default;
};

}  // namespace netlink
