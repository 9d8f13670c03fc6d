// FSx for Lustre data repository associations (DRA) with S3: lazy loading of a dataset on first
// read, and automatic export of checkpoints written to Lustre back to S3 in the background.
//
// Lazy load: file metadata is imported up front; the first read of each file makes the file
// servers fetch it from S3 and write it to Lustre, so the first pass runs at
// min(S3 GET rate x request size, FSx disk throughput). Later reads hit Lustre.
// Export: each new checkpoint is read from Lustre and PUT to S3 at
// min(FSx throughput, S3 PUT rate x part size); it shares the file system's disk throughput with
// the next checkpoint's writes, so it keeps up when save time + export time <= interval.
// Source: FSx for Lustre user guide, "Linking your file system to an S3 bucket" [FSX-DRA].
// Assumption: the file servers fetch and export with enough concurrency to reach those limits
// (an upper bound on the rate; AWS publishes no DRA throughput figure).
#pragma once

#include <string>

#include "core/units.hpp"
#include "storage/storage_tier.hpp"

namespace fmsim::storage {

struct LazyLoadEstimate {
  core::BytesPerSecond rate{};  ///< first-read throughput
  core::Seconds time{};         ///< to read the whole dataset once
  std::string limit;            ///< "s3 request rate" or "fsx throughput"
};

/// First full read of `dataset` through `fsx`, fetched lazily from `s3`.
LazyLoadEstimate estimate_lazy_load(core::Bytes dataset, const TierPerformance& fsx, const TierPerformance& s3);

struct ExportEstimate {
  core::BytesPerSecond rate{};
  core::Seconds export_time{};  ///< to copy one checkpoint to S3
  core::Seconds interval{};     ///< time between checkpoints
  double utilisation = 0.0;     ///< (save + export) / interval; above 1 the backlog grows
  bool keeps_up = true;
  std::string limit;
};

/// Background export of a `checkpoint` written every `interval` (taking `save_time` on Lustre).
ExportEstimate estimate_export(core::Bytes checkpoint, core::Seconds save_time, core::Seconds interval,
                               const TierPerformance& fsx, const TierPerformance& s3);

}  // namespace fmsim::storage
