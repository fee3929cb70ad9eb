// netlink::Netns and NetnsSwitch against the real kernel.
#include "netlink/netns.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "test/kernel/scratch_netns.h"

namespace test_kernel_netns_test {

namespace {

ino_t ThreadNetnsInode() {
  struct stat st {};
  REQUIRE(stat("/proc/thread-self/ns/net", &st) == 0);
  return st.st_ino;
}

ino_t Inode(const std::string& path) {
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  return st.st_ino;
}

void RequireInvalidEnv(const base::Result<netlink::Netns>& r, const std::string& text) {
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == base::Code::kInvalidEnv);
  CHECK_THAT(r.error().msg, Catch::StartsWith("CNI_NETNS: ") && Catch::Contains(text));
}

}  // namespace

TEST_CASE("Netns::Open accepts a netns bind mount and a /proc ns link", "[netns]") {
  rt_test::ScratchNetns ns;
  auto n = netlink::Netns::Open(ns.path(), "CNI_NETNS");
  REQUIRE(n.ok());
  CHECK(n->path() == ns.path());
  CHECK(fcntl(n->fd(), F_GETFD) & FD_CLOEXEC);
  auto self = netlink::Netns::Open("/proc/self/ns/net", "CNI_NETNS");
  REQUIRE(self.ok());
  auto current = netlink::Netns::Current();
  REQUIRE(current.ok());
  struct stat a {
  }, b{};
  REQUIRE(fstat(self->fd(), &a) == 0);
  REQUIRE(fstat(current->fd(), &b) == 0);
  CHECK(a.st_ino == b.st_ino);
}

TEST_CASE("Netns::Open rejects a regular file as not a network namespace", "[netns]") {
  char path[] = "/tmp/ecni-rt-notns-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  auto r = netlink::Netns::Open(path, "CNI_NETNS");
  unlink(path);
  RequireInvalidEnv(r, std::string(path) + " is not a network namespace");
}

TEST_CASE("Netns::Open rejects a path that does not exist", "[netns]") {
  auto r = netlink::Netns::Open("/run/netns/ecni-rt-no-such-ns", "CNI_NETNS");
  RequireInvalidEnv(r, "/run/netns/ecni-rt-no-such-ns does not exist");
  CHECK(r.error().sys_errno == ENOENT);
}

TEST_CASE("Netns::Open rejects an empty path and other kinds of namespace", "[netns]") {
  RequireInvalidEnv(netlink::Netns::Open("", "CNI_NETNS"), "empty");
  // nsfs, but a mount namespace.
  RequireInvalidEnv(netlink::Netns::Open("/proc/self/ns/mnt", "CNI_NETNS"), "is not a network namespace");
  // A directory is not on nsfs.
  RequireInvalidEnv(netlink::Netns::Open("/tmp", "CNI_NETNS"), "is not a network namespace");
}

TEST_CASE("NetnsSwitch enters a namespace and returns when it ends", "[netns]") {
  rt_test::ScratchNetns ns;
  auto target = netlink::Netns::Open(ns.path(), "test netns");
  REQUIRE(target.ok());
  const ino_t home = ThreadNetnsInode();
  const ino_t there = Inode(ns.path());
  REQUIRE(home != there);
  {
    auto sw = netlink::NetnsSwitch::Enter(*target);
    REQUIRE(sw.ok());
    CHECK(ThreadNetnsInode() == there);
    netlink::NetnsSwitch moved(std::move(sw).value());  // the moved-from one must not switch back
    CHECK(ThreadNetnsInode() == there);
  }
  CHECK(ThreadNetnsInode() == home);
}

TEST_CASE("with a NetnsHome, switches return to its handle, nested ones too, and it stands down outside",
          "[netns]") {
  rt_test::ScratchNetns a, b;
  auto to_a = netlink::Netns::Open(a.path(), "test netns a");
  auto to_b = netlink::Netns::Open(b.path(), "test netns b");
  REQUIRE(to_a.ok());
  REQUIRE(to_b.ok());
  const ino_t home = ThreadNetnsInode();
  auto self = netlink::Netns::Current();
  REQUIRE(self.ok());
  {
    netlink::NetnsHome back(*self);
    for (int i = 0; i < 3; ++i) {
      auto sw = netlink::NetnsSwitch::Enter(*to_a);
      REQUIRE(sw.ok());
      CHECK(ThreadNetnsInode() == Inode(a.path()));
      {
        // From inside a switch the way back is the namespace the thread is
        // in, not the home.
        auto inner = netlink::NetnsSwitch::Enter(*to_b);
        REQUIRE(inner.ok());
        CHECK(ThreadNetnsInode() == Inode(b.path()));
      }
      CHECK(ThreadNetnsInode() == Inode(a.path()));
    }
    CHECK(ThreadNetnsInode() == home);
    // A duplicate names the same namespace and keeps the handle's kind: the
    // thread's own needs no switch at all.
    auto dup = self->Dup();
    REQUIRE(dup.ok());
    CHECK(dup->SameAs(*self).value());
    CHECK(dup->fd() != self->fd());
    {
      auto sw = netlink::NetnsSwitch::Enter(*dup);
      REQUIRE(sw.ok());
      CHECK(ThreadNetnsInode() == home);
    }
  }
  // A handle opened inside a switch is not the thread's own: no home is set
  // from it, and switches still come back to where they started.
  {
    auto sw = netlink::NetnsSwitch::Enter(*to_a);
    REQUIRE(sw.ok());
    auto inside = netlink::Netns::Current();
    REQUIRE(inside.ok());
    netlink::NetnsHome ignored(*inside);
    auto inner = netlink::NetnsSwitch::Enter(*to_b);
    REQUIRE(inner.ok());
  }
  CHECK(ThreadNetnsInode() == home);
  {
    auto sw = netlink::NetnsSwitch::Enter(*to_b);
    REQUIRE(sw.ok());
    CHECK(ThreadNetnsInode() == Inode(b.path()));
  }
  CHECK(ThreadNetnsInode() == home);
}

}  // namespace test_kernel_netns_test
