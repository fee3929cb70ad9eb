// CNI results: building ours, appending to a prevResult, and writing any result in the version the config
// asks for. Works on JSON so that nothing of a prevResult we do not model is lost.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "ipam/ipam.h"
#include "netlink/ip.h"

namespace cni {

struct ResultInterface {
  std::string name;
  std::string mac;              ///< omitted when empty
  std::string sandbox;          ///< the netns path; omitted when empty
  std::optional<uint32_t> mtu;  ///< 1.1.0 only
  std::string rdma_device;      ///< 1.1.0 only, as "rdmaDevice" (erdma-cni's own key): the pod's RDMA device
  std::string pci_id;           ///< 1.1.0 only, as "pciID": the PCI address of the device (an SR-IOV VF)
};

/// An address of ours, with its gateway.
using ResultIp = ipam::IpConfig;

struct ResultRoute {
  netlink::IpPrefix dst;
  std::optional<netlink::IpAddress> gw;
  std::optional<uint32_t> priority;  ///< 1.1.0 only
  std::optional<uint32_t> table;     ///< 1.1.0 only; routes with a table are dropped before 1.1.0
  std::optional<uint8_t> scope;      ///< 1.1.0 only
};

/// Appends one interface with its IPs and routes to `prev` (null = start an empty result), sets each new ip's
/// `interface` to the new interface's index, then converts the whole result to `version`.
nlohmann::json AppendToResult(const nlohmann::json& prev, const std::string& version,
                              const ResultInterface& iface, const std::vector<ResultIp>& ips,
                              const std::vector<ResultRoute>& routes);

/// The most of an error's msg or details the CNI error carries; the rest is left out, its length said.
inline constexpr size_t kMaxErrorTextBytes = 4096;
/// The spec's error object.
nlohmann::json ErrorJson(const std::string& version, const base::Error& e);

}  // namespace cni
