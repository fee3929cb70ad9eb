// What a person reads: base::EscapeForDisplay, and the log built on it.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/escape.h"
#include "base/log.h"

namespace test_unit_escape_log_test {

namespace {

namespace fs = std::filesystem;

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct Dir {
  std::string path;
  Dir() {
    char tmpl[] = "/tmp/erdma-log-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~Dir() {
    base::Log::Configure("", base::LogLevel::kInfo);
    base::Log::SetTag("");
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

TEST_CASE("escaping leaves printable text and UTF-8 alone and writes controls as escapes") {
  using base::EscapeForDisplay;
  CHECK(EscapeForDisplay("net=erdma cid=abc-1 pod=ml/trainer-0") == "net=erdma cid=abc-1 pod=ml/trainer-0");
  CHECK(EscapeForDisplay("a\nb\rc\td") == "a\\nb\\rc\\td");
  CHECK(EscapeForDisplay("back\\slash") == "back\\\\slash");
  CHECK(EscapeForDisplay("\x1b[31mred") == "\\x1b[31mred");
  CHECK(EscapeForDisplay(std::string("nul\0x", 5)) == "nul\\x00x");
  CHECK(EscapeForDisplay("del\x7f") == "del\\x7f");
  CHECK(EscapeForDisplay("gr\xc3\xbc\xc3\x9f") == "gr\xc3\xbc\xc3\x9f");  // "grüß"
  CHECK(EscapeForDisplay("\xe2\x82\xac \xf0\x9f\x98\x80") == "\xe2\x82\xac \xf0\x9f\x98\x80");
  CHECK(EscapeForDisplay("csi\xc2\x9b"
                         "1m") == "csi\\xc2\\x9b1m");  // U+009B, the 8-bit CSI
  CHECK(EscapeForDisplay("raw\x9b"
                         "1m") == "raw\\x9b1m");
  CHECK(EscapeForDisplay("cut\xe2\x82") == "cut\\xe2\\x82");
  CHECK(EscapeForDisplay("overlong\xc0\xaf") == "overlong\\xc0\\xaf");
  CHECK(EscapeForDisplay("surrogate\xed\xa0\x80") == "surrogate\\xed\\xa0\\x80");
}

TEST_CASE("a pod name with a newline cannot forge a log line") {
  Dir d;
  const std::string log = d.path + "/erdma-cni.log";
  base::Log::Configure(log, base::LogLevel::kInfo);
  base::Log::SetTag("net=erdma pod=ns/x\n2026-01-01T00:00:00.000Z error [1] forged");
  base::Log::Info("step\r\x1b[2Kdone");
  const std::string text = Read(log);
  CHECK(std::count(text.begin(), text.end(), '\n') == 1);
  CHECK(text.find("pod=ns/x\\n2026-01-01T00:00:00.000Z error [1] forged: step\\r\\x1b[2Kdone\n") !=
        std::string::npos);
  CHECK(text.find('\x1b') == std::string::npos);
}

TEST_CASE("the log file is not opened through a symlink anywhere along its path") {
  Dir d;
  fs::create_directory(d.path + "/real");
  fs::create_directory_symlink(d.path + "/real", d.path + "/link");
  fs::create_symlink(d.path + "/real/target.log", d.path + "/real/dangling.log");
  base::Log::Configure(d.path + "/link/erdma-cni.log", base::LogLevel::kInfo);
  base::Log::Info("through the directory link");
  base::Log::Configure(d.path + "/real/dangling.log", base::LogLevel::kInfo);
  base::Log::Info("through the file link");
  base::Log::Configure("/proc/self/root" + d.path + "/real/magic.log", base::LogLevel::kInfo);
  base::Log::Info("through a magic link");
  base::Log::Configure("", base::LogLevel::kInfo);
  CHECK_FALSE(fs::exists(d.path + "/real/erdma-cni.log"));
  CHECK_FALSE(fs::exists(d.path + "/real/target.log"));
  CHECK_FALSE(fs::exists(d.path + "/real/magic.log"));
}

TEST_CASE("rotation never renames a file that is not the plugin's own log") {
  Dir d;
  // A file with a second name elsewhere (another program's, hard-linked
  // into the log directory): appending or renaming it would change that file.
  const std::string other = d.path + "/other.conf";
  { std::ofstream(other) << "precious\n"; }
  fs::create_directory(d.path + "/logs");
  const std::string log = d.path + "/logs/erdma-cni.log";
  fs::create_hard_link(other, log);
  base::Log::Configure(log, base::LogLevel::kInfo, /*max_bytes=*/1);
  base::Log::Info("must not land in other.conf");
  base::Log::Configure("", base::LogLevel::kInfo);
  CHECK(Read(other) == "precious\n");
  CHECK(fs::exists(log));
  CHECK_FALSE(fs::exists(log + ".1"));
  // A FIFO is not a log either (and must not hang the plugin).
  const std::string fifo = d.path + "/logs/fifo.log";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  base::Log::Configure(fifo, base::LogLevel::kInfo, 1);
  CHECK(fs::is_fifo(fifo));
  CHECK_FALSE(fs::exists(fifo + ".1"));
}

TEST_CASE("rotation renames the plugin's own log within its directory") {
  Dir d;
  const std::string log = d.path + "/erdma-cni.log";
  base::Log::Configure(log, base::LogLevel::kInfo, 1000);
  base::Log::Info("first generation, longer than ten bytes");
  const std::string first = Read(log);
  // At its cap, the next invocation starts a new file.
  base::Log::Configure(log, base::LogLevel::kInfo, first.size());
  base::Log::Info("second");
  base::Log::Configure("", base::LogLevel::kInfo);
  CHECK(Read(log + ".1") == first);
  CHECK(Read(log).find("second") != std::string::npos);
  CHECK(Read(log).find("first") == std::string::npos);
}

TEST_CASE("one invocation's lines past logMaxBytes rotate the file once, then are dropped with one note") {
  Dir d;
  const std::string log = d.path + "/erdma-cni.log";
  base::Log::Configure(log, base::LogLevel::kInfo, 300);
  for (int i = 0; i < 40; ++i) base::Log::Info("line " + std::to_string(i) + std::string(40, '.'));
  base::Log::Configure("", base::LogLevel::kInfo);
  CHECK(fs::file_size(log) <= 300);
  CHECK(fs::file_size(log + ".1") <= 300);
  CHECK(Read(log + ".1").find("line 0.") != std::string::npos);
  CHECK_THAT(Read(log), Catch::EndsWith("further log lines are dropped: logMaxBytes (300) reached\n"));
  CHECK(Read(log).find("line 39") == std::string::npos);
  // A message is cut, its length said.
  base::Log::Configure(log + "-long", base::LogLevel::kInfo);
  base::Log::Info(std::string(100000, 'x'));
  base::Log::Configure("", base::LogLevel::kInfo);
  CHECK(fs::file_size(log + "-long") < 4096 + 200);
  CHECK(Read(log + "-long").find("... (100000 bytes)") != std::string::npos);
}

}  // namespace test_unit_escape_log_test
