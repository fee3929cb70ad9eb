// libFuzzer harness over erdma-cni's whole input surface: the CNI_*
// environment, CNI_ARGS, stdin (every cniVersion, prevResult, runtimeConfig,
// args) and what IPAM answers, through cni::RunWith, the path the binary takes
// (env parsing, config parsing, command dispatch, results, error JSON), with
// the kernel replaced by the in-memory node of fuzz_node.h; a seccomp filter
// (fuzz_sandbox.h) traps any syscall that would reach the kernel's network
// configuration. Input format: fuzz_input.h. Each input runs on a fresh node
// and an empty data dir.
//
// Besides crashes, leaks, UB and timeouts, it aborts when an invocation
//  - exits with anything but 0 or 1, or prints anything but one JSON line
//    (nothing at all for a successful DEL, CHECK, GC or STATUS);
//  - fails without a CNI error object (string cniVersion of a supported
//    version, a code from docs/errors.md, a non-empty msg), or with code 108
//    (an exception escaped: a bug by definition);
//  - fails an ADD (except code 102, rollback incomplete), or runs CHECK,
//    STATUS or VERSION, or fails on bad input (codes 1, 4, 6, 7), and the
//    node or the data dir's files differ afterwards.
//
// dataDir and logFile: every config that parses has them replaced with paths
// in this process's temp dir before the plugin sees it (a config that does
// not parse never reaches a file), so nothing is written outside it.
//
// ERDMA_FUZZ_TRACE=1 prints every invocation and its outcome to stderr.
// ERDMA_FUZZ_EXPECT=1 checks seeds: an invocation with FUZZ_EXPECT=N must
// exit 0 (N = 0) or fail with code N.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "base/log.h"
#include "cni/run.h"
#include "conf/config.h"
#include "conf/version.h"
#include "test/fuzz/fuzz_input.h"
#include "test/fuzz/fuzz_node.h"
#include "test/fuzz/fuzz_sandbox.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Dirs {
  std::string root, sysfs, data, log;
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

// The regular files under the data dir and their sizes.
std::string DataFiles() {
  std::string out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(g_dirs.data, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    out += it->path().string() + " " + std::to_string(it->file_size(ec)) + "\n";
  }
  return out;
}

// The stdin the plugin gets: a config that parses gets our dataDir and logFile.
std::string Confine(const std::string& stdin_bytes) {
  if (!conf::Parse(stdin_bytes, /*for_del=*/true).ok()) return stdin_bytes;
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
  std::ostringstream out_stream;
  const int rc = cni::RunWith(getenv, stdin_bytes, out_stream, node);
  const std::string out = out_stream.str();
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
    if (DataFiles() != files_before) Die("the data dir changed", inv, out);
  }

  if (g_expect) {
    auto e = inv.env.find("FUZZ_EXPECT");
    if (e != inv.env.end() && std::to_string(rc == 0 ? 0 : code) != e->second)
      Die("seed expected " + e->second + ", got exit " + std::to_string(rc) + " code " + std::to_string(code),
          inv, out);
  }
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
  fuzz::MakeSysfs(g_dirs.sysfs);
  std::atexit(RemoveRoot);
  fuzz::ForbidKernelAccess();
  g_trace = std::getenv("ERDMA_FUZZ_TRACE") != nullptr;
  g_expect = std::getenv("ERDMA_FUZZ_EXPECT") != nullptr;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto invocations = fuzz::ParseInput(std::string_view(reinterpret_cast<const char*>(data), size));
  {
    fuzz::Node node(fuzz::ParseNodeOptions(invocations.front().env), g_dirs.sysfs);
    for (const auto& inv : invocations) RunOne(node, inv);
  }
  base::Log::Configure("", base::LogLevel::kError);
  std::error_code ec;
  fs::remove_all(g_dirs.data, ec);
  fs::remove(g_dirs.log, ec);
  return 0;
}
