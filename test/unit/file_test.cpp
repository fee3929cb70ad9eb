// base/file.h: a checked directory that another process removes, and maybe
// makes again, between two operations of this one (an empty network directory
// removed by a DEL, made again by an ADD). Its descriptor, kept since the
// check, names a directory with nothing in it: every operation must still land
// in what is at the path now.
#include "base/file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "cni/state/state.h"

namespace test_unit_file_test {

namespace fs = std::filesystem;

namespace {

struct Dir {
  std::string path;
  Dir() {
    char tmpl[] = "/tmp/erdma-file-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~Dir() { fs::remove_all(path); }
};

void Write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Removes `dir` (as another process's RemoveDirIfEmpty would) and, when
// `again`, makes it again (0700) holding the file "old" and the directory "sub".
void Replace(const std::string& dir, bool again) {
  fs::remove_all(dir);
  if (!again) return;
  REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
  Write(dir + "/old", "new dir");
  REQUIRE(::mkdir((dir + "/sub").c_str(), 0700) == 0);
}

}  // namespace

TEST_CASE("a checked directory removed and made again since: each operation lands in the new one",
          "[file][dir]") {
  Dir d;
  const std::string net = d.path + "/data/erdma";
  // The directory as a dataDir with a doubled or a trailing slash spells it:
  // one directory, one descriptor.
  const bool respelled = GENERATE(false, true);
  const std::string dir = respelled ? d.path + "//data/erdma/" : net;
  REQUIRE(base::MakePrivateDirs(dir).ok());
  REQUIRE(base::WriteFileAtomic(dir + "/first", "x").ok());  // this process now holds `net` open
  Replace(net, /*again=*/true);

  SECTION("read") {
    auto text = base::ReadFileNoFollow(dir + "/old", 64);
    REQUIRE(text.ok());
    CHECK(*text == "new dir");
  }
  SECTION("exists") { CHECK(base::PathExists(dir + "/old")); }
  SECTION("list") {
    auto files = base::ListFiles(dir);
    REQUIRE(files.ok());
    CHECK(*files == std::vector<std::string>{"old"});
    auto dirs = base::ListDirs(dir);
    REQUIRE(dirs.ok());
    CHECK(*dirs == std::vector<std::string>{"sub"});
  }
  SECTION("write") {
    REQUIRE(base::WriteFileAtomic(dir + "/state", "y").ok());
    CHECK(Read(net + "/state") == "y");
  }
  SECTION("rename") {
    REQUIRE(base::RenameFile(dir + "/old", "aside").ok());
    CHECK(Read(net + "/aside") == "new dir");
    CHECK_FALSE(fs::exists(net + "/old"));
  }
  SECTION("remove") {
    REQUIRE(base::RemoveFile(dir + "/old").ok());
    CHECK_FALSE(fs::exists(net + "/old"));
  }
  SECTION("lock") {
    auto lock = base::FileLock::Acquire(dir + "/eth1", 100);
    REQUIRE(lock.ok());
    CHECK(fs::exists(net + "/eth1"));
    lock->Unlink();
    CHECK_FALSE(fs::exists(net + "/eth1"));
  }
  SECTION("remove an empty directory in it") {
    base::RemoveDirIfEmpty(dir + "/sub");
    CHECK_FALSE(fs::exists(net + "/sub"));
  }
  SECTION("a walk below it") {
    // Walks start from the deepest directory this process checked: not from
    // the removed one.
    REQUIRE(base::MakePrivateDirs(dir + "/made").ok());
    CHECK(fs::is_directory(net + "/made"));
    REQUIRE(base::CheckPrivateDir(dir + "/sub").ok());
    Write(net + "/sub/share", "s");
    auto files = base::ListFiles(dir + "/sub");
    REQUIRE(files.ok());
    CHECK(*files == std::vector<std::string>{"share"});
  }
}

TEST_CASE("a checked directory removed since is missing for every operation, until it is made again",
          "[file][dir]") {
  Dir d;
  const std::string net = d.path + "/data/erdma";
  REQUIRE(base::MakePrivateDirs(net).ok());
  REQUIRE(base::WriteFileAtomic(net + "/first", "x").ok());
  Replace(net, /*again=*/false);

  auto read = base::ReadFileNoFollow(net + "/first", 64);
  REQUIRE_FALSE(read.ok());
  CHECK(read.error().sys_errno == ENOENT);
  CHECK_FALSE(base::PathExists(net + "/first"));
  auto files = base::ListFiles(net);
  REQUIRE(files.ok());
  CHECK(files->empty());
  CHECK(base::RemoveFile(net + "/first").ok());
  auto written = base::WriteFileAtomic(net + "/state", "y");
  REQUIRE_FALSE(written.ok());
  CHECK(written.error().sys_errno == ENOENT);
  CHECK_FALSE(fs::exists(net));
  // What StateStore::Save does then: the directory is made again, and used.
  REQUIRE(base::MakePrivateDirs(net).ok());
  REQUIRE(base::WriteFileAtomic(net + "/state", "y").ok());
  CHECK(Read(net + "/state") == "y");
}

TEST_CASE("a state Save makes the network directory again when a DEL removed it after Prepare",
          "[file][dir][state]") {
  Dir d;
  cni::StateStore store(d.path + "/data", "erdma");
  REQUIRE(store.Prepare().ok());
  fs::remove(store.Dir());  // the DEL of the network's last attachment
  cni::AttachmentState st;
  st.network = "erdma";
  st.container_id = "c1";
  st.if_name = "net1";
  st.pod_if_name = "net1";
  const std::string path = store.PathFor("c1", "net1");
  REQUIRE(store.Save(path, st).ok());
  CHECK(fs::exists(path));
}

TEST_CASE("Prepare checks the directories again, though this process checked them before",
          "[file][dir][state]") {
  Dir d;
  cni::StateStore store(d.path + "/data", "erdma");
  REQUIRE(store.Prepare().ok());
  REQUIRE(::chmod(store.Dir().c_str(), 0777) == 0);
  auto again = store.Prepare();
  REQUIRE_FALSE(again.ok());
  CHECK_THAT(again.error().msg, Catch::Contains("0777"));
  REQUIRE(::chmod(store.Dir().c_str(), 0700) == 0);
  REQUIRE(::chmod(store.DevicesDir().c_str(), 0777) == 0);
  CHECK_FALSE(store.Prepare().ok());
  CHECK_FALSE(store.Check().ok());
}

TEST_CASE("ListFiles says whether the directory was there", "[file][dir]") {
  Dir d;
  const std::string dir = d.path + "/data/children/eth1";
  REQUIRE(base::MakePrivateDirs(d.path + "/data").ok());
  bool found = true;
  auto missing = base::ListFiles(dir, &found);
  REQUIRE(missing.ok());
  CHECK(missing->empty());
  CHECK_FALSE(found);
  REQUIRE(base::MakePrivateDirs(dir).ok());
  auto empty = base::ListFiles(dir, &found);
  REQUIRE(empty.ok());
  CHECK(empty->empty());
  CHECK(found);
}

TEST_CASE("a file many times the read buffer is read whole, and one byte over the bound is refused",
          "[file]") {
  Dir d;
  REQUIRE(base::MakePrivateDirs(d.path + "/data").ok());
  const std::string path = d.path + "/data/big";
  std::string text;
  for (int i = 0; text.size() < 100'000; ++i) text += "line " + std::to_string(i) + "\n";
  Write(path, text);
  auto read = base::ReadFileNoFollow(path, text.size());
  REQUIRE(read.ok());
  CHECK(*read == text);
  auto over = base::ReadFileNoFollow(path, text.size() - 1);
  REQUIRE_FALSE(over.ok());
  CHECK(over.error().msg.find("larger than") != std::string::npos);
}

TEST_CASE("a directory whose entries take many reads is listed whole, each entry once", "[file][dir]") {
  Dir d;
  const std::string dir = d.path + "/data/devices";
  REQUIRE(base::MakePrivateDirs(dir).ok());
  // 600 entries of 40-odd bytes each: tens of kilobytes of directory records.
  std::vector<std::string> want;
  for (int i = 0; i < 600; ++i) {
    want.push_back("claim-with-a-longish-name-" + std::to_string(100000 + i));
    Write(dir + "/" + want.back(), "x");
  }
  REQUIRE(::mkdir((dir + "/sub").c_str(), 0700) == 0);
  auto files = base::ListFiles(dir);
  REQUIRE(files.ok());
  CHECK(*files == want);  // sorted, as ListFiles returns them; "sub" is a directory
  auto dirs = base::ListDirs(dir);
  REQUIRE(dirs.ok());
  CHECK(*dirs == std::vector<std::string>{"sub"});
}

TEST_CASE("8 threads that check one directory again and read in it at once share one cache safely",
          "[file][dir]") {
  // The plugin is one thread; the kernel suite's invariant checkers read states through this code from
  // several at once. Each MakePrivateDirs walks the path again and replaces the cache's entries, while the
  // readers take the entries' descriptors: without the cache's lock this crashes (or, under ASan, reports).
  Dir d;
  const std::string dir = d.path + "/data/erdma";
  REQUIRE(base::MakePrivateDirs(dir).ok());
  REQUIRE(base::WriteFileAtomic(dir + "/f", "x").ok());
  constexpr int kThreads = 8, kRounds = 3000;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int r = 0; r < kRounds; ++r) {
        if (i % 2 == 0) {
          if (!base::MakePrivateDirs(dir).ok()) ++failures;
        } else if (!base::PathExists(dir + "/f") || !base::ListFiles(dir).ok()) {
          ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
}

}  // namespace test_unit_file_test
