// Text inputs of the RL model: token counts ("16k"), response-length laws
// ("lognormal:mean=6k,sigma=0.8"), and the rows of validation/rl.csv turned into RL jobs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/vocabulary.hpp"
#include "hardware/catalog.hpp"
#include "rl/lengths.hpp"
#include "rl/rl_step.hpp"
#include "rl/weight_sync.hpp"

namespace fmsim::config {

/// "16384", "16k" (x 1024, the convention of RL recipes: 16k = 16384), "1.5k". InputError naming `flag`.
std::int64_t parse_tokens(const std::string& text, const std::string& flag);

/// "lognormal:mean=6k,sigma=0.8", "fixed:4k", "fixed:mean=4096", "uniform:mean=2k". InputError naming `flag`.
rl::LengthDistribution parse_length_law(const std::string& text, std::int64_t cap, const std::string& flag);

/// Assumptions the validation applies where a row leaves a value unpublished (docs/models/rl.md).
struct RlRowDefaults {
  std::int64_t prompt_len = 256;  ///< math prompts with their template (DAPO-Math-17k, OpenMathInstruct-2)
  /// Unpublished mean response length (tokens), at most half the cap: 1,100, the median of the
  /// G-Average Seq len NeMo-RL publishes for its non-reasoning 8B model on a math dataset where
  /// the cap does not bind (Llama-3.1-8B-Instruct on OpenMathInstruct-2, 4k cap: 1,019-1,129
  /// tokens over 7 rows, validation/rl.csv R061/R062/R072/R074/R075/R084/R085). The earlier 2,048
  /// (the DAPO paper's Qwen2.5-32B length curve) cannot hold for verl's Qwen2.5-Math-7B rows:
  /// R002's update_actor (313.8 s on 16 H20) at the H20's full 148 TFLOP/s, with gradient
  /// checkpointing, bounds the mean trained sequence at about 1.5k tokens.
  double mean_response_tokens = 1100.0;
  double length_sigma = 0.8;  ///< lognormal shape of response lengths
};

/// What a row of validation/rl.csv measured (validation/README.md, "Row types"); rl_step and
/// weight_sync rows are predicted.
enum class RlRowType {
  RlStep,             ///< a whole step, with a phase breakdown where published
  RlComponent,        ///< one phase only
  WeightSync,         ///< a trainer-to-generator weight update
  TrainerMicrobench,  ///< the trainer only
  RunTotal,           ///< wall-clock of a whole run
  RlThroughput,       ///< samples/GPU/s only
  RelativeOnly,       ///< only a ratio was published
  TestTimeCompute,    ///< tokens per problem or best-of-n cost
};
inline constexpr core::Word<RlRowType> kRlRowTypeWordList[] = {
    {RlRowType::RlStep, "rl_step"},
    {RlRowType::RlComponent, "rl_component"},
    {RlRowType::WeightSync, "weight_sync"},
    {RlRowType::TrainerMicrobench, "trainer_microbench"},
    {RlRowType::RunTotal, "run_total"},
    {RlRowType::RlThroughput, "rl_throughput"},
    {RlRowType::RelativeOnly, "relative_only"},
    {RlRowType::TestTimeCompute, "test_time_compute"},
};
inline constexpr core::Vocabulary<RlRowType> kRlRowTypeWords{"rl.csv row type", kRlRowTypeWordList};

/// One row of validation/rl.csv and what the model needs to predict it.
struct RlRow {
  int line = 0;
  RlRowType row_type = RlRowType::RlStep;
  std::string id, source, framework, hardware, model_text, placement_text, sync_text, notes;
  std::optional<double> measured_step_s, measured_gen_s, measured_train_s, measured_sync_s,
      measured_tokens_per_s_per_gpu;
  /// The job when the row can be predicted (rl_step: the whole step; weight_sync: the sync).
  std::optional<rl::RlJob> job;
  std::optional<rl::WeightSyncJob> sync_job;
  std::string skip_reason;  ///< why no job (unnamed GPU, missing batch, unsupported model, ...)
};

/// Reads rl.csv (the columns of validation/README.md). InputError naming file:line on a malformed file.
std::vector<RlRow> load_rl_rows(const std::string& path, const hardware::Catalog& catalog,
                                const RlRowDefaults& defaults = {});

}  // namespace fmsim::config
