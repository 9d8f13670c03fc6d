#include "rl/rollout.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "collectives/comm_cost.hpp"
#include "serving/iteration_model.hpp"
#include "serving/simulator.hpp"
#include "serving/workload.hpp"

namespace fmsim::rl {

namespace {

/// vLLM on Blackwell runs its iterations slower than the serving model's Blackwell kernels
/// (RlCalibration::vllm_blackwell_iteration_factor): every duration of the rollout stretches.
void stretch_for_engine(const std::string& engine, const GeneratorConfig& gen, const RlCalibration& cal,
                        RolloutResult& r) {
  const auto arch = gen.cluster.gpu.architecture;
  if (engine == "vllm" &&
      (arch == hardware::Architecture::Blackwell || arch == hardware::Architecture::BlackwellUltra)) {
    const double f = std::max(1e-6, cal.vllm_blackwell_iteration_factor);
    r.makespan = r.makespan * f;
    r.full_rate_tokens_per_s /= f;
    r.stream_tokens_per_s /= f;
    r.prefill_tokens_per_s /= f;
    for (auto& sg : r.segments) {
      sg.start_s *= f;
      sg.end_s *= f;
    }
  }
}

}  // namespace

ServingRolloutEngine::ServingRolloutEngine(serving::ServingCalibration calibration, std::string engine)
    : calibration_(std::move(calibration)), engine_(std::move(engine)) {}

RolloutResult ServingRolloutEngine::generate(const GeneratorConfig& gen, const RolloutRequest& req,
                                             const RlCalibration& cal) const {
  RolloutResult r;
  const auto* profile = calibration_.engine(engine_);
  if (profile == nullptr) {
    r.reason = "no engine profile '" + engine_ + "' in the serving calibration";
    return r;
  }
  // One replica: TP within an NVLink domain, pipeline stages across domains beyond it.
  const int tp_total = std::max(1, gen.tp);
  const int domain = std::max(1, gen.cluster.system.nvlink_domain_gpus);
  serving::Deployment d;
  d.model = gen.model;
  d.tp = std::min(tp_total, domain);
  d.pp = std::max(1, tp_total / d.tp);
  d.ep = std::max(1, gen.ep);
  d.weights = gen.precision;
  d.kv = gen.precision;
  d.engine = *profile;
  d.engine.gpu_memory_utilization = cal.gpu_memory_utilization;
  d.engine.max_num_seqs = cal.max_num_seqs;
  d.gpu_cal = calibration_.gpu(gen.cluster.gpu.architecture);
  d.moe_cal = calibration_.moe;
  d.cluster = gen.cluster;
  const int per_node = std::max(1, gen.cluster.system.gpus_per_node);
  d.cluster.count = std::max(1, (d.gpus() + per_node - 1) / per_node);
  r.pipeline_stages = d.pp;
  if (auto why = serving::why_invalid(d); !why.empty()) {
    r.reason = why;
    return r;
  }
  const serving::IterationModel model(d, collectives::make_comm_cost(d.cluster));
  const auto& mem = model.memory();
  r.weights_per_gpu = mem.weights;
  if (mem.kv_cache.value() <= 0.0) {
    r.reason = fmt::format(
        "the weights ({:.1f} GB per GPU) leave no KV cache within gpu_memory_utilization {}; "
        "raise the generation TP",
        mem.weights.value() / 1e9, cal.gpu_memory_utilization);
    return r;
  }

  const int replicas = std::max(1, gen.replicas);
  const int samples = std::max(1, req.samples_per_prompt);
  const std::size_t n = req.lengths.size();
  const std::size_t prompts = (n + static_cast<std::size_t>(samples) - 1) / static_cast<std::size_t>(samples);
  double total = 0.0;
  std::size_t longest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    total += static_cast<double>(req.lengths[i]);
    if (req.lengths[i] > req.lengths[longest]) longest = i;
  }
  // A sequence larger than the whole KV cache never completes: the engine's scheduler would wait
  // for room that never comes.
  if (n > 0) {
    const double longest_seq = static_cast<double>(req.prompt_len) + static_cast<double>(req.lengths[longest]);
    if (longest_seq > mem.token_capacity) {
      r.reason = fmt::format(
          "a sequence of {:.0f} tokens (prompt {} + response {}) does not fit the KV cache of one "
          "generator replica ({:.0f} tokens); raise the generation TP or shorten the prompt or the responses",
          longest_seq, req.prompt_len, req.lengths[longest], static_cast<double>(mem.token_capacity));
      return r;
    }
  }
  const double mean_len = n ? total / static_cast<double>(n) : 0.0;
  r.generated_tokens = total;
  r.prefill_tokens = static_cast<double>(prompts) * static_cast<double>(req.prompt_len);

  // Sequences one replica holds at once: max_num_seqs, or what the KV cache fits at the mean length.
  const double per_seq = static_cast<double>(req.prompt_len) + mean_len;
  r.concurrency =
      static_cast<int>(std::max(1.0, std::min<double>(cal.max_num_seqs, mem.token_capacity / std::max(1.0, per_seq))));

  // Streaming rates of the whole pool: decode with every slot busy (each sequence halfway), and
  // prefill at the engine's token budget.
  {
    const auto decode_rate = [&](int seqs) {
      serving::BatchWork w;
      w.decode_seqs = seqs;
      w.decode_ctx_full = seqs * (static_cast<double>(req.prompt_len) + mean_len / 2.0);
      w.decode_ctx_window = w.decode_ctx_full;
      w.sampled = seqs;
      return replicas * seqs / model.iteration(w).total().value();
    };
    r.full_rate_tokens_per_s = decode_rate(r.concurrency);
    // Within the staleness bound the replicas share the sequences in flight.
    int stream_seqs = r.concurrency;
    if (req.max_in_flight > 0) {
      const auto per_replica = (req.max_in_flight + replicas - 1) / replicas;
      stream_seqs = static_cast<int>(std::clamp<std::int64_t>(per_replica, 1, r.concurrency));
    }
    r.stream_tokens_per_s = stream_seqs == r.concurrency ? r.full_rate_tokens_per_s : decode_rate(stream_seqs);
    serving::BatchWork p;
    p.prefill_tokens = d.engine.max_num_batched_tokens;
    p.prefill_seqs =
        std::max(1, static_cast<int>(d.engine.max_num_batched_tokens / std::max<std::int64_t>(1, req.prompt_len)));
    p.prefill_attn_full = static_cast<double>(p.prefill_tokens) * static_cast<double>(req.prompt_len) / 2.0;
    p.prefill_attn_window = p.prefill_attn_full;
    p.sampled = p.prefill_seqs;
    r.prefill_tokens_per_s = replicas * p.prefill_tokens / model.iteration(p).total().value();
  }
  if (n == 0) {
    r.feasible = true;
    return r;
  }

  // The replica holding the longest response: prompts round-robin, prompt p on replica p % replicas.
  const std::size_t mine = (longest / static_cast<std::size_t>(samples)) % static_cast<std::size_t>(replicas);
  if (req.agent.is_agentic()) return generate_agentic(model, d, req, cal, r, mine, replicas, mean_len, gen);
  std::vector<serving::Request> reqs;
  for (std::size_t p = mine; p < prompts; p += static_cast<std::size_t>(replicas)) {
    serving::Request q;
    q.id = static_cast<int>(reqs.size());
    q.input_tokens = req.prompt_len;
    for (std::size_t s = p * samples; s < std::min(n, (p + 1) * samples); ++s)
      q.output_tokens.push_back(req.lengths[s]);
    reqs.push_back(std::move(q));
  }
  serving::WorkloadSpec ws;
  ws.arrival = serving::ArrivalKind::Offline;
  ws.num_requests = static_cast<int>(reqs.size());
  ws.samples_per_prompt = samples;
  const auto sim = serving::simulate(model, ws, reqs);
  if (!sim.fits) {
    r.reason = sim.reason;
    return r;
  }
  r.makespan = sim.duration;
  r.events = sim.iterations.size();
  double busy = 0.0, kv_peak = 0.0;
  BatchSegment seg;
  double start = 0.0;
  for (const auto& it : sim.iterations) {
    busy += it.running * it.duration.value();
    kv_peak = std::max(kv_peak, it.kv_usage);
    const double begin = (it.time - it.duration).value();
    if (it.running != seg.batch && seg.batch > 0) {
      seg.end_s = begin;
      r.segments.push_back(seg);
      seg.batch = 0;
    }
    if (seg.batch == 0) {
      seg.batch = it.running;
      start = begin;
      seg.start_s = start;
    }
    seg.end_s = it.time.value();
  }
  if (seg.batch > 0) r.segments.push_back(seg);
  r.busy_fraction = sim.duration.value() > 0.0 ? busy / (r.concurrency * sim.duration.value()) : 0.0;
  r.busy_fraction = std::min(1.0, r.busy_fraction);
  r.peak_kv_per_gpu = core::Bytes(kv_peak * std::max(0.0, mem.kv_cache.value()));
  r.feasible = true;
  stretch_for_engine(engine_, gen, cal, r);
  return r;
}

RolloutResult ServingRolloutEngine::generate_agentic(const serving::IterationModel& model, const serving::Deployment& d,
                                                     const RolloutRequest& req, const RlCalibration& cal,
                                                     RolloutResult r, std::size_t mine, int replicas, double mean_len,
                                                     const GeneratorConfig& gen) const {
  (void)d;
  const auto& a = req.agent;
  const int samples = std::max(1, req.samples_per_prompt);
  const std::size_t n = req.lengths.size();
  const std::size_t prompts = (n + static_cast<std::size_t>(samples) - 1) / static_cast<std::size_t>(samples);
  r.episode = episode_totals(a, req.lengths, mean_len);
  r.prefill_tokens = static_cast<double>(prompts) * static_cast<double>(req.prompt_len) +
                     static_cast<double>(n) * r.episode.observation_tokens;
  // This replica's episodes: its prompts' samples, in arrival order.
  std::vector<std::int64_t> mine_lengths;
  for (std::size_t p = mine; p < prompts; p += static_cast<std::size_t>(replicas))
    for (std::size_t s = p * samples; s < std::min(n, (p + 1) * samples); ++s) mine_lengths.push_back(req.lengths[s]);
  const auto per_replica = [&](std::int64_t pool) {
    return pool > 0 ? static_cast<int>(std::max<std::int64_t>(1, (pool + replicas - 1) / replicas)) : 0;
  };
  // Episodes in flight: the cap on agents, and the staleness bound of asynchronous training.
  int in_flight = per_replica(a.max_agents);
  if (const int bound = per_replica(req.max_in_flight); bound > 0)
    in_flight = in_flight > 0 ? std::min(in_flight, bound) : bound;
  auto episodes = make_episodes(a, req.prompt_len, mine_lengths, mean_len, static_cast<std::uint64_t>(mine) + 1);
  // Fewer tool slots than replicas: each replica holds one slot a share tool_concurrency / replicas
  // of the time, so its calls take replicas / tool_concurrency times as long (the fluid limit).
  int tool_slots = per_replica(a.tool_concurrency);
  if (a.tool_concurrency > 0 && a.tool_concurrency < replicas) {
    const double stretch = static_cast<double>(replicas) / static_cast<double>(a.tool_concurrency);
    for (auto& e : episodes)
      for (auto& s : e.tool_s) s *= stretch;
    tool_slots = 1;
  }
  const auto sim = simulate_agentic_replica(model, episodes, in_flight, tool_slots);
  if (!sim.fits) {
    r.reason = sim.reason;
    return r;
  }
  r.makespan = sim.makespan;
  r.events = sim.iterations;
  r.tool_seconds = sim.tool_seconds;
  const auto& mem = model.memory();
  r.peak_kv_per_gpu = core::Bytes(std::min(1.0, sim.peak_kv_tokens / std::max(1.0, mem.token_capacity)) *
                                  std::max(0.0, mem.kv_cache.value()));
  r.engine_idle_seconds = sim.engine_idle_seconds;
  for (const auto& st : sim.steps) r.segments.push_back({st.start_s, st.end_s, st.running});
  const int slots =
      in_flight > 0 ? std::min(in_flight, static_cast<int>(episodes.size())) : static_cast<int>(episodes.size());
  r.concurrency = std::max(1, std::min(slots, d.engine.max_num_seqs));
  r.busy_fraction = sim.makespan.value() > 0.0
                        ? std::min(1.0, sim.busy_sequence_seconds / (r.concurrency * sim.makespan.value()))
                        : 0.0;
  // Streaming rates: episodes cycling through turns and tool calls (agentic_stream_rate), every
  // slot refilled; within the staleness bound at most max_in_flight episodes at once.
  const double turn_tokens = mean_len / std::max(1.0, r.episode.turns);
  const double tool_per_turn = a.tool.mean.value() * r.episode.tool_calls / std::max(1.0, r.episode.turns);
  const double ctx = static_cast<double>(req.prompt_len) + (mean_len + r.episode.observation_tokens) / 2.0;
  const int all =
      std::max(1, per_replica(a.max_agents) > 0 ? per_replica(a.max_agents) : static_cast<int>(episodes.size()));
  r.full_rate_tokens_per_s = replicas * agentic_stream_rate(model, all, turn_tokens, tool_per_turn, ctx);
  r.stream_tokens_per_s = in_flight > 0 && in_flight < all
                              ? replicas * agentic_stream_rate(model, in_flight, turn_tokens, tool_per_turn, ctx)
                              : r.full_rate_tokens_per_s;
  r.feasible = true;
  stretch_for_engine(engine_, gen, cal, r);
  return r;
}

}  // namespace fmsim::rl
