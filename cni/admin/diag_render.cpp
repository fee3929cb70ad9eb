// The human form of `erdma-cni diag`'s report.
#include "cni/admin/diag_render.h"

#include <sstream>

#include "base/escape.h"
#include "cni/admin/diag.h"

namespace cni {

using nlohmann::json;

namespace {

// Every string in the report may come from the kernel (interface and RDMA device names), a pod (process
// names) or a state file: escaped, none of it reaches the terminal raw.
std::string Str(const json& v) { return base::EscapeForDisplay(v.get<std::string>()); }

}  // namespace

std::string RenderDiag(const json& r) {
  std::ostringstream o;
  o << "erdma-cni diag: " << base::EscapeForDisplay(r.value("netns", "")) << "\n\n== RDMA\n";
  const json& rdma = r["rdma"];
  if (rdma.contains("error")) o << "!! " << Str(rdma["error"]) << "\n";
  if (rdma.contains("netnsMode")) o << "netns mode: " << Str(rdma["netnsMode"]) << "\n";
  for (const auto& d : rdma.value("devices", json::array())) {
    o << Str(d["name"]) << " (" << Str(d["protocol"]) << ", node GUID " << Str(d["nodeGuid"]) << ")\n";
    for (const auto& p : d["ports"]) {
      o << "  port " << p["port"] << ": "
        << (p["active"].get<bool>() ? "PORT_ACTIVE" : "!! PORT_" + Str(p["state"])) << ", link layer "
        << Str(p["linkLayer"]) << ", netdev " << (Str(p["netdev"]).empty() ? "-" : Str(p["netdev"]));
      if (p.contains("netdevMtu")) o << " (MTU " << p["netdevMtu"] << ", RoCE MTU " << p["roceMtu"] << ")";
      o << "\n";
      for (const auto& g : p["gids"])
        o << "    gid " << g["index"] << " " << Str(g["gid"]) << " " << Str(g["type"]) << " "
          << Str(g["netdev"]) << "\n";
    }
  }
  o << "\n== Netdevs and their RDMA devices\n";
  for (const auto& n : r["netdevs"]) {
    o << Str(n["name"]) << " " << Str(n["mac"]) << " mtu " << n["mtu"]
      << (n["up"].get<bool>() ? " up" : " down");
    if (n.contains("rdmaDevice")) o << " -> " << Str(n["rdmaDevice"]) << " (by " << Str(n["pairedBy"]) << ")";
    o << "\n";
  }
  o << "\n== SMC\n";
  for (const auto& [k, v] : r["smc"]["sysctls"].items())
    o << base::EscapeForDisplay(k) << " = " << (v.is_null() ? "(absent)" : Str(v)) << "\n";
  if (r["smc"].contains("error")) o << "SMC netlink: " << Str(r["smc"]["error"]) << "\n";
  for (const auto& p : r["smc"].value("pnet", json::array()))
    o << "pnet " << Str(p["pnetId"]) << " " << Str(p["netdev"]) << Str(p["ibDevice"]) << "\n";
  o << "\n== what the processes in this netns were given: memlock, /dev/infiniband, NCCL_IB_HCA, "
       "NCCL_TOPO_FILE\n";
  for (const auto& p : r["memlock"]["processes"]) {
    o << p["pid"] << " " << p["comm"].get<std::string>() << ": memlock soft " << Str(p["soft"]) << ", hard "
      << Str(p["hard"]);
    std::string nodes;
    // Escaped where they were read (they reach --json too).
    for (const auto& n : p.value("infiniband", json::array()))
      nodes += (nodes.empty() ? "" : " ") + n.get<std::string>();
    o << "; /dev/infiniband: " << (nodes.empty() ? "none" : nodes);
    if (p.contains("ncclIbHca")) o << "; NCCL_IB_HCA=" << p["ncclIbHca"].get<std::string>();
    if (p.contains("ncclTopoFile")) o << "; NCCL_TOPO_FILE=" << p["ncclTopoFile"].get<std::string>();
    o << "\n";
  }
  if (r["memlock"].contains("hint")) o << "!! " << Str(r["memlock"]["hint"]) << "\n";
  if (r.contains("nri")) {
    const json& n = r["nri"];
    o << "\n== the runtime's NRI and the agent (docs/nri.md)\n";
    o << "NRI socket " << Str(n["socket"]) << ": " << (n.value("offered", false) ? "offered" : "absent")
      << "\n";
    if (n.contains("fix")) o << "  " << Str(n["fix"]) << "\n";
    std::string pids;
    for (const auto& p : n.value("agents", json::array())) pids += (pids.empty() ? "" : ", ") + p.dump();
    o << "erdma-cni-nri: " << (pids.empty() ? "not running on this node" : "running, pid " + pids) << "\n";
  }
  o << "\n== erdma-cni in the node's conflists\n";
  for (const auto& e : r.value("nodeEntries", json::array())) {
    o << Str(e["file"]) << ", plugin " << e["index"] << ": " << (e["problems"].empty() ? "ok" : "");
    if (e.contains("kubelet")) o << (e["problems"].empty() ? ", the kubelet answers" : "");
    o << "\n";
    for (const auto& p : e["problems"]) o << "  !! " << Str(p) << "\n";
  }
  o << "\n== erdma-cni state vs the kernel\n";
  for (const auto& d : r.value("dataDirs", json::array())) o << "dataDir " << Str(d) << "\n";
  for (const auto& d : r.value("dataDirsNotSearched", json::array()))
    o << "dataDirs entry " << Str(d) << " allows any directory below it: not searched (give --data-dir)\n";
  for (const auto& s : r["states"]) {
    o << Str(s["file"]) << ": " << (s["problems"].empty() ? "ok" : "") << "\n";
    if (s.contains("vf")) {
      const json& vf = s["vf"];
      o << "  VF " << Str(vf["pci"]) << " (vf " << vf["vf"] << " of " << Str(vf["pf"]) << "), "
        << (Str(vf["netdev"]).empty() ? "no netdev (user-space driver)" : "netdev " + Str(vf["netdev"]))
        << "\n";
    }
    // A group goes by its first rail's name, and its CNI_IFNAME when that differs.
    auto group_name = [&](const json& key) {
      const std::string name = s.contains("groupName") ? Str(s["groupName"]) : Str(key);
      return name == Str(key) ? name : name + " (CNI_IFNAME " + Str(key) + ")";
    };
    if (s.contains("group")) o << "  group " << group_name(s["ifName"]) << "\n";
    for (const auto& m : s.value("group", json::array()))
      o << "  " << Str(m["podIfName"]) << ": " << Str(m["device"]) << " (" << Str(m["why"]) << ")\n";
    if (s.contains("memberOf"))
      o << "  interface " << Str(s["podIfName"]) << " of the group " << group_name(s["memberOf"]) << "\n";
    for (const auto& p : s["problems"]) o << "  !! " << Str(p) << "\n";
  }
  o << "\n== node devices held by pods\n";
  for (const auto& h : r.value("holders", json::array()))
    o << Str(h["device"]) << ": " << Str(h["as"]) << " by container " << Str(h["containerID"]) << " (network "
      << Str(h["network"]) << ", interface " << Str(h["ifName"]) << ")"
      << (h.value("podGone", false)
              ? ", stale: its pod netns is gone (its DEL was lost); the next ADD of the device finishes "
                "that DEL once the device is back on the node, and so does a GC"
          : h["stale"].get<bool>()
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
