// validation/training.csv rows predicted with the training step model.
#include "jobspec/validate_training.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "collectives/comm_cost.hpp"
#include "config/training_calibration.hpp"
#include "core/error.hpp"
#include "jobspec/quantile.hpp"

namespace fmsim::jobspec {
namespace {

// The communication cost of each cluster, built once per (system, count, GPU).
collectives::CommCostFn& comm_cost(std::map<std::string, collectives::CommCostFn>& by_cluster,
                                   const training::TrainingJob& job) {
  const std::string key = fmt::format("{}:{}:{}", job.cluster.system.name, job.cluster.count, job.cluster.gpu.name);
  auto it = by_cluster.find(key);
  if (it == by_cluster.end()) it = by_cluster.emplace(key, collectives::make_comm_cost(job.cluster)).first;
  return it->second;
}

/// Groups of indistinguishable rows whose measurements differ by more than `min_spread_pct`.
std::vector<TrainingRepeatGroup> repeat_groups(const std::vector<const TrainingRowOutcome*>& measured,
                                               double min_spread_pct) {
  std::map<std::string, TrainingRepeatGroup> by_inputs;
  for (const TrainingRowOutcome* o : measured) {
    if (!o->ok || !o->row.job) continue;
    const auto& job = *o->row.job;
    const std::string key = fmt::format("{}|{}|{}|{}|{}|{}|{}", o->row.model, o->row.system, o->row.num_gpus,
                                        o->row.layout_summary, job.seq_len, static_cast<int>(job.task), job.stack);
    TrainingRepeatGroup& g = by_inputs[key];
    const double m = *o->row.measured_step_time_s;
    g.min_s = g.rows.empty() ? m : std::min(g.min_s, m);
    g.max_s = g.rows.empty() ? m : std::max(g.max_s, m);
    g.rows.push_back(o);
  }
  std::vector<TrainingRepeatGroup> out;
  for (auto& [key, g] : by_inputs) {
    if (g.rows.size() > 1 && g.spread_pct() > min_spread_pct) out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(),
            [](const TrainingRepeatGroup& a, const TrainingRepeatGroup& b) { return a.spread_pct() > b.spread_pct(); });
  return out;
}

}  // namespace

std::vector<std::string> TrainingRepeatGroup::ids() const {
  std::vector<std::string> out;
  for (const TrainingRowOutcome* o : rows) out.push_back(o->row.row_id);
  return out;
}

TrainingErrorSummary summarise_training(const std::vector<const TrainingRowOutcome*>& outcomes) {
  TrainingErrorSummary s;
  std::vector<double> abs;
  double signed_sum = 0;
  for (const auto* o : outcomes) {
    ++s.rows;
    if (!o->ok) continue;
    ++s.predicted;
    abs.push_back(std::fabs(o->error_pct));
    signed_sum += o->error_pct;
  }
  s.median = quantile(abs, 0.5);
  s.p90 = quantile(abs, 0.9);
  s.max = abs.empty() ? 0.0 : *std::max_element(abs.begin(), abs.end());
  s.mean_signed = s.predicted ? signed_sum / s.predicted : 0.0;
  return s;
}

std::vector<training::Measurement> training_measurements(const std::string& csv, const hardware::Catalog& catalog,
                                                         const std::vector<std::string>& exclude_sources) {
  const auto rows = config::read_training_csv(csv, catalog);
  // A source to leave out that the file does not hold is a typo, not an empty exclusion.
  std::set<std::string> sources;
  for (const auto& row : rows) sources.insert(row.source_id);
  for (const auto& id : exclude_sources) {
    if (!sources.contains(id)) {
      std::string allowed;
      for (const auto& s : sources) allowed += (allowed.empty() ? "" : ", ") + s;
      const std::string file = csv.empty() ? "the built-in validation/training.csv" : csv;
      throw core::InputError::flag("--exclude-source",
                                   fmt::format("no source '{}' in {}; allowed: {}", id, file, allowed));
    }
  }
  std::map<std::string, collectives::CommCostFn> comm_by_cluster;
  std::vector<training::Measurement> out;
  for (const auto& row : rows) {
    if (!row.job || !row.measured_step_time_s) continue;
    if (std::find(exclude_sources.begin(), exclude_sources.end(), row.source_id) != exclude_sources.end()) continue;
    out.push_back(training::Measurement{*row.job, *row.measured_step_time_s, row.source_id,
                                        comm_cost(comm_by_cluster, *row.job)});
  }
  return out;
}

TrainingValidation validate_training(const TrainingValidationOptions& options, const hardware::Catalog& catalog) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  TrainingValidation v;
  const auto rows = config::read_training_csv(options.csv, catalog);
  for (const auto& id : options.rows) {
    if (std::none_of(rows.begin(), rows.end(), [&](const config::TrainingRow& r) { return r.row_id == id; })) {
      throw core::InputError::flag("--rows", "no row '" + id + "' in " + options.csv);
    }
  }
  const auto calibration = config::load_training_calibration(options.calibration);
  // Leave-one-source-out: the calibration used for a row's source is fitted without that source.
  std::map<std::string, training::Calibration> held_out;
  if (options.holdout) {
    std::map<std::string, int> sources;
    for (const auto& row : rows) {
      if (row.job && row.measured_step_time_s) ++sources[row.source_id];
    }
    for (const auto& [source, n] : sources) {
      auto cal = calibration;
      auto data = training_measurements(options.csv, catalog, {source});
      (void)training::fit_calibration(cal, data, training::FitOptions{.anchor = options.anchor});
      held_out.emplace(source, std::move(cal));
      v.refits.emplace_back(source, n);
    }
  }
  std::map<std::string, collectives::CommCostFn> comm_by_cluster;
  for (const auto& row : rows) {
    if (!options.rows.empty() && std::find(options.rows.begin(), options.rows.end(), row.row_id) == options.rows.end())
      continue;
    TrainingRowOutcome o;
    o.row = row;
    if (row.job) {
      const auto& job = *row.job;
      const auto& comm = comm_cost(comm_by_cluster, job);
      // Derived rows are never fitted, so a source with only those has no held-out calibration.
      const auto held = held_out.find(row.source_id);
      const auto& cal = options.holdout && held != held_out.end() ? held->second : calibration;
      auto r = options.analytical ? training::estimate_step(job, cal, comm) : training::simulate_step(job, cal, comm);
      if (r.feasible) {
        o.ok = true;
        o.predicted = r.step_time.value();
        const double reference =
            row.measured_step_time_s ? *row.measured_step_time_s : row.derived_step_time_s.value_or(0.0);
        o.error_pct = reference > 0.0 ? 100.0 * (o.predicted - reference) / reference : 0.0;
        o.oom = !r.fits_memory;
        o.memory_gib = r.memory.total().value() / kGiB;
        o.capacity_gib = r.memory_capacity.value() / kGiB;
        o.peak_stage = r.memory.peak_stage;
      } else {
        o.row.reason = "simulator: " + r.reason;
      }
      if (!options.rows.empty()) o.step = std::move(r);
    }
    v.outcomes.push_back(std::move(o));
  }

  // Only rows with a measurement count as rows to predict.
  for (const auto& o : v.outcomes) {
    if (!o.row.measured_step_time_s) continue;
    v.measured.push_back(&o);
    v.by_source[o.row.source_id].push_back(&o);
    v.by_system[o.row.system.empty() ? o.row.hardware : o.row.system].push_back(&o);
    v.by_arch[o.row.arch_type].push_back(&o);
  }
  v.all = summarise_training(v.measured);
  // Rows whose step time is derived from published TFLOP/s by the source's FLOP formula.
  for (const auto& o : v.outcomes) {
    if (!o.row.measured_step_time_s && o.row.derived_step_time_s) v.derived.push_back(&o);
  }
  v.derived_summary = summarise_training(v.derived);
  v.repeats = repeat_groups(v.measured, 5.0);
  // Every measured run ran: each predicted "DOES NOT FIT" is a wrong memory verdict.
  for (const TrainingRowOutcome* o : v.measured) {
    if (!o->ok) continue;
    if (o->oom)
      v.oom_ids.push_back(o->row.row_id);
    else
      ++v.fitting;
  }
  v.repeats_over_25 = std::count_if(v.repeats.begin(), v.repeats.end(),
                                    [](const TrainingRepeatGroup& g) { return g.floor_pct() > 25.0; });
  return v;
}

}  // namespace fmsim::jobspec
