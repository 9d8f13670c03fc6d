// Serving deployments of `fmsim cluster` (--deployments FILE, --deployment KEY=VALUE,...): one
// vocabulary of keys for both, the names of `fmsim serve`'s flags (model, engine, tp, precision,
// isl, osl, rate, slo-ttft, slo-tpot, cold-start) and the cluster's own (shape, trough, peak-hour,
// rate-csv, target-utilisation, scale-up-delay, scale-down-delay, min-replicas, max-replicas,
// share, nodes). Errors are core::InputError naming file:line: field (or the flag) and what is
// allowed.
//
//   deployments:
//     - name: chat
//       model: llama3.1-70b
//       tp: 8
//       rate: 40            # requests/s at the daily peak
//       shape: diurnal      # or constant; or rate-csv: FILE (time_s,rate)
//       slo-ttft: 2s
//       slo-tpot: 100ms
//       max-replicas: 32
#pragma once

#include <string>
#include <vector>

#include "core/vocabulary.hpp"
#include "orchestration/serving_fleet.hpp"

namespace fmsim::config {

/// How a deployment's offered rate varies.
enum class RateShape {
  Constant,  ///< `rate` all the time
  Diurnal,   ///< a daily cosine from `rate` at peak-hour down to rate x trough 12 hours away
  Csv,       ///< rate-csv: the file's (time_s, rate) steps
};
inline constexpr core::Word<RateShape> kRateShapeWordList[] = {
    {RateShape::Constant, "constant"},
    {RateShape::Diurnal, "diurnal"},
    {RateShape::Csv, "csv"},
};
inline constexpr core::Vocabulary<RateShape> kRateShapeWords{"rate shape", kRateShapeWordList};

/// One deployment as written; jobspec resolves it against the catalog and the serving model.
struct DeploymentEntry {
  std::string source;  ///< file, or "--deployment"
  int line = 0;        ///< of the entry in the file (0 for a flag)
  std::string name;
  std::string model = "llama3.1-8b";
  std::string engine = "vllm";
  std::string precision = "bf16";
  int tp = 1;
  double isl = 1024, osl = 256;    ///< tokens
  std::string slo_ttft, slo_tpot;  ///< as `fmsim serve --slo-ttft/--slo-tpot`; "" = unbounded
  std::string cold_start = "s3";   ///< a storage tier of the catalog
  double rate = 0;                 ///< requests/s (diurnal: at the peak)
  RateShape shape = RateShape::Constant;
  double trough = 0.3;                          ///< diurnal: lowest rate / peak rate
  double peak_hour = 14;                        ///< diurnal: hour of the day of the peak
  std::vector<orchestration::Step> rate_steps;  ///< rate-csv
  std::string rate_csv;                         ///< its file
  orchestration::Autoscaling autoscaling{.target_utilisation = 0.7,
                                         .scale_up_delay_s = 60,
                                         .scale_down_delay_s = 600,
                                         .min_replicas = 1,
                                         .max_replicas = 0};  ///< max 0 = what the peak rate needs
  orchestration::FleetShare share = orchestration::FleetShare::Preempt;
  int nodes = 0;  ///< share reserved: nodes set aside
  /// How long a request waits at the router for a replica before it gives up: NGINX's
  /// proxy_read_timeout default, 60 s (nginx.org ngx_http_proxy_module; the NGINX Ingress
  /// Controller's nginx.org/proxy-read-timeout default), the gateway in front of most deployments.
  double queue_timeout_s = 60;
};

/// The keys an entry accepts.
const std::vector<std::string>& deployment_keys();

/// Reads a deployments file: a list under `deployments:` (or a bare list) of entries.
std::vector<DeploymentEntry> load_deployments_file(const std::string& path);

/// One --deployment value: KEY=VALUE pairs separated by commas.
DeploymentEntry parse_deployment_flag(const std::string& text);

/// A rate CSV: a header with time_s (or time) and rate columns, rows of seconds from the start and
/// requests/s, times ascending from 0.
std::vector<orchestration::Step> parse_rate_csv(const std::string& text, const std::string& file);

}  // namespace fmsim::config
