// `fmsim serve`'s run: the replica's iteration model over the deployment's collectives, the
// requests checked against it, then played on one replica, a routed fleet or disaggregated pools.
// What the command prints of it is documents/serve.hpp's.
#pragma once

#include <vector>

#include "jobspec/serving.hpp"
#include "serving/iteration_model.hpp"
#include "serving/simulator.hpp"
#include "serving/workload.hpp"

namespace fmsim::jobspec {

/// A serve job ready to play: one replica's iteration model and the workload's requests.
struct ServeJob {
  serving::IterationModel model;
  std::vector<serving::Request> requests;
};

/// The iteration model (collectives priced on the deployment's cluster) and the requests; an
/// InputError when a request asks for no output token or can never fit the KV cache
/// (`from_trace`: the requests came from --requests-file, which the message names).
ServeJob prepare_serve(const ServingSetup& setup, bool from_trace);

/// What a serve run produced.
struct ServeRun {
  serving::ServeResult result;
  serving::ServeSummary summary;           ///< against the setup's SLO and price
  std::vector<engine::TraceEvent> events;  ///< spans when traced (engine/trace.hpp comes with serving/simulator.hpp)
};

/// Plays the job on `fleet`: disaggregated pools when it has prefill instances, a routed fleet of
/// replicas when it has several, else one replica; keeps the trace events when `trace`.
ServeRun run_serve(const ServingSetup& setup, const ServeJob& job, const ServeFleet& fleet, bool trace);

}  // namespace fmsim::jobspec
