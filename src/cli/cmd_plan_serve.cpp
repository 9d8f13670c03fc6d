// fmsim plan-serve: search instance families, layouts (TP, EP, attention DP), aggregated vs
// disaggregated prefill/decode and replica counts for a model, a load and an SLO.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/reproduce_command.hpp"
#include "cli/serving_flags.hpp"
#include "cli/training_job_flags.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "documents/text_table.hpp"
#include "jobspec/plan_serve.hpp"
#include "planner/serving_plan.hpp"
#include "report/document.hpp"

namespace fmsim::cli {
using documents::TextTable;
namespace {

struct PlanServeOptions {
  jobspec::PlanServeFlags plan;
  bool json = false;
  std::string report;  ///< --report FILE.html
};

std::string money(double v) { return v > 0 ? fmt::format("${:.3f}", v) : "-"; }

// One SLO bound as the headings show it: "2000 ms", or "-" when unset.
std::string slo_bound_text(double seconds) { return seconds > 0 ? fmt::format("{:.0f} ms", seconds * 1e3) : "-"; }

// The search as one offline HTML page: the cheapest plans and the throughput-vs-interactivity
// chart (output tokens/s per GPU against tokens/s per user), one line per system's own front and
// one for the front over all of them.
std::string plan_serve_report(const PlanServeOptions& o, const planner::ServingPlanRequest& req,
                              const std::vector<planner::ServingPlanResult>& results,
                              const std::vector<planner::ParetoPoint>& points,
                              const std::vector<planner::ParetoPoint>& front, const std::string& command) {
  report::Document doc;
  doc.title = fmt::format("Serving plan: {}", o.plan.serving.model);
  doc.subtitle = fmt::format("{} | SLO p99 TTFT {} TPOT {}{}", serving::describe(req.workload),
                             slo_bound_text(req.slo.ttft.value()), slo_bound_text(req.slo.tpot.value()),
                             req.target_rate > 0 ? fmt::format(" | {:g} requests/s", req.target_rate) : "");
  report::Section plans{"Cheapest plans", {}};
  report::Table t;
  t.header = {"#",
              "system",
              "layout",
              "mode",
              "max req/s per replica",
              "tok/s per GPU",
              "TTFT p99 (ms)",
              "TPOT p99 (ms)",
              "GPUs",
              "$/hour",
              "$/M output tokens"};
  const planner::ServingPlanResult* best = nullptr;
  for (const auto& r : results) {
    if (!r.feasible || static_cast<int>(t.rows.size()) >= o.plan.top) continue;
    if (best == nullptr) best = &r;
    const std::string gpus = r.mode == serving::ServingMode::Disaggregated
                                 ? fmt::format("{}P+{}D", r.prefill_gpus, r.decode_gpus)
                                 : std::to_string(r.gpus);
    t.rows.push_back({std::to_string(t.rows.size() + 1), r.system, r.layout,
                      std::string(serving::kServingModeWords.name(r.mode)), fmt::format("{:.2f}", r.max_rate),
                      fmt::format("{:.0f}", r.output_tokens_per_s_per_gpu), fmt::format("{:.0f}", r.ttft_p99 * 1e3),
                      fmt::format("{:.1f}", r.tpot_p99 * 1e3), gpus, money(r.cost_per_hour),
                      money(r.cost_per_million_output_tokens)});
  }
  if (best != nullptr) {
    t.highlight_row = 0;
    plans.add(report::KeyFigures{
        {{"best", best->system + " " + best->layout + " " + std::string(serving::kServingModeWords.name(best->mode))},
         {"$/M output tokens", money(best->cost_per_million_output_tokens)},
         {"$/hour", money(best->cost_per_hour)},
         {"tok/s per GPU", fmt::format("{:.0f}", best->output_tokens_per_s_per_gpu)}}});
    plans.add(std::move(t));
  } else {
    plans.add(report::Paragraph{"No deployment meets the SLO.", report::ParagraphStyle::Warning});
  }
  doc.sections.push_back(std::move(plans));

  report::Section pareto{"Throughput against interactivity", {}};
  report::LineChart chart;
  chart.id = "pareto";
  chart.title = "Pareto front: output tokens/s per GPU against tokens/s per user (closed loop)";
  chart.x_label = "tokens/s per user (1 / TPOT)";
  chart.y_label = "output tokens/s per GPU";
  chart.x_unit = "tok/s";
  chart.y_unit = "tok/s";
  chart.log_x = true;
  std::vector<std::string> systems;
  for (const auto& p : points) {
    if (std::find(systems.begin(), systems.end(), p.system) == systems.end()) systems.push_back(p.system);
  }
  auto series = [](std::string name, std::vector<planner::ParetoPoint> pts) {
    std::sort(pts.begin(), pts.end(),
              [](const auto& a, const auto& b) { return a.tokens_per_s_per_user < b.tokens_per_s_per_user; });
    report::LineSeries l;
    l.name = std::move(name);
    for (const auto& p : pts) {
      if (p.tokens_per_s_per_user <= 0) continue;
      l.x.push_back(p.tokens_per_s_per_user);
      l.y.push_back(p.tokens_per_s_per_gpu);
    }
    return l;
  };
  for (const auto& sys : systems) {
    std::vector<planner::ParetoPoint> own;
    for (const auto& p : points) {
      if (p.system == sys) own.push_back(p);
    }
    chart.series.push_back(series(sys, planner::pareto_front(own)));
  }
  chart.series.push_back(series("front over all systems", front));
  std::erase_if(chart.series, [](const report::LineSeries& l) { return l.x.empty(); });
  if (chart.series.empty()) {
    pareto.add(report::Paragraph{"No layout holds a single request in its KV cache: no Pareto front.",
                                 report::ParagraphStyle::Warning});
  } else {
    pareto.add(report::Paragraph{
        "Each point is one layout at one closed-loop concurrency (1, 2, 4, ...). Up and to the right is "
        "better: more tokens per GPU (cheaper) at more tokens per second for each user (more interactive)."});
    pareto.add(std::move(chart));
    report::Table ft;
    ft.caption = "Points on the front over all systems";
    ft.header = {"system", "layout", "concurrency", "tok/s per GPU", "tok/s per user"};
    for (const auto& x : front) {
      ft.rows.push_back({x.system, x.layout, std::to_string(x.concurrency),
                         fmt::format("{:.0f}", x.tokens_per_s_per_gpu),
                         fmt::format("{:.1f}", x.tokens_per_s_per_user)});
    }
    pareto.add(std::move(ft));
  }
  doc.sections.push_back(std::move(pareto));
  doc.footer = command;
  return report::render_html(doc);
}

}  // namespace

void add_plan_serve_command(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<PlanServeOptions>();
  auto* cmd = app.add_subcommand("plan-serve",
                                 "Cheapest serving deployments for a model, a load and an SLO; max rate; Pareto front");
  cmd->footer(
      "For every instance family and every layout that fits (TP over powers of two up to the NVLink\n"
      "domain; for MoE models also EP = TP and attention DP), finds by simulation the largest Poisson rate\n"
      "one replica sustains with p99 TTFT and p99 TPOT within the SLO, then the replicas --rate needs and\n"
      "their cost; also a disaggregated plan (prefill pool + decode pool at the largest batch meeting the\n"
      "TPOT SLO, KV moved over NVLink or EFA). Layout flags given (--tp, --ep, --dep) fix that part of the\n"
      "search. The Pareto front trades output tokens/s per GPU against tokens/s per user (closed loop).\n\n"
      "Examples:\n"
      "  fmsim plan-serve --model llama3.1-70b --precision fp8 --engine trtllm --isl 1024 --osl 1024 \\\n"
      "                   --rate 500 --slo-ttft 2s --slo-tpot 50ms\n"
      "  fmsim plan-serve --model deepseek-v3 --precision fp4 --systems u-p6e-gb200x72,p6-b200.48xlarge \\\n"
      "                   --engine trtllm --isl 2048 --osl 1024 --slo-tpot 50ms --json");
  add_serving_flags(*cmd, opts->plan.serving);
  cmd->add_option("--systems,--families", opts->plan.families,
                  "Comma-separated systems to search (as fmsim plan --systems; --families is the older name)")
      ->capture_default_str();
  cmd->add_option("--top", opts->plan.top, "Plans to print")->capture_default_str();
  cmd->add_option("--probe-requests", opts->plan.probe_requests, "Requests simulated per rate probe")
      ->capture_default_str();
  cmd->add_flag("--no-disagg", opts->plan.no_disagg, "Only aggregated deployments");
  cmd->add_flag("--json", opts->json, "Machine-readable output");
  cmd->add_option("--report", opts->report,
                  "Write an offline HTML report: the cheapest plans and the throughput-vs-interactivity Pareto chart")
      ->type_name("FILE.html")
      ->check(output_file());
  cmd->callback([opts, &ctx, cmd]() {
    // The job file's values go into the flags' own variables (opts), so read them after it.
    apply_serving_job_file(opts->plan.serving, *cmd);
    PlanServeOptions o = *opts;
    const auto plan = jobspec::plan_serving(o.plan, given_on(*cmd), ctx.catalog());
    const auto& req = plan.request;
    const auto& results = plan.results;
    const auto& points = plan.points;
    const auto& front = plan.front;
    const auto& skipped = plan.skipped;
    if (!o.report.empty()) {
      // Every flag given (and every key of a --job file), outputs left out: the same plans again.
      const std::string command =
          reproduce_command(*cmd, {"--report", "--json", "--job", "--metrics-out", "--trace", "--trace-out"});
      write_file_atomically(o.report, plan_serve_report(o, req, results, points, front, command), "--report");
    }

    if (o.json) {
      nlohmann::json j;
      j["model"] = o.plan.serving.model;
      j["workload"] = serving::describe(req.workload);
      j["target_rate"] = req.target_rate;
      j["slo"] = {{"ttft_p99_s", req.slo.ttft.value()}, {"tpot_p99_s", req.slo.tpot.value()}};
      nlohmann::json plans = nlohmann::json::array();
      for (const auto& r : results) {
        plans.push_back({{"system", r.system},
                         {"layout", r.layout},
                         {"mode", std::string(serving::kServingModeWords.name(r.mode))},
                         {"gpus_per_replica", r.gpus_per_replica},
                         {"feasible", r.feasible},
                         {"reason", r.reason},
                         {"max_rate_per_replica", r.max_rate},
                         {"output_tokens_per_s_per_gpu", r.output_tokens_per_s_per_gpu},
                         {"ttft_p99_s", r.ttft_p99},
                         {"tpot_p99_s", r.tpot_p99},
                         {"replicas", r.replicas},
                         {"gpus", r.gpus},
                         {"prefill_gpus", r.prefill_gpus},
                         {"decode_gpus", r.decode_gpus},
                         {"cost_per_hour_usd", r.cost_per_hour},
                         {"cost_per_million_output_tokens_usd", r.cost_per_million_output_tokens}});
      }
      j["plans"] = plans;
      nlohmann::json pf = nlohmann::json::array();
      for (const auto& p : front) {
        pf.push_back({{"system", p.system},
                      {"layout", p.layout},
                      {"concurrency", p.concurrency},
                      {"output_tokens_per_s_per_gpu", p.tokens_per_s_per_gpu},
                      {"tokens_per_s_per_user", p.tokens_per_s_per_user}});
      }
      j["pareto_front"] = pf;
      j["skipped"] = skipped;
      std::cout << j.dump(2) << "\n";
      return;
    }
    std::cout << fmt::format("fmsim plan-serve: {} | {} | SLO p99 TTFT {} TPOT {}{}\n\n", o.plan.serving.model,
                             serving::describe(req.workload), slo_bound_text(req.slo.ttft.value()),
                             slo_bound_text(req.slo.tpot.value()),
                             req.target_rate > 0 ? fmt::format(" | target {:g} requests/s", req.target_rate) : "");
    TextTable t({{"#"},
                 {"system"},
                 {"layout"},
                 {"mode"},
                 {"max req/s/replica", true},
                 {"tok/s/GPU", true},
                 {"TTFT p99 ms", true},
                 {"TPOT p99 ms", true},
                 {"GPUs", true},
                 {"$/hour", true},
                 {"$/M output tok", true}});
    int shown = 0;
    for (const auto& r : results) {
      if (shown >= o.plan.top) break;
      if (!r.feasible) continue;
      ++shown;
      const std::string gpus = r.mode == serving::ServingMode::Disaggregated
                                   ? fmt::format("{}P+{}D", r.prefill_gpus, r.decode_gpus)
                                   : std::to_string(r.gpus);
      t.add({std::to_string(shown), r.system, r.layout, std::string(serving::kServingModeWords.name(r.mode)),
             fmt::format("{:.2f}", r.max_rate), fmt::format("{:.0f}", r.output_tokens_per_s_per_gpu),
             fmt::format("{:.0f}", r.ttft_p99 * 1e3), fmt::format("{:.1f}", r.tpot_p99 * 1e3), gpus,
             money(r.cost_per_hour), money(r.cost_per_million_output_tokens)});
    }
    if (shown == 0) {
      std::cout << "No deployment meets the SLO.\n";
    } else {
      t.print(std::cout);
    }
    int infeasible = 0;
    for (const auto& r : results) infeasible += r.feasible ? 0 : 1;
    if (infeasible > 0)
      std::cout << fmt::format("\n{} candidates do not fit or miss the SLO (--json lists why).\n", infeasible);
    for (const auto& s : skipped) std::cout << "skipped " << s << "\n";
    std::cout << "\nPareto front (closed loop): output tokens/s per GPU vs tokens/s per user\n";
    TextTable p({{"system"}, {"layout"}, {"concurrency", true}, {"tok/s/GPU", true}, {"tok/s/user", true}});
    for (const auto& x : front) {
      p.add({x.system, x.layout, std::to_string(x.concurrency), fmt::format("{:.0f}", x.tokens_per_s_per_gpu),
             fmt::format("{:.1f}", x.tokens_per_s_per_user)});
    }
    p.print(std::cout, "  ");
  });
}

}  // namespace fmsim::cli
