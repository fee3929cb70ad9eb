// nri/topology.h: which GPUs a container names, how they are shared out to the rails on a flat topology,
// and the NCCL topology file that says so.
#include "nri/topology.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>
#include <vector>

namespace test_unit_nri_topology_test {

namespace {

// A function directly on the root bus of a VM, without a NUMA node.
cni::PciLocation Flat(const std::string& bdf) { return {"pci0000:00", {bdf}, -1}; }

nri::Device Node(const std::string& path, int64_t major, int64_t minor) {
  return {path, "c", major, minor, std::nullopt, std::nullopt, std::nullopt};
}

std::vector<nri::TopologyRail> Rails(size_t n) {
  std::vector<nri::TopologyRail> out;
  for (size_t i = 0; i < n; ++i) {
    char bdf[32];
    std::snprintf(bdf, sizeof bdf, "0000:01:%02zx.0", i);
    out.push_back({"erdma_" + std::to_string(i), Flat(bdf)});
  }
  return out;
}

std::vector<nri::TopologyGpu> Gpus(size_t n) {
  std::vector<nri::TopologyGpu> out;
  // Listed in reverse: the plan puts them in address order.
  for (size_t i = n; i-- > 0;) {
    const std::string bdf = "0000:00:0" + std::to_string(i) + ".0";
    out.push_back({bdf, Flat(bdf)});
  }
  return out;
}

// Each switch as "nic: gpu gpu".
std::vector<std::string> Shown(const std::vector<nri::TopologySwitch>& plan) {
  std::vector<std::string> out;
  for (const auto& s : plan) {
    std::string line = s.nic + ":";
    for (const auto& g : s.gpus) line += " " + g;
    out.push_back(line);
  }
  return out;
}

}  // namespace

TEST_CASE("a container's GPUs are its /dev/nvidiaN nodes, else NVIDIA_VISIBLE_DEVICES", "[nri]") {
  nri::Container c;
  c.devices = {Node("/dev/nvidiactl", 195, 255), Node("/dev/nvidia-uvm", 511, 0),
               Node("/dev/nvidia3", 195, 3), Node("/dev/nvidia1", 195, 1),
               Node("/dev/infiniband/uverbs0", 231, 192)};
  c.env = {"NVIDIA_VISIBLE_DEVICES=GPU-0a1b2c3d-0000-1111-2222-333344445555"};
  CHECK(nri::ContainerGpuIds(c) == std::vector<std::string>{"3", "1"});

  c.devices.clear();
  c.env = {"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_VISIBLE_DEVICES= GPU-a , 2,,"};
  CHECK(nri::ContainerGpuIds(c) == std::vector<std::string>{"GPU-a", "2"});
  for (const char* none : {"all", "none", "void", ""}) {
    c.env = {std::string("NVIDIA_VISIBLE_DEVICES=") + none};
    CHECK(nri::ContainerGpuIds(c).empty());
  }
  c.env = {"NVIDIA_VISIBLE_DEVICESX=0", "PATH=/bin"};
  CHECK(nri::ContainerGpuIds(c).empty());
}

TEST_CASE("GPUs are shared out to the rails in contiguous runs, in address order", "[nri]") {
  std::string why;
  CHECK(Shown(nri::PlanTopology(Rails(4), Gpus(8), &why)) ==
        std::vector<std::string>{
            "0000:01:00.0: 0000:00:00.0 0000:00:01.0", "0000:01:01.0: 0000:00:02.0 0000:00:03.0",
            "0000:01:02.0: 0000:00:04.0 0000:00:05.0", "0000:01:03.0: 0000:00:06.0 0000:00:07.0"});
  CHECK(Shown(nri::PlanTopology(Rails(2), Gpus(3), &why)) ==
        std::vector<std::string>{"0000:01:00.0: 0000:00:00.0 0000:00:01.0", "0000:01:01.0: 0000:00:02.0"});
  CHECK(Shown(nri::PlanTopology(Rails(4), Gpus(2), &why)) ==
        std::vector<std::string>{"0000:01:00.0: 0000:00:00.0", "0000:01:01.0: 0000:00:01.0",
                                 "0000:01:02.0:", "0000:01:03.0:"});
  CHECK(Shown(nri::PlanTopology(Rails(1), Gpus(2), &why)) ==
        std::vector<std::string>{"0000:01:00.0: 0000:00:00.0 0000:00:01.0"});
  // A GPU named twice (its node and a replica) is one GPU.
  auto twice = Gpus(1);
  twice.push_back(twice.front());
  CHECK(Shown(nri::PlanTopology(Rails(1), twice, &why)) ==
        std::vector<std::string>{"0000:01:00.0: 0000:00:00.0"});
}

TEST_CASE("no topology file where NCCL reads the tree or a part is missing, and it says why", "[nri]") {
  std::string why;
  CHECK(nri::PlanTopology(Rails(2), {}, &why).empty());
  CHECK(why.find("no GPU") != std::string::npos);
  CHECK(nri::PlanTopology({}, Gpus(1), &why).empty());
  CHECK(why == "the pod has no rail");

  auto soft = Rails(2);
  soft[1].pci.reset();  // Soft-RoCE: no PCI function
  CHECK(nri::PlanTopology(soft, Gpus(2), &why).empty());
  CHECK(why == "erdma_1 has no PCI function");

  auto lost = Gpus(2);
  lost[0] = {"GPU-a", std::nullopt};
  CHECK(nri::PlanTopology(Rails(2), lost, &why).empty());
  CHECK(why == "GPU GPU-a is not found on the PCIe tree");

  // A tree NCCL can read: behind a switch, or with a NUMA node.
  auto switched = Rails(2);
  switched[0].pci = cni::PciLocation{"pci0000:00", {"0000:00:01.0", "0000:01:00.0"}, -1};
  CHECK(nri::PlanTopology(switched, Gpus(2), &why).empty());
  CHECK(why == "the PCIe tree is not flat: NCCL reads it");
  auto numa = Gpus(2);
  numa[0].pci->numa = 0;
  CHECK(nri::PlanTopology(Rails(2), numa, &why).empty());
  CHECK(why == "the PCIe tree is not flat: NCCL reads it");

  CHECK(nri::PlanTopology(Rails(nri::kMaxTopologyRails + 1), Gpus(1), &why).empty());
  CHECK(why == "32 rails, more than the 31 one file holds");
  CHECK_FALSE(nri::PlanTopology(Rails(nri::kMaxTopologyRails), Gpus(1), &why).empty());

  // What goes into the XML is the kernel's form of an address, nothing else.
  auto odd = Rails(1);
  odd[0].pci = Flat("0000:01:00.0\"/><x");
  CHECK(nri::PlanTopology(odd, Gpus(1), &why).empty());
  CHECK(why.find("is not a PCI address") != std::string::npos);
}

TEST_CASE("the topology file holds one virtual switch per rail with its NIC and GPUs, by busid", "[nri]") {
  std::string why;
  const std::string xml = nri::NcclTopologyXml(nri::PlanTopology(Rails(2), Gpus(3), &why));
  CHECK(xml ==
        "<system version=\"1\">\n"
        "  <cpu numaid=\"-1\">\n"
        "    <pci busid=\"ffff:ff:01.0\" class=\"0x060400\" link_speed=\"16 GT/s\" link_width=\"16\">\n"
        "      <pci busid=\"0000:01:00.0\"/>\n"
        "      <pci busid=\"0000:00:00.0\"/>\n"
        "      <pci busid=\"0000:00:01.0\"/>\n"
        "    </pci>\n"
        "    <pci busid=\"ffff:ff:02.0\" class=\"0x060400\" link_speed=\"16 GT/s\" link_width=\"16\">\n"
        "      <pci busid=\"0000:01:01.0\"/>\n"
        "      <pci busid=\"0000:00:02.0\"/>\n"
        "    </pci>\n"
        "  </cpu>\n"
        "</system>\n");
  // The last switch a file holds is device 1f of bus ffff:ff.
  const std::string full =
      nri::NcclTopologyXml(nri::PlanTopology(Rails(nri::kMaxTopologyRails), Gpus(1), &why));
  CHECK(full.find("ffff:ff:1f.0") != std::string::npos);
  CHECK(full.find("ffff:ff:20.0") == std::string::npos);
}

}  // namespace test_unit_nri_topology_test
