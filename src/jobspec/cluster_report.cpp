// The shared fleet's summary, text, JSON and HTML (cluster_report.hpp).
#include "jobspec/cluster_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/series.hpp"

namespace fmsim::jobspec {
namespace {

namespace orch = fmsim::orchestration;

std::string fleet_percent(double x) { return fmt::format("{:.1f}%", 100 * x); }

std::string token_count(double t) {
  if (t >= 1e12) return fmt::format("{:.2f} T", t / 1e12);
  if (t >= 1e9) return fmt::format("{:.2f} B", t / 1e9);
  if (t >= 1e6) return fmt::format("{:.2f} M", t / 1e6);
  return fmt::format("{:.0f}", t);
}

double total_gpu_hours(const orch::FleetUse& u) {
  return u.serving_gpu_hours + u.training_gpu_hours + u.idle_gpu_hours + u.down_gpu_hours;
}

nlohmann::json fleet_use_json(const orch::FleetUse& u) {
  return {{"gpu_hours",
           {{"serving", u.serving_gpu_hours},
            {"training", u.training_gpu_hours},
            {"idle", u.idle_gpu_hours},
            {"down", u.down_gpu_hours}}},
          {"training_useful_gpu_hours", u.training_useful_gpu_hours},
          {"training_goodput", u.training_goodput},
          {"training_tokens", u.training_tokens},
          {"training_jobs", u.training_jobs},
          {"training_completed", u.training_completed},
          {"training_requeues", u.training_requeues},
          {"preemptions", u.preemptions}};
}

}  // namespace

FleetReport summarise_fleet(const ClusterJob& job, const orch::SimulationResult& shared,
                            const orch::SimulationResult& alone) {
  FleetReport f;
  f.horizon_s = job.fleet_horizon_s;
  f.deployments = job.deployments;
  f.bucket_s = shared.series.bucket_s;
  const int gpn = job.layout.gpus_per_node;
  for (std::size_t i = 0; i < job.deployments.size(); ++i)
    f.outcomes.push_back(orch::summarise_deployment(job.deployments[i], static_cast<int>(i), job.jobs, shared, gpn,
                                                    f.horizon_s, job.layout.price_per_node_hour, f.bucket_s));
  f.use = orch::fleet_use(job.jobs, shared, job.layout.nodes(), gpn);
  const std::vector<orch::JobSpec> batch(job.jobs.begin(),
                                         job.jobs.begin() + static_cast<std::ptrdiff_t>(job.batch_jobs));
  f.alone = orch::fleet_use(batch, alone, job.layout.nodes(), gpn);
  return f;
}

std::string fleet_formula() {
  return "rate/replica is the largest rate one replica sustains within its SLO (the serving model's steady state, "
         "as fmsim serve and plan-serve give it); what is offered beyond ready replicas x rate/replica waits at the "
         "router and is served later, or gives up after the queue timeout; the SLO is met by requests served with "
         "no wait or a wait within the TTFT bound less the p99 TTFT";
}

std::string fleet_method_note() { return "steady state, not request by request: " + fleet_formula(); }

report::Table deployment_table(const FleetReport& fleet) {
  report::Table t;
  t.header = {"deployment", "replica", "rate/replica", "TTFT/TPOT p99", "cold start", "replicas mean/peak",
              "offered",    "served",  "SLO met",      "output tokens", "$/M tokens"};
  for (std::size_t i = 0; i < fleet.outcomes.size(); ++i) {
    const auto& d = fleet.deployments[i];
    const auto& o = fleet.outcomes[i];
    const double h = fleet.horizon_s > 0 ? fleet.horizon_s : 1;
    t.rows.push_back({d.name, d.label, fmt::format("{:.2f} req/s", d.replica.rate_rps),
                      fmt::format("{:.2f} s / {:.0f} ms", d.replica.ttft_p99_s, 1e3 * d.replica.tpot_p99_s),
                      fmt::format("{:.0f} s", d.replica.cold_start_s),
                      fmt::format("{:.1f} / {:.0f}", o.mean_replicas, o.totals.peak_replicas),
                      fmt::format("{:.1f} req/s", o.totals.offered_requests / h),
                      fmt::format("{:.1f} req/s", o.totals.served_requests / h), fleet_percent(o.slo_attainment),
                      token_count(o.output_tokens),
                      o.cost_per_million_output_tokens > 0 ? fmt::format("${:.3f}", o.cost_per_million_output_tokens)
                                                           : std::string("n/a")});
  }
  return t;
}

std::vector<std::string> fleet_lines(const FleetReport& f) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < f.outcomes.size(); ++i) {
    const auto& o = f.outcomes[i];
    if (o.totals.queued_requests <= 0 && o.totals.dropped_requests <= 0) continue;
    const double offered = o.totals.offered_requests > 0 ? o.totals.offered_requests : 1;
    lines.push_back(
        fmt::format("{}: {:.0f} requests found no replica free ({}): {:.0f} served after a wait (mean "
                    "{:.1f} s, peak queue {:.0f}), {:.0f} gave up after {:g} s ({})",
                    f.deployments[i].name, o.totals.queued_requests, fleet_percent(o.totals.queued_requests / offered),
                    o.totals.waited_served, o.mean_wait_s, o.totals.peak_backlog, o.totals.dropped_requests,
                    f.deployments[i].queue_timeout_s, fleet_percent(o.totals.dropped_requests / offered)));
  }
  const auto& u = f.use;
  const double all = total_gpu_hours(u);
  auto share = [&](double x) { return all > 0 ? fleet_percent(x / all) : std::string("0%"); };
  lines.push_back(
      fmt::format("GPU-hours by use: serving {:.0f} ({}), training {:.0f} ({}), idle {:.0f} ({}), "
                  "down {:.0f} ({})",
                  u.serving_gpu_hours, share(u.serving_gpu_hours), u.training_gpu_hours, share(u.training_gpu_hours),
                  u.idle_gpu_hours, share(u.idle_gpu_hours), u.down_gpu_hours, share(u.down_gpu_hours)));
  if (u.training_jobs > 0) {
    lines.push_back(
        fmt::format("Training goodput {} ({} with the batch jobs alone: {:+.1f} points); useful "
                    "GPU-hours {:.0f} ({:.0f} alone)",
                    fleet_percent(u.training_goodput), fleet_percent(f.alone.training_goodput),
                    100 * (u.training_goodput - f.alone.training_goodput), u.training_useful_gpu_hours,
                    f.alone.training_useful_gpu_hours));
    lines.push_back(fmt::format("Training jobs completed {} of {} ({} alone); preemptions by serving {}, requeues {}",
                                u.training_completed, u.training_jobs, f.alone.training_completed, u.preemptions,
                                u.training_requeues));
    if (u.training_tokens > 0 || f.alone.training_tokens > 0)
      lines.push_back(fmt::format("Training tokens {} ({} alone)", token_count(u.training_tokens),
                                  token_count(f.alone.training_tokens)));
  }
  return lines;
}

nlohmann::json fleet_json(const FleetReport& f) {
  nlohmann::json deployments = nlohmann::json::array();
  for (std::size_t i = 0; i < f.outcomes.size(); ++i) {
    const auto& d = f.deployments[i];
    const auto& o = f.outcomes[i];
    deployments.push_back(
        {{"name", d.name},
         {"replica",
          {{"label", d.label},
           {"gpus", d.replica.gpus},
           {"rate_rps", d.replica.rate_rps},
           {"ttft_p99_s", d.replica.ttft_p99_s},
           {"tpot_p99_s", d.replica.tpot_p99_s},
           {"input_tokens", d.replica.input_tokens},
           {"output_tokens", d.replica.output_tokens},
           {"cold_start_s", d.replica.cold_start_s}}},
         {"autoscaling",
          {{"target_utilisation", d.autoscaling.target_utilisation},
           {"scale_up_delay_s", d.autoscaling.scale_up_delay_s},
           {"scale_down_delay_s", d.autoscaling.scale_down_delay_s},
           {"min_replicas", d.autoscaling.min_replicas},
           {"max_replicas", d.autoscaling.max_replicas}}},
         {"share", orch::kFleetShareWords.name(d.share)},
         {"reserved_nodes", d.reserved_nodes},
         {"queue_timeout_s", d.queue_timeout_s},
         {"offered_requests", o.totals.offered_requests},
         {"served_requests", o.totals.served_requests},
         {"queued_requests", o.totals.queued_requests},
         {"dropped_requests", o.totals.dropped_requests},
         {"waiting_at_end", o.totals.backlog_at_end},
         {"peak_queue", o.totals.peak_backlog},
         {"mean_wait_s", o.mean_wait_s},
         {"requests_within_slo", o.totals.requests_within_slo},
         {"slo_attainment", o.slo_attainment},
         {"time_within_slo", f.horizon_s > 0 ? o.totals.seconds_within_slo / f.horizon_s : 1.0},
         {"output_tokens", o.output_tokens},
         {"output_tokens_per_s", f.horizon_s > 0 ? o.output_tokens / f.horizon_s : 0.0},
         {"gpu_hours", o.gpu_hours},
         {"cost_usd", o.cost_usd},
         {"cost_per_million_output_tokens_usd", o.cost_per_million_output_tokens},
         {"mean_replicas", o.mean_replicas},
         {"peak_replicas", o.totals.peak_replicas},
         {"scale_events", o.scale_events},
         {"cold_starts", o.unit_starts},
         {"series",
          {{"bucket_s", f.bucket_s}, {"offered_rps", o.offered}, {"served_rps", o.served}, {"replicas", o.replicas}}}});
  }
  return {{"method", fleet_method_note()},
          {"horizon_s", f.horizon_s},
          {"deployments", deployments},
          {"use", fleet_use_json(f.use)},
          {"batch_alone", fleet_use_json(f.alone)}};
}

report::Section fleet_section(const FleetReport& f) {
  report::Section s{"Shared fleet: serving and training", {}};
  report::KeyFigures kf;
  double offered = 0, within = 0;
  for (const auto& o : f.outcomes) {
    offered += o.totals.offered_requests;
    within += o.totals.requests_within_slo;
  }
  kf.items = {{"serving SLO met", fleet_percent(offered > 0 ? within / offered : 1.0)},
              {"training goodput", fleet_percent(f.use.training_goodput)},
              {"batch jobs alone", fleet_percent(f.alone.training_goodput)},
              {"preemptions", fmt::format("{}", f.use.preemptions)}};
  s.add(kf);
  s.add(report::Paragraph{fleet_method_note(), report::ParagraphStyle::Note});
  s.add(deployment_table(f));
  for (const auto& line : fleet_lines(f)) s.add(report::Paragraph{line});
  constexpr std::size_t kChartPoints = 120;
  report::LineChart c;
  c.id = "serving-rate";
  c.title = "Offered and served requests/s";
  c.x_label = "time (days)";
  c.y_label = "requests/s";
  for (std::size_t i = 0; i < f.outcomes.size(); ++i) {
    for (const bool served : {false, true}) {
      const auto coarse = report::coarsen(served ? f.outcomes[i].served : f.outcomes[i].offered, kChartPoints);
      const double width = f.bucket_s * static_cast<double>(coarse.factor);
      report::LineSeries line;
      line.name = f.outcomes[i].name + (served ? " served" : " offered");
      for (std::size_t k = 0; k < coarse.mean.size(); ++k) {
        line.x.push_back((static_cast<double>(k) + 0.5) * width / 86400.0);
        line.y.push_back(coarse.mean[k]);
      }
      if (!line.x.empty()) c.series.push_back(line);
    }
  }
  if (!c.series.empty()) s.add(c);
  return s;
}

}  // namespace fmsim::jobspec
