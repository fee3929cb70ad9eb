// cni/state/claim.h: the shares of a macvlan/ipvlan parent (children/<parent>/).
#include "cni/state/claim.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "base/file.h"

namespace fs = std::filesystem;

TEST_CASE("LiveShares removes a parent's share directory left empty and makes none where there is none",
          "[claim][dir]") {
  char tmpl[] = "/tmp/erdma-claim-XXXXXX";
  const std::string root = mkdtemp(tmpl);
  const std::string children = root + "/data/children";
  REQUIRE(base::MakePrivateDirs(root + "/data").ok());
  CHECK(cni::LiveShares(children, "eth1").empty());
  CHECK_FALSE(fs::exists(children));
  // Left empty by a share write that failed, or by a DEL's own share going.
  REQUIRE(base::MakePrivateDirs(children + "/eth1").ok());
  CHECK(cni::LiveShares(children, "eth1").empty());
  CHECK_FALSE(fs::exists(children + "/eth1"));
  CHECK(fs::is_directory(children));
  fs::remove_all(root);
}
