// nri/adjust.h: what a container gets from the NRI agent, by the pod it is in and what it has already.
#include "nri/adjust.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "nri/topology.h"

namespace test_unit_nri_adjust_test {

namespace {

nri::PodRdma TwoRails() {
  nri::PodRdma p;
  p.rails.push_back({"erdma_0", nri::DeviceNode{"/dev/infiniband/uverbs0", 231, 192}, std::nullopt});
  p.rails.push_back({"erdma_1", nri::DeviceNode{"/dev/infiniband/uverbs1", 231, 193}, std::nullopt});
  p.rdma_cm = nri::DeviceNode{"/dev/infiniband/rdma_cm", 10, 58};
  return p;
}

nri::CreateContainer Request() {
  nri::CreateContainer r;
  r.pod = {"sandbox-1", "trainer-0", "uid-1", "ml", {}};
  r.container = {"ctr-1", "sandbox-1", "trainer", {"PATH=/usr/bin"}, {}, {}};
  return r;
}

const nri::AgentPolicy kUnlimitedNode{nri::kUnlimited};

}  // namespace

TEST_CASE("a container of a pod erdma-cni attached nothing to gets an empty adjustment", "[nri]") {
  const nri::Decision d = nri::Adjust(Request(), {}, kUnlimitedNode);
  CHECK(d.adjust.empty());
  CHECK(d.notes.empty());
}

TEST_CASE("a container of an attached pod gets memlock, its rails' device nodes and NCCL_IB_HCA", "[nri]") {
  const nri::Decision d = nri::Adjust(Request(), TwoRails(), kUnlimitedNode);
  nri::Adjustment want;
  want.rlimits = {{"RLIMIT_MEMLOCK", nri::kUnlimited, nri::kUnlimited}};
  want.devices = {{"/dev/infiniband/uverbs0", "c", 231, 192, 0666, std::nullopt, std::nullopt},
                  {"/dev/infiniband/uverbs1", "c", 231, 193, 0666, std::nullopt, std::nullopt},
                  {"/dev/infiniband/rdma_cm", "c", 10, 58, 0666, std::nullopt, std::nullopt}};
  want.device_rules = {{true, "c", 231, 192, "rw"}, {true, "c", 231, 193, "rw"}, {true, "c", 10, 58, "rw"}};
  want.env = {{"NCCL_IB_HCA", "=erdma_0:1,erdma_1:1"}};
  CHECK(d.adjust == want);
  // No memlock in the node file: the runtime's limit stays.
  CHECK(nri::Adjust(Request(), TwoRails(), {}).adjust.rlimits.empty());
}

TEST_CASE(
    "what the container has already stays: its memlock as high, a device plugin's node, its NCCL_IB_HCA",
    "[nri]") {
  nri::CreateContainer r = Request();
  r.container.rlimits = {{"RLIMIT_MEMLOCK", nri::kUnlimited, nri::kUnlimited}};
  r.container.devices = {{"/dev/infiniband/uverbs0", "c", 231, 192, 0666, std::nullopt, std::nullopt}};
  r.container.env.push_back("NCCL_IB_HCA=mlx5_0");
  const nri::Decision d = nri::Adjust(r, TwoRails(), kUnlimitedNode);
  CHECK(d.adjust.rlimits.empty());
  CHECK(d.adjust.env.empty());
  REQUIRE(d.adjust.devices.size() == 2);
  CHECK(d.adjust.devices[0].path == "/dev/infiniband/uverbs1");
  CHECK(d.notes.size() == 3);
  // A lower limit of its own is raised.
  r.container.rlimits = {{"RLIMIT_MEMLOCK", 8 << 20, 8 << 20}};
  CHECK(nri::Adjust(r, TwoRails(), kUnlimitedNode).adjust.rlimits ==
        std::vector<nri::Rlimit>{{"RLIMIT_MEMLOCK", nri::kUnlimited, nri::kUnlimited}});
}

TEST_CASE("the pod's annotation may lower the node's memlock, never raise it", "[nri]") {
  auto memlock = [](const std::string& annotation, uint64_t node) {
    nri::CreateContainer r = Request();
    r.pod.annotations[nri::kMemlockAnnotation] = annotation;
    const nri::Decision d = nri::Adjust(r, TwoRails(), {node});
    return d.adjust.rlimits.empty() ? uint64_t{0} : d.adjust.rlimits[0].soft;
  };
  CHECK(memlock("64Mi", nri::kUnlimited) == uint64_t{64} << 20);
  CHECK(memlock("unlimited", uint64_t{1} << 30) == uint64_t{1} << 30);
  CHECK(memlock("2Gi", uint64_t{1} << 30) == uint64_t{1} << 30);
  CHECK(memlock("lots", uint64_t{1} << 30) == uint64_t{1} << 30);
}

TEST_CASE("a topology file is bound read-only with NCCL_TOPO_FILE, unless the container sets its own",
          "[nri]") {
  nri::PodRdma pod = TwoRails();
  pod.topology_file = "/run/erdma-cni-nri/sandbox-1/ctr-1.xml";
  const nri::Decision d = nri::Adjust(Request(), pod, {});
  CHECK(d.adjust.mounts == std::vector<nri::MountSpec>{{"/run/erdma-cni/nccl-topo.xml",
                                                        "bind",
                                                        "/run/erdma-cni-nri/sandbox-1/ctr-1.xml",
                                                        {"bind", "ro"}}});
  CHECK(d.adjust.env ==
        std::vector<std::pair<std::string, std::string>>{{"NCCL_IB_HCA", "=erdma_0:1,erdma_1:1"},
                                                         {"NCCL_TOPO_FILE", "/run/erdma-cni/nccl-topo.xml"}});

  nri::CreateContainer own = Request();
  own.container.env.push_back("NCCL_TOPO_FILE=/opt/topo.xml");
  CHECK_FALSE(nri::WantsTopology(own.container));
  CHECK(nri::WantsTopology(Request().container));
  const nri::Decision left = nri::Adjust(own, pod, {});
  CHECK(left.adjust.mounts.empty());
  CHECK(left.adjust.env.size() == 1);
  CHECK(left.notes == std::vector<std::string>{"NCCL_TOPO_FILE left: the container sets it"});
  // Without a file (not flat, no GPU), nothing of it.
  CHECK(nri::Adjust(Request(), TwoRails(), {}).adjust.mounts.empty());
}

}  // namespace test_unit_nri_adjust_test
