#include "integration/soak/census.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

namespace soak {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Capture(const std::string& cmd) {
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) throw std::runtime_error("popen failed: " + cmd);
  std::string out;
  char buf[16384];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  const int st = pclose(f);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) throw std::runtime_error("command failed: " + cmd);
  return out;
}

json IpJson(const std::string& cmd) {
  const std::string out = Capture(cmd);
  if (out.find_first_not_of(" \n\t") == std::string::npos) return json::array();
  return json::parse(out);
}

// The kernel tests' canonical form (test/kernel/snapshot.cpp): allocation
// details (ifindex, peer index, netnsid), counters and timers dropped.
std::vector<std::string> NetnsLines(const std::string& ns) {
  const std::string ip = "ip -n " + ns + " ";
  std::vector<std::string> lines;
  for (json link : IpJson(ip + "-d -j link show")) {
    for (const char* k : {"ifindex", "link", "link_index", "link_netnsid", "stats", "stats64"}) link.erase(k);
    if (link.contains("linkinfo")) {
      json li = json::object();
      for (const char* k : {"info_kind", "info_slave_kind"})
        if (link["linkinfo"].contains(k)) li[k] = link["linkinfo"][k];
      link["linkinfo"] = li;
    }
    lines.push_back("link " + link.dump());
  }
  for (const json& link : IpJson(ip + "-j addr show")) {
    for (json a : link.value("addr_info", json::array())) {
      for (const char* k : {"valid_life_time", "preferred_life_time", "tentative", "optimistic"}) a.erase(k);
      a["dev"] = link.value("ifname", "");
      lines.push_back("addr " + a.dump());
    }
  }
  for (const std::string f : {"4", "6"}) {
    for (json r : IpJson(ip + "-" + f + " -j route show table all")) {
      for (const char* k : {"expires", "cache", "uid"}) r.erase(k);
      lines.push_back("route" + f + " " + r.dump());
    }
    for (const json& r : IpJson(ip + "-" + f + " -j rule show")) lines.push_back("rule" + f + " " + r.dump());
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

std::vector<std::string> Fds() {
  std::vector<std::string> out;
  // Listing /proc/self/fd opens one more fd: the iterator's own, which
  // shows up as a dangling link once it is closed. Resolve after listing.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator("/proc/self/fd")) names.push_back(e.path().filename());
  for (const auto& n : names) {
    std::error_code ec;
    const fs::path target = fs::read_symlink("/proc/self/fd/" + n, ec);
    if (ec) continue;  // the iterator's fd, closed by now
    out.push_back(n + " -> " + target.string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> Files(const std::vector<std::string>& dirs) {
  std::vector<std::string> out;
  for (const auto& d : dirs) {
    std::error_code ec;
    if (!fs::exists(d, ec)) continue;
    for (auto it = fs::recursive_directory_iterator(d, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      out.push_back(it->path().string() + (it->is_directory(ec) ? "/" : ""));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// mountinfo lines as "root mountpoint fstype source": the mount ID and
// parent ID differ between namespaces, the rest of a propagated mount does not.
std::multiset<std::string> Mounts(const std::string& path) {
  std::multiset<std::string> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::vector<std::string> f{std::istream_iterator<std::string>(s), std::istream_iterator<std::string>()};
    auto dash = std::find(f.begin(), f.end(), "-");
    if (f.size() < 5 || dash == f.end() || std::distance(dash, f.end()) < 3) continue;
    out.insert(f[3] + " " + f[4] + " " + *(dash + 1) + " " + *(dash + 2));
  }
  return out;
}

// Mounts here that the parent's namespace lacks: what this process (and the
// plugins it runs, which share its mount namespace) mounted itself. Mounts
// other programs make meanwhile (other tests' `ip netns add`) propagate into
// both and cancel out; the parent is read before and after ours so that one
// made or removed in between is on both sides too.
std::vector<std::string> PrivateMounts(int parent_pid) {
  const std::string theirs = "/proc/" + std::to_string(parent_pid) + "/mountinfo";
  std::multiset<std::string> parent = Mounts(theirs);
  const std::multiset<std::string> mine = Mounts("/proc/self/mountinfo");
  for (const auto& m : Mounts(theirs)) parent.insert(m);
  std::vector<std::string> out;
  for (const auto& m : mine)
    if (parent.count(m) == 0) out.push_back(m);
  return out;
}

void DiffLines(const std::string& what, const std::vector<std::string>& a, const std::vector<std::string>& b,
               std::vector<std::string>& out) {
  std::vector<std::string> only_a, only_b;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only_a));
  std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(only_b));
  for (const auto& l : only_a) out.push_back("- " + what + ": " + l);
  for (const auto& l : only_b) out.push_back("+ " + what + ": " + l);
}

}  // namespace

Census Take(const Watch& w) {
  Census c;
  for (const auto& ns : w.netns) c.netns[ns] = NetnsLines(ns);
  c.files = Files(w.dirs);
  if (w.parent_pid > 0) c.mounts = PrivateMounts(w.parent_pid);
  c.fds = Fds();  // last: nothing above may hold an fd open by now
  return c;
}

std::vector<std::string> Diff(const Census& before, const Census& after) {
  std::vector<std::string> out;
  DiffLines("fd", before.fds, after.fds, out);
  for (const auto& [ns, lines] : before.netns) {
    auto it = after.netns.find(ns);
    DiffLines(ns, lines, it == after.netns.end() ? std::vector<std::string>{} : it->second, out);
  }
  DiffLines("file", before.files, after.files, out);
  DiffLines("mount", before.mounts, after.mounts, out);
  return out;
}

std::vector<std::string> SettledDiff(const Census& before, const Watch& w, int settle_ms, Census* last) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(settle_ms);
  for (;;) {
    Census now = Take(w);
    std::vector<std::string> diff = Diff(before, now);
    if (last) *last = std::move(now);
    if (diff.empty() || std::chrono::steady_clock::now() >= deadline) return diff;
    usleep(100 * 1000);
  }
}

std::string Summary(const Census& c) {
  std::ostringstream s;
  s << c.fds.size() << " fds";
  for (const auto& [ns, lines] : c.netns) s << ", " << ns << " " << lines.size() << " lines";
  s << ", " << c.files.size() << " files and directories, " << c.mounts.size() << " private mounts";
  return s.str();
}

}  // namespace soak
