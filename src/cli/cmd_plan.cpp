// fmsim plan: the best layout and instance family for a training job (tables, JSON, HTML report),
// a scaling sweep over GPU counts, and a check of the planner against published layouts. The
// documents are documents/plan.hpp's and documents/planner_comparison.hpp's.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.hpp"
#include "cli/flag_checks.hpp"
#include "cli/output.hpp"
#include "cli/reproduce_command.hpp"
#include "cli/training_job_flags.hpp"
#include "config/cluster_loader.hpp"
#include "config/model_loader.hpp"
#include "config/training_calibration.hpp"
#include "config/training_csv.hpp"
#include "config/words.hpp"
#include "core/error.hpp"
#include "documents/plan.hpp"
#include "documents/planner_comparison.hpp"
#include "jobspec/plan.hpp"
#include "parallelism/stack.hpp"
#include "planner/plan_report.hpp"
#include "planner/planner.hpp"
#include "planner/published_comparison.hpp"
#include "report/document.hpp"

namespace fmsim::cli {
namespace {

// The plan (jobspec::PlanFlags, resolved by jobspec::make_plan_request) and how it is shown.
struct PlanOptions : jobspec::PlanFlags {
  bool json = false;
  std::string report;
  std::string command;  ///< the reproduce line the report's footer shows (reproduce_command)
  bool scaling = false;
  std::string against_csv;
  bool markdown = false;
  bool rl = false;  ///< documented only: with --rl, `plan` is registered as the RL planner (cli/app.cpp)
  bool no_progress = false;
};

// ---------------------------------------------------------------------------------------------
// Progress bar: stderr only, only on a terminal, only once a search has run for a second.

class ProgressBar {
 public:
  explicit ProgressBar(bool allowed) : enabled_(allowed && isatty(STDERR_FILENO) == 1) {}
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  ~ProgressBar() { finish(); }

  void update(std::size_t done, std::size_t total) {
    if (!enabled_ || total == 0) return;
    if (!shown_ && std::chrono::steady_clock::now() - start_ < std::chrono::seconds(1)) return;
    shown_ = true;
    constexpr int kWidth = 30;
    const double f = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
    const int filled = static_cast<int>(f * kWidth);
    std::cerr << fmt::format("\r[{}{}] {:3.0f}%  {} of {} layouts", std::string(static_cast<std::size_t>(filled), '#'),
                             std::string(static_cast<std::size_t>(kWidth - filled), '.'), 100.0 * f, done, total)
              << std::flush;
  }
  void finish() {
    if (shown_) std::cerr << "\r\033[K" << std::flush;
    shown_ = false;
  }

 private:
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// ---------------------------------------------------------------------------------------------
// The command

int resolved_threads(int requested) {
  if (requested > 0) return requested;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

/// GPU counts swept for the report's scaling chart: a quarter to four times the request, doubling.
std::vector<int> report_sweep(int gpus) {
  std::vector<int> out;
  for (int g = std::max(8, gpus / 4); g <= gpus * 4; g *= 2) out.push_back(g);
  if (std::find(out.begin(), out.end(), gpus) == out.end()) {
    out.push_back(gpus);
    std::sort(out.begin(), out.end());
  }
  return out;
}

void run_plan(Context& ctx, const PlanOptions& o) {
  const auto calibration = config::load_training_calibration(o.calibration);
  auto request = jobspec::make_plan_request(o, ctx.catalog(), calibration);
  const bool want_scaling = o.scaling || !o.report.empty();
  if (!o.scaling && !o.report.empty()) {
    // One search serves both: rank the requested count(s), sweep the others for the scaling chart.
    request.ranked_gpu_counts = request.gpu_counts;
    std::set<int> counts(request.gpu_counts.begin(), request.gpu_counts.end());
    for (int g : report_sweep(o.gpus)) counts.insert(g);
    request.gpu_counts.assign(counts.begin(), counts.end());
  } else if (o.scaling && o.gpus_range.empty()) {
    request.gpu_counts = report_sweep(o.gpus);
    request.ranked_gpu_counts = {o.gpus};
  }

  ProgressBar bar(!o.no_progress);
  const auto progress = [&bar](std::size_t done, std::size_t total) { bar.update(done, total); };
  const auto plan = want_scaling ? planner::plan_scaling(request, calibration, progress)
                                 : planner::plan(request, calibration, progress);
  bar.finish();

  bool any = false;
  for (const auto& sp : plan.systems) any = any || !sp.top.empty();
  const int threads = resolved_threads(o.threads);

  if (o.json) {
    std::cout << documents::plan_json(request, plan, threads).dump(2) << "\n";
  } else {
    documents::print_plan(std::cout, request, plan, threads, o.tokens, o.scaling);
  }
  if (!o.report.empty()) {
    const auto doc = planner::build_plan_report(
        request, plan,
        {o.command, o.calibration.empty() ? "Calibration: data/calibration/training.yaml (shipped)."
                                          : "Calibration: " + o.calibration + "."});
    write_file_atomically(o.report, report::render_html(doc), "--report");
    (o.json ? std::cerr : std::cout) << "Report written to " << o.report << "\n";
  }
  if (!any) ctx.exit_code = 1;
}

// ---------------------------------------------------------------------------------------------
// --against-csv: the planner's best layout vs the best published layout, both predicted.

void run_against_csv(Context& ctx, const PlanOptions& o, const std::string& command) {
  const auto calibration = config::load_training_calibration(o.calibration);
  const auto rows = config::read_training_csv(o.against_csv, ctx.catalog());
  std::vector<planner::PublishedRun> runs;
  for (const auto& row : rows) {
    if (row.job) runs.push_back({row.model, row.system, row.num_gpus, *row.job, row.measured_step_time_s});
  }
  ProgressBar bar(!o.no_progress);
  const auto lines = planner::compare_with_published(
      runs, calibration,
      {.threads = o.threads, .max_pp = o.max_pp, .progress = [&](std::size_t done, std::size_t total) {
         bar.update(done, total);
       }});
  bar.finish();
  if (o.json) {
    std::cout << documents::planner_comparison_json(command, o.against_csv, lines).dump(2) << "\n";
  } else {
    documents::print_planner_comparison(std::cout, lines, o.markdown);
  }
}

}  // namespace

void add_validate_planner(CLI::App& validate, Context& ctx) {
  auto opts = std::make_shared<PlanOptions>();
  auto* cmd = validate.add_subcommand(
      "planner", "The planner's best layout against the best published layout of each published run, both predicted");
  cmd->add_option("--csv", opts->against_csv,
                  "Measurements CSV (training.csv schema; default: the built-in validation/training.csv)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--json", opts->json, "Groups as JSON");
  cmd->add_flag("--markdown", opts->markdown, "A Markdown table (for docs/validation.md)");
  cmd->add_option("--max-pp", opts->max_pp, "Largest pipeline parallelism tried")->capture_default_str();
  cmd->add_option("--calibration", opts->calibration, "Training calibration YAML (default: shipped)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--threads", opts->threads, "Worker threads (0 = all cores)")
      ->check(whole_number(0, 1024))
      ->capture_default_str();
  cmd->add_flag("--no-progress", opts->no_progress, "No progress bar on stderr");
  cmd->footer(
      "Groups the rows by what the planner holds fixed (model, system, GPUs, sequence, global batch,\n"
      "precision, task, stack), predicts every published layout of a group, plans the group, and\n"
      "says whether the planner's best is at least as fast (both predicted by the same model), and\n"
      "why not when it is slower. Same as `fmsim plan --against-csv FILE`.\n\n"
      "Examples:\n"
      "  fmsim validate planner\n"
      "  fmsim validate planner --csv validation/training.csv --markdown");
  cmd->callback([opts, &ctx] { run_against_csv(ctx, *opts, "validate planner"); });
}

void add_plan_command(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<PlanOptions>();
  auto* cmd = app.add_subcommand(
      "plan", "Search layouts and instance families for a training job: best layouts per system, time and cost");
  cmd->add_option("--model", opts->model, "Model preset or config.json")->capture_default_str();
  cmd->add_option("--gpus", opts->gpus, "GPUs the job uses")->capture_default_str();
  cmd->add_option("--seq", opts->seq, "Sequence length (tokens)")->capture_default_str();
  cmd->add_option("--document-tokens", opts->document_tokens,
                  "Mean tokens of the documents packed into each sequence (SFT sequence packing): attention\n"
                  "stays inside a document. 0: one document per sequence")
      ->check(whole_number(0, 1LL << 27))
      ->capture_default_str();
  cmd->add_flag("--grad-reduce-in-bf16", opts->grad_reduce_in_bf16,
                "Reduce the data-parallel gradients in 16 bits instead of fp32 (Megatron-LM --grad-reduce-in-bf16)");
  add_recipe_switch_flags(*cmd, opts->recipe);
  cmd->add_option("--gbs", opts->gbs, "Global batch (sequences per optimizer step)")->capture_default_str();
  cmd->add_option("--tokens", opts->tokens, "Training budget in tokens (15T, 300B, 1.5e12)")->capture_default_str();
  cmd->add_option("--systems", opts->systems, "Comma-separated systems to compare")->capture_default_str();
  cmd->add_option("--objective", opts->objective, "Rank by " + planner::kObjectiveWords.allowed())
      ->capture_default_str();
  cmd->add_option("--top", opts->top, "Layouts shown per system")->capture_default_str();
  cmd->add_flag("--json", opts->json, "Print the plan as JSON (SI units)");
  cmd->add_option("--report", opts->report, "Write a self-contained HTML report to FILE")
      ->check(output_file())
      ->type_name("FILE");
  cmd->add_flag("--scaling", opts->scaling,
                "Sweep GPU counts (--gpus-range, default gpus/4..4*gpus) and show where "
                "adding GPUs stops paying");
  cmd->add_option("--gpus-range", opts->gpus_range,
                  "MIN:MAX GPU counts (doubling from MIN); without --scaling the planner also picks the count")
      ->type_name("MIN:MAX");
  cmd->add_option("--tp", opts->tp, "Pin tensor parallelism (e.g. 8 or 4,8)")->type_name("N[,N...]");
  cmd->add_option("--pp", opts->pp, "Pin pipeline parallelism")->type_name("N[,N...]");
  cmd->add_option("--vp", opts->vp, "Pin virtual pipeline stages per rank")->type_name("N[,N...]");
  cmd->add_option("--cp", opts->cp, "Pin context parallelism")->type_name("N[,N...]");
  cmd->add_option("--ep", opts->ep, "Pin expert parallelism (MoE)")->type_name("N[,N...]");
  cmd->add_option("--mbs", opts->mbs, "Pin the micro-batch size")->type_name("N[,N...]");
  cmd->add_option("--max-pp", opts->max_pp, "Largest pipeline parallelism tried")->capture_default_str();
  cmd->add_option("--max-tp", opts->max_tp, "Largest tensor parallelism tried (default: the NVLink domain, >= 8)");
  cmd->add_option("--precision", opts->precision,
                  "Pin precision: " + core::kTrainingPrecisionWords.allowed() + " (default: bf16,fp8)")
      ->type_name("P[,P...]");
  cmd->add_option("--fp8-recipe", opts->fp8_recipe,
                  "Scaling of the FP8 candidates: tensorwise, rowwise, block (see fmsim train --help)")
      ->capture_default_str();
  cmd->add_option("--recompute", opts->recompute, "Pin recompute: " + parallelism::kRecomputeWords.allowed())
      ->type_name("R[,R...]");
  cmd->add_option("--sharding", opts->sharding, "Pin sharding: " + parallelism::kShardingWords.allowed())
      ->type_name("S[,S...]");
  cmd->add_option("--stack", opts->stack, "Software stack calibration (" + parallelism::kStackWords.allowed() + ")")
      ->capture_default_str();
  cmd->add_option("--moe-dispatcher", opts->moe_dispatcher,
                  "MoE token dispatch across NVLink domains: alltoall or deduplicated (default: the stack's)");
  cmd->add_option("--task", opts->task, "Task: " + training::kTaskWords.allowed())->capture_default_str();
  cmd->add_option("--lora-rank", opts->lora_rank, "With --task lora: adapter rank")
      ->check(whole_number(1, 65536))
      ->capture_default_str();
  cmd->add_option("--lora-targets", opts->lora_targets,
                  "With --task lora: modules with adapters (see fmsim train --help)")
      ->capture_default_str();
  cmd->add_option("--lora-base", opts->lora_base,
                  "With --task lora: frozen weights' storage: bf16, fp8, or nf4 (QLoRA); the memory check of\n"
                  "every layout uses it")
      ->capture_default_str();
  cmd->add_option("--calibration", opts->calibration, "Training calibration YAML (default: shipped)")
      ->type_name("FILE");
  cmd->add_option("--threads", opts->threads, "Worker threads (0 = all cores)")
      ->check(whole_number(0, 1024))
      ->capture_default_str();
  cmd->add_flag("--no-progress", opts->no_progress, "Never draw the progress bar");
  cmd->add_option("--against-csv", opts->against_csv,
                  "For each (model, system, GPUs) in a training CSV, compare the best published layout with the "
                  "planner's best, both predicted")
      ->type_name("FILE");
  cmd->add_flag("--markdown", opts->markdown, "With --against-csv: print a Markdown table");
  // With --rl in its words, `plan` is registered as the RL planner instead (add_plan_rl_command).
  cmd->add_flag("--rl", opts->rl,
                "Plan an RL post-training job instead (same as fmsim rl --plan): placement, generator/trainer "
                "split, generation TP and training layout for the shortest step; takes fmsim rl's options "
                "(fmsim plan --rl --help lists them)");
  cmd->footer(
      "Examples:\n"
      "  fmsim plan                                   (Llama 3.1 70B, 512 GPUs, 15T tokens, "
      "P5/P5en/P6-B200/P6e-GB200)\n"
      "  fmsim plan --objective cost --top 5 --report plan.html\n"
      "  fmsim plan --model mixtral-8x22b --gpus 256 --tp 4 --max-pp 8\n"
      "  fmsim plan --scaling --gpus-range 128:2048 --systems p5.48xlarge,u-p6e-gb200x72\n"
      "  fmsim plan --against-csv validation/training.csv\n"
      "  fmsim plan --rl --model qwen3-8b --cluster p5.48xlarge:4 --sync off-policy   (RL: fmsim rl --plan)");
  cmd->callback([&ctx, opts, cmd] {
    // Every flag given, outputs and speed-only flags left out: the same plan again.
    opts->command = reproduce_command(*cmd, {"--json", "--report", "--threads", "--no-progress", "--markdown"});
    if (!opts->against_csv.empty()) {
      run_against_csv(ctx, *opts, "plan --against-csv");
    } else {
      run_plan(ctx, *opts);
    }
  });
}

}  // namespace fmsim::cli
