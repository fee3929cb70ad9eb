// The move home acts on a node link only when its identity matches what ADD
// recorded: never lo (all-zero MAC), never a link the kernel would not have
// handed back (a name other than the pod-side one or devN, another ifindex,
// another kind), however its MAC looks.
#include <catch2/catch.hpp>

#include "cni/journal/journal.h"
#include "cni/journal/move_home.h"
#include "test/fake/fake_kernel.h"

namespace test_unit_move_home_identity_test {

namespace {

constexpr const char* kMac = "00:16:3e:10:f8:b0";

struct Home {
  fake::World world;
  std::unique_ptr<netlink::Kernel> host = world.Kernel(fake::World::kRoot);

  // DEL after the pod netns died: no pod, the device somewhere on the node.
  base::Status MoveHome(const cni::DeviceOrigin& o) {
    cni::StepEnv env{*host, nullptr};
    return cni::MoveHome(o, "net1", env);
  }
};

cni::DeviceOrigin Origin(int index, const std::string& mac = kMac, const std::string& kind = "") {
  cni::DeviceOrigin o;
  o.name = "eth9";
  o.index = index;
  o.mac = mac;
  o.mtu = 1500;
  o.up = true;
  o.kind = kind;
  return o;
}

}  // namespace

TEST_CASE("the move home renames no link that only shares the recorded MAC", "[journal][identity]") {
  struct Case {
    const char* what;
    netlink::LinkInfo link;
    std::function<cni::DeviceOrigin(int index)> origin;
  };
  const std::vector<Case> cases = {
      {"lo under the pod-side name, recorded MAC all zeros",
       {0, "net1", "00:00:00:00:00:00", 65536, true, ""},
       [](int i) { return Origin(i, "00:00:00:00:00:00"); }},
      {"a node link of another name than the kernel gives back",
       {0, "eth0", kMac, 1500, true, ""},
       [](int i) { return Origin(i); }},
      {"the pod-side name and MAC, another ifindex",
       {0, "net1", kMac, 1500, true, ""},
       [](int i) { return Origin(i + 1000); }},
      {"devN and the MAC, another kind",
       {0, "dev3", kMac, 1500, true, "veth"},
       [](int i) { return Origin(i, kMac, "macvlan"); }},
      {"a virtual link when no kind was recorded (only physical devices come back)",
       {0, "net1", kMac, 1500, true, "veth"},
       [](int i) { return Origin(i); }},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    Home h;
    const int index = h.world.AddLink(fake::World::kRoot, c.link);
    auto before = h.world.LinkByIndex(index);
    CHECK(h.MoveHome(c.origin(index)).ok());
    CHECK(h.world.LinkByIndex(index) == before);
    auto eth9 = h.host->FindLink("eth9");
    REQUIRE(eth9.ok());
    CHECK_FALSE(*eth9);
  }
}

TEST_CASE("the move home still renames a device the kernel handed back under its pod-side name or devN",
          "[journal][identity]") {
  for (const char* name : {"net1", "dev7"}) {
    INFO(name);
    Home h;
    const int index = h.world.AddLink(fake::World::kRoot, {0, name, kMac, 1500, false, ""});
    REQUIRE(h.MoveHome(Origin(index)).ok());
    CHECK(h.world.LinkByIndex(index)->name == "eth9");
  }
}

}  // namespace test_unit_move_home_identity_test
