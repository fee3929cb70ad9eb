// nri/session.h: the agent's side of one NRI connection, driven by a runtime written here from the protocol
// (the multiplexed connections, ttrpc's envelope, NRI's messages), a byte at a time where that matters.
#include "nri/session.h"

#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace test_unit_nri_session_test {

namespace {

// The runtime's side: frames its requests, and reads what the agent wrote.
struct Runtime {
  nri::Demux from_agent;
  uint32_t next_stream = 1;

  std::string Call(const std::string& method, const std::string& payload) {
    const nri::Request req{nri::kPluginService, method, payload, 2000000000};
    auto f = nri::EncodeFrame(nri::kPluginConn,
                              {next_stream, nri::TtrpcType::kRequest, 0, nri::EncodeRequest(req)});
    next_stream += 2;
    REQUIRE(f.ok());
    return *f;
  }
  static std::string Reply(uint32_t stream, const nri::Response& r) {
    auto f =
        nri::EncodeFrame(nri::kRuntimeConn, {stream, nri::TtrpcType::kResponse, 0, nri::EncodeResponse(r)});
    REQUIRE(f.ok());
    return *f;
  }
  std::vector<nri::Received> Read(const std::string& bytes) {
    REQUIRE(from_agent.Feed(bytes).ok());
    std::vector<nri::Received> out;
    while (auto r = from_agent.Next()) out.push_back(std::move(*r));
    return out;
  }
};

std::string CreateContainerPayload(const std::string& sandbox) {
  // Written as the runtime would: a pod with its ID, a container of it (protobuf's wire format by hand).
  auto len = [](int n, const std::string& b) {
    return std::string(1, static_cast<char>(n << 3 | 2)) + std::string(1, static_cast<char>(b.size())) + b;
  };
  return len(1, len(1, sandbox)) + len(2, len(1, "ctr-1") + len(2, sandbox));
}

nri::Handlers RailsFor(const std::string& attached) {
  nri::Handlers h;
  h.create_container = [attached](const nri::CreateContainer& c) {
    nri::PodRdma pod;
    if (c.pod.id == attached)
      pod.rails.push_back({"erdma_0", nri::DeviceNode{"/dev/infiniband/uverbs0", 231, 192}, std::nullopt});
    return nri::Adjust(c, pod, {nri::kUnlimited});
  };
  return h;
}

}  // namespace

TEST_CASE("the agent registers, is configured for its events, and answers each request on its stream",
          "[nri]") {
  nri::Handlers handlers = RailsFor("sandbox-1");
  std::string runtime_seen;
  handlers.configured = [&](const nri::Configure& c) {
    runtime_seen = c.runtime_name + " " + c.runtime_version;
  };
  nri::Session s("erdma-cni", "50", handlers);
  Runtime rt;
  // RegisterPlugin, on the runtime's connection.
  auto first = rt.Read(s.Start());
  REQUIRE(first.size() == 1);
  CHECK(first[0].conn == nri::kRuntimeConn);
  auto reg = nri::DecodeRequest(first[0].msg.payload);
  REQUIRE(reg.ok());
  CHECK(reg->service == nri::kRuntimeService);
  CHECK(reg->method == "RegisterPlugin");
  CHECK(reg->payload == nri::EncodeRegisterPlugin("erdma-cni", "50"));
  std::string out;
  REQUIRE(s.Feed(Runtime::Reply(first[0].msg.stream, {}), &out).ok());
  CHECK(s.registered());
  CHECK(out.empty());

  // Configure, Synchronize, then a container of the attached pod and one of another pod, fed a byte at a
  // time.
  std::string calls;
  // ConfigureRequest: runtime_name = 2, runtime_version = 3.
  calls += rt.Call("Configure", std::string("\x12\x0a"
                                            "containerd"
                                            "\x1a\x06"
                                            "1.7.24",
                                            20));
  calls += rt.Call("Synchronize", "");
  calls += rt.Call("CreateContainer", CreateContainerPayload("sandbox-1"));
  calls += rt.Call("CreateContainer", CreateContainerPayload("sandbox-2"));
  calls += rt.Call("Frobnicate", "");
  for (char c : calls) REQUIRE(s.Feed(std::string_view(&c, 1), &out).ok());
  CHECK(s.configured());
  CHECK(runtime_seen == "containerd 1.7.24");
  auto replies = rt.Read(out);
  REQUIRE(replies.size() == 5);
  std::vector<nri::Response> got;
  for (size_t i = 0; i < replies.size(); ++i) {
    CHECK(replies[i].conn == nri::kPluginConn);
    CHECK(replies[i].msg.type == nri::TtrpcType::kResponse);
    CHECK(replies[i].msg.stream == 1 + 2 * i);
    auto r = nri::DecodeResponse(replies[i].msg.payload);
    REQUIRE(r.ok());
    got.push_back(*r);
  }
  CHECK(got[0] == nri::Response{0, "", nri::EncodeConfigureResponse(nri::kSubscribed)});
  CHECK(got[1].code == 0);
  auto adjusted = nri::DecodeCreateContainerResponse(got[2].payload);
  REQUIRE(adjusted.ok());
  CHECK(adjusted->env == std::vector<std::pair<std::string, std::string>>{{"NCCL_IB_HCA", "=erdma_0:1"}});
  CHECK(adjusted->devices.size() == 1);
  CHECK(got[3] == nri::Response{0, "", ""});  // another pod: nothing
  CHECK(got[4].code == nri::kUnimplemented);
  CHECK(s.answered() == 5);
}

TEST_CASE("a handler that throws leaves the container as without the agent, and the request answered",
          "[nri]") {
  nri::Handlers h;
  h.create_container = [](const nri::CreateContainer&) -> nri::Decision { throw std::runtime_error("disk"); };
  nri::Session s("erdma-cni", "50", h);
  Runtime rt;
  std::string out;
  REQUIRE(s.Feed(rt.Call("CreateContainer", CreateContainerPayload("sandbox-1")), &out).ok());
  auto replies = rt.Read(out);
  REQUIRE(replies.size() == 1);
  CHECK(nri::DecodeResponse(replies[0].msg.payload).value() == nri::Response{0, "", ""});
  CHECK(s.handler_failures() == 1);
}

TEST_CASE("a refused registration or a frame the runtime never sends ends the session", "[nri]") {
  {
    nri::Session s("erdma-cni", "50", {});
    std::string out;
    const base::Status st = s.Feed(Runtime::Reply(1, {9, "plugin index taken", ""}), &out);
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.error().msg, Catch::Contains("plugin index taken"));
    CHECK_FALSE(s.registered());
  }
  {
    nri::Session s("erdma-cni", "50", {});
    std::string out;
    CHECK_FALSE(s.Feed(std::string("\0\0\0\0\0\0\0\0", 8), &out).ok());
  }
}

TEST_CASE("the runtime's pods reach the agent once, when the last part of Synchronize has come", "[nri]") {
  auto len = [](int n, const std::string& b) {
    return std::string(1, static_cast<char>(n << 3 | 2)) + std::string(1, static_cast<char>(b.size())) + b;
  };
  // SynchronizeRequest: pods = 1 (PodSandbox, its id = 1), more = 3.
  const std::string first =
      len(1, len(1, "sandbox-a")) + len(1, len(1, "sandbox-b")) + std::string("\x18\x01", 2);
  const std::string last = len(1, len(1, "sandbox-c"));
  std::vector<std::vector<std::string>> seen;
  nri::Handlers h;
  h.synchronized = [&seen](const std::vector<nri::Pod>& pods) {
    std::vector<std::string> ids;
    for (const nri::Pod& p : pods) ids.push_back(p.id);
    seen.push_back(ids);
  };
  nri::Session s("erdma-cni", "50", h);
  Runtime rt;
  std::string out;
  REQUIRE(s.Feed(rt.Call("Synchronize", first), &out).ok());
  CHECK(seen.empty());
  REQUIRE(s.Feed(rt.Call("Synchronize", last), &out).ok());
  CHECK(seen == std::vector<std::vector<std::string>>{{"sandbox-a", "sandbox-b", "sandbox-c"}});
  // A later synchronization starts afresh.
  REQUIRE(s.Feed(rt.Call("Synchronize", ""), &out).ok());
  CHECK(seen.size() == 2);
  CHECK(seen[1].empty());
  auto replies = rt.Read(out);
  REQUIRE(replies.size() == 3);
  CHECK(nri::DecodeResponse(replies[0].msg.payload).value().payload == nri::EncodeSynchronizeResponse(true));
}

}  // namespace test_unit_nri_session_test
