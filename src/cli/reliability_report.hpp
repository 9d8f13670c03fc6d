// Text and JSON pieces shared by `fmsim checkpoint`, `fmsim goodput` and `fmsim run`: the goodput
// scenario and its results, the DRA export check and the data-loading check.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/context.hpp"
#include "core/units.hpp"
#include "jobspec/checkpoint.hpp"
#include "jobspec/goodput.hpp"
#include "reliability/goodput.hpp"
#include "storage/data_loading.hpp"
#include "storage/data_repository.hpp"

namespace fmsim::cli {

/// A bandwidth, or "unbounded" for 0.
std::string format_rate(core::BytesPerSecond r);

/// The scenario as JSON: failure_model, nodes, gpus, rate_per_node_hour, mtbf_s, strategy,
/// checkpoint (interval, stall, persist, load, Young/Daly/optimal intervals; io when modelled),
/// recovery, duration_s and gpu_hours.
nlohmann::json goodput_setup_json(const jobspec::GoodputSetup& setup, int nodes);

/// Prints the Failures, Checkpoint, Recovery and Interval lines of the scenario.
void print_goodput_setup(const jobspec::GoodputSetup& setup, int nodes, bool include_planned);

/// ETTR, expected interruptions and GPU-hours by kind (useful, checkpoint, restart, lost work,
/// waiting) of one result on `gpus` GPUs; a Monte Carlo result adds its spread and replications.
nlohmann::json goodput_result_json(const reliability::GoodputResult& r, int gpus);

/// One extra row of the goodput table: a name and its analytic and Monte Carlo cells.
struct GoodputRow {
  std::string name;
  std::string analytic;
  std::string monte_carlo;
};

/// The analytic and Monte Carlo results side by side (the Monte Carlo column only when `mc` is
/// given): ETTR, interruptions, the `extra` rows, then GPU-hours by kind.
void print_goodput_table(const reliability::GoodputResult& analytic,
                         const std::optional<reliability::GoodputResult>& mc, int gpus,
                         const std::vector<GoodputRow>& extra = {});

/// The S3 storage `name` linked by a data repository association to `job`'s tier; InputError
/// naming `flag` when that tier is not FSx for Lustre or the storage is unknown.
storage::TierPerformance resolve_dra_s3(const jobspec::CheckpointJob& job, const jobspec::CheckpointJobFlags& flags,
                                        const std::string& name, const std::string& flag, Context& ctx);

/// A part of a report in both forms.
struct ReportPart {
  nlohmann::json json;
  std::string text;  ///< one line, newline-terminated
};

/// The background export of every checkpoint to S3 and whether it keeps up with the interval.
ReportPart export_report(const storage::ExportEstimate& x, const std::string& s3_name);

/// The input pipeline's read bandwidth against what the tier delivers.
ReportPart data_loading_report(const storage::DataLoadingCheck& c);

}  // namespace fmsim::cli
