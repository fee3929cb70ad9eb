// A mode is one driver: its row (name, options key, what the parser must know, its options' parser, its
// driver) and its docs row. Every row of cni::Modes() has them; a toy mode made here of a test-only driver
// and a row, and nothing else, is parsed, attached and detached by the generic pipeline.
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "cni/driver/move.h"
#include "cni/driver/registry.h"
#include "conf/fields.h"
#include "conf/keys.h"
#include "test/unit/fake_node.h"

namespace test_unit_mode_registry_test {

namespace {

std::string ModesDoc() {
  std::ifstream in(std::string(ERDMA_SOURCE_DIR) + "/docs/modes.md");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("every mode has a driver, a name of its own, an accepted options key and its docs row") {
  const std::string doc = ModesDoc();
  REQUIRE_FALSE(doc.empty());
  std::set<std::string_view> names, keys;
  REQUIRE(cni::Modes().size() >= 5);
  CHECK(cni::Modes().front()->name == "move");  // the default
  for (const conf::ModeSpec* m : cni::Modes()) {
    INFO(m->name);
    CHECK(names.insert(m->name).second);
    CHECK(conf::ModeNamed(cni::Modes(), m->name) == m);
    REQUIRE(m->driver != nullptr);
    CHECK((m->parse == nullptr) == m->options_key.empty());
    if (!m->options_key.empty()) {
      CHECK(keys.insert(m->options_key).second);
      // Not a key of the config's own: a mode's options are its driver's.
      CHECK(std::ranges::find(conf::kTopKeys, m->options_key) == std::end(conf::kTopKeys));
    }
    CHECK(doc.find("| `" + std::string(m->name) + "` | " + std::string(m->pod_gets) + " |") !=
          std::string::npos);
  }
}

TEST_CASE("the messages that list modes name every mode") {
  CHECK(conf::ModeList(cni::Modes(), nullptr) == R"("move", "macvlan", "ipvlan", "vf" or "none")");
  CHECK(conf::ModeList(cni::Modes(), [](const conf::ModeSpec& s) { return s.sets_mac; }) ==
        R"("macvlan" or "vf")");
  CHECK(conf::ModeList(cni::Modes(), [](const conf::ModeSpec& s) { return s.from_pool; }) ==
        R"("move", "macvlan" or "ipvlan")");
}

namespace {

// The toy mode: a driver file's worth. Its options block "toy" holds one key, "label"; it attaches as mode
// move does and says its label in the log line.
struct ToyOptions : conf::ModeOptions {
  std::string label = "plain";
};

constexpr std::string_view kToyKeys[] = {"label"};
constexpr conf::Level kToyLevel{"toy", kToyKeys};

base::Result<conf::ParsedMode> ParseToy(const conf::ModeInput& in) {
  auto o = std::make_shared<ToyOptions>();
  if (in.block) {
    RETURN_IF_ERROR(conf::RefuseUnknown(*in.block, kToyLevel));
    if (const nlohmann::json* l = conf::Get(*in.block, conf::Key(kToyLevel, "label"))) {
      if (!l->is_string()) return conf::Invalid("toy.label: must be a string");
      o->label = l->get<std::string>();
    }
  }
  conf::ParsedMode out;
  out.options = std::move(o);
  return out;
}

std::vector<std::string> g_plans;  // what the toy driver planned, in order

class Toy : public cni::Driver {
 public:
  base::Result<cni::Target> Find(cni::Context& ctx, const cni::StateStore& store,
                                 const cni::RdmaAccess& rdma) const override {
    return cni::kMoveMode.driver().Find(ctx, store, rdma);
  }
  base::Status Resolve(cni::Context& ctx, const cni::RdmaAccess& rdma, cni::Target& t) const override {
    return cni::kMoveMode.driver().Resolve(ctx, rdma, t);
  }
  base::Result<cni::Plan> MakePlan(const cni::Context& ctx, const cni::Target& t, const std::string& pod_name,
                                   uint32_t table) const override {
    ASSIGN_OR_RETURN(cni::Plan plan, cni::kMoveMode.driver().MakePlan(ctx, t, pod_name, table));
    const std::string& label = conf::OptionsOf<ToyOptions>(ctx.cfg.mode_options).label;
    plan.log_line = "toy " + label + ": " + plan.log_line;
    g_plans.push_back(label);
    return plan;
  }
};

const cni::Driver& ToyDriver() {
  static const Toy driver;
  return driver;
}

// Its registry row.
const conf::ModeSpec kToyMode{.name = "toy",
                              .options_key = "toy",
                              .takes_device = true,
                              .from_pool = true,
                              .moves_rdma = true,
                              .pod_gets = "the node device, labelled",
                              .parse = ParseToy,
                              .driver = ToyDriver};

// The plugin's table with the toy row appended.
std::vector<const conf::ModeSpec*> WithToy() {
  std::vector<const conf::ModeSpec*> t(cni::Modes().begin(), cni::Modes().end());
  t.push_back(&kToyMode);
  return t;
}

}  // namespace

TEST_CASE("a toy mode is a driver and a row: parsed, attached and detached by the generic pipeline") {
  using fakenode::Node;
  const std::vector<const conf::ModeSpec*> table = WithToy();
  Node n;
  auto text = [&](const std::string& extra) {
    return R"({"cniVersion":"1.0.0","name":"erdma","type":"erdma-cni","device":{"name":"eth1"},"dataDir":")" +
           n.dir.path + "\"" + extra + "}";
  };

  // The parser knows it through its row only: its name, its block, its keys.
  auto cfg = conf::Parse(table, text(R"(,"mode":"toy","toy":{"label":"blue"})"));
  REQUIRE(cfg.ok());
  CHECK(cfg->mode == &kToyMode);
  CHECK(conf::OptionsOf<ToyOptions>(cfg->mode_options).label == "blue");
  auto typo = conf::Parse(table, text(R"(,"mode":"toy","toy":{"lable":"blue"})"));
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.error().code == base::Code::kInvalidConfig);
  CHECK_THAT(typo.error().msg,
             Catch::StartsWith("toy.lable: not a key of erdma-cni's toy; did you mean toy.label?"));
  auto other = conf::Parse(table, text(R"(,"mode":"move","toy":{})"));
  REQUIRE_FALSE(other.ok());
  CHECK_THAT(other.error().msg, Catch::StartsWith(R"(toy: only mode "toy" reads it, and mode is "move")"));
  auto unknown = conf::Parse(table, text(R"(,"mode":"tyo")"));
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(unknown.error().msg, Catch::EndsWith(R"("vf", "none" or "toy")"));
  // The plugin's own table has no such mode, nor its key.
  CHECK_FALSE(conf::Parse(cni::Modes(), text(R"(,"mode":"toy")")).ok());
  CHECK_THAT(conf::Parse(cni::Modes(), text(R"(,"toy":{})")).error().msg,
             Catch::StartsWith("toy: not a key of erdma-cni"));

  // ADD finds its driver through the row; DEL undoes it, the device home and nothing left.
  g_plans.clear();
  const auto before = n.world.Snapshot();
  REQUIRE(n.Add(*cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  CHECK(g_plans == std::vector<std::string>{"blue"});
  CHECK(n.world.NetnsOfLink(n.eth1) == n.pod_ns);
  CHECK(n.Check(*cfg, n.MakeEnv(cni::Command::kCheck)).ok());
  REQUIRE(n.Del(*cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(fake::DiffSnapshots(before, n.world.Snapshot()) == "");
  CHECK(n.StateFiles().empty());
}

}  // namespace test_unit_mode_registry_test
