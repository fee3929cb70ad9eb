// Text forms of fake::World state: the call log's objects, Snapshot::Describe
// and a line diff between two snapshots.
#include <sys/socket.h>

#include <cstdio>
#include <sstream>

#include "test/fake/fake_kernel.h"

namespace fake {

namespace {

std::string Proto(uint8_t p) {
  switch (p) {
    case netlink::kProtoKernel: return "kernel";
    case netlink::kProtoBoot: return "boot";
    case netlink::kProtoStatic: return "static";
    default: return std::to_string(p);
  }
}

std::string Scope(uint8_t s) {
  switch (s) {
    case netlink::kScopeUniverse: return "universe";
    case netlink::kScopeLink: return "link";
    case netlink::kScopeHost: return "host";
    default: return std::to_string(s);
  }
}

std::string Hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

std::string DescribeLink(const netlink::LinkInfo& l) {
  return std::to_string(l.index) + " " + l.name + (l.up ? " up" : " down") + " mtu " + std::to_string(l.mtu) +
         " mac " + (l.mac.empty() ? "-" : l.mac) + " kind " + (l.kind.empty() ? "-" : l.kind);
}

std::string DescribeAddr(const netlink::AddrInfo& a) {
  std::string s = a.local.ToString() + " dev " + std::to_string(a.ifindex);
  if (a.scope != netlink::kScopeUniverse) s += " scope " + Scope(a.scope);
  if (a.flags != 0) s += " flags " + Hex(a.flags);
  if (a.broadcast) s += " brd " + a.broadcast->ToString();
  return s;
}

std::string DescribeRoute(const netlink::RouteInfo& r) {
  std::string s = r.dst.ToString();
  if (r.gateway) s += " via " + r.gateway->ToString();
  s += " dev " + std::to_string(r.oif) + " table " + std::to_string(r.table) + " metric " +
       std::to_string(r.metric) + " proto " + Proto(r.protocol) + " scope " + Scope(r.scope);
  if (r.prefsrc) s += " src " + r.prefsrc->ToString();
  if (r.type != 1) s += " type " + std::to_string(r.type);
  return s;
}

std::string DescribeRule(const netlink::RuleInfo& r) {
  const char* family = r.family == AF_INET ? "v4" : r.family == AF_INET6 ? "v6" : "af?";
  return std::string(family) + " pref " + std::to_string(r.priority) + " from " +
         (r.src ? r.src->ToString() : "all") + " lookup " + std::to_string(r.table);
}

std::string Snapshot::Describe() const {
  std::string out;
  for (const NetnsState& ns : netns) {
    const std::string p = ns.name + ": ";
    out += p + "netns " + std::to_string(ns.id) + (ns.alive ? "" : " deleted") + "\n";
    for (const auto& l : ns.links) {
      out += p + "link " + DescribeLink(l);
      if (auto peer = veth_peers.find(l.index); peer != veth_peers.end())
        out += " peer " + std::to_string(peer->second);
      out += "\n";
    }
    for (const auto& a : ns.addrs) out += p + "addr " + DescribeAddr(a) + "\n";
    for (const auto& r : ns.routes) out += p + "route " + DescribeRoute(r) + "\n";
    for (const auto& r : ns.rules) out += p + "rule " + DescribeRule(r) + "\n";
  }
  return out;
}

std::ostream& operator<<(std::ostream& os, const Snapshot& s) { return os << "\n" << s.Describe(); }

// A longest-common-subsequence diff over Describe() lines; snapshots are a
// few dozen lines, so the quadratic table is fine.
std::string DiffSnapshots(const Snapshot& a, const Snapshot& b) {
  if (a == b) return "";
  const std::vector<std::string> x = Lines(a.Describe());
  const std::vector<std::string> y = Lines(b.Describe());
  std::vector<std::vector<int>> lcs(x.size() + 1, std::vector<int>(y.size() + 1, 0));
  for (size_t i = x.size(); i-- > 0;)
    for (size_t j = y.size(); j-- > 0;)
      lcs[i][j] = x[i] == y[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::string out;
  size_t i = 0, j = 0;
  while (i < x.size() || j < y.size()) {
    if (i < x.size() && j < y.size() && x[i] == y[j]) {
      ++i;
      ++j;
    } else if (i < x.size() && (j == y.size() || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out += "- " + x[i++] + "\n";
    } else {
      out += "+ " + y[j++] + "\n";
    }
  }
  // Equal text but unequal values (a field Describe does not print).
  if (out.empty()) out = "snapshots differ in a field Describe() does not show\n";
  return out;
}

}  // namespace fake
