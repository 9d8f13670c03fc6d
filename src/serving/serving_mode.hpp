// How a deployment serves: one pool of replicas, or disaggregated prefill and decode pools. The
// plan search (planner/serving_plan.hpp) reports it per plan; validation/inference.csv names it
// per row (config/inference_csv.cpp).
#pragma once

#include "core/vocabulary.hpp"

namespace fmsim::serving {

/// How a plan serves: one pool of replicas, or disaggregated prefill and decode pools.
enum class ServingMode { Aggregated, Disaggregated };
inline constexpr core::Word<ServingMode> kServingModeWordList[] = {
    {ServingMode::Aggregated, "aggregated", "agg"},
    {ServingMode::Disaggregated, "disaggregated", "disagg"},
};
inline constexpr core::Vocabulary<ServingMode> kServingModeWords{"serving mode", kServingModeWordList};

}  // namespace fmsim::serving
