// The device-info file (NPWG Device Information Spec) an ADD writes where runtimeConfig.CNIDeviceInfoFile
// says: it names erdma-cni's own device for every cniVersion, the PCI function above a virtio netdev, and
// whatever undoes the attachment removes it while it is still the file ADD wrote. The topology's ENIs are
// veths: a sysfs tree laid out by the test (ERDMA_CNI_TEST_SYSFS, test builds only) gives them the PCI
// functions of virtio NICs, as an ECS ENI's or a VM's NIC has.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "base/fault.h"
#include "harness.h"
#include "skip.h"

namespace test_kernel_plugin_device_info_test {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kDir = "/run/k8s.cni.cncf.io/devinfo/cni";

// ethK's netdev below virtio<K> below the PCI function 0000:00:0K.0.
std::string Pci(int k) { return "0000:00:0" + std::to_string(k) + ".0"; }

std::string Record(const std::string& pci) {
  return R"({"pci":{"pci-address":")" + pci +
         R"("},"type":"pci","version":"1.1.0"})"
         "\n";
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void Plant(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::trunc) << text; }

ino_t InodeOf(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

struct Fixture {
  kt::Topology t;
  std::string sysfs = t.tmp() + "/sys";
  std::vector<std::string> files;
  explicit Fixture(int enis = 1) : t({.enis = enis, .pods = 1, .primary = true}) {
    fs::create_directories(kDir);
    for (int k = 1; k <= enis; ++k) {
      const std::string fn = sysfs + "/devices/pci0000:00/" + Pci(k) + "/virtio" + std::to_string(k);
      fs::create_directories(fn);
      fs::create_directories(sysfs + "/class/net/eth" + std::to_string(k));
      fs::create_symlink(fn, sysfs + "/class/net/eth" + std::to_string(k) + "/device");
    }
  }
  ~Fixture() {
    for (const std::string& f : files) ::unlink(f.c_str());
  }
  // A file name of this test's own under kDir, removed at the end whatever happens.
  std::string File(const std::string& tag) {
    files.push_back(kDir + "/" + t.ContainerId(tag) + "-net1.json");
    return files.back();
  }
  // The entry chained after Terway: Terway's result carries a pciID of its own device.
  json Config(const std::string& version, const std::string& cid, const std::string& file) const {
    json prev = kt::TerwayPrevResult(version, cid);
    prev["interfaces"][0]["pciID"] = "0000:99:00.0";
    json c = kt::PluginConfig({.cni_version = version,
                               .data_dir = t.DataDir(),
                               .log_file = t.LogFile(),
                               .addresses = "inherit",
                               .prev_result = prev});
    c["ifName"] = "erdma0";
    c["runtimeConfig"] = {{"CNIDeviceInfoFile", "/var" + file}};
    return c;
  }
  kt::PluginResult Run(const std::string& command, const std::string& cid, const json& config) const {
    kt::PluginCall call = kt::Call(t, command, cid, "eth0", config);
    call.extra_env.push_back("ERDMA_CNI_TEST_SYSFS=" + sysfs);
    return kt::RunPlugin(call);
  }
  json State(const std::string& cid, bool group = false) const {
    std::string path = kt::StatePath(t.DataDir(), "erdma-test", cid, "eth0");
    if (group) path += "%group";
    return json::parse(Slurp(path), nullptr, false);
  }
};

}  // namespace

TEST_CASE(
    "the device-info file names our device's PCI function above virtioN for every cniVersion and DEL "
    "removes it") {
  if (!base::fault::kEnabled) KT_SKIP("ERDMA_CNI_TEST_SYSFS: build with -DERDMA_CNI_FAULT_HOOKS=ON");
  for (const std::string version : {"0.3.1", "0.4.0", "1.0.0", "1.1.0"}) {
    INFO("cniVersion " << version);
    Fixture f;
    const std::string cid = f.t.ContainerId("v" + version), file = f.File("v" + version);
    const json config = f.Config(version, cid, file);
    kt::PluginResult add = f.Run("ADD", cid, config);
    INFO("ADD: " << kt::Describe(add));
    REQUIRE(add.exit == 0);
    // Terway's device is not ours: the record names eth1's PCI function, not virtio1 nor 0000:99:00.0.
    CHECK(Slurp(file) == Record(Pci(1)));
    const json st = f.State(cid);
    CHECK(st["deviceInfo"].value("path", "") == file);
    CHECK(st["deviceInfo"].value("ino", uint64_t{0}) == InodeOf(file));
    if (version == "1.1.0") CHECK(add.json["interfaces"][1].value("pciID", "") == Pci(1));
    kt::PluginResult del = f.Run("DEL", cid, kt::AsRuntimeWouldForDel(config, add.json));
    INFO("DEL: " << kt::Describe(del));
    CHECK(del.exit == 0);
    CHECK_FALSE(kt::FileExists(file));
  }
}

TEST_CASE("DEL leaves a device-info file that is no longer the one ADD wrote, and a file there before ADD") {
  if (!base::fault::kEnabled) KT_SKIP("ERDMA_CNI_TEST_SYSFS: build with -DERDMA_CNI_FAULT_HOOKS=ON");
  Fixture f;
  SECTION("replaced by another file with the same text, or edited in place") {
    for (const bool replaced : {true, false}) {
      INFO((replaced ? "replaced" : "edited"));
      const std::string cid = f.t.ContainerId(replaced ? "replaced" : "edited");
      const std::string file = f.File(replaced ? "replaced" : "edited");
      const json config = f.Config("1.0.0", cid, file);
      kt::PluginResult add = f.Run("ADD", cid, config);
      INFO("ADD: " << kt::Describe(add));
      REQUIRE(add.exit == 0);
      const std::string now = replaced ? Record(Pci(1)) : "{\"someone\":\"else\"}\n";
      // Moved aside, ADD's file keeps its inode number from the new one.
      if (replaced) {
        f.files.push_back(file + ".aside");
        REQUIRE(::rename(file.c_str(), (file + ".aside").c_str()) == 0);
      }
      Plant(file, now);
      kt::PluginResult del = f.Run("DEL", cid, kt::AsRuntimeWouldForDel(config, add.json));
      INFO("DEL: " << kt::Describe(del));
      CHECK(del.exit == 0);
      CHECK(Slurp(file) == now);
      CHECK_THAT(Slurp(f.t.LogFile()), Catch::Contains("device information " + file + " left as it is"));
    }
  }
  SECTION("a file there before ADD is never written, nor removed") {
    const std::string cid = f.t.ContainerId("before"), file = f.File("before");
    const std::string theirs = R"({"type":"pci","version":"1.1.0","pci":{"pci-address":"0000:3b:00.2"}})";
    Plant(file, theirs);
    const json config = f.Config("1.0.0", cid, file);
    kt::PluginResult add = f.Run("ADD", cid, config);
    INFO("ADD: " << kt::Describe(add));
    REQUIRE(add.exit == 0);
    CHECK(Slurp(file) == theirs);
    CHECK_FALSE(f.State(cid).contains("deviceInfo"));
    CHECK_THAT(Slurp(f.t.LogFile()), Catch::Contains("a file is there already"));
    kt::PluginResult del = f.Run("DEL", cid, kt::AsRuntimeWouldForDel(config, add.json));
    INFO("DEL: " << kt::Describe(del));
    CHECK(del.exit == 0);
    CHECK(Slurp(file) == theirs);
  }
}

TEST_CASE("GC removes the device-info file of an attachment it collects") {
  if (!base::fault::kEnabled) KT_SKIP("ERDMA_CNI_TEST_SYSFS: build with -DERDMA_CNI_FAULT_HOOKS=ON");
  Fixture f;
  const std::string cid = f.t.ContainerId("collected"), file = f.File("collected");
  const json config = f.Config("1.1.0", cid, file);
  kt::PluginResult add = f.Run("ADD", cid, config);
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  REQUIRE(kt::FileExists(file));
  json gc = config;
  gc.erase("prevResult");
  gc.erase("runtimeConfig");
  gc["cni.dev/valid-attachments"] = json::array();
  kt::PluginCall call = kt::Gc(f.t, gc);
  call.extra_env.push_back("ERDMA_CNI_TEST_SYSFS=" + f.sysfs);
  kt::PluginResult r = kt::RunPlugin(call);
  INFO("GC: " << kt::Describe(r));
  CHECK(r.exit == 0);
  CHECK_FALSE(kt::FileExists(file));
  CHECK(kt::StateFiles(f.t.DataDir() + "/erdma-test").empty());
}

TEST_CASE("a group of two rails writes one device-info file naming its first rail, and DEL removes it") {
  if (!base::fault::kEnabled) KT_SKIP("ERDMA_CNI_TEST_SYSFS: build with -DERDMA_CNI_FAULT_HOOKS=ON");
  Fixture f(2);
  const std::string cid = f.t.ContainerId("rails"), file = f.File("rails");
  json config = f.Config("1.1.0", cid, file);
  config.erase("device");
  config["device"] = {{"pool", {{"names", {"eth1", "eth2"}}}}, {"count", "all"}, {"required", true}};
  kt::PluginResult add = f.Run("ADD", cid, config);
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  REQUIRE(add.json["interfaces"].size() == 3);
  const std::string first = add.json["interfaces"][1].value("pciID", "");
  CHECK((first == Pci(1) || first == Pci(2)));
  CHECK(Slurp(file) == Record(first));
  CHECK(f.State(cid, true)["deviceInfo"].value("path", "") == file);
  kt::PluginResult del = f.Run("DEL", cid, kt::AsRuntimeWouldForDel(config, add.json));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK_FALSE(kt::FileExists(file));
}

}  // namespace test_kernel_plugin_device_info_test
