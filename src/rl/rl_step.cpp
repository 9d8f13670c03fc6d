#include "rl/rl_step.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>

#include "collectives/collective.hpp"
#include "collectives/comm_cost.hpp"
#include "core/sim_time.hpp"
#include "serving/iteration_model.hpp"
#include "workload/parameter_count.hpp"

namespace fmsim::rl {

std::string to_string(Algorithm a) { return std::string(kAlgorithmWords.name(a)); }
std::string to_string(Placement p) { return std::string(kPlacementWords.name(p)); }
std::string to_string(Synchrony s) { return std::string(kSynchronyWords.name(s)); }

int auto_generator_tp(const workload::ModelSpec& model, const hardware::ClusterSpec& cluster, core::Precision p,
                      const RlCalibration& cal) {
  const double weights = static_cast<double>(workload::count_parameters(model).total) * core::bytes_per_value(p);
  const double engine = cluster.gpu.hbm_usable.value() * cal.gpu_memory_utilization;
  int tp = 1;
  while (tp < 64 && tp < cluster.gpus() && weights / tp > 0.5 * engine) tp *= 2;
  return tp;
}

core::Seconds pipelined_step(int k, const std::vector<double>& gen, const std::vector<double>& train, double sync) {
  const std::size_t n = std::min(gen.size(), train.size());
  if (n == 0) return core::Seconds(0.0);
  if (n <= 2) return core::Seconds(std::max(gen[n - 1], train[n - 1]) + sync);
  k = std::max(1, k);
  std::vector<double> ready{0.0};  // ready[v]: when version v can be loaded (version 0: at start)
  double gen_free = 0.0, train_free = 0.0, first_done = 0.0;
  std::size_t loaded = 0;
  for (std::size_t b = 0; b < n; ++b) {
    const std::size_t need = b > static_cast<std::size_t>(k) ? b - static_cast<std::size_t>(k) : 0;
    double t = std::max(gen_free, ready[need]);
    std::size_t newest = loaded;
    while (newest + 1 < ready.size() && ready[newest + 1] <= t) ++newest;
    if (newest > loaded) {
      t += sync;  // the generators load the newest weights before this batch
      loaded = newest;
    }
    gen_free = t + gen[b];
    const double end = std::max(train_free, gen_free) + train[b];
    train_free = end + sync;  // the trainer sends version b + 1
    ready.push_back(train_free);
    if (b == 1) first_done = train_free;
  }
  return core::Seconds((train_free - first_done) / static_cast<double>(n - 2));
}

int pipeline_batches() { return 8; }

namespace {

std::string word(Phase p) { return std::string(kPhaseWords.name(p)); }

void emit(engine::TraceSink* trace, const std::string& thread, const std::string& name, double start, double dur,
          std::vector<std::pair<std::string, std::string>> args = {}) {
  if (!trace || dur <= 0.0) return;
  trace->record(engine::TraceEvent{"rl step", thread, name, "compute",
                                   core::SimTime::from_seconds(core::Seconds(start)),
                                   core::SimTime::from_seconds(core::Seconds(dur)), std::move(args)});
}

}  // namespace

RlStepResult estimate_rl_step(const RlJob& job, const training::Calibration& calibration, const RlCalibration& cal,
                              const RolloutEngine& engine, engine::TraceSink* trace) {
  RlStepResult r;
  const int gpus = job.job_gpus();
  const bool colocated = job.placement == Placement::Colocated;
  if (colocated && job.synchrony != Synchrony::OnPolicy) {
    r.reason =
        "off-policy and fully-async training need separate generator and trainer pools (--placement disaggregated)";
    return r;
  }
  r.generator_gpus = colocated ? gpus : (job.generator_gpus > 0 ? job.generator_gpus : gpus / 2);
  r.trainer_gpus = colocated ? gpus : gpus - r.generator_gpus;
  if (r.generator_gpus < 1 || r.trainer_gpus < 1) {
    r.reason = fmt::format("the generator pool ({} GPUs) leaves no trainer GPUs out of {}", r.generator_gpus, gpus);
    return r;
  }
  r.generator_tp = job.generator_tp > 0 ? job.generator_tp
                                        : auto_generator_tp(job.policy, job.cluster, job.generator_precision, cal);
  if (r.generator_tp > r.generator_gpus) r.generator_tp = r.generator_gpus;
  if (r.generator_gpus % r.generator_tp != 0) {
    r.reason = fmt::format("generation TP {} does not divide the {} generator GPUs", r.generator_tp, r.generator_gpus);
    return r;
  }
  r.generator_replicas = r.generator_gpus / r.generator_tp;
  const auto comm = collectives::make_comm_cost(job.cluster);

  // ---- rollout
  const auto kept = job.prompts * job.samples;
  r.responses = static_cast<std::int64_t>(std::llround(static_cast<double>(kept) * std::max(1.0, job.oversample)));
  const GeneratorConfig gen{job.policy,       job.cluster,          r.generator_tp,
                            job.generator_ep, r.generator_replicas, job.generator_precision};
  RolloutRequest req;
  req.prompts =
      static_cast<std::int64_t>(std::llround(static_cast<double>(job.prompts) * std::max(1.0, job.oversample)));
  req.samples_per_prompt = job.samples;
  req.prompt_len = job.prompt_len;
  req.lengths = sample_lengths(job.lengths, r.responses, job.seed);
  req.agent = job.agent;
  // The staleness bound caps the sequences a streaming pool holds: a window and its run-ahead
  // (fully async), k batches (k-step off-policy with refilled slots).
  const bool refill = job.synchrony == Synchrony::OffPolicy && job.refill;
  if (job.synchrony == Synchrony::FullyAsync) {
    req.max_in_flight = static_cast<std::int64_t>(
        std::ceil(static_cast<double>(r.responses) * (1.0 + std::max(0.0, job.staleness_fraction))));
  } else if (refill) {
    req.max_in_flight = r.responses * std::max(1, job.staleness);
  }
  RlCalibration gen_cal = cal;
  if (!colocated) gen_cal.gpu_memory_utilization = cal.gpu_memory_utilization_disaggregated;
  if (job.generator_memory_utilization > 0.0) gen_cal.gpu_memory_utilization = job.generator_memory_utilization;
  r.rollout = engine.generate(gen, req, gen_cal);
  if (!r.rollout.feasible) {
    r.reason = "rollout: " + r.rollout.reason;
    return r;
  }
  r.mean_response = r.rollout.generated_tokens / static_cast<double>(std::max<std::int64_t>(1, r.responses));
  r.truncated_fraction = truncated_fraction(job.lengths);
  r.generated_tokens = r.rollout.generated_tokens;

  // ---- policy update through the training step model
  training::TrainingJob tj;
  tj.model = job.policy;
  tj.cluster = job.cluster;
  // Sequences padded to a multiple of 2 x CP (Megatron's load-balanced context-parallel split).
  const std::int64_t pad = 2 * std::max(1, job.train_layout.cp);
  // Agentic episodes train their observations as context (or one sequence per turn).
  const auto totals = job.agent.is_agentic()
                          ? episode_totals(job.agent, req.lengths, static_cast<double>(r.mean_response))
                          : EpisodeTotals{};
  const auto shape = trained_shape(job.agent, static_cast<double>(job.prompt_len), r.mean_response, totals);
  tj.seq_len = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(shape.tokens_per_sequence)));
  tj.seq_len = (tj.seq_len + pad - 1) / pad * pad;
  tj.task = training::Task::Sft;
  tj.stack = job.stack;
  tj.gpus = r.trainer_gpus;
  auto layout = job.train_layout;
  if (r.trainer_gpus % layout.model_parallel() != 0) {
    r.reason = fmt::format("training layout tp{} pp{} cp{} does not divide the {} trainer GPUs", layout.tp, layout.pp,
                           layout.cp, r.trainer_gpus);
    return r;
  }
  layout = parallelism::with_dp(layout, r.trainer_gpus);
  const std::int64_t unit = static_cast<std::int64_t>(layout.dp) * layout.micro_batch;
  const std::int64_t minis = std::max<std::int64_t>(1, job.mini_batches);
  const auto sequences =
      static_cast<std::int64_t>(std::llround(static_cast<double>(kept) * shape.sequences_per_episode));
  const std::int64_t per_mini = std::max<std::int64_t>(1, (sequences + minis - 1) / minis);
  layout.global_batch = std::max<std::int64_t>(unit, (per_mini + unit - 1) / unit * unit);
  if (auto why = parallelism::why_invalid(job.policy, layout, r.trainer_gpus, tj.seq_len)) {
    r.reason = "training layout: " + *why;
    return r;
  }
  tj.layout = layout;
  tj.expert_load_factor = expert_load_factor(job.policy, layout.ep, cal.expert_load_cv);
  r.train_layout = layout;
  r.train = training::estimate_step(tj, calibration, comm);
  if (!r.train.feasible) {
    r.reason = "training: " + r.train.reason;
    return r;
  }
  // Scale the padded batch back to the responses actually trained.
  const double batch_scale = static_cast<double>(per_mini) / static_cast<double>(layout.global_batch);
  const double update_one = r.train.step_time.value() * batch_scale;
  const double update_one_step = update_one * static_cast<double>(minis) * std::max(1, job.epochs);
  const double fwd_work =
      (r.train.step_time - r.train.breakdown.optimizer - r.train.breakdown.other - r.train.breakdown.dp_comm).value() *
      batch_scale;
  const double fwd_share = layout.recompute == parallelism::Recompute::Full ? 0.25 : 1.0 / 3.0;
  const double forward = fwd_work * fwd_share * static_cast<double>(minis);
  r.trained_tokens = static_cast<double>(sequences) * static_cast<double>(tj.seq_len) * std::max(1, job.epochs);
  r.trained_sequences = static_cast<double>(sequences);
  r.trained_sequence_tokens = static_cast<double>(tj.seq_len);

  const bool ppo = job.algorithm == Algorithm::Ppo;
  const bool reference = job.reference.value_or(job.algorithm != Algorithm::Dapo);
  const double policy_params = static_cast<double>(workload::count_parameters(job.policy).active);
  auto scaled = [&](const std::optional<workload::ModelSpec>& m) {
    return m ? forward * static_cast<double>(workload::count_parameters(*m).active) / policy_params : forward;
  };

  // ---- reward
  double reward = 0.0;
  if (job.reward == RewardKind::Rule) {
    reward = cal.rule_reward_per_sample.value() * static_cast<double>(r.responses) / std::max(1, cal.reward_workers);
  } else {
    reward = scaled(job.reward_model);
  }

  // ---- weight sync
  WeightSyncJob ws;
  ws.model = job.policy;
  ws.cluster = job.cluster;
  ws.generator_precision = job.generator_precision;
  ws.train_layout = layout;
  ws.trainer_gpus = r.trainer_gpus;
  ws.generator_gpus = r.generator_gpus;
  ws.generator_tp = r.generator_tp;
  ws.colocated = colocated;
  ws.method = job.sync_method;
  r.sync = estimate_weight_sync(ws, cal, comm);

  // ---- colocated switch: optimizer states and gradients to host and back, engine sleep/wake
  // (host copies at the x86 hosts' rate, or a Grace host's).
  const double offload_bandwidth =
      (job.cluster.system.cpu_vendor == hardware::CpuVendor::Arm ? cal.offload_bandwidth_grace : cal.offload_bandwidth)
          .value();
  double switch_time = 0.0;
  const double engine_share = gen_cal.gpu_memory_utilization * job.cluster.gpu.hbm_usable.value();
  const bool fits_together = r.train.memory.total().value() + engine_share <= job.cluster.gpu.hbm_usable.value();
  if (colocated && !(job.offload == ColocatedOffload::WhenNeeded && fits_together)) {
    // The optimizer step's fp32 gradient copy is still allocated between steps.
    const auto& tm = r.train.memory;
    const double trainer_state =
        (tm.optimizer + tm.gradients + (tm.optimizer_step_peak ? core::Bytes(0.0) : tm.step_grad)).value();
    switch_time = 2.0 * (trainer_state + r.rollout.weights_per_gpu.value()) / offload_bandwidth;
  }

  // ---- k-step off-policy: a run of batches of independently drawn response lengths (seeds
  // seed+b). The stratified batch's rollout is simulated; a drawn batch's scales with what bounds
  // it: the busy part of the makespan (slots full) with the tokens generated, the tail with the
  // longest response. Training scales with the tokens trained. The phases report the mean batch.
  std::vector<double> gen_scale{1.0}, train_scale{1.0};
  if (job.synchrony == Synchrony::OffPolicy) {
    const auto tokens_of = [](const std::vector<std::int64_t>& ls) {
      double t = 0.0;
      for (const auto l : ls) t += static_cast<double>(l);
      return t;
    };
    const auto longest_of = [](const std::vector<std::int64_t>& ls) {
      return ls.empty() ? 1.0 : static_cast<double>(*std::max_element(ls.begin(), ls.end()));
    };
    // Scales are relative to the stratified batch the rollout simulated (the expected batch).
    const double gen0 = std::max(1.0, tokens_of(req.lengths)), long0 = std::max(1.0, longest_of(req.lengths));
    const double prompt_tokens = static_cast<double>(r.responses * job.prompt_len);
    // Refilled slots never drain: a batch's generation scales with its tokens alone.
    const double busy = refill ? 1.0 : std::clamp(r.rollout.busy_fraction, 0.0, 1.0);
    gen_scale.clear();
    train_scale.clear();
    for (int b = 0; b < pipeline_batches(); ++b) {
      const auto lengths = draw_lengths(job.lengths, r.responses, job.seed + static_cast<std::uint64_t>(b));
      const double tokens = tokens_of(lengths);
      gen_scale.push_back(busy * tokens / gen0 + (1.0 - busy) * longest_of(lengths) / long0);
      train_scale.push_back((tokens + prompt_tokens) / (gen0 + prompt_tokens));
    }
  }
  const auto mean = [](const std::vector<double>& v) {
    return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  };
  const double gen_mean = mean(gen_scale), train_mean = mean(train_scale);

  // ---- phases
  // Streaming: the pool's slots are refilled as responses finish, at most max_in_flight at once.
  const double stream_rate =
      r.rollout.stream_tokens_per_s > 0.0 ? r.rollout.stream_tokens_per_s : r.rollout.full_rate_tokens_per_s;
  const double stream_time = r.generated_tokens / std::max(1.0, stream_rate);
  // Drained to the longest response (on-policy, off-policy without refill), or streamed.
  const double gen_base = refill ? stream_time : r.rollout.makespan.value();
  const double rollout_time = gen_base * gen_mean;
  // Fully async: the run-ahead (staleness_fraction x the window's samples) refills the slots that
  // drain in a window's tail with the next window's prompts; what it cannot refill leaves that
  // share of the tail (makespan - stream) exposed. All of it at staleness 0 (the generators stop
  // at the window's quota), none once the run-ahead covers the sequences in flight.
  double tail_exposed = 0.0;
  double async_gen = stream_time;
  if (job.synchrony == Synchrony::FullyAsync) {
    const double window = static_cast<double>(r.responses);
    const double in_flight = std::min(window, static_cast<double>(r.rollout.concurrency) * r.generator_replicas);
    const double hidden =
        std::clamp(std::max(0.0, job.staleness_fraction) * window / std::max(1.0, in_flight), 0.0, 1.0);
    tail_exposed = 1.0 - hidden;
    async_gen = stream_time + tail_exposed * std::max(0.0, r.rollout.makespan.value() - stream_time);
  }
  const double gen_phase = (job.synchrony == Synchrony::FullyAsync ? async_gen : rollout_time) + reward;
  const double old_lp = job.rollout_logprobs ? 0.0 : forward * train_mean;
  const double ref = reference || ppo ? scaled(std::nullopt) * train_mean : 0.0;
  const double critic_fwd = ppo ? scaled(job.critic) * train_mean : 0.0;
  const double update = update_one_step * train_mean;
  const double critic_update =
      ppo ? update *
                (job.critic ? static_cast<double>(workload::count_parameters(*job.critic).active) / policy_params : 1.0)
          : 0.0;
  // What the trainer keeps in host memory (verl's param/optimizer offload) is loaded before each
  // training phase and offloaded after it: the update moves the master parameters and optimizer
  // states (and gradient buffers) in and out, every log-prob forward the parameters of its model.
  double trainer_offload = 0.0;
  if (job.trainer_offload != TrainerOffload::None) {
    const auto& m = r.train.memory;
    double update_bytes = m.weights.value() + m.optimizer.value();
    if (job.trainer_offload == TrainerOffload::ParamsGradsOptimizer) update_bytes += m.gradients.value();
    const double forwards = (old_lp > 0.0 ? 1.0 : 0.0) + (ref > 0.0 ? 1.0 : 0.0) + (critic_fwd > 0.0 ? 1.0 : 0.0);
    const double updates = 1.0 + (critic_update > 0.0 ? 1.0 : 0.0);
    trainer_offload = 2.0 * (updates * update_bytes + forwards * m.weights.value()) / offload_bandwidth;
    // The trainer's states are already in host memory when the engine wakes: the colocated switch
    // moves only the engine's weights (vLLM sleep and wake-up).
    if (colocated) switch_time = 2.0 * r.rollout.weights_per_gpu.value() / offload_bandwidth;
  }
  const double train_phase = old_lp + ref + critic_fwd + update + critic_update + trainer_offload;
  const double overhead = cal.step_overhead.value();

  double step = 0.0, stall = 0.0;
  const bool overlapped = job.synchrony != Synchrony::OnPolicy;
  if (job.synchrony == Synchrony::OffPolicy) {
    // Batches of uneven length stall the pipeline beyond the mean batch's max(generation, training).
    std::vector<double> gens, trains;
    for (std::size_t b = 0; b < gen_scale.size(); ++b) {
      gens.push_back(gen_base * gen_scale[b] + reward);
      trains.push_back(train_phase / train_mean * train_scale[b]);
    }
    const double pipe = pipelined_step(job.staleness, gens, trains, r.sync.total.value()).value();
    stall = std::max(0.0, pipe - (std::max(gen_phase, train_phase) + r.sync.total.value()));
    step = std::max(gen_phase, train_phase) + r.sync.total.value() + stall + overhead;
    r.trainer_wait = core::Seconds(std::max(0.0, gen_phase - train_phase) + stall);
  } else if (overlapped) {
    // Fully async: the trainer takes each mini-batch as its samples arrive. The last one of a
    // window waits for the window's last sample where the tail is exposed (no run-ahead to
    // train on meanwhile); the trainer's wait (verl's async "gen") is what it idles per window.
    const double last_mini = tail_exposed * train_phase / static_cast<double>(std::max<std::int64_t>(1, minis));
    const double window = std::max(gen_phase + last_mini, train_phase);
    stall = window - std::max(gen_phase, train_phase);
    step = window + r.sync.total.value() + overhead;
    r.trainer_wait = core::Seconds(window - train_phase);
  } else {
    step = gen_phase + train_phase + r.sync.total.value() + switch_time + overhead;
    r.trainer_wait = core::Seconds(gen_phase);
  }
  r.step_time = core::Seconds(step);

  const double g = gpus;
  const auto mem_gen =
      r.rollout.weights_per_gpu + r.rollout.peak_kv_per_gpu + (colocated ? r.train.memory.weights : core::Bytes(0.0));
  const auto mem_train = r.train.memory.total();
  auto add = [&](Phase phase, double t, double exposed, int on_gpus, double busy, core::Bytes mem) {
    if (t <= 0.0) return;
    r.phases.push_back(PhaseResult{phase, core::Seconds(t), core::Seconds(exposed), on_gpus, busy * on_gpus / g, mem});
  };
  // Overlapped pools: the longer of generation (+ reward) and training is on the critical path,
  // the other is hidden behind it.
  const bool gen_critical = !overlapped || gen_phase >= train_phase;
  const bool train_critical = !overlapped || gen_phase < train_phase;
  const double gen_time = job.synchrony == Synchrony::FullyAsync ? async_gen : rollout_time;
  add(Phase::Rollout, gen_time, gen_critical ? gen_time : 0.0, r.generator_gpus,
      job.synchrony == Synchrony::FullyAsync || refill ? 1.0 : r.rollout.busy_fraction, mem_gen);
  add(Phase::Reward, reward, gen_critical ? reward : 0.0, job.reward == RewardKind::Rule ? 0 : r.trainer_gpus, 1.0,
      mem_train);
  auto add_train = [&](Phase phase, double t) {
    add(phase, t, train_critical ? t : 0.0, r.trainer_gpus, 1.0, mem_train);
  };
  add_train(Phase::OldLogProb, old_lp);
  add_train(Phase::Reference, ref);
  add_train(Phase::CriticValues, critic_fwd);
  add_train(Phase::PolicyUpdate, update);
  add_train(Phase::CriticUpdate, critic_update);
  add(Phase::WeightSync, r.sync.total.value(), r.sync.total.value(), gpus, 1.0, r.rollout.weights_per_gpu);
  add_train(Phase::TrainerOffload, trainer_offload);
  add(Phase::OffloadReload, switch_time, switch_time, gpus, 1.0, mem_train);
  add(Phase::PipelineStall, stall, stall, 0, 0.0, core::Bytes(0.0));
  add(Phase::Overhead, overhead, overhead, 0, 0.0, core::Bytes(0.0));
  double busy = 0.0;
  for (const auto& p : r.phases) busy += p.utilisation * p.time.value();
  r.gpu_utilisation = step > 0.0 ? std::min(1.0, busy / step) : 0.0;
  r.generated_tokens_per_s = r.generated_tokens / step;
  r.trained_tokens_per_s = r.trained_tokens / step;
  r.run_time = r.step_time * static_cast<double>(std::max<std::int64_t>(1, job.steps));
  const double price_per_gpu_h = job.cluster.price_per_hour_usd() / std::max(1, job.cluster.gpus());
  r.cost_per_step_usd = price_per_gpu_h * g * step / 3600.0;
  r.run_cost_usd = r.cost_per_step_usd * static_cast<double>(std::max<std::int64_t>(1, job.steps));
  r.feasible = true;

  if (trace) {
    double t = 0.0;
    const std::string gen_thread = colocated ? "all GPUs" : fmt::format("generators ({} GPUs)", r.generator_gpus);
    const std::string train_thread = colocated ? "all GPUs" : fmt::format("trainers ({} GPUs)", r.trainer_gpus);
    emit(trace, gen_thread, word(Phase::Rollout), 0.0, gen_time,
         {{"responses", std::to_string(r.responses)}, {"replicas", std::to_string(r.generator_replicas)}});
    for (const auto& s : r.rollout.segments) {
      emit(trace, "generator replica (longest response)", fmt::format("batch {}", s.batch), s.start_s,
           s.end_s - s.start_s, {{"batch", std::to_string(s.batch)}});
    }
    emit(trace, gen_thread, word(Phase::Reward), gen_time, reward);
    t = overlapped ? 0.0 : gen_phase;
    if (colocated) {
      emit(trace, train_thread, word(Phase::OffloadReload), t, switch_time);
      t += switch_time;
    }
    for (const auto& [phase, dur] : std::vector<std::pair<Phase, double>>{{Phase::OldLogProb, old_lp},
                                                                          {Phase::Reference, ref},
                                                                          {Phase::CriticValues, critic_fwd},
                                                                          {Phase::PolicyUpdate, update},
                                                                          {Phase::CriticUpdate, critic_update},
                                                                          {Phase::TrainerOffload, trainer_offload}}) {
      emit(trace, train_thread, word(phase), t, dur);
      t += dur;
    }
    const double sync_at = overlapped ? std::max(gen_phase, train_phase) : t;
    emit(trace, "weight sync", word(Phase::WeightSync), sync_at, r.sync.total.value(),
         {{"path", r.sync.path}, {"method", to_string(job.sync_method)}});
  }
  return r;
}

core::Seconds phase_time(const RlStepResult& r, Phase phase) {
  for (const auto& p : r.phases) {
    if (p.phase == phase) return p.time;
  }
  return core::Seconds(0.0);
}

}  // namespace fmsim::rl
