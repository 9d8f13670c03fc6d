// The shipped hardware catalog: it loads, every value has a unit and a source, the figures match
// docs/reference/hardware.md, and user files override and extend it.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "../support/shipped_catalog.hpp"
#include "config/catalog_loader.hpp"
#include "core/embedded_data.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "expect_input_error.hpp"

namespace fmsim::config {
namespace {

using core::gb;
using core::gbps;
using core::gib;
using core::mib;
using core::tflops;

const hardware::Catalog& shipped() {
  static const hardware::Catalog catalog = load_catalog({});
  return catalog;
}

using fmsim::testing::catalog_fixture;

// ------------------------------------------------------------------------------------------
// Every shipped file loads; the issue's entries are all present.

TEST(ShippedCatalog, LoadsEveryEntryTheIssueNames) {
  const auto& c = shipped();
  for (const char* gpu : {"a100-sxm-40gb", "a100-sxm-80gb", "h100-sxm", "h800-sxm", "h200-sxm", "b200-sxm", "b300-sxm",
                          "gb200", "gb300"}) {
    EXPECT_NE(c.find_gpu(gpu), nullptr) << gpu;
  }
  for (const char* system :
       {"p4d.24xlarge", "p4de.24xlarge", "p5.4xlarge", "p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge",
        "p6-b200.48xlarge", "p6-b300.48xlarge", "p6e-gb200.36xlarge", "u-p6e-gb200x36", "u-p6e-gb200x72", "dgx-a100",
        "dgx-h100", "dgx-b200", "gb200-nvl72", "gb300-nvl72"}) {
    EXPECT_NE(c.find_system(system), nullptr) << system;
  }
  for (const char* fabric : {"efa-v1", "efa-v2", "efa-v3", "efa-v4", "ib-ndr"}) {
    EXPECT_NE(c.find_fabric(fabric), nullptr) << fabric;
  }
  for (const char* storage :
       {"instance-nvme", "fsx-scratch2", "fsx-persistent1-200", "fsx-persistent2-1000", "s3", "s3-express"}) {
    EXPECT_NE(c.find_storage(storage), nullptr) << storage;
  }
}

// The hardware names used by validation/*.csv resolve through aliases.
TEST(ShippedCatalog, ValidationHardwareNamesResolve) {
  const auto& c = shipped();
  const std::pair<const char*, const char*> cases[] = {{"H100-SXM-80GB", "h100-sxm"},
                                                       {"H100", "h100-sxm"},
                                                       {"H800", "h800-sxm"},
                                                       {"B200-SXM-180GB", "b200-sxm"},
                                                       {"GB200", "gb200"},
                                                       {"H200-SXM-141GB", "h200-sxm"},
                                                       {"A100-80GB", "a100-sxm-80gb"},
                                                       {"A100-40GB", "a100-sxm-40gb"},
                                                       {"A100-SXM-80GB", "a100-sxm-80gb"},
                                                       {"GB300", "gb300"},
                                                       {"B300", "b300-sxm"},
                                                       {"H100 (SXM, 80GB)", "h100-sxm"}};
  for (const auto& [alias, name] : cases) {
    const auto* gpu = c.find_gpu(alias);
    ASSERT_NE(gpu, nullptr) << alias;
    EXPECT_EQ(gpu->name, name) << alias;
  }
}

// Every system names a GPU and a fabric of the catalog (checked by the loader, asserted here).
TEST(ShippedCatalog, SystemsReferenceExistingGpusAndFabrics) {
  for (const auto& s : shipped().systems()) {
    EXPECT_NE(shipped().find_gpu(s.gpu), nullptr) << s.name;
    EXPECT_NE(shipped().find_fabric(s.fabric), nullptr) << s.name;
    // One unit holds a whole number of NVLink domains.
    EXPECT_EQ(s.gpus() % s.nvlink_domain_gpus, 0) << s.name;
  }
}

// ------------------------------------------------------------------------------------------
// Every value has a unit and a source: walk the raw YAML of each shipped file.

// Fields that are names, enums or references and are written as plain scalars.
const std::set<std::string> kPlainFields{"name", "display_name", "aliases",    "base",       "architecture", "kind",
                                         "gpu",  "fabric",       "cpu_vendor", "price_kind", "price_date"};
// Values that are dimensionless (counts, fractions, flags, text) and so carry no unit.
const std::set<std::string> kUnitlessFields{"sm_version",         "sm_count",      "nvlink_generation",
                                            "nvlink_links",       "gpus_per_node", "nodes",
                                            "nvlink_domain_gpus", "nvswitch",      "nvls",
                                            "nics_per_node",      "vcpus",         "cpu",
                                            "local_nvme_devices", "generation",    "efficiency",
                                            "gpudirect_rdma",     "efa_capable",   "max_parts"};

// Source keys listed in the "Sources" section of docs/reference/hardware.md.
std::set<std::string> reference_source_keys() {
  std::ifstream in(std::string(FMSIM_SOURCE_DIR) + "/docs/reference/hardware.md");
  std::set<std::string> keys;
  std::string line;
  bool in_sources = false;
  const std::regex key(R"(\[([A-Z0-9][A-Z0-9-]*)\])");
  while (std::getline(in, line)) {
    if (line.rfind("## Sources", 0) == 0) in_sources = true;
    if (!in_sources) continue;
    for (std::sregex_iterator it(line.begin(), line.end(), key), end; it != end; ++it) keys.insert((*it)[1]);
  }
  return keys;
}

bool is_plain_number(const std::string& s) {
  std::istringstream in(s);
  double v = 0;
  in >> v;
  return !in.fail() && in.eof();
}

TEST(ShippedCatalog, EveryValueHasAUnitAndASource) {
  const std::set<std::string> reference_keys = reference_source_keys();
  const std::regex bracketed(R"(\[([^\]]+)\])");
  int files = 0;
  int values = 0;
  for (const auto& file : core::embedded_files()) {
    if (!file.path.starts_with("hardware/")) continue;
    ++files;
    const YAML::Node root = YAML::Load(std::string(file.contents));
    for (const char* section : {"gpus", "systems", "fabrics", "storage"}) {
      if (!root[section]) continue;
      for (const auto& entry : root[section]) {
        const std::string where = std::string(file.path) + " " + entry["name"].as<std::string>();
        for (const auto& kv : entry) {
          const std::string key = kv.first.as<std::string>();
          if (kPlainFields.contains(key)) continue;
          ++values;
          const YAML::Node& v = kv.second;
          ASSERT_TRUE(v.IsMap()) << where << "." << key << " must be {value, source}";
          ASSERT_TRUE(v["value"].IsScalar()) << where << "." << key;
          const std::string source = v["source"] ? v["source"].as<std::string>() : "";
          EXPECT_FALSE(source.empty()) << where << "." << key << " has no source";
          const std::string value = v["value"].as<std::string>();
          if (!kUnitlessFields.contains(key)) {
            EXPECT_FALSE(is_plain_number(value)) << where << "." << key << " = '" << value << "' has no unit";
          }
          // Bracketed keys must be keys of the reference; a source with none is outside the
          // reference and must be marked unverified.
          bool has_key = false;
          for (std::sregex_iterator it(source.begin(), source.end(), bracketed), end; it != end; ++it) {
            has_key = true;
            if (!reference_keys.empty()) {
              EXPECT_TRUE(reference_keys.contains((*it)[1])) << where << "." << key << ": unknown source " << (*it)[0];
            }
          }
          if (!has_key) {
            EXPECT_TRUE(v["verified"] && !v["verified"].as<bool>())
                << where << "." << key << ": source '" << source
                << "' is outside the reference; mark it verified: false";
          }
        }
      }
    }
  }
  EXPECT_EQ(files, 4);     // fabrics, gpus, storage, systems
  EXPECT_GT(values, 400);  // sanity: the walk saw the data
  EXPECT_GT(reference_source_keys().size(), 30u) << "docs/reference/hardware.md not found or changed";
}

// ------------------------------------------------------------------------------------------
// Spot checks against docs/reference/hardware.md (each figure as the reference states it).

TEST(ShippedCatalog, GpuFiguresMatchTheReference) {
  const auto& c = shipped();
  // §1.1: H100 SXM dense BF16 989.4 TF, FP8 1,978.9 TF; §1.2: 80 GB, 3.35 TB/s, NVLink 900 GB/s, 700 W.
  const auto& h100 = *c.find_gpu("h100-sxm");
  EXPECT_DOUBLE_EQ(h100.bf16.value(), tflops(989.4).value());
  EXPECT_DOUBLE_EQ(h100.fp8.value(), tflops(1978.9).value());
  EXPECT_DOUBLE_EQ(h100.fp4.value(), 0.0);
  EXPECT_DOUBLE_EQ(h100.hbm_capacity.value(), gb(80).value());
  EXPECT_DOUBLE_EQ(h100.hbm_bandwidth.value(), 3.35e12);
  EXPECT_DOUBLE_EQ(h100.nvlink_bandwidth.value(), 900e9);
  EXPECT_DOUBLE_EQ(h100.tdp.value(), 700.0);
  // §2.1: driver-visible 81,920 MiB per H100 on p5.
  EXPECT_DOUBLE_EQ(h100.hbm_usable.value(), mib(81920).value());
  // NVLink per direction is half the bidirectional figure: 900 / 2 = 450 GB/s.
  EXPECT_DOUBLE_EQ(h100.nvlink_per_direction().value(), 450e9);

  // §2.1: B200 183,359 MiB driver-visible; §1.1: 2.25 PF BF16, 9 PF FP4 (derived 18/2).
  const auto& b200 = *c.find_gpu("b200-sxm");
  EXPECT_DOUBLE_EQ(b200.hbm_usable.value(), mib(183359).value());
  EXPECT_DOUBLE_EQ(b200.bf16.value(), 2.25e15);
  EXPECT_DOUBLE_EQ(b200.fp4.value(), 9e15);
  EXPECT_TRUE(b200.provenance.at("fp4").derived);

  // §1.2 and Contradictions 4: GB200 186 GB nominal, 185 GiB in the EC2 docs; FP64 40 TF unverified.
  const auto& gb200 = *c.find_gpu("gb200");
  EXPECT_DOUBLE_EQ(gb200.hbm_capacity.value(), gb(186).value());
  EXPECT_DOUBLE_EQ(gb200.hbm_usable.value(), gib(185).value());
  EXPECT_FALSE(gb200.provenance.at("fp64").verified);

  // §1.2: GB300 288 GB; usable assumed 268.6 GiB as B300 on p6-b300 (unverified, derived).
  const auto& gb300 = *c.find_gpu("gb300");
  EXPECT_DOUBLE_EQ(gb300.hbm_capacity.value(), gb(288).value());
  EXPECT_DOUBLE_EQ(gb300.hbm_usable.value(), gib(268.6).value());
  EXPECT_FALSE(gb300.provenance.at("hbm_usable").verified);
  EXPECT_DOUBLE_EQ(gb300.fp4.value(), 15e15);  // 15 PF dense NVFP4 [NV-BU]

  // H800: H100 with NVLink 400 GB/s bidirectional.
  EXPECT_DOUBLE_EQ(c.find_gpu("H800")->nvlink_bandwidth.value(), 400e9);
  EXPECT_DOUBLE_EQ(c.find_gpu("H800")->bf16.value(), h100.bf16.value());
  // A100 has no FP8/FP4; B300's 1,100 W TDP is third-party (unverified).
  EXPECT_DOUBLE_EQ(c.find_gpu("a100-sxm-80gb")->fp8.value(), 0.0);
  EXPECT_FALSE(c.find_gpu("b300-sxm")->provenance.at("tdp").verified);
}

TEST(ShippedCatalog, SystemFiguresMatchTheReference) {
  const auto& c = shipped();
  // §2.3: p5.48xlarge 32 EFA x 100 Gbps = 3,200 Gbps = 400 GB/s; EFA v2; §2.6: 55.04 USD/h on 2026-07-20.
  const auto& p5 = *c.find_system("p5.48xlarge");
  EXPECT_EQ(p5.gpus(), 8);
  EXPECT_EQ(p5.nics_per_node, 32);
  EXPECT_DOUBLE_EQ(p5.nic_bandwidth.value(), gbps(100).value());
  EXPECT_DOUBLE_EQ(p5.network_bandwidth.value(), 400e9);
  EXPECT_EQ(p5.fabric, "efa-v2");
  EXPECT_TRUE(p5.nvls);
  EXPECT_DOUBLE_EQ(p5.price_per_hour_usd, 55.04);
  EXPECT_EQ(p5.price_kind, hardware::PriceKind::OnDemand);
  EXPECT_EQ(p5.price_date, "2026-07-20");
  EXPECT_DOUBLE_EQ(p5.host_memory.value(), gib(2048).value());

  // §2.3: p5en 16 x 200 Gbps, EFA v3; p6-b300 16 x 400 = 6,400 Gbps, EFA v4.
  EXPECT_EQ(c.find_system("p5en.48xlarge")->nics_per_node, 16);
  EXPECT_EQ(c.find_system("p5en.48xlarge")->fabric, "efa-v3");
  EXPECT_DOUBLE_EQ(c.find_system("p6-b300.48xlarge")->network_bandwidth.value(), gbps(6400).value());

  // §2.5: u-p6e-gb200x72 = 18 x p6e-gb200.36xlarge (4 GPUs), one 72-GPU NVLink domain, 130 TB/s;
  // §2.6: 761.904 USD/h as a Capacity Block (unverified). u-p6e-gb200x36 = 9 nodes, domain 36.
  const auto& x72 = *c.find_system("u-p6e-gb200x72");
  EXPECT_EQ(x72.nodes, 18);
  EXPECT_EQ(x72.gpus_per_node, 4);
  EXPECT_EQ(x72.gpus(), 72);
  EXPECT_EQ(x72.nvlink_domain_gpus, 72);
  EXPECT_DOUBLE_EQ(x72.nvlink_aggregate.value(), 130e12);
  EXPECT_DOUBLE_EQ(x72.price_per_hour_usd, 761.904);
  EXPECT_EQ(x72.price_kind, hardware::PriceKind::CapacityBlock);
  EXPECT_FALSE(x72.provenance.at("price_per_hour").verified);
  EXPECT_EQ(x72.kind, hardware::SystemKind::UltraServer);
  const auto& x36 = *c.find_system("u-p6e-gb200x36");
  EXPECT_EQ(x36.nodes, 9);
  EXPECT_EQ(x36.nvlink_domain_gpus, 36);

  // NVLS on Hopper+ NVSwitch systems only: not on p5.4xlarge (one GPU) nor on A100 systems.
  for (const auto& s : c.systems()) {
    const auto& gpu = *c.find_gpu(s.gpu);
    const bool expected =
        s.nvswitch && s.gpus_per_node * s.nodes > 1 && gpu.architecture != hardware::Architecture::Ampere;
    EXPECT_EQ(s.nvls, expected) << s.name;
  }
  EXPECT_FALSE(c.find_system("p5.4xlarge")->nvls);
  EXPECT_EQ(c.find_system("p5.4xlarge")->nvlink_domain_gpus, 1);

  // Reference systems: DGX H100 8 x 400G NDR InfiniBand (validation README).
  const auto& dgx = *c.find_system("dgx-h100");
  EXPECT_EQ(dgx.kind, hardware::SystemKind::Reference);
  EXPECT_EQ(dgx.fabric, "ib-ndr");
  EXPECT_DOUBLE_EQ(dgx.network_bandwidth.value(), gbps(3200).value());
  EXPECT_EQ(c.find_system("gb200-nvl72")->gpus(), 72);
}

TEST(ShippedCatalog, FabricAndStorageFiguresMatchTheReference) {
  const auto& c = shipped();
  // §3.4: aws-ofi-nccl reports 75 us (p4d/p5) and 35 us (p5en/p6) to NCCL.
  EXPECT_DOUBLE_EQ(c.find_fabric("efa-v1")->latency.value(), 75e-6);
  EXPECT_DOUBLE_EQ(c.find_fabric("efa-v2")->latency.value(), 75e-6);
  EXPECT_DOUBLE_EQ(c.find_fabric("efa-v3")->latency.value(), 35e-6);
  EXPECT_DOUBLE_EQ(c.find_fabric("efa-v4")->latency.value(), 35e-6);
  // §3.2: 4 x p6-b200 ring AllReduce 16 GiB busbw 381.8 GB/s; under the collective model a
  // multi-node ring is bound by the node's 8 x 50 GB/s NICs, so efficiency = 381.8 / 400 = 0.955.
  EXPECT_NEAR(c.find_fabric("efa-v4")->efficiency, 381.8 / 400.0, 0.01);
  for (const auto& f : c.fabrics()) {
    // Calibration factors are fractions of line rate, each with its measurement or a mark.
    EXPECT_GT(f.efficiency, 0.0) << f.name;
    EXPECT_LE(f.efficiency, 1.0) << f.name;
    EXPECT_FALSE(f.provenance.at("efficiency").source.empty()) << f.name;
    EXPECT_GT(f.latency.value(), 0.0) << f.name;
  }

  // §4.1: PERSISTENT_2 1,000 MB/s/TiB, network baseline 2,600 MB/s/TiB, EFA-capable.
  const auto& fsx = *c.find_storage("fsx-persistent2-1000");
  EXPECT_DOUBLE_EQ(fsx.throughput_per_tib.value(), 1000e6);
  EXPECT_DOUBLE_EQ(fsx.network_baseline_per_tib.value(), 2600e6);
  EXPECT_TRUE(fsx.efa_capable);
  EXPECT_FALSE(c.find_storage("fsx-scratch2")->efa_capable);
  // §4.2: S3 5,500 GET and 3,500 PUT per prefix per second; S3 Express 200 k / 100 k default.
  EXPECT_DOUBLE_EQ(c.find_storage("s3")->get_requests_per_s, 5500.0);
  EXPECT_DOUBLE_EQ(c.find_storage("s3")->put_requests_per_s, 3500.0);
  EXPECT_DOUBLE_EQ(c.find_storage("s3-express")->get_requests_per_s, 200000.0);
  EXPECT_EQ(c.find_storage("s3")->max_parts, 10000);
}

// ------------------------------------------------------------------------------------------
// User files: partial overrides, `base:` copies, new entries.

TEST(UserCatalog, PartialOverrideKeepsOtherFields) {
  const auto c = load_catalog({catalog_fixture("override_partial.yaml")});
  const auto& p5 = *c.find_system("p5.48xlarge");
  // The file sets only the price; everything else stays as shipped.
  EXPECT_DOUBLE_EQ(p5.price_per_hour_usd, 31.464);
  EXPECT_EQ(p5.price_kind, hardware::PriceKind::Reserved);
  EXPECT_EQ(p5.provenance.at("price_per_hour").source, "my contract");
  EXPECT_DOUBLE_EQ(p5.network_bandwidth.value(), 400e9);
  EXPECT_EQ(p5.gpu, "h100-sxm");
  EXPECT_EQ(c.systems().size(), shipped().systems().size());
}

TEST(UserCatalog, ExampleFileAddsGpusAndSystems) {
  const auto c = load_catalog({std::string(FMSIM_SOURCE_DIR) + "/examples/custom_catalog.yaml"});
  // A GPU from scratch, found by name and alias.
  const auto* x1 = c.find_gpu("X1");
  ASSERT_NE(x1, nullptr);
  EXPECT_DOUBLE_EQ(x1->bf16.value(), 1.5e15);
  EXPECT_DOUBLE_EQ(x1->fp16.value(), x1->bf16.value());  // not given: assumed equal to bf16
  EXPECT_TRUE(x1->provenance.at("fp16").derived);
  // `base:` copies h100-sxm and changes only what the file gives.
  const auto& variant = *c.find_gpu("h100-sxm-96gb-500w");
  EXPECT_DOUBLE_EQ(variant.tdp.value(), 500.0);
  EXPECT_DOUBLE_EQ(variant.hbm_capacity.value(), gb(96).value());
  EXPECT_DOUBLE_EQ(variant.bf16.value(), tflops(989.4).value());
  // ... and leaves the base entry untouched (yaml-cpp node assignment writes through; the
  // loader must rebind instead).
  EXPECT_DOUBLE_EQ(c.find_gpu("h100-sxm")->tdp.value(), 700.0);
  EXPECT_DOUBLE_EQ(c.find_gpu("h100-sxm")->hbm_capacity.value(), gb(80).value());
  // A new system on the new GPU; network bandwidth derived as 8 x 400 Gbps.
  const auto& box = *c.find_system("acme-x1-8");
  EXPECT_EQ(box.gpu, "acme-x1");
  EXPECT_DOUBLE_EQ(box.network_bandwidth.value(), gbps(3200).value());
  EXPECT_TRUE(box.provenance.at("network_bandwidth").derived);
  // A plain user value records the file and line as its source.
  EXPECT_NE(box.provenance.at("vcpus").source.find("custom_catalog.yaml:"), std::string::npos);
  EXPECT_DOUBLE_EQ(c.find_system("p5.48xlarge")->price_per_hour_usd, 31.464);
}

TEST(UserCatalog, PlainValuesNeedNoSource) {
  const auto c = load_catalog({catalog_fixture("missing_source.yaml")});
  EXPECT_DOUBLE_EQ(c.find_gpu("h100-sxm")->tdp.value(), 500.0);
}

// Each bad file fails with InputError naming the file, the 1-based line and the field.
struct BadCase {
  const char* file;
  int line;
  const char* field;
  const char* message;
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.file; }

class BadCatalogFile : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadCatalogFile, NamesFileLineAndField) {
  const BadCase& c = GetParam();
  testing::expect_input_error([&] { load_catalog({catalog_fixture(c.file)}); }, c.file, c.line, c.field, c.message);
}

INSTANTIATE_TEST_SUITE_P(
    Catalog, BadCatalogFile,
    ::testing::Values(BadCase{"wrong_unit.yaml", 4, "gpus[0].bf16", "unknown unit 'GB/s'"},
                      BadCase{"no_unit.yaml", 6, "gpus[0].hbm_capacity", "has no unit"},
                      BadCase{"negative_size.yaml", 4, "gpus[0].hbm_usable", "must be greater than zero"},
                      BadCase{"zero_size.yaml", 7, "gpus[0].hbm_bandwidth", "must be greater than zero"},
                      BadCase{"unknown_key.yaml", 4, "gpus[0].bf61", "did you mean bf16?"},
                      BadCase{"unknown_section.yaml", 3, "gpu", "did you mean gpus?"},
                      BadCase{"unknown_gpu_ref.yaml", 5, "systems[0].gpu",
                              "unknown gpu 'h100-sxmm'; did you mean h100-sxm"},
                      BadCase{"missing_field.yaml", 3, "gpus[0].bf16", "missing required field"},
                      BadCase{"duplicate_key.yaml", 5, "systems[0].price_per_hour", "more than once"},
                      BadCase{"efficiency_range.yaml", 4, "fabrics[0].efficiency", "at most 1"},
                      BadCase{"nvls_without_nvswitch.yaml", 8, "systems[0].nvls", "needs an NVSwitch"},
                      BadCase{"price_bad_date.yaml", 6, "systems[0].price_date", "YYYY-MM-DD"},
                      BadCase{"unknown_base.yaml", 4, "gpus[0].base", "did you mean h100-sxm?"},
                      BadCase{"empty.yaml", 1, "", "empty"},
                      BadCase{"fractional_count.yaml", 4, "systems[0].gpus_per_node", "not a whole number"},
                      BadCase{"alias_collision.yaml", 5, "gpus[0].aliases", "already names gpu 'h200-sxm'"},
                      BadCase{"bad_enum.yaml", 5, "gpus[0].architecture", "did you mean hopper?"},
                      BadCase{"malformed.yaml", 5, "", "malformed YAML"},
                      BadCase{"huge_system.yaml", 5, "systems[0].nodes", "more than the 4194304 (2^22) GPUs"}));

// The shipped entries are converted once per process and reused by loads with user files: a
// file that merges into one entry changes that entry alone, and every other spec (values and
// provenance) is the shipped one.
TEST(UserCatalog, EntriesAFileDoesNotTouchAreTheShippedOnes) {
  const auto c = load_catalog_text("gpus:\n  - name: h100-sxm\n    tdp: 500 W\n", "mine.yaml");
  EXPECT_DOUBLE_EQ(c.find_gpu("h100-sxm")->tdp.value(), 500.0);
  EXPECT_EQ(c.find_gpu("h100-sxm")->provenance.at("tdp").source, "mine.yaml:3");
  ASSERT_EQ(c.gpus().size(), shipped().gpus().size());
  for (std::size_t i = 0; i < c.gpus().size(); ++i) {
    const auto& mine = c.gpus()[i];
    const auto& ship = shipped().gpus()[i];
    EXPECT_EQ(mine.name, ship.name);
    if (mine.name == "h100-sxm") continue;
    EXPECT_DOUBLE_EQ(mine.tdp.value(), ship.tdp.value()) << mine.name;
    EXPECT_DOUBLE_EQ(mine.bf16.value(), ship.bf16.value()) << mine.name;
    EXPECT_EQ(mine.provenance.size(), ship.provenance.size()) << mine.name;
  }
  // Systems on the changed GPU keep naming it; the shipped catalog itself is unchanged.
  EXPECT_EQ(c.find_system("p5.48xlarge")->gpu, "h100-sxm");
  EXPECT_DOUBLE_EQ(shipped().find_gpu("h100-sxm")->tdp.value(), 700.0);
  EXPECT_EQ(c.systems().size(), shipped().systems().size());
}

// A catalog held in memory is checked as a file is: a bad value, or an alias that already names
// a shipped entry (the names of reused entries take part in the uniqueness check).
TEST(UserCatalog, TextInMemoryIsCheckedLikeAFile) {
  testing::expect_input_error([] { load_catalog_text("gpus:\n  - name: h100-sxm\n    tdp: -5 W\n", "mine.yaml"); },
                              "mine.yaml", 3, "gpus[0].tdp", "greater than zero");
  testing::expect_input_error(
      [] { load_catalog_text("gpus:\n  - name: x9\n    base: h100-sxm\n    aliases: [h200-sxm]\n", "mine.yaml"); },
      "mine.yaml", 4, "gpus[0].aliases", "already names gpu 'h200-sxm'");
}

TEST(UserCatalog, MissingFileIsAFlagError) {
  try {
    load_catalog({catalog_fixture("does_not_exist.yaml")});
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.field(), "--catalog");
    EXPECT_NE(e.message().find("cannot read"), std::string::npos);
  }
}

// The enum spellings printed by the CLI are the ones the loader accepts.
TEST(CatalogNames, EnumSpellings) {
  EXPECT_EQ(to_string(hardware::Architecture::BlackwellUltra), "blackwell-ultra");
  EXPECT_EQ(to_string(hardware::SystemKind::UltraServer), "ultraserver");
  EXPECT_EQ(to_string(hardware::FabricKind::InfiniBand), "infiniband");
  EXPECT_EQ(to_string(hardware::StorageKind::FsxLustre), "fsx-lustre");
  EXPECT_EQ(to_string(hardware::CpuVendor::Arm), "arm");
}

}  // namespace
}  // namespace fmsim::config
