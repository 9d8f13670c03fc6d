// fmsim catalog: tables of GPUs, systems, fabrics and storage; one entry with every value and its
// source; a cluster spec resolved against the catalog. The documents are documents/catalog.hpp's.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "config/catalog_loader.hpp"
#include "config/cluster_loader.hpp"
#include "core/error.hpp"
#include "documents/catalog.hpp"

namespace fmsim::cli {
namespace {

using documents::CatalogList;
using hardware::Catalog;

/// Every name and alias in the catalog, for "did you mean".
std::vector<std::string> all_names(const Catalog& catalog) {
  std::vector<std::string> out;
  for (const auto& v : {catalog.gpu_names(), catalog.system_names(), catalog.fabric_names(), catalog.storage_names()}) {
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

template <typename Spec>
void print_catalog_entry(const Spec& entry, bool as_json) {
  if (as_json) {
    std::cout << documents::catalog_entry_json(entry).dump(2) << "\n";
  } else {
    documents::print_catalog_entry(std::cout, entry);
  }
}

void show(const Catalog& catalog, const std::string& name, bool as_json) {
  if (const auto* g = catalog.find_gpu(name)) return print_catalog_entry(*g, as_json);
  if (const auto* s = catalog.find_system(name)) return print_catalog_entry(*s, as_json);
  if (const auto* f = catalog.find_fabric(name)) return print_catalog_entry(*f, as_json);
  if (const auto* s = catalog.find_storage(name)) return print_catalog_entry(*s, as_json);
  throw core::InputError::flag("NAME", core::unknown_name_message("catalog entry", name, all_names(catalog)));
}

}  // namespace

void add_catalog_command(CLI::App& app, Context& ctx) {
  auto* catalog = app.add_subcommand(
      "catalog", "Show the hardware catalog: GPUs, systems (EC2 instances, UltraServers, DGX/NVL72), fabrics, storage");
  catalog->require_subcommand(1);
  catalog->footer(
      "Every value carries a unit and a source (a key of docs/reference/hardware.md); unverified values\n"
      "are marked '*'. Add or override entries with --catalog FILE (see docs/models/catalog.md).\n"
      "\n"
      "Examples:\n"
      "  fmsim catalog gpus\n"
      "  fmsim catalog systems --json\n"
      "  fmsim catalog show p5en.48xlarge\n"
      "  fmsim catalog show H100 --json\n"
      "  fmsim catalog cluster u-p6e-gb200x72:4\n"
      "  fmsim --catalog examples/custom_catalog.yaml catalog show h100-sxm-96gb-500w");

  struct ListCommand {
    const char* name;
    const char* help;
    CatalogList list;
  };
  static const ListCommand kLists[] = {
      {"gpus", "GPUs: dense BF16/FP8/FP4/TF32 peaks, HBM nominal and usable, bandwidth, NVLink, TDP",
       CatalogList::Gpus},
      {"systems", "Systems: GPUs, NVLink domain, NVLS, fabric and NICs, host, NVMe, price per hour",
       CatalogList::Systems},
      {"fabrics", "Scale-out fabrics (EFA v1-v4, InfiniBand): latency, efficiency, GPUDirect RDMA",
       CatalogList::Fabrics},
      {"storage", "Storage: instance NVMe, FSx for Lustre deployment types, S3, S3 Express One Zone",
       CatalogList::Storage},
  };
  for (const auto& list : kLists) {
    auto* sub = catalog->add_subcommand(list.name, list.help);
    sub->footer(fmt::format("Examples:\n  fmsim catalog {0}\n  fmsim catalog {0} --json", list.name));
    auto as_json = std::make_shared<bool>(false);
    sub->add_flag("--json", *as_json, "Print a JSON array; every value in SI units with its unit and source");
    sub->callback([&ctx, &list, as_json] {
      if (*as_json) {
        std::cout << documents::catalog_list_json(ctx.catalog(), list.list).dump(2) << "\n";
      } else {
        documents::print_catalog_list(std::cout, ctx.catalog(), list.list);
      }
    });
  }

  auto* show_cmd = catalog->add_subcommand(
      "show", "Show one entry (GPU, system, fabric or storage) with every value and its source");
  auto name = std::make_shared<std::string>();
  auto show_json = std::make_shared<bool>(false);
  show_cmd->add_option("NAME", *name, "Catalog name or alias, e.g. p5.48xlarge, H100, efa-v3, fsx-persistent2-1000")
      ->required();
  show_cmd->add_flag("--json", *show_json, "Print as JSON (SI values with unit, source, verified, derived, note)");
  show_cmd->footer(
      "Examples:\n"
      "  fmsim catalog show p5en.48xlarge\n"
      "  fmsim catalog show H100 --json\n"
      "  fmsim --catalog examples/custom_catalog.yaml catalog show h100-sxm-96gb-500w");
  show_cmd->callback([&ctx, name, show_json] { show(ctx.catalog(), *name, *show_json); });

  auto* cluster_cmd = catalog->add_subcommand(
      "cluster", "Resolve a cluster spec (SYSTEM[:COUNT] or a kind: Cluster YAML file) and print its shape");
  auto spec = std::make_shared<std::string>();
  auto cluster_as_json = std::make_shared<bool>(false);
  cluster_cmd->add_option("SPEC", *spec, "e.g. p5.48xlarge:64, u-p6e-gb200x72:4, dgx-h100:128, or cluster.yaml")
      ->required();
  cluster_cmd->add_flag("--json", *cluster_as_json, "Print as JSON (SI units)");
  cluster_cmd->footer(
      "Examples:\n"
      "  fmsim catalog cluster u-p6e-gb200x72:4\n"
      "  fmsim catalog cluster p5en.48xlarge:16 --json\n"
      "  fmsim catalog cluster dgx-h100:128");
  cluster_cmd->callback([&ctx, spec, cluster_as_json] {
    const auto cluster = config::parse_cluster(ctx.catalog(), *spec, "SPEC");
    if (*cluster_as_json) {
      std::cout << documents::catalog_cluster_json(cluster).dump(2) << "\n";
    } else {
      documents::print_catalog_cluster(std::cout, cluster);
    }
  });
}

}  // namespace fmsim::cli
