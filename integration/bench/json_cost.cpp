// What the state file's and the result's JSON cost, in-process: time per
// state write (StateText), per state read (parse + StateFromJson) and per
// result render (AppendToResult + dump) of a typical attachment (a moved
// device with an IPAM lease, two routes and a policy rule). Prints figures;
// asserts nothing. docs/decisions/json-text-sink.md keeps them.
//   erdma-bench-json [iterations]
#include <sys/socket.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cni/command/result.h"
#include "cni/state/state.h"
#include "conf/version.h"

using nlohmann::json;

namespace {

netlink::IpPrefix P(const char* s) { return *netlink::IpPrefix::Parse(s); }
netlink::IpAddress A(const char* s) { return *netlink::IpAddress::Parse(s); }

cni::AttachmentState Typical() {
  cni::AttachmentState st;
  st.network = "erdma-net";
  st.container_id = "5f2b0c9a7e3d41f08c6b2a1d9e4f7c3b5a8d0e2f4c6b8a0d1e3f5a7c9b1d3e5f";
  st.if_name = "net1";
  st.netns = "/var/run/netns/cni-2f6e1a3b-9c4d-4e5f-8a7b-1c2d3e4f5a6b";
  st.pod_if_name = "net1";
  st.table = 200;
  st.origin = {"eth1", 7, "00:16:3e:10:f8:b0", 9000, true, "", {}, {}};
  st.origin.addrs.push_back({7, P("10.9.0.10/24"), 0, 0, A("10.9.0.255")});
  netlink::RouteInfo via;
  via.dst = P("0.0.0.0/0");
  via.oif = 7;
  via.gateway = A("10.9.0.1");
  st.origin.routes = {via};
  st.steps.push_back(cni::StepIpam{"host-local",
                                   {{"cniVersion", "1.0.0"},
                                    {"name", "erdma-net"},
                                    {"ipam", {{"type", "host-local"}, {"subnet", "10.9.0.0/24"}}}}});
  st.steps.push_back(cni::StepMove{"net1"});
  st.steps.push_back(cni::StepMtu{9000});
  st.steps.push_back(cni::StepAddr{{0, P("10.9.0.150/24"), 0, 0, std::nullopt}});
  st.steps.push_back(cni::StepUp{});
  netlink::RouteInfo subnet;
  subnet.dst = P("10.9.0.0/24");
  subnet.table = 200;
  subnet.scope = 253;
  st.steps.push_back(cni::StepRoute{subnet});
  via.oif = 0;
  via.table = 200;
  st.steps.push_back(cni::StepRoute{via});
  st.steps.push_back(cni::StepRule{{AF_INET, 32765, P("10.9.0.150/32"), 200}});
  st.complete = true;
  return st;
}

template <class F>
double NsPer(int n, F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) f();
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 20000;
  cni::AttachmentState st = Typical();
  cni::ResultInterface iface{"net1", "00:16:3e:10:f8:b0", st.netns, 9000, "", ""};
  std::vector<cni::ResultIp> ips = {{P("10.9.0.150/24"), A("10.9.0.1")}};
  std::vector<cni::ResultRoute> routes = {
      {P("0.0.0.0/0"), A("10.9.0.1"), std::nullopt, std::nullopt, std::nullopt}};
  st.result = cni::AppendToResult(nullptr, "1.1.0", iface, ips, routes);
  size_t sink = 0;
  const std::string text = cni::StateText(st);
  if (auto back = cni::StateFromJson(nlohmann::json::parse(text)); !back.ok()) {
    std::fprintf(stderr, "the state does not read back: %s\n", back.error().msg.c_str());
    return 1;
  }
  const double write = NsPer(n, [&] { sink += cni::StateText(st).size(); });
  const double read =
      NsPer(n, [&] { sink += cni::StateFromJson(nlohmann::json::parse(text))->steps.size(); });
  const double render = NsPer(n, [&] {
    sink +=
        conf::ConvertResult(cni::AppendToResult(nullptr, "1.1.0", iface, ips, routes), "1.0.0").dump().size();
  });
  // The journal and the result, as the state file holds them: written as text
  // from the records (what StateText does), and through a tree of the same
  // records (StepToJson per step, then dump): what the text sink saves.
  json result = st.result;
  const double as_text = NsPer(n, [&] {
    sink += cni::JsonFields::Text([&](cni::JsonFields& f) {
              f.Records("steps", st.steps.size(),
                        [&](cni::JsonFields& step, size_t i) { cni::StepFields(step, st.steps[i]); });
              f("result", result);
            }).size();
  });
  const double as_tree = NsPer(n, [&] {
    json j = json::object();
    json& steps = j["steps"] = json::array();
    for (const cni::Step& s : st.steps) steps.push_back(cni::StepToJson(s));
    j["result"] = st.result;
    sink += j.dump().size();
  });
  std::printf("state text: %zu bytes; %d iterations\n", text.size(), n);
  std::printf("state write (StateText):          %8.2f us\n", write / 1000);
  std::printf("state read (parse+StateFromJson): %8.2f us\n", read / 1000);
  std::printf("result render (build+dump):       %8.2f us\n", render / 1000);
  std::printf("steps+result as text (Text):      %8.2f us\n", as_text / 1000);
  std::printf("steps+result through a tree:      %8.2f us\n", as_tree / 1000);
  return sink == 0;
}
