// Layout search: enumeration, pruning, parallel evaluation, ranking and the scaling sweep.
#include "planner/planner.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <thread>

#include "collectives/comm_cost.hpp"
#include "core/error.hpp"
#include "parallelism/memory.hpp"

namespace fmsim::planner {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One (system, GPU count) pair and what is searched on it.
struct Scenario {
  std::size_t system = 0;
  int gpus = 0;
  hardware::ClusterSpec cluster;
  std::vector<Shape> shapes;
  std::vector<Variant> variants;
  double capacity = 0.0;  // usable HBM per GPU, bytes
  double steps = 0.0;
  double price = 0.0;  // per hour for the rented units; 0 = unknown
};

// A layout that divides and fits, with its ranking key. Identified by (scenario, shape, variant).
struct Record {
  std::uint32_t scenario = 0;
  std::uint32_t shape = 0;
  std::uint32_t variant = 0;
  double key = 0.0;
  double step = 0.0;
};

// What one worker produced for one shape.
struct UnitResult {
  std::vector<Record> kept;
  SearchStats stats;
  double min_oom_bytes = kInf;  // smallest footprint among layouts pruned for memory
  std::uint32_t min_oom_variant = 0;
};

double usable_hbm(const hardware::GpuSpec& gpu) {
  return gpu.hbm_usable.value() > 0 ? gpu.hbm_usable.value() : gpu.hbm_capacity.value();
}

double key_for(double train_seconds, double price, double tokens, Objective objective) {
  switch (objective) {
    case Objective::Time: return train_seconds;
    case Objective::Cost: return price > 0 ? train_seconds * price / 3600.0 : kInf;
    case Objective::TokensPerDollar:
      // tokens = the tokens the steps process (the budget rounded up to whole steps).
      return price > 0 ? -(tokens / (train_seconds * price / 3600.0)) : kInf;
  }
  return train_seconds;
}

training::TrainingJob base_job(const PlanRequest& request, const hardware::ClusterSpec& cluster, int gpus) {
  training::TrainingJob job;
  job.model = request.model;
  job.cluster = cluster;
  job.seq_len = request.seq_len;
  job.document_tokens = request.document_tokens;
  job.task = request.task;
  job.lora_rank = request.lora_rank;
  job.lora_targets = request.lora_targets;
  job.lora_base = request.lora_base;
  job.stack = request.stack;
  job.moe_dispatcher = request.moe_dispatcher;
  job.gpus = gpus;
  return job;
}

void check_request(const PlanRequest& r, const training::Calibration& calibration) {
  FMSIM_CHECK(!r.systems.empty(), "plan: no system to search");
  FMSIM_CHECK(!r.gpu_counts.empty(), "plan: no GPU count to search");
  for (int g : r.gpu_counts) FMSIM_CHECK(g > 0, "plan: GPU counts must be positive");
  FMSIM_CHECK(r.seq_len > 0 && r.global_batch > 0 && r.tokens > 0,
              "plan: seq_len, global batch and tokens must be positive");
  FMSIM_CHECK(r.top >= 1, "plan: top must be at least 1");
  for (const auto& s : r.systems) {
    FMSIM_CHECK(calibration.gpus.count(s.gpu.architecture) > 0, "plan: no calibration for the GPU of " + s.system.name);
    FMSIM_CHECK(s.system.gpus() > 0, "plan: system without GPUs");
  }
  FMSIM_CHECK(calibration.stacks.count(r.stack) > 0, "plan: no calibration for stack " + r.stack);
}

std::vector<Scenario> build_scenarios(const PlanRequest& request) {
  std::vector<Scenario> out;
  const double steps = steps_for_tokens(request.tokens, request.global_batch, request.seq_len);
  for (std::size_t s = 0; s < request.systems.size(); ++s) {
    for (int gpus : request.gpu_counts) {
      Scenario sc;
      sc.system = s;
      sc.gpus = gpus;
      sc.cluster = sized_cluster(request.systems[s], gpus);
      sc.shapes = enumerate_shapes(request.model, gpus, request.seq_len, request.space, sc.cluster);
      sc.variants = enumerate_variants(request.space, sc.cluster.gpu);
      sc.capacity = usable_hbm(sc.cluster.gpu);
      sc.steps = steps;
      sc.price = sc.cluster.price_per_hour_usd();
      out.push_back(std::move(sc));
    }
  }
  return out;
}

// Evaluates every variant of one shape. `job` is this worker's job for the scenario (its layout
// is overwritten); `comm` its communication model.
void evaluate_unit(const PlanRequest& request, const training::Calibration& calibration, const Scenario& sc,
                   std::uint32_t scenario_index, std::uint32_t shape_index, training::TrainingJob& job,
                   const collectives::CommCostFn& comm, UnitResult& out) {
  const Shape& shape = sc.shapes[shape_index];
  out.stats.candidates += sc.variants.size();
  for (std::uint32_t v = 0; v < sc.variants.size(); ++v) {
    const Variant& variant = sc.variants[v];
    if (!divides_batch(shape, variant, request.global_batch)) {
      ++out.stats.pruned_batch;
      continue;
    }
    job.layout = make_layout(shape, variant, request.global_batch, request.framework);
    // Memory before time: the footprint costs a fraction of a step estimate.
    const parallelism::MemoryBreakdown memory = training::job_memory(job);
    const double bytes = memory.total().value();
    if (bytes > sc.capacity) {
      ++out.stats.pruned_memory;
      if (bytes < out.min_oom_bytes) {
        out.min_oom_bytes = bytes;
        out.min_oom_variant = v;
      }
      continue;
    }
    const auto r = training::estimate_step_time(job, calibration, comm, memory);
    if (!r.feasible || !r.fits_memory || !(r.step_time.value() > 0.0)) {
      // The enumeration mirrors why_invalid, so this only guards against the two drifting apart.
      ++out.stats.pruned_batch;
      continue;
    }
    ++out.stats.evaluated;
    const double step = r.step_time.value();
    out.kept.push_back(
        Record{scenario_index, shape_index, v,
               key_for(step * sc.steps, sc.price,
                       sc.steps * static_cast<double>(request.global_batch) * static_cast<double>(request.seq_len),
                       request.objective),
               step});
  }
}

struct SearchOutput {
  std::vector<Scenario> scenarios;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> units;  // (scenario, shape)
  std::vector<UnitResult> results;                             // per unit
  double seconds = 0.0;
};

SearchOutput search(const PlanRequest& request, const training::Calibration& calibration, const ProgressFn& progress) {
  SearchOutput out;
  out.scenarios = build_scenarios(request);
  std::size_t total = 0;
  for (std::uint32_t s = 0; s < out.scenarios.size(); ++s) {
    for (std::uint32_t k = 0; k < out.scenarios[s].shapes.size(); ++k) {
      out.units.emplace_back(s, k);
      total += out.scenarios[s].variants.size();
    }
  }
  out.results.resize(out.units.size());

  const auto start = Clock::now();
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::mutex error_mutex;
  std::exception_ptr error;
  const auto& scenarios = out.scenarios;
  const auto& units = out.units;
  auto& results = out.results;

  // Each worker keeps its own job and communication model per scenario.
  auto work = [&](bool report_progress) {
    std::vector<std::optional<training::TrainingJob>> jobs(scenarios.size());
    std::vector<std::optional<collectives::CommCostFn>> comms(scenarios.size());
    auto last_report = Clock::now();
    try {
      for (;;) {
        const std::size_t u = next.fetch_add(1, std::memory_order_relaxed);
        if (u >= units.size()) break;
        const auto [s, k] = units[u];
        const Scenario& sc = scenarios[s];
        if (!jobs[s]) {
          jobs[s] = base_job(request, sc.cluster, sc.gpus);
          comms[s] = collectives::make_comm_cost(sc.cluster);
        }
        evaluate_unit(request, calibration, sc, s, k, *jobs[s], *comms[s], results[u]);
        done.fetch_add(sc.variants.size(), std::memory_order_relaxed);
        if (report_progress && progress && Clock::now() - last_report > std::chrono::milliseconds(100)) {
          progress(done.load(std::memory_order_relaxed), total);
          last_report = Clock::now();
        }
      }
    } catch (...) {
      const std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
      next.store(units.size());
    }
  };

  int threads = request.threads > 0 ? request.threads : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(1, std::min<int>(threads, static_cast<int>(std::max<std::size_t>(1, units.size()))));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, false);
  work(true);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  if (progress) progress(total, total);
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

PlannedLayout planned_from(const PlanRequest& request, const training::Calibration& calibration, const SearchOutput& so,
                           const Record& rec) {
  const Scenario& sc = so.scenarios[rec.scenario];
  const auto layout =
      make_layout(sc.shapes[rec.shape], sc.variants[rec.variant], request.global_batch, request.framework);
  return evaluate_layout(request, calibration, request.systems[sc.system], sc.gpus, layout);
}

// The lower objective key first, ties by step time (ranks_before); equal keys keep enumeration
// order (scenario, shape, variant).
bool record_less(const Record& a, const Record& b) {
  const RankKey ka{.key = a.key, .tie = a.step}, kb{.key = b.key, .tie = b.step};
  if (ranks_before(ka, kb)) return true;
  if (ranks_before(kb, ka)) return false;
  if (a.scenario != b.scenario) return a.scenario < b.scenario;
  if (a.shape != b.shape) return a.shape < b.shape;
  return a.variant < b.variant;
}

std::string empty_reason(const PlanRequest& request, const SearchOutput& so, std::size_t system,
                         const SearchStats& stats) {
  if (stats.shapes == 0) {
    return fmt::format(
        "no tp/pp/vp/cp/ep combination divides {} ({} heads, {} KV heads, {} layers) on {} GPUs "
        "within the allowed values",
        request.model.name, request.model.num_heads, request.model.num_kv_heads, request.model.num_layers,
        fmt::join(request.gpu_counts, "/"));
  }
  if (stats.pruned_memory == 0) {
    return fmt::format("global batch {} is not a multiple of micro-batch x dp for any layout", request.global_batch);
  }
  // The smallest footprint seen, to say how far from fitting the job is.
  double best = kInf;
  std::optional<parallelism::Layout> layout;
  double capacity = 0.0;
  for (std::size_t u = 0; u < so.units.size(); ++u) {
    const auto [s, k] = so.units[u];
    const auto& sc = so.scenarios[s];
    if (sc.system != system) continue;
    if (!request.ranked_gpu_counts.empty() &&
        std::find(request.ranked_gpu_counts.begin(), request.ranked_gpu_counts.end(), sc.gpus) ==
            request.ranked_gpu_counts.end()) {
      continue;
    }
    capacity = sc.capacity;
    if (so.results[u].min_oom_bytes < best) {
      best = so.results[u].min_oom_bytes;
      layout = make_layout(sc.shapes[k], sc.variants[so.results[u].min_oom_variant], request.global_batch,
                           request.framework);
    }
  }
  const double gib = 1024.0 * 1024.0 * 1024.0;
  return fmt::format("no layout fits in {:.1f} GiB per GPU: the smallest footprint is {:.1f} GiB ({})", capacity / gib,
                     best / gib, layout ? layout_label(*layout) : "?");
}

Plan assemble(const PlanRequest& request, const training::Calibration& calibration, const SearchOutput& so,
              bool with_scaling) {
  Plan plan;
  for (std::size_t s = 0; s < request.systems.size(); ++s) {
    SystemPlan sp;
    std::vector<Record> records;
    const auto ranked = [&](int gpus) {
      return request.ranked_gpu_counts.empty() ||
             std::find(request.ranked_gpu_counts.begin(), request.ranked_gpu_counts.end(), gpus) !=
                 request.ranked_gpu_counts.end();
    };
    for (std::size_t u = 0; u < so.units.size(); ++u) {
      const auto& sc = so.scenarios[so.units[u].first];
      if (sc.system != s || !ranked(sc.gpus)) continue;
      sp.stats += so.results[u].stats;
      records.insert(records.end(), so.results[u].kept.begin(), so.results[u].kept.end());
    }
    for (const auto& sc : so.scenarios) {
      if (sc.system == s && ranked(sc.gpus)) sp.stats.shapes += sc.shapes.size();
    }
    std::sort(records.begin(), records.end(), record_less);
    std::vector<std::array<int, 5>> seen;
    for (const auto& rec : records) {
      if (sp.top.size() >= static_cast<std::size_t>(request.top)) break;
      const auto& sc = so.scenarios[rec.scenario];
      const Shape& shape = sc.shapes[rec.shape];
      const std::array<int, 5> key{sc.gpus, shape.tp, shape.pp, shape.cp, shape.ep};
      if (request.distinct_shapes) {
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
        seen.push_back(key);
      }
      auto p = planned_from(request, calibration, so, rec);
      p.rank = static_cast<int>(sp.top.size()) + 1;
      sp.top.push_back(std::move(p));
    }
    const int shown_gpus = !sp.top.empty()                      ? sp.top.front().gpus
                           : !request.ranked_gpu_counts.empty() ? request.ranked_gpu_counts.front()
                                                                : request.gpu_counts.front();
    sp.cluster = sized_cluster(request.systems[s], shown_gpus);
    if (sp.top.empty()) sp.empty_reason = empty_reason(request, so, s, sp.stats);
    plan.systems.push_back(std::move(sp));
  }
  // Totals over everything searched, swept GPU counts included.
  for (const auto& r : so.results) plan.stats += r.stats;
  for (const auto& sc : so.scenarios) plan.stats.shapes += sc.shapes.size();
  plan.stats.seconds = so.seconds;

  double best_key = kInf;
  for (std::size_t s = 0; s < plan.systems.size(); ++s) {
    if (plan.systems[s].top.empty()) continue;
    const double k = objective_key(plan.systems[s].top.front(), request.objective);
    if (!plan.best_system || k < best_key) {
      best_key = k;
      plan.best_system = s;
    }
  }

  if (with_scaling) {
    for (std::size_t s = 0; s < request.systems.size(); ++s) {
      SystemScaling scaling;
      scaling.system = request.systems[s].system.name;
      for (std::uint32_t sc_index = 0; sc_index < so.scenarios.size(); ++sc_index) {
        const auto& sc = so.scenarios[sc_index];
        if (sc.system != s) continue;
        std::optional<Record> best;
        for (std::size_t u = 0; u < so.units.size(); ++u) {
          if (so.units[u].first != sc_index) continue;
          for (const auto& r : so.results[u].kept) {
            if (!best || record_less(r, *best)) best = r;
          }
        }
        ScalingPoint point;
        point.gpus = sc.gpus;
        if (best) {
          point.best = planned_from(request, calibration, so, *best);
          point.best->rank = 1;
        }
        scaling.points.push_back(std::move(point));
      }
      // Speedup and marginal efficiency against the previous point that has a layout.
      const ScalingPoint* prev = nullptr;
      bool still_paying = true;
      for (std::size_t i = 0; i < scaling.points.size(); ++i) {
        auto& p = scaling.points[i];
        if (!p.best) continue;
        if (prev) {
          p.speedup = prev->best->step.step_time.value() / p.best->step.step_time.value();
          p.marginal_efficiency = p.speedup / (static_cast<double>(p.gpus) / prev->gpus);
          if (p.marginal_efficiency < kPayingEfficiency) still_paying = false;
        }
        if (still_paying) scaling.knee = i;
        prev = &p;
      }
      plan.scaling.push_back(std::move(scaling));
    }
  }
  return plan;
}

}  // namespace

SearchStats& SearchStats::operator+=(const SearchStats& o) {
  shapes += o.shapes;
  candidates += o.candidates;
  pruned_batch += o.pruned_batch;
  pruned_memory += o.pruned_memory;
  evaluated += o.evaluated;
  return *this;
}

hardware::ClusterSpec sized_cluster(hardware::ClusterSpec cluster, int gpus) {
  const int per_unit = std::max(1, cluster.system.gpus());
  cluster.count = std::max(1, (gpus + per_unit - 1) / per_unit);
  return cluster;
}

double steps_for_tokens(double tokens, std::int64_t global_batch, std::int64_t seq_len) {
  const double per_step = static_cast<double>(global_batch) * static_cast<double>(seq_len);
  return std::ceil(tokens / per_step);
}

double cost_usd(double seconds, int units, double price_per_unit_hour) {
  return static_cast<double>(units) * price_per_unit_hour * seconds / 3600.0;
}

double objective_key(const PlannedLayout& p, Objective objective) {
  switch (objective) {
    case Objective::Time: return p.train_seconds;
    case Objective::Cost: return std::isfinite(p.cost_usd) ? p.cost_usd : kInf;
    case Objective::TokensPerDollar: return std::isfinite(p.tokens_per_dollar) ? -p.tokens_per_dollar : kInf;
  }
  return p.train_seconds;
}

PlannedLayout evaluate_layout(const PlanRequest& request, const training::Calibration& calibration,
                              const hardware::ClusterSpec& cluster, int gpus, const parallelism::Layout& layout) {
  PlannedLayout p;
  p.gpus = gpus;
  const auto sized = sized_cluster(cluster, gpus);
  p.units = sized.count;
  auto job = base_job(request, sized, gpus);
  job.layout = layout;
  p.layout = layout;
  p.step = training::estimate_step(job, calibration, collectives::make_comm_cost(sized));
  p.steps = steps_for_tokens(request.tokens, request.global_batch, request.seq_len);
  if (!p.step.feasible || !(p.step.step_time.value() > 0.0)) {
    p.train_seconds = kNaN;
    p.cost_usd = kNaN;
    p.tokens_per_dollar = kNaN;
    return p;
  }
  p.train_seconds = p.steps * p.step.step_time.value();
  const double price = sized.system.price_per_hour_usd;
  p.cost_usd = price > 0 ? cost_usd(p.train_seconds, p.units, price) : kNaN;
  p.tokens_per_dollar = price > 0 ? p.steps * static_cast<double>(request.global_batch) *
                                        static_cast<double>(request.seq_len) / p.cost_usd
                                  : kNaN;
  p.headroom_bytes = p.step.memory_capacity.value() - p.step.memory.total().value();
  p.bottleneck = find_bottleneck(p.step, layout, sized);
  return p;
}

Plan plan(const PlanRequest& request, const training::Calibration& calibration, const ProgressFn& progress) {
  check_request(request, calibration);
  const auto so = search(request, calibration, progress);
  return assemble(request, calibration, so, false);
}

Plan plan_scaling(const PlanRequest& request, const training::Calibration& calibration, const ProgressFn& progress) {
  check_request(request, calibration);
  const auto so = search(request, calibration, progress);
  return assemble(request, calibration, so, true);
}

}  // namespace fmsim::planner
