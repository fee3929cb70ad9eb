// What an IPAM plugin prints: its result, of any CNI version.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "base/error.h"
#include "ipam/ipam.h"

namespace ipam {

/// The addresses (and their gateways) of an IPAM plugin's result of any
/// version. kIpam naming the member that is wrong, the result in details.
base::Result<std::vector<IpConfig>> ParseResult(const nlohmann::json& result);

/// ParseResult; kIpam when the result holds no address.
base::Result<std::vector<IpConfig>> AddressesOf(const nlohmann::json& result);

}  // namespace ipam
