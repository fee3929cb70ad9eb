#include "cni/core/env.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>

namespace test_unit_env_test {

namespace {

using base::Code;
using cni::Command;
using Vars = std::map<std::string, std::string>;

/// A getenv over a map; a key absent from the map is an unset variable.
cni::Getenv FakeGetenv(const Vars& vars) {
  return [&vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

Vars AddVars() {
  return {{"CNI_COMMAND", "ADD"},
          {"CNI_CONTAINERID", "3f0c2a9d_b.1-x"},
          {"CNI_NETNS", "/var/run/netns/cni-1234"},
          {"CNI_IFNAME", "net1"},
          {"CNI_PATH", "/opt/cni/bin:/usr/libexec/cni"},
          {"CNI_ARGS", "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=pod-0"}};
}

base::Result<cni::Env> Parse(const Vars& vars) { return cni::ParseEnv(FakeGetenv(vars)); }

TEST_CASE("env parses a complete ADD invocation") {
  const Vars vars = AddVars();
  auto r = Parse(vars);
  REQUIRE(r.ok());
  CHECK(r->command == Command::kAdd);
  CHECK(r->container_id == "3f0c2a9d_b.1-x");
  CHECK(r->netns == "/var/run/netns/cni-1234");
  CHECK(r->ifname == "net1");
  CHECK(r->path == std::vector<std::string>{"/opt/cni/bin", "/usr/libexec/cni"});
  CHECK(r->args.at("K8S_POD_NAME") == "pod-0");
  CHECK(r->PodName() == "default/pod-0");
}

TEST_CASE("env maps every CNI_COMMAND to its command") {
  const auto [text, command] = GENERATE(table<const char*, Command>({
      {"ADD", Command::kAdd},
      {"DEL", Command::kDel},
      {"CHECK", Command::kCheck},
      {"VERSION", Command::kVersion},
      {"GC", Command::kGc},
      {"STATUS", Command::kStatus},
  }));
  Vars vars = AddVars();
  vars["CNI_COMMAND"] = text;
  auto r = Parse(vars);
  REQUIRE(r.ok());
  CHECK(r->command == command);
}

TEST_CASE("env refuses a missing or unknown CNI_COMMAND and lists the valid ones") {
  const char* list = "must be one of ADD, DEL, CHECK, VERSION, GC, STATUS";
  Vars vars = AddVars();
  vars.erase("CNI_COMMAND");
  auto r = Parse(vars);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kInvalidEnv);
  CHECK_THAT(r.error().msg, Catch::StartsWith("CNI_COMMAND: missing") && Catch::Contains(list));

  for (const char* bad : {"", "add", "UPDATE", "ADD "}) {
    INFO(bad);
    vars["CNI_COMMAND"] = bad;
    r = Parse(vars);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Code::kInvalidEnv);
    CHECK_THAT(r.error().msg, Catch::StartsWith("CNI_COMMAND: ") && Catch::Contains(list));
  }
}

TEST_CASE("env requires the container variables for ADD and CHECK") {
  const char* command = GENERATE("ADD", "CHECK");
  const char* var = GENERATE("CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME");
  INFO(command << " without " << var);
  Vars vars = AddVars();
  vars["CNI_COMMAND"] = command;
  SECTION("unset") { vars.erase(var); }
  SECTION("empty") { vars[var] = ""; }
  auto r = Parse(vars);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kInvalidEnv);
  CHECK_THAT(r.error().msg, Catch::StartsWith(std::string(var) + ": missing"));
}

TEST_CASE("env for DEL works without CNI_NETNS but needs the container ID and ifname") {
  Vars vars = AddVars();
  vars["CNI_COMMAND"] = "DEL";
  vars.erase("CNI_NETNS");
  auto r = Parse(vars);
  REQUIRE(r.ok());
  CHECK(r->netns.empty());

  vars["CNI_NETNS"] = "";
  CHECK(Parse(vars).ok());

  for (const char* var : {"CNI_CONTAINERID", "CNI_IFNAME"}) {
    INFO(var);
    Vars missing = vars;
    missing.erase(var);
    r = Parse(missing);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Code::kInvalidEnv);
    CHECK_THAT(r.error().msg, Catch::StartsWith(var));
  }
}

TEST_CASE("env for VERSION, GC and STATUS needs no container variables") {
  const char* command = GENERATE("VERSION", "GC", "STATUS");
  Vars vars = {{"CNI_COMMAND", command}};
  auto r = Parse(vars);
  REQUIRE(r.ok());
  CHECK(r->container_id.empty());
  CHECK(r->path.empty());
}

TEST_CASE("env refuses container IDs that are unsafe in a file name") {
  const std::string bad = GENERATE(as<std::string>{}, "..", ".", "a/b", "../etc", "a..b", "-abc", "_abc",
                                   ".abc", "a b", "a:b", "ab\n", std::string(257, 'a'));
  INFO(bad);
  Vars vars = AddVars();
  vars["CNI_CONTAINERID"] = bad;
  auto r = Parse(vars);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kInvalidEnv);
  CHECK_THAT(r.error().msg, Catch::StartsWith("CNI_CONTAINERID: "));
}

TEST_CASE("env accepts container IDs up to 192 bytes of the allowed characters for ADD") {
  // 192: the state file's name must fit NAME_MAX (state_hostile_test.cpp has the other commands' 256).
  const std::string good = GENERATE(as<std::string>{}, "a", "0", "abc.def", "A_b-c.9", std::string(192, 'f'));
  Vars vars = AddVars();
  vars["CNI_CONTAINERID"] = good;
  auto r = Parse(vars);
  REQUIRE(r.ok());
  CHECK(r->container_id == good);
}

TEST_CASE("env refuses an invalid CNI_IFNAME") {
  const std::string bad =
      GENERATE(as<std::string>{}, ".", "..", "a/b", "a:b", "a b", "a\tb", "0123456789abcdef");
  INFO(bad);
  Vars vars = AddVars();
  vars["CNI_IFNAME"] = bad;
  auto r = Parse(vars);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kInvalidEnv);
  CHECK_THAT(r.error().msg, Catch::StartsWith("CNI_IFNAME: "));
}

TEST_CASE("env accepts a 15-byte CNI_IFNAME") {
  Vars vars = AddVars();
  vars["CNI_IFNAME"] = "0123456789abcde";
  CHECK(Parse(vars).ok());
}

TEST_CASE("env refuses a relative CNI_NETNS") {
  Vars vars = AddVars();
  vars["CNI_NETNS"] = "netns/cni-1";
  auto r = Parse(vars);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kInvalidEnv);
  CHECK_THAT(r.error().msg, Catch::StartsWith("CNI_NETNS: "));
}

TEST_CASE("env splits CNI_PATH on colons and skips empty entries") {
  Vars vars = AddVars();
  vars["CNI_PATH"] = ":/opt/cni/bin::/usr/lib/cni:";
  auto r = Parse(vars);
  REQUIRE(r.ok());
  CHECK(r->path == std::vector<std::string>{"/opt/cni/bin", "/usr/lib/cni"});

  vars.erase("CNI_PATH");
  r = Parse(vars);
  REQUIRE(r.ok());
  CHECK(r->path.empty());
}

TEST_CASE("env refuses a relative CNI_PATH entry and names the variable") {
  Vars vars = AddVars();
  vars["CNI_PATH"] = "/opt/cni/bin:bin";
  auto r = Parse(vars);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kInvalidEnv);
  CHECK_THAT(r.error().msg, Catch::StartsWith("CNI_PATH: ") && Catch::Contains("\"bin\""));
}

TEST_CASE("env refuses a CNI_PATH entry that exists and is not a directory, and allows a missing one") {
  Vars vars = AddVars();
  vars["CNI_PATH"] = "/no/such/dir:/dev/null";
  auto r = Parse(vars);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kInvalidEnv);
  CHECK_THAT(r.error().msg,
             Catch::StartsWith("CNI_PATH: ") && Catch::Contains("\"/dev/null\" is not a directory"));

  vars["CNI_PATH"] = "/no/such/dir:/";
  CHECK(Parse(vars).ok());
}

TEST_CASE("env refuses a CNI_IFNAME or CNI_NETNS that is not UTF-8: results are JSON") {
  for (const char* var : {"CNI_IFNAME", "CNI_NETNS"}) {
    INFO(var);
    Vars vars = AddVars();
    vars[var] = std::string(var == std::string("CNI_IFNAME") ? "net" : "/run/netns/p") + "\xff";
    auto r = Parse(vars);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Code::kInvalidEnv);
    CHECK_THAT(r.error().msg, Catch::StartsWith(std::string(var) + ": ") && Catch::Contains("UTF-8"));
  }
  Vars vars = AddVars();
  vars["CNI_IFNAME"] = "r\xc3\xa9seau";  // "réseau": UTF-8 names are fine
  CHECK(Parse(vars).ok());
}

TEST_CASE("env refuses malformed CNI_ARGS and names the variable") {
  Vars vars = AddVars();
  vars["CNI_ARGS"] = "A=1;oops";
  auto r = Parse(vars);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kInvalidEnv);
  CHECK_THAT(r.error().msg, Catch::StartsWith("CNI_ARGS: "));
}

TEST_CASE("cni args parse into key value pairs") {
  auto r = cni::ParseCniArgs("IgnoreUnknown=1;K8S_POD_NAME=p;EMPTY=;B64=YQ==");
  REQUIRE(r.ok());
  CHECK(*r == std::map<std::string, std::string>{
                  {"IgnoreUnknown", "1"}, {"K8S_POD_NAME", "p"}, {"EMPTY", ""}, {"B64", "YQ=="}});
}

TEST_CASE("cni args accept empty text and stray semicolons") {
  auto r = cni::ParseCniArgs("");
  REQUIRE(r.ok());
  CHECK(r->empty());
  r = cni::ParseCniArgs(";A=1;;B=2;");
  REQUIRE(r.ok());
  CHECK(r->size() == 2);
}

TEST_CASE("cni args refuse a part without '=' or with an empty key") {
  const char* bad = GENERATE("A", "A=1;B", "=1", "A=1;=2");
  INFO(bad);
  auto r = cni::ParseCniArgs(bad);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kInvalidEnv);
  CHECK_THAT(r.error().msg, Catch::StartsWith("CNI_ARGS: "));
}

TEST_CASE("pod name needs both the namespace and the name") {
  cni::Env env;
  CHECK(env.PodName().empty());
  env.args["K8S_POD_NAME"] = "p";
  CHECK(env.PodName().empty());
  env.args["K8S_POD_NAMESPACE"] = "ns";
  CHECK(env.PodName() == "ns/p");
  env.args.erase("K8S_POD_NAME");
  CHECK(env.PodName().empty());
}

}  // namespace

TEST_CASE("env refuses an unknown CNI_ARGS key on ADD unless IgnoreUnknown is set") {
  Vars vars = AddVars();
  vars["CNI_ARGS"] = "K8S_POD_NAME=p;FOO=bar";
  auto r = Parse(vars);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kInvalidEnv);
  CHECK_THAT(r.error().msg, Catch::Contains("\"FOO\"") && Catch::Contains("IgnoreUnknown=1"));
  for (const char* on : {"1", "true", "True"}) {
    vars["CNI_ARGS"] = std::string("IgnoreUnknown=") + on + ";FOO=bar";
    CHECK(Parse(vars).ok());
  }
  vars["CNI_ARGS"] = "IgnoreUnknown=0;FOO=bar";
  CHECK_FALSE(Parse(vars).ok());
  // Every key erdma-cni or its runtimes use is known.
  vars["CNI_ARGS"] =
      "K8S_POD_NAMESPACE=n;K8S_POD_NAME=p;K8S_POD_INFRA_CONTAINER_ID=c;K8S_POD_UID=u;MAC=02:00:00:00:00:01;"
      "IP=10.9.0.7";
  CHECK(Parse(vars).ok());
  // DEL always finishes: it does not judge the keys.
  vars["CNI_COMMAND"] = "DEL";
  vars["CNI_ARGS"] = "FOO=bar";
  CHECK(Parse(vars).ok());
}

}  // namespace test_unit_env_test
