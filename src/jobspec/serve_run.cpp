// `fmsim serve`'s run (jobspec/serve_run.hpp).
#include "jobspec/serve_run.hpp"

#include "collectives/comm_cost.hpp"

namespace fmsim::jobspec {

ServeJob prepare_serve(const ServingSetup& setup, bool from_trace) {
  ServeJob job{serving::IterationModel(setup.deployment, collectives::make_comm_cost(setup.deployment.cluster)),
               serving::make_requests(setup.workload)};
  check_output_tokens(job.requests, from_trace);
  check_requests_fit(job.requests, job.model, from_trace);
  return job;
}

ServeRun run_serve(const ServingSetup& setup, const ServeJob& job, const ServeFleet& fleet, bool trace) {
  engine::TraceBuffer buffer;
  engine::TraceSink* sink = trace ? &buffer : nullptr;
  const auto& m = job.model;
  auto result = fleet.prefill > 0 ? serving::simulate_disaggregated(m, m, fleet.dis, setup.workload, job.requests, sink)
                : fleet.instances > 1
                    ? serving::simulate_fleet(m, setup.workload, job.requests, fleet.instances, fleet.router, sink)
                    : serving::simulate(m, setup.workload, job.requests, sink);
  auto summary = serving::summarize(result, setup.slo, setup.price_per_gpu_hour);
  return {std::move(result), std::move(summary), buffer.events()};
}

}  // namespace fmsim::jobspec
