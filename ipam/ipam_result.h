// What an IPAM plugin prints: its result, of any CNI version.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "base/error.h"
#include "ipam/ipam.h"

namespace ipam {

/// A result's addresses and gateways, of any version; kIpam naming the wrong member, the result in details.
base::Result<std::vector<IpConfig>> ParseResult(const nlohmann::json& result);

/// ParseResult; kIpam when the result holds no address.
base::Result<std::vector<IpConfig>> AddressesOf(const nlohmann::json& result);

}  // namespace ipam
