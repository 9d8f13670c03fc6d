// DRA lazy load and export (model in data_repository.hpp).
#include "storage/data_repository.hpp"

namespace fmsim::storage {
namespace {

// The slower of two rates, where 0 means unbounded; `name` says which one won.
core::BytesPerSecond slower(core::BytesPerSecond a, const char* a_name, core::BytesPerSecond b, const char* b_name,
                            std::string& name) {
  if (a.value() <= 0.0) {
    name = b_name;
    return b;
  }
  if (b.value() <= 0.0 || a <= b) {
    name = a_name;
    return a;
  }
  name = b_name;
  return b;
}

}  // namespace

LazyLoadEstimate estimate_lazy_load(core::Bytes dataset, const TierPerformance& fsx, const TierPerformance& s3) {
  LazyLoadEstimate e;
  const core::BytesPerSecond s3_rate(s3.read_requests_per_s * s3.request_size.value());
  e.rate = slower(s3_rate, "s3 request rate", fsx.aggregate_write, "fsx throughput", e.limit);
  e.time = e.rate.value() > 0.0 ? dataset / e.rate : core::Seconds(0.0);
  return e;
}

ExportEstimate estimate_export(core::Bytes checkpoint, core::Seconds save_time, core::Seconds interval,
                               const TierPerformance& fsx, const TierPerformance& s3) {
  ExportEstimate e;
  const core::BytesPerSecond s3_rate(s3.write_requests_per_s * s3.request_size.value());
  e.rate = slower(s3_rate, "s3 request rate", fsx.aggregate_read, "fsx throughput", e.limit);
  e.export_time = e.rate.value() > 0.0 ? checkpoint / e.rate : core::Seconds(0.0);
  e.interval = interval;
  e.utilisation = interval.value() > 0.0 ? (save_time + e.export_time) / interval : 0.0;
  e.keeps_up = e.utilisation <= 1.0;
  return e;
}

}  // namespace fmsim::storage
