// Input pipeline: the read bandwidth a training job needs against what its storage tier delivers.
//
// Required = tokens/s x bytes per token x read amplification (re-reads, shuffling buffers,
// compressed-to-raw ratio < 1 lowers it). Pre-tokenised data stores 2 bytes per token for
// vocabularies under 65,536 and 4 above. The pipeline starves the GPUs when the tier's aggregate
// read rate, or one node's share of it, is below the requirement.
#pragma once

#include <string>

#include "core/units.hpp"
#include "storage/storage_tier.hpp"

namespace fmsim::storage {

struct DataLoadingDemand {
  double tokens_per_s = 0.0;  ///< whole job
  double bytes_per_token = 4.0;
  double read_amplification = 1.0;
  int nodes = 1;
};

struct DataLoadingCheck {
  core::BytesPerSecond required{};  ///< whole job
  core::BytesPerSecond required_per_node{};
  core::BytesPerSecond delivered{};  ///< 0 = unbounded
  core::BytesPerSecond delivered_per_node{};
  double headroom = 0.0;  ///< delivered / required (infinite when unbounded)
  bool starves = false;
  std::string limit;  ///< which bound is tighter
};

/// Bytes per token of pre-tokenised data for a vocabulary of `vocab` entries (2 or 4).
double token_id_bytes(long long vocab);

DataLoadingCheck check_data_loading(const DataLoadingDemand& demand, const TierPerformance& tier);

}  // namespace fmsim::storage
