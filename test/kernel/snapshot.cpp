// Reading a namespace's network state: canonical snapshots and small queries.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "test/kernel/harness.h"

namespace kt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json IpJson(const std::string& cmd) {
  std::string out = ShOk(cmd);
  if (out.find_first_not_of(" \n\t") == std::string::npos) return json::array();
  return json::parse(out);
}

void EraseKeys(json& j, std::initializer_list<const char*> keys) {
  for (const char* k : keys) j.erase(k);
}

}  // namespace

std::string Snapshot(const std::string& netns) {
  const std::string ip = "ip -n " + netns + " ";
  std::vector<std::string> lines;

  for (json link : IpJson(ip + "-d -j link show")) {
    // ifindex and peer indexes/netnsids are allocation details, not state we restore.
    EraseKeys(link, {"ifindex", "link", "link_index", "link_netnsid", "stats", "stats64"});
    if (link.contains("linkinfo")) {
      json li = json::object();
      for (const char* k : {"info_kind", "info_slave_kind"}) {
        if (link["linkinfo"].contains(k)) li[k] = link["linkinfo"][k];
      }
      link["linkinfo"] = li;  // info_data holds timers (bridge) that tick
    }
    lines.push_back("link " + link.dump());
  }
  for (const json& link : IpJson(ip + "-j addr show")) {
    for (json a : link.value("addr_info", json::array())) {
      EraseKeys(a, {"valid_life_time", "preferred_life_time", "tentative", "optimistic"});
      a["dev"] = link.value("ifname", "");
      lines.push_back("addr " + a.dump());
    }
  }
  for (const std::string f : {"4", "6"}) {
    std::string fam = ip;
    fam.append("-").append(f);
    for (json r : IpJson(fam + " -j route show table all")) {
      EraseKeys(r, {"expires", "cache", "uid"});
      lines.push_back("route" + f + " " + r.dump());
    }
    for (const json& r : IpJson(fam + " -j rule show")) {
      lines.push_back("rule" + f + " " + r.dump());
    }
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::string StableSnapshot(const std::string& netns) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  for (;;) {
    bool settled = true;
    for (const auto& link : IpJson("ip -n " + netns + " -j link show")) {
      json flags = link.value("flags", json::array());
      auto has = [&](const char* f) { return std::find(flags.begin(), flags.end(), f) != flags.end(); };
      if (!has("UP")) continue;
      std::string op = link.value("operstate", "");
      if (has("NO-CARRIER") || (op != "UP" && op != "UNKNOWN")) settled = false;
    }
    if (settled || std::chrono::steady_clock::now() > deadline) return Snapshot(netns);
    usleep(50 * 1000);
  }
}

std::string SnapshotDiff(const std::string& a, const std::string& b) {
  auto split = [](const std::string& s) {
    std::vector<std::string> v;
    std::stringstream ss(s);
    std::string l;
    while (std::getline(ss, l)) v.push_back(l);
    std::sort(v.begin(), v.end());
    return v;
  };
  auto va = split(a), vb = split(b);
  std::vector<std::string> only_a, only_b;
  std::set_difference(va.begin(), va.end(), vb.begin(), vb.end(), std::back_inserter(only_a));
  std::set_difference(vb.begin(), vb.end(), va.begin(), va.end(), std::back_inserter(only_b));
  std::string out;
  for (const auto& l : only_a) out += "- " + l + "\n";
  for (const auto& l : only_b) out += "+ " + l + "\n";
  return out;
}

std::string SettledDiff(const std::string& expected, const std::string& netns, const std::string& ignore) {
  auto filtered = [&](const std::string& snap) { return ignore.empty() ? snap : WithoutLines(snap, ignore); };
  const std::string want = filtered(expected);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  for (;;) {
    std::string diff = SnapshotDiff(want, filtered(Snapshot(netns)));
    if (diff.empty() || std::chrono::steady_clock::now() > deadline) return diff;
    usleep(100 * 1000);
  }
}

std::vector<std::string> StateFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (ec) break;
    if (it->is_regular_file(ec) || it->is_symlink(ec)) {
      files.push_back(fs::relative(it->path(), dir, ec).string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool FileExists(const std::string& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

std::string StatePath(const std::string& data_dir, const std::string& network,
                      const std::string& container_id, const std::string& ifname) {
  // "@<containerID>@<ifname>", the ifname's '%' and '.' escaped (cni/state/state.h),
  // spelled out here so that a change of format breaks these tests.
  std::string name = "@" + container_id + "@";
  for (char c : ifname)
    name += c == '%' ? std::string("%25") : c == '.' ? std::string("%2e") : std::string(1, c);
  return data_dir + "/" + network + "/" + name;
}

std::vector<std::string> ClaimsFor(const std::string& data_dir, const std::string& container_id) {
  std::vector<std::string> found;
  std::error_code ec;
  // Claims are files in devices/, children's shares files in children/<parent>/.
  for (const char* dir : {"/devices", "/children"}) {
    for (const auto& e : fs::recursive_directory_iterator(data_dir + dir, ec)) {
      if (!e.is_regular_file(ec)) continue;
      // An entry of the claims' index is a hard link to a claim listed already; one that is the last link
      // of its file (the claim is gone) is listed: it was left behind.
      if (e.path().parent_path().filename() == ".by:id" && e.hard_link_count(ec) > 1) continue;
      std::ifstream f(e.path());
      std::string content((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      if (content.find(container_id) != std::string::npos) found.push_back(e.path().string());
    }
  }
  return found;
}

std::vector<std::string> Addresses(const std::string& netns, const std::string& dev, int family) {
  std::vector<std::string> out;
  ShResult r = Sh("ip -n " + netns + " -" + std::to_string(family) + " -j addr show dev " + dev);
  if (r.exit != 0) return out;
  json j = json::parse(r.out, nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& link : j) {
    for (const auto& a : link.value("addr_info", json::array())) {
      if (a.value("scope", "") == "link") continue;
      out.push_back(a.value("local", "") + "/" + std::to_string(a.value("prefixlen", 0)));
    }
  }
  return out;
}

bool LinkExists(const std::string& netns, const std::string& dev) {
  return Sh("ip -n " + netns + " link show dev " + dev).exit == 0;
}

json LinkJson(const std::string& netns, const std::string& dev) {
  ShResult r = Sh("ip -n " + netns + " -d -j link show dev " + dev);
  if (r.exit != 0) return nullptr;
  json j = json::parse(r.out, nullptr, false);
  if (!j.is_array() || j.empty()) return nullptr;
  return j[0];
}

json Routes(const std::string& netns, const std::string& table, int family) {
  return IpJson("ip -n " + netns + " -" + std::to_string(family) + " -j route show table " + table);
}

json Rules(const std::string& netns, int family) {
  return IpJson("ip -n " + netns + " -" + std::to_string(family) + " -j rule show");
}

std::string WithoutLines(const std::string& snapshot, const std::string& needle) {
  std::stringstream ss(snapshot);
  std::string line, out;
  while (std::getline(ss, line)) {
    if (line.find(needle) == std::string::npos) out += line + "\n";
  }
  return out;
}

long RuleTable(const std::string& netns, const std::string& src, int family, long* priority) {
  for (const auto& r : Rules(netns, family)) {
    if (r.value("src", "") != src) continue;
    if (priority != nullptr) *priority = r.value("priority", -1L);
    std::string table = r.value("table", "");
    if (table == "main") return 254;
    if (table == "local") return 255;
    if (table == "default") return 253;
    return std::atol(table.c_str());
  }
  return -1;
}

json RouteGet(const std::string& netns, const std::string& to, const std::string& from) {
  std::string cmd = "ip -n " + netns + " -j route get " + to;
  if (!from.empty()) cmd += " from " + from;
  ShResult r = Sh(cmd);
  if (r.exit != 0) return nullptr;
  json j = json::parse(r.out, nullptr, false);
  if (!j.is_array() || j.empty()) return nullptr;
  return j[0];
}

}  // namespace kt
