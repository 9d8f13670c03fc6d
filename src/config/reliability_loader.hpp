// Failure models, recovery defaults and checkpoint-engine defaults from data/reliability/*.yaml
// (and user files in the same format). The checkpointed job and the goodput scenario built from
// flags are in src/jobspec (checkpoint.hpp, goodput.hpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "reliability/failure_model.hpp"
#include "reliability/goodput.hpp"
#include "storage/checkpoint_io.hpp"
#include "storage/storage_tier.hpp"

namespace fmsim::config {

/// A published fleet-wide failure rate (e.g. Meta RSC-1: 6.5 per 1000 node-days).
struct NamedRate {
  std::string name;
  double per_node_hour = 0.0;
  std::string source;
};

/// Everything in failures.yaml.
struct FailureData {
  std::vector<reliability::FailureModel> models;
  std::vector<NamedRate> rates;
  reliability::RecoveryCosts recovery;
};

/// The shipped data/reliability/failures.yaml, with `user_file` (same format; a model or rate
/// with an existing name replaces it, recovery values override) applied on top when given.
/// Throws core::InputError naming file:line: field on bad input.
FailureData load_failure_data(const std::string& user_file = "", const std::string& flag = "--failures");

/// Parses failures.yaml-formatted text (`file` names it in messages).
FailureData parse_failure_data(std::string_view text, const std::string& file);

/// The model called `name`; InputError on `flag` with the closest names otherwise.
const reliability::FailureModel& find_failure_model(const FailureData& data, const std::string& name,
                                                    const std::string& flag);

/// Everything in checkpointing.yaml.
struct CheckpointDefaults {
  double bytes_per_param = 14.0;
  double weight_bytes_per_param = 2.0;
  storage::CheckpointEngine engine;
  storage::TierOptions client;
};

CheckpointDefaults load_checkpoint_defaults();
CheckpointDefaults parse_checkpoint_defaults(std::string_view text, const std::string& file);

/// A failure rate per 1000 node-days ("6.5") or the name of a published rate ("meta-rsc1").
double parse_node_failure_rate(const FailureData& data, const std::string& text, const std::string& flag);

}  // namespace fmsim::config
