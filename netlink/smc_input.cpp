#include "netlink/smc_input.h"

#include <net/if.h>

#include <cerrno>
#include <string>

#include "netlink/kernel_name.h"

namespace netlink {
namespace {

using smcnl::kMaxIbPort;
using smcnl::kPnetIdMax;
using smcnl::kUeidLen;

constexpr size_t kIbDeviceNameMax = 64;  // IB_DEVICE_NAME_MAX, the NUL included

base::Error BadInput(const std::string& why) {
  return base::Error(base::Code::kInvalidConfig, why, {}, EINVAL);
}

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
char Upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

base::Result<std::string> NormalizePnetId(std::string_view pnet_id) {
  const std::string_view s = Trim(pnet_id);
  const std::string shown = "the SMC PNET ID '" + std::string(pnet_id) + "'";
  if (s.empty()) return BadInput(shown + " is empty");
  if (s.size() > kPnetIdMax) return BadInput(shown + " is longer than 16 characters");
  std::string out;
  for (char c : s) {
    const char u = Upper(c);
    if (!IsUpper(u) && !IsDigit(u)) return BadInput(shown + " may hold only letters and digits");
    out.push_back(u);
  }
  return out;
}

base::Result<std::string> NormalizeUeid(std::string_view ueid) {
  const std::string_view s = Trim(ueid);
  const std::string shown = "the SMC user EID '" + std::string(ueid) + "'";
  if (s.empty()) return BadInput(shown + " is empty");
  if (s.size() > kUeidLen) return BadInput(shown + " is longer than 32 characters");
  std::string out;
  for (char c : s) {
    const char u = Upper(c);
    const bool alnum = IsUpper(u) || IsDigit(u);
    if (out.empty() && !alnum) return BadInput(shown + " must start with a letter or digit");
    if (!alnum && u != '.' && u != '-') return BadInput(shown + " may hold only A-Z, 0-9, '.' and '-'");
    out.push_back(u);
  }
  return out;
}

std::string TrimUeid(std::string_view ueid) {
  while (!ueid.empty() && IsBlank(ueid.back())) ueid.remove_suffix(1);
  return std::string(ueid);
}

std::string PnetIdFromMac(std::string_view mac) {
  constexpr size_t kMacText = 17;  // "xx:xx:xx:xx:xx:xx"
  if (mac.size() != kMacText) return {};
  std::string out;
  for (size_t i = 0; i < mac.size(); ++i) {
    const char c = Upper(mac[i]);
    if (i % 3 == 2) {
      if (c != ':') return {};
      continue;
    }
    if (!IsDigit(c) && !(c >= 'A' && c <= 'F')) return {};
    out.push_back(c);
  }
  return out;
}

base::Result<PnetEntry> NormalizePnetEntry(const PnetEntry& entry) {
  PnetEntry out = entry;
  ASSIGN_OR_RETURN(out.pnet_id, NormalizePnetId(entry.pnet_id));
  const bool eth = !entry.eth_name.empty();
  const bool ib = !entry.ib_name.empty();
  if (eth == ib) {
    return BadInput("the SMC pnet entry for " + out.pnet_id +
                    (eth ? " names both a netdev and an RDMA device; add them one at a time"
                         : " names neither a netdev nor an RDMA device"));
  }
  if (eth) {
    if (auto p = KernelNameProblem(entry.eth_name, "the netdev name", IFNAMSIZ)) return BadInput(*p);
    if (entry.ib_port != 0)
      return BadInput("the SMC pnet entry for netdev " + entry.eth_name + " has an IB port");
    return out;
  }
  if (auto p = KernelNameProblem(entry.ib_name, "the RDMA device name", kIbDeviceNameMax))
    return BadInput(*p);
  if (entry.ib_port < 1 || entry.ib_port > kMaxIbPort) {
    return BadInput("the SMC pnet entry for " + entry.ib_name + " has port " + std::to_string(entry.ib_port) +
                    "; SMC knows ports 1 and 2");
  }
  return out;
}

std::string DescribePnetEntry(const PnetEntry& entry) {
  if (!entry.eth_name.empty()) return entry.pnet_id + " netdev " + entry.eth_name;
  return entry.pnet_id + " ib " + entry.ib_name + " port " + std::to_string(entry.ib_port);
}

}  // namespace netlink
