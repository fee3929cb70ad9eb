// The human form of `erdma-cni diag`'s report.
#include <sstream>

#include "cni/diag.h"

namespace cni {

using nlohmann::json;

std::string RenderDiag(const json& r) {
  std::ostringstream o;
  o << "erdma-cni diag: " << r.value("netns", "") << "\n\n== RDMA\n";
  const json& rdma = r["rdma"];
  if (rdma.contains("error")) o << "!! " << rdma["error"].get<std::string>() << "\n";
  if (rdma.contains("netnsMode")) o << "netns mode: " << rdma["netnsMode"].get<std::string>() << "\n";
  for (const auto& d : rdma.value("devices", json::array())) {
    o << d["name"].get<std::string>() << " (" << d["protocol"].get<std::string>() << ", node GUID "
      << d["nodeGuid"].get<std::string>() << ")\n";
    for (const auto& p : d["ports"]) {
      o << "  port " << p["port"] << ": "
        << (p["active"].get<bool>() ? "PORT_ACTIVE" : "!! PORT_" + p["state"].get<std::string>())
        << ", link layer " << p["linkLayer"].get<std::string>() << ", netdev "
        << (p["netdev"].get<std::string>().empty() ? "-" : p["netdev"].get<std::string>());
      if (p.contains("netdevMtu")) o << " (MTU " << p["netdevMtu"] << ", RoCE MTU " << p["roceMtu"] << ")";
      o << "\n";
      for (const auto& g : p["gids"])
        o << "    gid " << g["index"] << " " << g["gid"].get<std::string>() << " "
          << g["type"].get<std::string>() << " " << g["netdev"].get<std::string>() << "\n";
    }
  }
  o << "\n== Netdevs and their RDMA devices\n";
  for (const auto& n : r["netdevs"]) {
    o << n["name"].get<std::string>() << " " << n["mac"].get<std::string>() << " mtu " << n["mtu"]
      << (n["up"].get<bool>() ? " up" : " down");
    if (n.contains("rdmaDevice"))
      o << " -> " << n["rdmaDevice"].get<std::string>() << " (by " << n["pairedBy"].get<std::string>() << ")";
    o << "\n";
  }
  o << "\n== SMC\n";
  for (const auto& [k, v] : r["smc"]["sysctls"].items())
    o << k << " = " << (v.is_null() ? "(absent)" : v.get<std::string>()) << "\n";
  if (r["smc"].contains("error")) o << "SMC netlink: " << r["smc"]["error"].get<std::string>() << "\n";
  for (const auto& p : r["smc"].value("pnet", json::array()))
    o << "pnet " << p["pnetId"].get<std::string>() << " " << p["netdev"].get<std::string>()
      << p["ibDevice"].get<std::string>() << "\n";
  o << "\n== memlock of the processes in this netns\n";
  for (const auto& p : r["memlock"]["processes"])
    o << p["pid"] << " " << p["comm"].get<std::string>() << ": soft " << p["soft"].get<std::string>()
      << ", hard " << p["hard"].get<std::string>() << "\n";
  if (r["memlock"].contains("hint")) o << "!! " << r["memlock"]["hint"].get<std::string>() << "\n";
  o << "\n== erdma-cni state vs the kernel\n";
  for (const auto& s : r["states"]) {
    o << s["file"].get<std::string>() << ": " << (s["problems"].empty() ? "ok" : "") << "\n";
    if (s.contains("vf")) {
      const json& vf = s["vf"];
      o << "  VF " << vf["pci"].get<std::string>() << " (vf " << vf["vf"] << " of "
        << vf["pf"].get<std::string>() << "), "
        << (vf["netdev"].get<std::string>().empty() ? "no netdev (user-space driver)"
                                                    : "netdev " + vf["netdev"].get<std::string>())
        << "\n";
    }
    for (const auto& p : s["problems"]) o << "  !! " << p.get<std::string>() << "\n";
  }
  o << "\n== node devices held by pods\n";
  for (const auto& h : r.value("holders", json::array()))
    o << h["device"].get<std::string>() << ": " << h["as"].get<std::string>() << " by container "
      << h["containerID"].get<std::string>() << " (network " << h["network"].get<std::string>()
      << ", interface " << h["ifName"].get<std::string>() << ")"
      << (h["stale"].get<bool>()
              ? ", stale: its state is gone; the next ADD, DEL or GC of the device clears it"
              : "")
      << "\n";
  const auto& problems = r["problems"];
  o << "\n"
    << (problems.empty() ? "no problems found" : std::to_string(problems.size()) + " problem(s), marked !!")
    << "\n";
  return o.str();
}

}  // namespace cni
