// nri/messages.h: the NRI messages as the runtime writes and reads them. The runtime's bytes are written by
// hand here from protobuf's wire format (a tag, then a varint or a length and the bytes), so that the
// decoders are checked against the encoding, not against the agent's own encoder.
#include "nri/messages.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

namespace test_unit_nri_messages_test {

namespace {

std::string Varint(uint64_t v) {
  std::string out;
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    if (v) b |= 0x80;
    out.push_back(static_cast<char>(b));
  } while (v);
  return out;
}

// Field `n` of wire type 2 (a string, bytes or a message).
std::string Len(int n, const std::string& bytes) {
  return Varint(static_cast<uint64_t>(n) << 3 | 2) + Varint(bytes.size()) + bytes;
}
// Field `n` of wire type 0.
std::string Int(int n, uint64_t v) { return Varint(static_cast<uint64_t>(n) << 3) + Varint(v); }

}  // namespace

TEST_CASE("a ttrpc request and response are read as ttrpc writes them, and written back the same", "[nri]") {
  const std::string payload("\x0a\x02hi\x00", 5);
  const std::string wire = Len(1, "nri.pkg.api.v1alpha1.Plugin") + Len(2, "CreateContainer") +
                           Len(3, payload) + Int(4, 2000000000) + Len(5, Len(1, "k") + Len(2, "v"));
  auto r = nri::DecodeRequest(wire);
  REQUIRE(r.ok());
  CHECK(*r == nri::Request{"nri.pkg.api.v1alpha1.Plugin", "CreateContainer", payload, 2000000000});
  auto again = nri::DecodeRequest(nri::EncodeRequest(*r));
  REQUIRE(again.ok());
  CHECK(*again == *r);

  auto ok = nri::DecodeResponse(nri::EncodeResponse({0, "", "reply"}));
  REQUIRE(ok.ok());
  CHECK(*ok == nri::Response{0, "", "reply"});
  // An error carries google.rpc.Status {code, message}.
  const std::string failed = nri::EncodeResponse({nri::kUnimplemented, "no such method", ""});
  CHECK(failed == Len(1, Int(1, 12) + Len(2, "no such method")));
}

TEST_CASE("CreateContainer is read as the runtime sends it, fields the agent does not know skipped",
          "[nri]") {
  const std::string pod = Len(1, "sandbox-1") + Len(2, "trainer-0") + Len(3, "uid-1") + Len(4, "ml") +
                          Len(5, Len(1, "app") + Len(2, "x")) +
                          Len(6, Len(1, "network.alibabacloud.com/erdma-smcr") + Len(2, "true")) +
                          Len(7, "runc");  // runtime_handler: not read
  const std::string device = Len(1, "/dev/infiniband/uverbs0") + Len(2, "c") + Int(3, 231) + Int(4, 192) +
                             Len(5, Int(1, 0666)) + Len(6, Int(1, 0)) + Len(7, Int(1, 0));
  const std::string container =
      Len(1, "ctr-1") + Len(2, "sandbox-1") + Len(3, "trainer") + Len(7, "python") +  // args: not read
      Len(8, "PATH=/usr/bin") + Len(8, "NCCL_DEBUG=INFO") + Len(11, Len(2, device)) +
      Len(13, Len(1, "RLIMIT_NOFILE") + Int(2, 1048576) + Int(3, 1048576)) +
      Int(14, 1700000000);  // created_at: not read
  auto c = nri::DecodeCreateContainer(Len(1, pod) + Len(2, container) + Int(99, 7));
  REQUIRE(c.ok());
  CHECK(c->pod ==
        nri::Pod{"sandbox-1", "trainer-0", "uid-1", "ml", {{"network.alibabacloud.com/erdma-smcr", "true"}}});
  nri::Container want{"ctr-1", "sandbox-1", "trainer", {"PATH=/usr/bin", "NCCL_DEBUG=INFO"}, {}, {}};
  want.devices.push_back({"/dev/infiniband/uverbs0", "c", 231, 192, 0666, 0, 0});
  want.rlimits.push_back({"RLIMIT_NOFILE", 1048576, 1048576});
  CHECK(c->container == want);
}

TEST_CASE("an adjustment is written as the runtime reads it, and an empty one is zero bytes", "[nri]") {
  nri::Adjustment a;
  a.env = {{"NCCL_IB_HCA", "=erdma_0:1,erdma_1:1"}};
  a.mounts.push_back(
      {"/etc/nccl-topo.xml", "bind", "/run/erdma-cni/nri/sandbox-1/topo.xml", {"ro", "rbind"}});
  a.devices.push_back({"/dev/infiniband/uverbs1", "c", 231, 193, 0666, std::nullopt, std::nullopt});
  a.device_rules.push_back({true, "c", 231, 193, "rw"});
  a.rlimits.push_back({"RLIMIT_MEMLOCK", UINT64_MAX, UINT64_MAX});
  const std::string wire = nri::EncodeCreateContainerResponse(a);
  // The adjustment's env entry and its rlimit, as NRI numbers them (ContainerAdjustment 4 and 7).
  const std::string env = Len(4, Len(1, "NCCL_IB_HCA") + Len(2, "=erdma_0:1,erdma_1:1"));
  const std::string rlimit = Len(7, Len(1, "RLIMIT_MEMLOCK") + Int(2, UINT64_MAX) + Int(3, UINT64_MAX));
  CHECK(wire.find(env) != std::string::npos);
  CHECK(wire.find(rlimit) != std::string::npos);
  auto back = nri::DecodeCreateContainerResponse(wire);
  REQUIRE(back.ok());
  CHECK(*back == a);
  CHECK(nri::EncodeCreateContainerResponse({}).empty());
}

TEST_CASE("Configure is read, and the events the agent asks for are one bit each", "[nri]") {
  auto c = nri::DecodeConfigure(Len(1, "") + Len(2, "containerd") + Len(3, "1.7.24") + Int(4, 5000) +
                                Int(5, 2000) + Len(6, "v0.6.1"));
  REQUIRE(c.ok());
  CHECK(c->runtime_name == "containerd");
  CHECK(c->runtime_version == "1.7.24");
  CHECK(c->registration_timeout_ms == 5000);
  CHECK(c->request_timeout_ms == 2000);
  const uint32_t events =
      nri::EventBit(nri::Event::kCreateContainer) | nri::EventBit(nri::Event::kRemovePodSandbox);
  CHECK(events == ((1u << 3) | (1u << 2)));
  CHECK(nri::EncodeConfigureResponse(events) == Int(2, 12));
  CHECK(nri::EncodeRegisterPlugin("erdma-cni", "50") == Len(1, "erdma-cni") + Len(2, "50"));
}

TEST_CASE("Synchronize and StateChange are read with their pods and containers", "[nri]") {
  const std::string pod = Len(1, "sandbox-1") + Len(4, "ml");
  auto s = nri::DecodeSynchronize(Len(1, pod) + Len(1, Len(1, "sandbox-2")) +
                                  Len(2, Len(1, "ctr-1") + Len(2, "sandbox-1")) + Int(3, 1));
  REQUIRE(s.ok());
  REQUIRE(s->pods.size() == 2);
  CHECK(s->pods[0].ns == "ml");
  REQUIRE(s->containers.size() == 1);
  CHECK(s->containers[0].pod_sandbox_id == "sandbox-1");
  CHECK(s->more);
  CHECK(nri::EncodeSynchronizeResponse(false).empty());

  auto e = nri::DecodeStateChange(Int(1, 3) + Len(2, pod));
  REQUIRE(e.ok());
  CHECK(e->event == static_cast<int>(nri::Event::kRemovePodSandbox));
  CHECK(e->pod.id == "sandbox-1");
  CHECK_FALSE(e->container);
}

TEST_CASE("bytes that are no such message are kDecoding, naming the message", "[nri]") {
  for (const std::string& junk :
       {std::string("\xff\xff\xff"), Len(1, "x").substr(0, 2), std::string("\x0b")}) {
    auto c = nri::DecodeCreateContainer(junk);
    REQUIRE_FALSE(c.ok());
    CHECK(c.error().code == base::Code::kDecoding);
    CHECK_THAT(c.error().msg, Catch::Contains("CreateContainerRequest"));
    CHECK_FALSE(nri::DecodeRequest(junk).ok());
  }
}

}  // namespace test_unit_nri_messages_test
