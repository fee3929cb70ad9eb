// libFuzzer harness over erdma-cni's whole input surface: the CNI_*
// environment, CNI_ARGS, stdin (every cniVersion, prevResult, runtimeConfig,
// args) and what IPAM answers, through cni::RunWith, the path the binary takes
// (env parsing, config parsing, command dispatch, results, error JSON), with
// the kernel replaced by the in-memory node of fuzz_node.h; a seccomp filter
// (fuzz_sandbox.h) traps any syscall that would reach the kernel's network
// configuration. Input format: fuzz_input.h. Each input runs on a fresh node
// and an empty data dir. Between invocations an input can plant files in the
// data dir (state files, claims, shares: what the plugin reads back as
// hostile input), set what IPAM prints, and hand a conflist to the
// installer's edit.
//
// Besides crashes, leaks, UB and timeouts, it aborts when an invocation
//  - exits with anything but 0 or 1, or prints anything but one JSON line
//    (nothing at all for a successful DEL, CHECK, GC or STATUS);
//  - fails without a CNI error object (string cniVersion of a supported
//    version, a code from docs/errors.md, a non-empty msg), or with code 108
//    (an exception escaped: a bug by definition);
//  - fails an ADD (except code 102, rollback incomplete), or runs CHECK,
//    STATUS or VERSION, or fails on bad input (codes 1, 4, 6, 7), and the
//    node or the data dir's files differ afterwards (a file an @file section
//    planted may be gone: a stale claim or share cleaned up).
//
// dataDir and logFile: every config that parses has them replaced with paths
// in this process's temp dir before the plugin sees it (a config that does
// not parse never reaches a file), so nothing is written outside it.
//
// A conflist aborts when the installer's edit crashes, fails with a code other
// than 6 or 7, or succeeds with a result that does not hold exactly one
// erdma-cni entry, is not accepted by a second install as up to date, or
// (uninstall) still holds one.
//
// ERDMA_FUZZ_TRACE=1 prints every invocation and its outcome to stderr.
// ERDMA_FUZZ_EXPECT=1 checks seeds: an invocation with FUZZ_EXPECT=N must
// exit 0 (N = 0) or fail with code N.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "base/log.h"
#include "cni/command/run.h"
#include "cni/driver/registry.h"
#include "conf/config.h"
#include "conf/version.h"
#include "install/conflist.h"
#include "nri/frame.h"
#include "nri/messages.h"
#include "nri/session.h"
#include "test/fuzz/fuzz_input.h"
#include "test/fuzz/fuzz_node.h"
#include "test/fuzz/fuzz_sandbox.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Dirs {
  std::string root, sysfs, data, log, attachments;
};

Dirs g_dirs;
bool g_trace = false;
bool g_expect = false;

void RemoveRoot() {
  std::error_code ec;
  fs::remove_all(g_dirs.root, ec);
}

[[noreturn]] void Die(const std::string& what, const fuzz::Invocation& inv, const std::string& out) {
  std::fprintf(stderr, "\n==fuzz oracle== %s\n--- env:\n", what.c_str());
  for (const auto& [k, v] : inv.env) std::fprintf(stderr, "%s=%s\n", k.c_str(), v.c_str());
  std::fprintf(stderr, "--- stdin (%zu bytes):\n%.2000s\n--- stdout:\n%.2000s\n", inv.stdin_bytes.size(),
               inv.stdin_bytes.c_str(), out.c_str());
  std::abort();
}

// The regular files under the data dir and the attachment records, and their sizes.
std::string DataFiles() {
  std::string out;
  for (const std::string& dir : {g_dirs.data, g_dirs.attachments}) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it); it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      out += it->path().string() + " " + std::to_string(it->file_size(ec)) + "\n";
    }
  }
  return out;
}

// Files this input planted with @file: a failed command may remove one (a
// stale claim or share it met is cleaned up), but changes nothing else.
std::set<std::string> g_planted;

// `before` without the lines of planted files that are gone in `after`.
std::string WithoutRemovedPlants(const std::string& before, const std::string& after) {
  std::string out;
  std::istringstream lines(before);
  for (std::string line; std::getline(lines, line);) {
    const std::string path = line.substr(0, line.rfind(' '));
    const bool gone = after.find(path + " ") == std::string::npos;
    if (!(gone && g_planted.count(path))) out += line + "\n";
  }
  return out;
}

// The stdin the plugin gets: a config that parses gets our dataDir and logFile.
std::string Confine(const std::string& stdin_bytes) {
  if (!conf::Parse(cni::Modes(), stdin_bytes, /*for_del=*/true).ok()) return stdin_bytes;
  // conf::Parse accepted it: a JSON object at most 64 levels deep.
  json j = json::parse(stdin_bytes);
  j["dataDir"] = g_dirs.data;
  j["logFile"] = g_dirs.log;
  return j.dump();
}

bool DocumentedCode(int code) {
  static const std::set<int> codes = {1,   2,   3,   4,   5,   6,   7,   11,  50,  51,  100, 101,
                                      102, 103, 104, 105, 106, 107, 108, 110, 111, 112, 113, 114};
  return codes.count(code) != 0;
}

void RunOne(fuzz::Node& node, const fuzz::Invocation& inv) {
  auto getenv = [&](const char* name) -> const char* {
    auto it = inv.env.find(name);
    if (it == inv.env.end() || it->first.rfind("FUZZ_", 0) == 0) return nullptr;
    return it->second.c_str();
  };
  const char* command_var = getenv("CNI_COMMAND");
  const std::string command = command_var ? command_var : "";
  const std::string stdin_bytes = Confine(inv.stdin_bytes);

  const std::string node_before = node.Everything();
  const std::string files_before = DataFiles();
  std::string out;
  const int rc = cni::RunWith(getenv, stdin_bytes, out, node);
  if (g_trace)
    std::fprintf(stderr, "[fuzz] %s -> exit %d: %s%s", command.c_str(), rc, out.c_str(),
                 out.empty() ? "\n" : "");

  if (rc != 0 && rc != 1) Die("exit status " + std::to_string(rc), inv, out);
  const bool quiet_ok =
      rc == 0 && (command == "DEL" || command == "CHECK" || command == "GC" || command == "STATUS");
  if (quiet_ok) {
    if (!out.empty()) Die(command + " succeeded but printed something", inv, out);
  } else if (out.empty() || out.back() != '\n' || out.find('\n') != out.size() - 1) {
    Die("stdout is not exactly one line", inv, out);
  }
  json j;
  if (!quiet_ok) {
    j = json::parse(out, nullptr, false);
    if (!j.is_object()) Die("stdout is not a JSON object", inv, out);
    auto v = j.find("cniVersion");
    if (v == j.end() || !v->is_string() || !conf::IsSupportedVersion(v->get<std::string>()))
      Die("no supported cniVersion in the output", inv, out);
  }
  int code = 0;
  if (rc == 1) {
    auto c = j.find("code");
    auto m = j.find("msg");
    if (c == j.end() || !c->is_number_integer()) Die("error without an integer code", inv, out);
    code = c->get<int>();
    if (!DocumentedCode(code)) Die("undocumented error code " + std::to_string(code), inv, out);
    if (code == 108) Die("internal error (an exception escaped)", inv, out);
    if (m == j.end() || !m->is_string() || m->get<std::string>().empty())
      Die("error without a msg", inv, out);
    if (auto d = j.find("details"); d != j.end() && !d->is_string()) Die("details is not a string", inv, out);
  } else if (command == "ADD") {
    // Every key of a result is optional (mode none standalone prints only
    // cniVersion); those present have their spec's types.
    for (const char* key : {"interfaces", "ips", "routes"})
      if (auto it = j.find(key); it != j.end() && !it->is_array())
        Die(std::string("ADD result: ") + key + " is not an array", inv, out);
    if (auto it = j.find("dns"); it != j.end() && !it->is_object())
      Die("ADD result: dns is not an object", inv, out);
  }

  const bool bad_input = rc == 1 && (code == 1 || code == 4 || code == 6 || code == 7);
  const bool must_not_change = bad_input || (command == "ADD" && rc == 1 && code != 102) ||
                               command == "CHECK" || command == "STATUS" || command == "VERSION";
  if (must_not_change) {
    const std::string node_after = node.Everything();
    if (node_after != node_before)
      Die("the node changed:\n" + node_before + "\n=> after:\n" + node_after, inv, out);
    if (const std::string files_after = DataFiles();
        files_after != WithoutRemovedPlants(files_before, files_after))
      Die("the data dir changed:\n" + files_before + "=> after:\n" + files_after, inv, out);
  }

  if (g_expect) {
    auto e = inv.env.find("FUZZ_EXPECT");
    if (e != inv.env.end() && std::to_string(rc == 0 ? 0 : code) != e->second)
      Die("seed expected " + e->second + ", got exit " + std::to_string(rc) + " code " + std::to_string(code),
          inv, out);
  }
}

// An @file section: `bytes` at `rel` (fuzz::SafeDataPath) under the data
// dir. Each component is made or opened relative to its parent's fd without
// following links, so nothing lands outside the data dir whatever the plugin
// left there.
void PlantFile(const std::string& rel, const std::string& bytes) {
  ::mkdir(g_dirs.data.c_str(), 0700);
  int dir = ::open(g_dirs.data.c_str(), O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  std::string_view rest = rel;
  while (dir >= 0) {
    const size_t slash = rest.find('/');
    const std::string part(rest.substr(0, slash));
    if (slash == std::string_view::npos) {
      const int fd = ::openat(dir, part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd >= 0) {
        g_planted.insert(g_dirs.data + "/" + rel);
        for (size_t off = 0; off < bytes.size();) {
          const ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
          if (n <= 0) break;
          off += static_cast<size_t>(n);
        }
        ::close(fd);
      }
      break;
    }
    ::mkdirat(dir, part.c_str(), 0700);
    const int next = ::openat(dir, part.c_str(), O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    ::close(dir);
    dir = next;
    rest.remove_prefix(slash + 1);
  }
  if (dir >= 0) ::close(dir);
}

[[noreturn]] void DieConflist(const std::string& what, const std::string& text) {
  std::fprintf(stderr, "\n==fuzz oracle== conflist: %s\n--- conflist (%zu bytes):\n%.2000s\n", what.c_str(),
               text.size(), text.c_str());
  std::abort();
}

void ExpectDocumented(const base::Error& e, const std::string& what, const std::string& text) {
  if (e.code != base::Code::kDecoding && e.code != base::Code::kInvalidConfig)
    DieConflist(what + " failed with code " + std::to_string(static_cast<int>(e.code)) + ": " + e.msg, text);
}

[[noreturn]] void DieNri(const std::string& what, const std::string& bytes) {
  std::fprintf(stderr, "\n==fuzz oracle== nri: %s\n--- trunk (%zu bytes)\n", what.c_str(), bytes.size());
  std::abort();
}

// An @nri section through the agent's demultiplexer, `chunk` bytes at a time. Every message that comes out
// is framed again by EncodeFrame and must come out of a fresh demultiplexer the same; an error stays; what is
// held never passes what was fed. Each message's payload then goes through every decoder of nri/messages.h
// (a request's through those of its messages), and what decodes as a request encodes back to the same.
void FeedNri(const std::string& arg, const std::string& bytes) {
  const size_t chunk = arg.empty() ? std::max<size_t>(bytes.size(), 1) : std::stoul(arg);
  nri::Demux demux;
  bool failed = false;
  for (size_t at = 0; at < bytes.size(); at += chunk) {
    const base::Status s = demux.Feed(std::string_view(bytes).substr(at, chunk));
    if (failed && s.ok()) DieNri("a Feed after an error succeeded", bytes);
    if (!s.ok() && s.error().code != base::Code::kDecoding)
      DieNri("an error of code " + std::to_string(static_cast<int>(s.error().code)), bytes);
    failed = failed || !s.ok();
    if (demux.buffered() > bytes.size()) DieNri("holds more bytes than it was fed", bytes);
  }
  while (auto r = demux.Next()) {
    auto frame = nri::EncodeFrame(r->conn, r->msg);
    if (!frame.ok()) DieNri("a message that came out cannot be framed: " + frame.error().msg, bytes);
    nri::Demux again;
    if (!again.Feed(*frame).ok() || again.Next() != r || again.Next()) DieNri("no round trip", bytes);
    auto request = nri::DecodeRequest(r->msg.payload);
    for (const std::string& p : {r->msg.payload, request.ok() ? request->payload : std::string()}) {
      (void)nri::DecodeConfigure(p);
      (void)nri::DecodeSynchronize(p);
      (void)nri::DecodeStateChange(p);
      (void)nri::DecodeResponse(p);
      if (auto c = nri::DecodeCreateContainer(p); c.ok()) (void)c->container.env.size();
      if (auto a = nri::DecodeCreateContainerResponse(p); a.ok()) {
        auto back = nri::DecodeCreateContainerResponse(nri::EncodeCreateContainerResponse(*a));
        if (!back.ok() || !(*back == *a)) DieNri("an adjustment does not encode back to itself", bytes);
      }
    }
    if (request.ok()) {
      auto back = nri::DecodeRequest(nri::EncodeRequest(*request));
      if (!back.ok() || !(*back == *request)) DieNri("a request does not encode back to itself", bytes);
    }
  }
  // The same bytes to the agent's session, as if the runtime sent them: whatever it writes back, the
  // runtime can read.
  nri::Handlers handlers;
  handlers.create_container = [](const nri::CreateContainer& c) {
    nri::PodRdma pod;
    pod.rails.push_back({"erdma_0", nri::DeviceNode{"/dev/infiniband/uverbs0", 231, 192}, std::nullopt});
    return nri::Adjust(c, pod, {nri::kUnlimited});
  };
  nri::Session session("erdma-cni", "50", handlers);
  std::string out = session.Start();
  for (size_t at = 0; at < bytes.size(); at += chunk)
    if (!session.Feed(std::string_view(bytes).substr(at, chunk), &out).ok()) break;
  nri::Demux runtime;
  if (!runtime.Feed(out).ok()) DieNri("the session wrote what the runtime cannot read", bytes);
}

// An @conflist section through the installer's pure edit, at each placement.
void EditConflist(const std::string& text) {
  const install::Json entry = {{"type", install::kPluginType}, {"device", {{"name", "eth1"}}}};
  install::Placement last;
  install::Placement first{install::Placement::Kind::kIndex, "", 0};
  install::Placement after{install::Placement::Kind::kAfter, "portmap", 0};
  for (const install::Placement* where : {&last, &first, &after}) {
    auto edit = install::PlanInstall(text, entry, *where);
    if (!edit.ok()) {
      ExpectDocumented(edit.error(), "install at " + where->Describe(), text);
      continue;
    }
    if (install::CountOurs(edit->doc) != 1) DieConflist("install left other than one erdma-cni entry", text);
    const std::string result = edit->changed ? edit->text : text;
    auto again = install::PlanInstall(result, entry, *where);
    if (!again.ok()) DieConflist("installing into the installed result failed: " + again.error().msg, result);
    if (again->changed) DieConflist("installing twice changed the result again", result);
  }
  auto removed = install::PlanUninstall(text);
  if (!removed.ok()) {
    ExpectDocumented(removed.error(), "uninstall", text);
    return;
  }
  if (install::CountOurs(removed->doc) != 0) DieConflist("uninstall left an erdma-cni entry", text);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // $TMPDIR (run.sh points it at its scratch dir, removed even after a
  // crash), else tmpfs when there is one: every input makes and removes a
  // data dir.
  const char* tmpdir = std::getenv("TMPDIR");
  std::string tmpl = (tmpdir && *tmpdir              ? std::string(tmpdir)
                      : fs::is_directory("/dev/shm") ? "/dev/shm"
                                                     : "/tmp") +
                     "/erdma-fuzz-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    std::abort();
  }
  g_dirs.root = tmpl;
  g_dirs.sysfs = g_dirs.root + "/sys";
  g_dirs.data = g_dirs.root + "/data";
  g_dirs.log = g_dirs.root + "/erdma-cni.log";
  g_dirs.attachments = g_dirs.root + "/attachments";
  fuzz::MakeSysfs(g_dirs.sysfs);
  std::atexit(RemoveRoot);
  fuzz::ForbidKernelAccess();
  g_trace = std::getenv("ERDMA_FUZZ_TRACE") != nullptr;
  g_expect = std::getenv("ERDMA_FUZZ_EXPECT") != nullptr;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto sections = fuzz::ParseInput(std::string_view(reinterpret_cast<const char*>(data), size));
  {
    const fuzz::Invocation none;
    const fuzz::Invocation* first = &none;
    for (const auto& s : sections)
      if (s.kind == fuzz::Section::Kind::kInvocation) {
        first = &s.invocation;
        break;
      }
    fuzz::Node node(fuzz::ParseNodeOptions(first->env), g_dirs.sysfs, g_dirs.attachments);
    for (const auto& s : sections) {
      switch (s.kind) {
        case fuzz::Section::Kind::kInvocation: RunOne(node, s.invocation); break;
        case fuzz::Section::Kind::kFile: PlantFile(s.arg, s.bytes); break;
        case fuzz::Section::Kind::kIpam:
          node.SetIpamOutput({s.bytes, s.arg.empty() ? 0 : std::stoi(s.arg)});
          break;
        case fuzz::Section::Kind::kConflist: EditConflist(s.bytes); break;
        case fuzz::Section::Kind::kNri: FeedNri(s.arg, s.bytes); break;
      }
    }
  }
  base::Log::Configure("", base::LogLevel::kError);
  g_planted.clear();
  std::error_code ec;
  fs::remove_all(g_dirs.data, ec);
  fs::remove_all(g_dirs.attachments, ec);
  fs::remove(g_dirs.log, ec);
  return 0;
}
