// fmsim collective: an nccl-tests-style table of predicted collective times over a size sweep.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "collectives/cost_model.hpp"
#include "collectives/datatype.hpp"
#include "config/cluster_loader.hpp"
#include "config/collectives_calibration.hpp"
#include "config/words.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "topology/group.hpp"

namespace fmsim::cli {
namespace {

struct CollectiveArgs {
  std::string cluster;
  std::string op = "all_reduce";
  std::string min_bytes = "8";
  std::string max_bytes = "16G";
  double step_factor = 2.0;
  std::string algo = "auto";
  std::string proto = "auto";
  std::string dtype = "float";
  int group_size = 0;
  int group_first = 0;
  int group_stride = 1;
  std::string calibration;
  bool json = false;
};

core::Bytes parse_size(const std::string& text, const std::string& flag) {
  const auto parsed = core::parse_bytes(text);
  if (!parsed) throw core::InputError::flag(flag, parsed.error);
  if (parsed.value->value() <= 0.0) throw core::InputError::flag(flag, "must be positive");
  return *parsed.value;
}

void run_collective(const CollectiveArgs& a, Context& ctx) {
  const auto op = collectives::op_from_name(a.op);
  if (!op) {
    throw core::InputError::flag("--op", core::unknown_name_message("collective", a.op,
                                                                    {"all_reduce", "all_gather", "reduce_scatter",
                                                                     "broadcast", "reduce", "all_to_all", "sendrecv"}));
  }
  collectives::Options options;
  const auto algo = collectives::algorithm_from_name(a.algo);
  if (!algo) {
    std::vector<std::string> names{"auto"};
    for (const auto& info : collectives::algorithm_registry()) names.emplace_back(info.name);
    throw core::InputError::flag("--algo", core::unknown_name_message("algorithm", a.algo, names));
  }
  options.algorithm = *algo;
  const auto proto = collectives::protocol_from_name(a.proto);
  if (!proto) {
    throw core::InputError::flag("--proto",
                                 core::unknown_name_message("protocol", a.proto, {"auto", "LL", "LL128", "Simple"}));
  }
  options.protocol = *proto;
  const int elem = collectives::element_bytes(config::word_flag(collectives::kDataTypeWords, a.dtype, "--dtype"));
  const core::Bytes min_b = parse_size(a.min_bytes, "--min-bytes");
  const core::Bytes max_b = parse_size(a.max_bytes, "--max-bytes");
  if (max_b < min_b) throw core::InputError::flag("--max-bytes", "must be at least --min-bytes");
  if (!(a.step_factor > 1.0)) throw core::InputError::flag("--step-factor", "must be greater than 1");
  // One row per size: a sweep is bounded so that a tiny step factor cannot run for hours.
  constexpr double kMaxRows = 100000;
  const double rows_wanted =
      std::log(std::max(max_b.value(), 1.0) / std::max(min_b.value(), 1.0)) / std::log(a.step_factor) + 1;
  if (rows_wanted > kMaxRows) {
    throw core::InputError::flag("--step-factor",
                                 fmt::format("{} from {} to {} gives {:.3g} sizes; at most {:.0f} are allowed "
                                             "(use a larger step factor)",
                                             a.step_factor, a.min_bytes, a.max_bytes, rows_wanted, kMaxRows));
  }

  const hardware::ClusterSpec cluster = config::parse_cluster(ctx.catalog(), a.cluster);
  const collectives::Calibration cal = config::load_collectives_calibration(a.calibration);
  const topology::Topology topo = topology::build_topology(cluster);
  const int size = a.group_size > 0 ? a.group_size : topo.gpus;
  if (a.group_stride < 1) throw core::InputError::flag("--group-stride", "must be at least 1");
  if (a.group_first < 0 || a.group_first + (size - 1LL) * a.group_stride >= topo.gpus) {
    throw core::InputError::flag("--group-size", fmt::format("a group of {} ranks from {} with stride {} does not fit "
                                                             "in the cluster's {} GPUs",
                                                             size, a.group_first, a.group_stride, topo.gpus));
  }
  if (*op == collectives::Op::SendRecv && size != 2) {
    throw core::InputError::flag("--group-size",
                                 "sendrecv needs a group of exactly 2 ranks (e.g. --group-size 2 --group-stride 8)");
  }
  const topology::Group group = topology::Group::strided(a.group_first, size, a.group_stride);
  const topology::GroupShape shape = topology::classify(topo, group);

  // nccl-tests' count column: elements per rank buffer for gathers and all-to-all, of the whole
  // buffer otherwise.
  const bool per_rank =
      *op == collectives::Op::AllGather || *op == collectives::Op::ReduceScatter || *op == collectives::Op::AllToAll;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::vector<std::string> lines;
  for (double b = min_b.value(); b <= max_b.value() * (1.0 + 1e-12); b *= a.step_factor) {
    const double bytes = std::max<double>(elem, std::floor(b / elem) * elem);
    const collectives::CollectiveCost c = collectives::estimate(topo, cal, shape, *op, core::Bytes(bytes), options);
    if (!c.feasible) {
      throw core::InputError::flag(
          "--algo", fmt::format("{} cannot run {} on this group ({} ranks over {} NVLink domains, "
                                "{} per domain)",
                                a.algo, collectives::op_name(*op), shape.size, shape.domains, shape.max_per_domain));
    }
    const long long count = static_cast<long long>(bytes / elem / (per_rank ? size : 1));
    const double time_us = c.time.value() * 1e6;
    rows.push_back({{"bytes", static_cast<long long>(bytes)},
                    {"count", count},
                    {"type", a.dtype},
                    {"time_us", time_us},
                    {"algbw_GBps", c.algbw.value() / 1e9},
                    {"busbw_GBps", c.busbw.value() / 1e9},
                    {"algorithm", collectives::algorithm_name(c.algorithm)},
                    {"protocol", collectives::protocol_name(c.protocol)},
                    {"channels", c.channels}});
    lines.push_back(fmt::format("{:>14} {:>13} {:>8} {:>11.2f} {:>8.2f} {:>8.2f}  {:<12} {:<7} {:>3}",
                                static_cast<long long>(bytes), count, a.dtype, time_us, c.algbw.value() / 1e9,
                                c.busbw.value() / 1e9, collectives::algorithm_name(c.algorithm),
                                collectives::protocol_name(c.protocol), c.channels));
  }

  if (a.json) {
    nlohmann::ordered_json out;
    out["cluster"] = a.cluster;
    out["op"] = collectives::op_name(*op);
    out["gpus"] = topo.gpus;
    out["group"] = {
        {"size", shape.size},   {"first", a.group_first},          {"stride", a.group_stride},
        {"nodes", shape.nodes}, {"nvlink_domains", shape.domains}, {"ranks_per_domain", shape.max_per_domain}};
    out["algorithm"] = collectives::algorithm_name(options.algorithm);
    out["protocol"] = collectives::protocol_name(options.protocol);
    out["rows"] = rows;
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("# fmsim collective: {} on {} ({} GPUs, {} per node, NVLink domain {}, fabric {})\n",
                           collectives::op_name(*op), a.cluster, topo.gpus, topo.gpus_per_node, topo.domain_gpus,
                           topo.fabric.empty() ? "none" : topo.fabric);
  std::cout << fmt::format("# group: {} ranks from {} stride {}: {} nodes, {} NVLink domains, {} ranks per domain\n",
                           shape.size, a.group_first, a.group_stride, shape.nodes, shape.domains, shape.max_per_domain);
  std::cout << fmt::format("# algorithm {}, protocol {} (auto = NCCL-style selection of the fastest)\n#\n",
                           collectives::algorithm_name(options.algorithm),
                           collectives::protocol_name(options.protocol));
  std::cout << fmt::format("{:>14} {:>13} {:>8} {:>11} {:>8} {:>8}  {:<12} {:<7} {:>3}\n", "size(B)", "count", "type",
                           "time(us)", "algbw", "busbw", "algorithm", "proto", "ch");
  std::cout << fmt::format("{:>14} {:>13} {:>8} {:>11} {:>8} {:>8}\n", "", "(elements)", "", "", "(GB/s)", "(GB/s)");
  for (const std::string& l : lines) std::cout << l << "\n";
}

}  // namespace

void add_collective_command(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<CollectiveArgs>();
  auto* cmd =
      app.add_subcommand("collective",
                         "Predict an nccl-tests-style sweep of one collective on a cluster: time, algbw, busbw, "
                         "and the algorithm/protocol NCCL would pick");
  cmd->add_option("--cluster", args->cluster, "Cluster: SYSTEM[:COUNT] (e.g. p5.48xlarge:2) or a cluster YAML file")
      ->required();
  cmd->add_option("--op", args->op, "all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, sendrecv")
      ->capture_default_str();
  cmd->add_option("--min-bytes,-b", args->min_bytes, "Smallest size (8, 1M, 64 MiB, ...)")->capture_default_str();
  cmd->add_option("--max-bytes,-e", args->max_bytes, "Largest size (16G = 16 GiB)")->capture_default_str();
  cmd->add_option("--step-factor,-f", args->step_factor, "Size multiplier between rows")->capture_default_str();
  cmd->add_option("--algo", args->algo, "Force an algorithm: ring, tree, nvls, nvls_tree, pat, hierarchical, direct")
      ->capture_default_str();
  cmd->add_option("--proto", args->proto, "Force a protocol: LL, LL128, Simple")->capture_default_str();
  cmd->add_option("--dtype,-d", args->dtype, "Element type for the count column (float, half, bfloat16, ...)")
      ->capture_default_str();
  cmd->add_option("--group-size", args->group_size, "Ranks in the group (default: every GPU)");
  cmd->add_option("--group-first", args->group_first, "First rank of the group")->capture_default_str();
  cmd->add_option("--group-stride", args->group_stride, "Rank stride (8 = one rank per 8-GPU node)")
      ->capture_default_str();
  cmd->add_option("--calibration", args->calibration, "Collective calibration YAML (default: the shipped one)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--json", args->json, "Print the rows as JSON");
  cmd->footer(
      "Examples:\n"
      "  fmsim collective --cluster p5.48xlarge:2 --op all_reduce --min-bytes 8 --max-bytes 16G\n"
      "  fmsim collective --cluster p5.48xlarge:16 --op all_reduce --group-size 16 --group-stride 8 --json\n"
      "  fmsim collective --cluster p6-b200.48xlarge --op all_reduce --algo ring -b 1M -e 8G");
  cmd->callback([args, &ctx] { run_collective(*args, ctx); });
}

}  // namespace fmsim::cli
