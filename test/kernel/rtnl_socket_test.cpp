// netlink::OpenRtnl against the real kernel: links and the handle itself, in
// private namespaces; iproute2 (`ip -j`) is the independent witness.
#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <string>

#include "test/kernel/rtnl_fixture.h"

namespace test_kernel_rtnl_socket_test {

namespace {

using netlink::LinkInfo;
using nlohmann::json;
using rt_test::Contains;
using rt_test::HasLink;
using rt_test::IfIndex;
using rt_test::ScratchNetns;
using rt_test::TwoNamespaces;

}  // namespace

TEST_CASE("links are listed and found by name and index with mac, mtu, state and kind", "[rtnl][link]") {
  TwoNamespaces t;
  t.a.Ip("link set va mtu 1400 up");
  auto links = t.ka->ListLinks();
  REQUIRE_OK(links);
  const json ip = t.a.Json("link show");
  REQUIRE(links->size() == ip.size());  // only this namespace's links: lo, va, vb

  auto va = t.ka->FindLink("va");
  REQUIRE_OK(va);
  REQUIRE(va->has_value());
  const json ipva = t.a.Json("-d link show dev va")[0];
  CHECK((*va)->index == t.va);
  CHECK((*va)->name == "va");
  CHECK((*va)->mac == ipva["address"].get<std::string>());
  CHECK((*va)->mtu == 1400);
  CHECK((*va)->up);
  CHECK((*va)->kind == "veth");
  CHECK(Contains(*links, **va));

  auto by_index = t.ka->FindLinkByIndex(t.vb);
  REQUIRE_OK(by_index);
  REQUIRE(by_index->has_value());
  CHECK((*by_index)->name == "vb");
  CHECK_FALSE((*by_index)->up);

  auto lo = t.ka->FindLink("lo");
  REQUIRE_OK(lo);
  REQUIRE(lo->has_value());
  CHECK((*lo)->kind.empty());
  CHECK((*lo)->mac == "00:00:00:00:00:00");
}

TEST_CASE("looking up a link that does not exist gives nullopt, not an error", "[rtnl][link]") {
  TwoNamespaces t;
  for (const char* name : {"nosuch0", "", "a-name-far-too-long-for-ifnamsiz"}) {
    auto r = t.ka->FindLink(name);
    REQUIRE_OK(r);
    CHECK_FALSE(r->has_value());
  }
  for (int index : {0, -1, 987654}) {
    auto r = t.ka->FindLinkByIndex(index);
    REQUIRE_OK(r);
    CHECK_FALSE(r->has_value());
  }
  // vb lives in a, not in b.
  auto other = t.kb->FindLink("vb");
  REQUIRE_OK(other);
  CHECK_FALSE(other->has_value());
}

TEST_CASE("a link moves to another namespace and takes its new name in the same request", "[rtnl][link]") {
  TwoNamespaces t;
  // b already has a link called va: a move that renamed afterwards would
  // collide on the way in; the single message renames as it moves.
  t.b.Ip("link add va type veth peer name vz");
  REQUIRE_OK(t.ka->MoveLink(t.va, *t.kb, "net1"));
  CHECK_FALSE(HasLink(t.a, "va"));
  REQUIRE(HasLink(t.b, "net1"));
  auto moved = t.kb->FindLink("net1");
  REQUIRE_OK(moved);
  REQUIRE(moved->has_value());
  CHECK((*moved)->kind == "veth");
  auto gone = t.ka->FindLinkByIndex(t.va);
  REQUIRE_OK(gone);
  CHECK_FALSE(gone->has_value());

  // And back home under its old name, through b's handle, given the link
  // as read (DEL's way: no second lookup).
  REQUIRE_OK(t.kb->MoveLink(**moved, *t.ka, "va"));
  CHECK(HasLink(t.a, "va"));
  CHECK_FALSE(HasLink(t.b, "net1"));
}

TEST_CASE("moving onto a name taken in the target fails with EEXIST and the link stays", "[rtnl][link]") {
  TwoNamespaces t;
  t.b.Ip("link add taken type veth peer name vz");
  base::Status st = base::Ok();
  // By index (read by MoveLink), or as the caller read it (ADD's way): the
  // name and MAC it was given find it in b after the half move.
  SECTION("by index") { st = t.ka->MoveLink(t.va, *t.kb, "taken"); }
  SECTION("as read") {
    auto va = t.ka->FindLinkByIndex(t.va);
    REQUIRE_OK(va);
    REQUIRE(va->has_value());
    st = t.ka->MoveLink(**va, *t.kb, "taken");
  }
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().code == base::Code::kKernel);
  CHECK(st.error().sys_errno == EEXIST);
  // The kernel moved it under its old name before failing the rename; it
  // had to be fetched back.
  CHECK_THAT(st.error().details, Catch::Contains("moved back"));
  CHECK(HasLink(t.a, "va"));
  CHECK(IfIndex(t.a, "va") == t.va);
  CHECK_FALSE(HasLink(t.b, "va"));
}

TEST_CASE("moving under an invalid name fails with EINVAL and the link stays", "[rtnl][link]") {
  TwoNamespaces t;
  auto st = t.ka->MoveLink(t.va, *t.kb, "bad name");
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().sys_errno == EINVAL);
  CHECK(HasLink(t.a, "va"));
  CHECK(t.b.Json("link show").size() == 1);  // lo only
}

TEST_CASE("moving without a new name keeps the link's name", "[rtnl][link]") {
  TwoNamespaces t;
  REQUIRE_OK(t.ka->MoveLink(t.va, *t.kb, ""));
  CHECK(HasLink(t.b, "va"));
  CHECK_FALSE(HasLink(t.a, "va"));
}

TEST_CASE("mtu and the up flag are set through the kernel", "[rtnl][link]") {
  TwoNamespaces t;
  REQUIRE_OK(t.ka->SetMtu(t.va, 1280));
  REQUIRE_OK(t.ka->SetUp(t.va, true));
  json j = t.a.Json("link show dev va")[0];
  CHECK(j["mtu"] == 1280);
  auto flags = j["flags"].get<std::vector<std::string>>();
  CHECK(std::find(flags.begin(), flags.end(), "UP") != flags.end());

  REQUIRE_OK(t.ka->SetUp(t.va, false));
  flags = t.a.Json("link show dev va")[0]["flags"].get<std::vector<std::string>>();
  CHECK(std::find(flags.begin(), flags.end(), "UP") == flags.end());
}

TEST_CASE("an mtu below the device minimum fails with EINVAL and the kernel's reason",
          "[rtnl][link][extack]") {
  TwoNamespaces t;
  auto st = t.ka->SetMtu(t.va, 10);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().sys_errno == EINVAL);
  CHECK(st.error().msg == "RTM_NEWLINK dev " + std::to_string(t.va) + " mtu 10: Invalid argument");
  CHECK_THAT(st.error().details, Catch::Contains("mtu less than device minimum"));
}

TEST_CASE("a link is renamed in place and a taken name fails with EEXIST", "[rtnl][link]") {
  TwoNamespaces t;
  REQUIRE_OK(t.ka->RenameLink(t.va, "renamed0"));
  CHECK(IfIndex(t.a, "renamed0") == t.va);
  auto st = t.ka->RenameLink(t.va, "vb");
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().sys_errno == EEXIST);
  CHECK(IfIndex(t.a, "renamed0") == t.va);
}

TEST_CASE("a name longer than IFNAMSIZ is refused by the kernel's attribute policy", "[rtnl][link][extack]") {
  TwoNamespaces t;
  auto st = t.ka->RenameLink(t.va, "a-name-far-too-long");
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().sys_errno == ERANGE);
  CHECK_THAT(st.error().details, Catch::Contains("Attribute failed policy validation"));
  CHECK(IfIndex(t.a, "va") == t.va);
}

TEST_CASE("operations on a missing link fail with ENODEV", "[rtnl][link]") {
  TwoNamespaces t;
  for (const auto& st : {t.ka->SetUp(987654, true), t.ka->SetMtu(987654, 1500), t.ka->RenameLink(987654, "x"),
                         t.ka->MoveLink(987654, *t.kb, "x")}) {
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().sys_errno == ENODEV);
  }
}

TEST_CASE("a kernel handle speaks to its own namespace and keeps a dup of its fd", "[rtnl]") {
  ScratchNetns ns;
  auto netns = netlink::Netns::Open(ns.path(), "test netns");
  REQUIRE_OK(netns);
  auto k = netlink::OpenRtnl(*netns);
  REQUIRE_OK(k);
  CHECK((*k)->NetnsFd() != netns->fd());
  struct stat mine {
  }, theirs{};
  REQUIRE(fstat((*k)->NetnsFd(), &mine) == 0);
  REQUIRE(fstat(netns->fd(), &theirs) == 0);
  CHECK(mine.st_ino == theirs.st_ino);
  // The socket stays in the namespace although this thread is back home.
  auto links = (*k)->ListLinks();
  REQUIRE_OK(links);
  REQUIRE(links->size() == 1);
  CHECK((*links)[0].name == "lo");
  struct stat home {};
  REQUIRE(stat("/proc/thread-self/ns/net", &home) == 0);
  CHECK(home.st_ino != mine.st_ino);
}

}  // namespace test_kernel_rtnl_socket_test
