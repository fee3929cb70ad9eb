// The promise every DEL of the suite is held to (RunPlugin calls these after each run of the plugin): a DEL
// that exits 0 has undone the attachment. Nothing of it is left in any data dir its ADDs used or its DEL
// named — no state, no member's state, no claim or share whose state is gone, no attachment record, no
// device-info file as its ADD wrote it — and
// every device its ADD moved is back on the node under its own name and MAC (or held by another pod since).
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "cni/state/claim.h"
#include "cni/state/record.h"
#include "cni/state/state.h"
#include "test/kernel/harness.h"

namespace kt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Moved {
  std::string node_netns, name, mac, kind;
  std::string pod_netns;  ///< the pod's netns name (CNI_NETNS under /run/netns/), "" when not one
};

// What the suite's ADDs of one attachment (container ID, CNI_IFNAME) used.
struct Seen {
  std::set<std::string> data_dirs;
  std::vector<Moved> moved;
  /// The device-info files the states journaled: path, (inode, text).
  std::map<std::string, std::pair<uint64_t, std::string>> device_infos;
};

struct Ledger {
  std::mutex mu;
  std::map<std::pair<std::string, std::string>, Seen> seen;
  std::vector<std::string> pending;  // found on other threads, where Catch2 cannot fail a test
  const std::thread::id main = std::this_thread::get_id();
  ~Ledger() {
    if (pending.empty()) return;
    for (const std::string& p : pending) std::cerr << "FAILED on a worker thread: " << p << "\n";
    std::_Exit(1);
  }
};

// Made during static initialization, on the thread that runs main(): the first CheckInvariants may run on a
// worker (a concurrency test run alone, as ctest runs each).
Ledger the_ledger;

Ledger& TheLedger() { return the_ledger; }

json ReadJson(const fs::path& p) {
  std::ifstream f(p);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return json::parse(text, nullptr, false);
}

std::string EnvOf(const PluginCall& call, const std::string& key) {
  for (const std::string& e : call.extra_env)
    if (e.starts_with(key + "=")) return e.substr(key.size() + 1);
  return "";
}

// The node file the call ran with, parsed (null when unset or unreadable).
json NodeFileOf(const PluginCall& call) {
  std::string path = EnvOf(call, "ERDMA_CNI_NODE_CONFIG");
  if (path.empty()) {
    const bool unset = std::any_of(call.extra_env.begin(), call.extra_env.end(),
                                   [](const std::string& e) { return e == "ERDMA_CNI_NODE_CONFIG"; });
    if (unset) return nullptr;
    path = TestNodeFile();
  }
  json j = ReadJson(path);
  return j.is_object() ? j : json(nullptr);
}

std::string DataDirOf(const json& config) {
  if (config.is_object() && config.contains("dataDir") && config["dataDir"].is_string())
    return config["dataDir"].get<std::string>();
  return "/run/erdma-cni";
}

std::string EscapedIf(const std::string& ifname) {
  std::string name;
  for (char c : ifname)
    name += c == '%' ? std::string("%25") : c == '.' ? std::string("%2e") : std::string(1, c);
  return name;
}

// Every state of (cid, ifname) in `data_dir`, members of its group included.
std::vector<std::string> StatesIn(const std::string& data_dir, const std::string& cid,
                                  const std::string& ifname) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& net : fs::directory_iterator(data_dir, ec)) {
    const std::string n = net.path().filename().string();
    if (!net.is_directory(ec) || n == "devices" || n == "children") continue;
    for (const auto& f : fs::directory_iterator(net.path(), ec)) {
      const std::string name = f.path().filename().string();
      if (name.ends_with(".unreadable")) continue;  // set aside on purpose, named in DEL's log
      if (name == "@" + cid + "@" + EscapedIf(ifname) ||
          name == "@" + cid + "@" + EscapedIf(ifname) + "%group") {
        found.push_back(f.path().string());
        continue;
      }
      // An older build's name, which two attachments may share: this one's only by what it holds.
      if (name == cid + "-" + ifname) {
        json st = ReadJson(f.path());
        if (!st.is_object() || (st.value("containerID", "") == cid && st.value("ifName", "") == ifname))
          found.push_back(f.path().string());
        continue;
      }
      if (!name.starts_with("@" + cid + "@")) continue;
      json st = ReadJson(f.path());
      if (st.is_object() && st.value("containerID", "") == cid && st.value("memberOf", "") == ifname)
        found.push_back(f.path().string() + " (a member)");
    }
  }
  return found;
}

// Claims and shares of `cid` in `data_dir` whose owner's state is gone, as the plugin's own reader sees them
// (a planted file it refuses to read is no attachment's), and index entries whose claim is gone.
std::vector<std::string> OrphanHoldings(const std::string& data_dir, const std::string& cid) {
  std::vector<std::string> found;
  for (const cni::HoldRecord& h : cni::ListHolds(data_dir + "/devices", data_dir + "/children"))
    if (h.owner.container_id == cid && !h.live)
      found.push_back((h.share ? "share of " : "claim of ") + h.device + " naming " + h.owner.state_path);
  for (const std::string& p : ClaimsFor(data_dir, cid))
    if (fs::path(p).parent_path().filename() == ".by:id") found.push_back(p);
  return found;
}

// After ADD exit 0: the moves its states journaled.
void RememberMoves(Seen& seen, const std::string& node_netns, const std::string& pod_path,
                   const std::string& data_dir, const json& config, const std::string& cid,
                   const std::string& ifname) {
  const std::string pod_netns = pod_path.starts_with("/run/netns/") ? pod_path.substr(11) : "";
  if (node_netns.empty() || !config.is_object() || !config.contains("name") || !config["name"].is_string())
    return;
  for (std::string p : StatesIn(data_dir, cid, ifname)) {
    if (p.ends_with(" (a member)")) p.resize(p.size() - 11);
    json st = ReadJson(p);
    if (st.is_object() && st.contains("deviceInfo") && st["deviceInfo"].is_object())
      seen.device_infos[st["deviceInfo"].value("path", "")] = {st["deviceInfo"].value("ino", uint64_t{0}),
                                                               st["deviceInfo"].value("text", "")};
    if (!st.is_object() || !st.contains("steps") || !st["steps"].is_array()) continue;
    for (const json& step : st["steps"])
      if (step.value("op", "") == "move" && st.contains("device") && st["device"].is_object())
        seen.moved.push_back({node_netns, st["device"].value("name", ""), st["device"].value("mac", ""),
                              st["device"].value("kind", ""), pod_netns});
  }
}

// Whether the device is home, or claimed by another attachment since (a pod that raced for it).
bool HomeOrRetaken(const Moved& m, const std::set<std::string>& data_dirs, const std::string& cid) {
  json link = LinkJson(m.node_netns, m.name);
  if (!link.is_null() && link.value("address", "") == m.mac) return true;
  // The suite's ENIs are veths, which the kernel destroys with the pod's netns (a real ENI comes back to the
  // node instead): such a device is lost to the test topology, not to DEL, unless the pod still holds it.
  if (m.kind == "veth") {
    if (m.pod_netns.empty()) return true;
    const ShResult pod = Sh("ip -n " + m.pod_netns + " -o link show");
    return pod.exit != 0 || pod.out.find(m.mac) == std::string::npos;
  }
  for (const std::string& d : data_dirs) {
    json c = ReadJson(d + "/devices/" + m.name);
    if (c.is_object() && c.value("containerID", "") != cid && !c.value("containerID", "").empty())
      return true;
  }
  return false;
}

// After ADD exit 0: its record, if it wrote one, parses with DEL's reader and names a place whose state
// DEL's reader loads; a state at the config's place has a record.
std::vector<std::string> AddReadsBack(const std::string& record, const std::string& data_dir,
                                      const std::string& cid, const std::string& ifname) {
  std::vector<std::string> wrong;
  if (!FileExists(record)) {
    for (const std::string& p : StatesIn(data_dir, cid, ifname))
      wrong.push_back("state " + p + " without a record");
    return wrong;
  }
  std::ifstream f(record);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto place = cni::ParseRecord(text, record, cid, ifname);
  if (!place.ok() || !*place) {
    wrong.push_back("record " + record + ": " + (place.ok() ? std::string("empty") : place.error().msg));
    return wrong;
  }
  const cni::StateStore store((*place)->data_dir, (*place)->network);
  bool found = false;
  for (const std::string& p : store.PathsOf(cid, ifname)) {
    auto st = store.Load(p);
    if (!st.ok())
      wrong.push_back("state " + p + ": " + st.error().msg);
    else
      found = found || st->has_value();
  }
  if (!found && wrong.empty()) wrong.push_back("record " + record + " names a place with no state");
  return wrong;
}

void Report(const std::string& head, const std::vector<std::string>& wrong) {
  if (wrong.empty()) return;
  std::string what = head;
  for (const std::string& w : wrong) what += "\n  " + w;
  FailOnAnyThread(what);
}

}  // namespace

void FailOnAnyThread(const std::string& what) {
  Ledger& ledger = TheLedger();
  if (std::this_thread::get_id() == ledger.main) FAIL(what);
  std::lock_guard<std::mutex> lock(ledger.mu);
  ledger.pending.push_back(what);
}

void CheckInvariants(const PluginCall& call, const PluginResult& r) {
  if (call.container_id.empty() || r.exit != 0 || (call.command != "ADD" && call.command != "DEL")) return;
  const json config = json::parse(call.stdin_text, nullptr, false);
  const std::string data_dir = DataDirOf(config);
  Ledger& ledger = TheLedger();
  const auto key = std::make_pair(call.container_id, call.ifname);
  const json node = NodeFileOf(call);
  const std::string records = node.is_object() && node.contains("attachmentsDir")
                                  ? node["attachmentsDir"].get<std::string>()
                                  : std::string("/run/erdma-cni-attachments");
  const std::string record = records + "/@" + call.container_id + "@" + EscapedIf(call.ifname);
  if (call.command == "ADD") {
    {
      std::lock_guard<std::mutex> lock(ledger.mu);
      Seen& seen = ledger.seen[key];
      seen.data_dirs.insert(data_dir);
      RememberMoves(seen, call.run_in, call.netns.value_or(""), data_dir, config, call.container_id,
                    call.ifname);
    }
    Report("ADD of " + call.container_id + "/" + call.ifname + " exited 0 but wrote what DEL cannot read:",
           AddReadsBack(record, data_dir, call.container_id, call.ifname));
    return;
  }
  Seen seen;
  {
    std::lock_guard<std::mutex> lock(ledger.mu);
    seen = ledger.seen[key];
    ledger.seen.erase(key);
  }
  seen.data_dirs.insert(data_dir);
  std::vector<std::string> left;
  for (const std::string& d : seen.data_dirs) {
    for (const std::string& p : StatesIn(d, call.container_id, call.ifname)) left.push_back("state " + p);
    for (const std::string& p : OrphanHoldings(d, call.container_id)) left.push_back("claim or share " + p);
  }
  if (FileExists(record)) left.push_back("attachment record " + record);
  // Still the file ADD wrote: DEL leaves one replaced or edited since.
  for (const auto& [path, wrote] : seen.device_infos) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || st.st_ino != wrote.first) continue;
    std::ifstream f(path);
    const std::string now((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (now == wrote.second) left.push_back("device-info file " + path);
  }
  for (const Moved& m : seen.moved)
    if (!HomeOrRetaken(m, seen.data_dirs, call.container_id))
      left.push_back("device " + m.name + " (" + m.mac + ") is not back in " + m.node_netns);
  Report("DEL of " + call.container_id + "/" + call.ifname + " exited 0 but left:", left);
}

}  // namespace kt
