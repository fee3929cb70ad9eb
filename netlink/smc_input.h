// What the kernel accepts as SMC names: PNET IDs, user EIDs and pnet entries, and the PNET ID derived from a
// MAC. Pure functions; shared by the netlink codec (smc_codec.h), the fake and the config checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/error.h"
#include "netlink/smc_kernel.h"

namespace netlink::smcnl {

inline constexpr size_t kPnetIdMax = 16;  ///< SMC_MAX_PNETID_LEN
inline constexpr size_t kUeidLen = 32;    ///< SMC_MAX_EID_LEN
inline constexpr size_t kMaxUeids = 4;    ///< SMC_MAX_UEID
inline constexpr uint8_t kMaxIbPort = 2;  ///< SMC_MAX_PORTS

}  // namespace netlink::smcnl

namespace netlink {

// --- input as the kernel wants it -------------------------------------------
// Each fails with Error{kInvalidConfig, "<what>: <why>", {}, EINVAL}.

/// smc_pnetid_valid's rule: surrounding blanks dropped, then 1-16 letters and
/// digits, lower case raised ("net1" -> "NET1").
base::Result<std::string> NormalizePnetId(std::string_view pnet_id);
/// smc_clc_ueid_valid's rule in canonical form: surrounding blanks dropped, lower case raised, then 1-32
/// characters of A-Z 0-9 '.' '-' starting with a letter or digit ("erdma-smc " -> "ERDMA-SMC"), the form
/// ListUeids returns. On the wire the kernel wants it padded with blanks to exactly 32 characters (as `smcd
/// ueid add` does); the request builders add that.
base::Result<std::string> NormalizeUeid(std::string_view ueid);
/// A UEID without its padding blanks ("ERDMA-SMC" for "ERDMA-SMC" + 23 blanks).
std::string TrimUeid(std::string_view ueid);
/// The PNET ID the ACK controller derives from a netdev MAC: its hex digits, upper case, no separators
/// ("00:16:3e:10:f8:b0" -> "00163E10F8B0"). Empty when `mac` is not six colon-separated hex bytes.
std::string PnetIdFromMac(std::string_view mac);
/// The entry with its PNET ID normalized, after checking it is exactly one
/// of ETH (netdev name 1-15 bytes) or IB (device name 1-63 bytes, port 1-2).
base::Result<PnetEntry> NormalizePnetEntry(const PnetEntry& entry);
/// "00163E10F8B0 netdev eth0" or "NET1 ib mlx5_0 port 1", for messages.
std::string DescribePnetEntry(const PnetEntry& entry);

}  // namespace netlink
