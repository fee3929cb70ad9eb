#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "install/options.h"

namespace test_unit_install_options_test {

namespace {

using install::Command;
using install::Options;
using install::Placement;

Options MustParse(const std::vector<std::string>& args) {
  auto o = install::ParseArgs(args);
  INFO((o.ok() ? "" : o.error().msg));
  REQUIRE(o.ok());
  return *o;
}

std::string MustFail(const std::vector<std::string>& args) {
  auto o = install::ParseArgs(args);
  REQUIRE_FALSE(o.ok());
  return o.error().msg;
}

TEST_CASE("installer options: install with no options takes the node defaults") {
  Options o = MustParse({"install"});
  CHECK(o.command == Command::kInstall);
  CHECK(o.bin_dir == "/opt/cni/bin");
  CHECK(o.conf_dir == "/etc/cni/net.d");
  CHECK(o.conflist == "auto");
  CHECK(o.placement.kind == Placement::Kind::kLast);
  CHECK(o.entry_file.empty());
  CHECK(o.source.empty());
  CHECK_FALSE(o.dry_run);
  CHECK(o.every_seconds == 0);
}

TEST_CASE("installer options: every option, as --key value and --key=value") {
  Options o = MustParse({"install", "--bin-dir", "/host/opt/cni/bin", "--conf-dir=/host/etc/cni/net.d",
                         "--conflist", "10-terway.conflist", "--after=terway", "--entry",
                         "/etc/erdma/entry.json", "--source=/opt/cni/bin/erdma-cni", "--every", "60"});
  CHECK(o.bin_dir == "/host/opt/cni/bin");
  CHECK(o.conf_dir == "/host/etc/cni/net.d");
  CHECK(o.conflist == "10-terway.conflist");
  CHECK(o.placement.kind == Placement::Kind::kAfter);
  CHECK(o.placement.after_type == "terway");
  CHECK(o.entry_file == "/etc/erdma/entry.json");
  CHECK(o.source == "/opt/cni/bin/erdma-cni");
  CHECK(o.every_seconds == 60);
  Options p = MustParse({"check", "--position", "2"});
  CHECK(p.command == Command::kCheck);
  CHECK(p.placement.kind == Placement::Kind::kIndex);
  CHECK(p.placement.index == 2);
  Options u = MustParse({"uninstall", "--remove-binary", "--dry-run"});
  CHECK(u.command == Command::kUninstall);
  CHECK(u.remove_binary);
  CHECK(u.dry_run);
}

TEST_CASE("installer options: --node-config names the node file install and check read") {
  CHECK(MustParse({"install"}).node_config.empty());
  CHECK(MustParse({"install", "--node-config", "/host/etc/erdma-cni/node.json"}).node_config ==
        "/host/etc/erdma-cni/node.json");
  CHECK(MustParse({"check", "--node-config=/n.json"}).node_config == "/n.json");
  CHECK_THAT(MustFail({"install", "--node-config", "node.json"}),
             Catch::StartsWith("--node-config: must be the absolute path"));
  CHECK_THAT(MustFail({"uninstall", "--node-config", "/n.json"}),
             Catch::StartsWith("--node-config is not an option"));
}

TEST_CASE("installer options: mistakes are refused with what to do") {
  CHECK(MustFail({}).find("no command") != std::string::npos);
  CHECK(MustFail({"instal"}).find("unknown command \"instal\"") != std::string::npos);
  CHECK(MustFail({"install", "--bogus"}).find("unknown option \"--bogus\"") != std::string::npos);
  CHECK(MustFail({"install", "--after"}).find("--after needs a value") != std::string::npos);
  CHECK(MustFail({"install", "--last=yes"}).find("--last takes no value") != std::string::npos);
  CHECK(MustFail({"install", "--after", "terway", "--last"}).find("exclude each other") != std::string::npos);
  CHECK(MustFail({"install", "--position", "-1"}).find("--position: a number") != std::string::npos);
  CHECK(MustFail({"install", "--position", "1x"}).find("--position: a number") != std::string::npos);
  CHECK(MustFail({"install", "--bin-dir", "opt/cni/bin"}).find("absolute") != std::string::npos);
  CHECK(MustFail({"install", "--conflist", "../x.conflist"}).find("a file name in --conf-dir") !=
        std::string::npos);
  CHECK(MustFail({"install", "--conflist", "10-terway.conf"}).find("does not end in .conflist") !=
        std::string::npos);
  CHECK(MustFail({"install", "--every", "0"}).find("--every: seconds") != std::string::npos);
  CHECK(MustFail({"install", "--every", "5", "--dry-run"}).find("exclude each other") != std::string::npos);
  CHECK(MustFail({"install", "--remove-binary"}).find("not an option of install") != std::string::npos);
  CHECK(MustFail({"uninstall", "--after", "terway"}).find("not an option of uninstall") != std::string::npos);
  CHECK(MustFail({"check", "--dry-run"}).find("not an option of check") != std::string::npos);
  CHECK(MustFail({"--version", "x"}).find("takes no arguments") != std::string::npos);
}

TEST_CASE("installer options: --help anywhere asks for the usage") {
  CHECK(MustParse({"--help"}).command == Command::kHelp);
  CHECK(MustParse({"install", "--after", "terway", "--help"}).command == Command::kHelp);
  CHECK(MustParse({"--version"}).command == Command::kVersion);
  CHECK(install::Usage().find("--after TYPE") != std::string::npos);
}

}  // namespace

}  // namespace test_unit_install_options_test
