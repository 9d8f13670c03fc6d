// Text and JSON pieces shared by the checkpoint, goodput and run commands.
#include "cli/reliability_report.hpp"

#include <fmt/format.h>

#include <iostream>

#include "core/error.hpp"
#include "storage/checkpoint_io.hpp"

namespace fmsim::cli {

std::string format_rate(core::BytesPerSecond r) { return r.value() > 0.0 ? core::format_bandwidth(r) : "unbounded"; }

nlohmann::json goodput_setup_json(const jobspec::GoodputSetup& setup, int nodes) {
  const auto& s = setup.scenario;
  const auto& t = s.checkpoint;
  nlohmann::json out;
  out["failure_model"] = setup.failure_model;
  out["nodes"] = nodes;
  out["gpus"] = s.gpus;
  out["rate_per_node_hour"] = s.failures.rate_per_second * 3600.0 / nodes;
  out["mtbf_s"] = s.failures.mtbf().value();
  out["strategy"] = reliability::to_string(setup.strategy);
  out["checkpoint"] = {{"interval_s", t.interval.value()},
                       {"blocking_s", t.blocking.value()},
                       {"persist_s", t.persist.value()},
                       {"load_s", t.load.value()},
                       {"young_interval_s", setup.young.value()},
                       {"daly_interval_s", setup.daly.value()},
                       {"optimal_interval_s", setup.optimum.value()}};
  if (const auto& e = setup.estimate) {
    out["checkpoint"]["io"] = {{"size_bytes", e->plan.total.value()},
                               {"save_s", e->save.total.value()},
                               {"save_bottleneck", storage::to_string(e->save.bottleneck)},
                               {"load_s", e->load.total.value()},
                               {"load_bottleneck", storage::to_string(e->load.bottleneck)},
                               {"copy_s", e->staging_copy.value()}};
  }
  out["recovery"] = {{"detect_s", s.recovery.detect.value()},   {"replace_s", s.recovery.replace.value()},
                     {"restart_s", s.recovery.restart.value()}, {"spares", s.recovery.spares},
                     {"repair_s", s.recovery.repair.value()},   {"replacement_share", s.failures.replacement_share()}};
  out["duration_s"] = s.horizon.value();
  out["gpu_hours"] = s.horizon.value() * s.gpus / 3600.0;
  return out;
}

void print_goodput_setup(const jobspec::GoodputSetup& setup, int nodes, bool include_planned) {
  const auto& s = setup.scenario;
  const auto& t = s.checkpoint;
  std::cout << fmt::format("Failures: {} mix{}, {:.3g} per 1000 node-days -> job MTBF {} on {} nodes ({} GPUs)\n",
                           setup.failure_model, include_planned ? " incl. planned" : "",
                           s.failures.rate_per_second * 3600.0 * 24.0 * 1000.0 / nodes,
                           core::format_duration(s.failures.mtbf()), nodes, s.gpus);
  std::cout << fmt::format(
      "Checkpoint ({}): stall {}, restorable after {}, load {}{}\n", reliability::to_string(setup.strategy),
      core::format_duration(t.blocking), core::format_duration(t.persist), core::format_duration(t.load),
      setup.estimate ? fmt::format(" ({} checkpoint)", core::format_bytes(setup.estimate->plan.total)) : "");
  std::cout << fmt::format("Recovery: detect {}, replace {} ({:.0f}% of failures), restart {}, spares {}\n",
                           core::format_duration(s.recovery.detect), core::format_duration(s.recovery.replace),
                           100.0 * s.failures.replacement_share(), core::format_duration(s.recovery.restart),
                           s.recovery.spares < 0 ? std::string("unlimited") : std::to_string(s.recovery.spares));
  std::cout << fmt::format("Interval: Young {}, Daly {}, optimum {}; using {}\n", core::format_duration(setup.young),
                           core::format_duration(setup.daly), core::format_duration(setup.optimum),
                           core::format_duration(t.interval));
}

nlohmann::json goodput_result_json(const reliability::GoodputResult& r, int gpus) {
  const double k = gpus / 3600.0;
  const auto& t = r.time;
  nlohmann::json out{{"ettr", r.ettr},
                     {"interruptions", r.interruptions},
                     {"split",
                      {{"useful_gpu_hours", t.useful * k},
                       {"checkpoint_gpu_hours", t.checkpoint * k},
                       {"restart_gpu_hours", t.restart * k},
                       {"lost_work_gpu_hours", t.lost_work * k},
                       {"waiting_gpu_hours", t.waiting * k}}}};
  if (r.replications > 0) {
    out["ettr_stddev"] = r.ettr_stddev;
    out["ettr_ci95"] = r.ettr_ci95;
    out["replications"] = r.replications;
  }
  return out;
}

void print_goodput_table(const reliability::GoodputResult& analytic,
                         const std::optional<reliability::GoodputResult>& mc, int gpus,
                         const std::vector<GoodputRow>& extra) {
  auto row = [&](const std::string& name, const std::string& a, const std::string& m) {
    std::string line = fmt::format("{:<22}{:>14}", name, a);
    if (mc) line += fmt::format("{:>26}", m);
    std::cout << line << "\n";
  };
  row("", "analytic", mc ? fmt::format("monte carlo ({} runs)", mc->replications) : "");
  row("ETTR", fmt::format("{:>13.2f}%", 100.0 * analytic.ettr),
      mc ? fmt::format("{:>17.2f}% +- {:.2f}%", 100.0 * mc->ettr, 100.0 * mc->ettr_ci95) : "");
  row("interruptions", fmt::format("{:.1f}", analytic.interruptions),
      mc ? fmt::format("{:.1f}", mc->interruptions) : "");
  for (const auto& r : extra) row(r.name, r.analytic, r.monte_carlo);
  const double k = gpus / 3600.0;
  auto hours = [&](const char* name, double reliability::TimeSplit::*part) {
    row(name, fmt::format("{:.4g}", analytic.time.*part * k), mc ? fmt::format("{:.4g}", mc->time.*part * k) : "");
  };
  std::cout << "GPU-hours:\n";
  hours("  goodput (useful)", &reliability::TimeSplit::useful);
  hours("  checkpoint stalls", &reliability::TimeSplit::checkpoint);
  hours("  restart", &reliability::TimeSplit::restart);
  hours("  lost work", &reliability::TimeSplit::lost_work);
  hours("  waiting for nodes", &reliability::TimeSplit::waiting);
}

storage::TierPerformance resolve_dra_s3(const jobspec::CheckpointJob& job, const jobspec::CheckpointJobFlags& flags,
                                        const std::string& name, const std::string& flag, Context& ctx) {
  if (job.tier.kind != hardware::StorageKind::FsxLustre) {
    throw core::InputError::flag(flag, "a data repository association links an FSx for Lustre tier to S3");
  }
  return jobspec::resolve_tier(ctx.catalog(), job.cluster, name, flags, job.defaults, flag);
}

ReportPart export_report(const storage::ExportEstimate& x, const std::string& s3_name) {
  return {.json = {{"rate_bytes_per_s", x.rate.value()},
                   {"export_s", x.export_time.value()},
                   {"interval_s", x.interval.value()},
                   {"utilisation", x.utilisation},
                   {"keeps_up", x.keeps_up},
                   {"limit", x.limit}},
          .text = fmt::format("Export to {}: {} at {} ({}); save + export = {:.0f}% of the {} interval: {}\n", s3_name,
                              core::format_duration(x.export_time), format_rate(x.rate), x.limit, 100.0 * x.utilisation,
                              core::format_duration(x.interval), x.keeps_up ? "keeps up" : "falls behind")};
}

ReportPart data_loading_report(const storage::DataLoadingCheck& c) {
  return {.json = {{"required_bytes_per_s", c.required.value()},
                   {"delivered_bytes_per_s", c.delivered.value()},
                   {"headroom", c.headroom},
                   {"starves", c.starves}},
          .text = fmt::format("Data loading: needs {} ({} per node), tier delivers {}: {}\n", format_rate(c.required),
                              format_rate(c.required_per_node), format_rate(c.delivered),
                              c.starves ? "STARVES the GPUs" : fmt::format("headroom x{:.1f}", c.headroom))};
}

}  // namespace fmsim::cli
