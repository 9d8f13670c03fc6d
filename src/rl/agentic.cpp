#include "rl/agentic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "rl/lengths.hpp"

namespace fmsim::rl {

int episode_turns(const AgentSpec& a, double tokens, double mean_tokens) {
  const double want = std::max(1.0, a.turns) * tokens / std::max(1.0, mean_tokens);
  int t = static_cast<int>(std::llround(want));
  if (a.turn_cap > 0) t = std::min(t, a.turn_cap);
  t = std::min(t, static_cast<int>(std::min(1e9, std::max(1.0, tokens))));
  return std::max(1, t);
}

EpisodeTotals episode_totals(const AgentSpec& a, const std::vector<std::int64_t>& lengths, double mean_tokens) {
  EpisodeTotals t;
  if (lengths.empty()) return t;
  double turns = 0.0;
  for (const auto l : lengths) turns += episode_turns(a, static_cast<double>(l), mean_tokens);
  t.turns = turns / static_cast<double>(lengths.size());
  t.tool_calls = t.turns - 1.0;
  t.observation_tokens = t.tool_calls * static_cast<double>(a.observation_tokens);
  return t;
}

TrainedShape trained_shape(const AgentSpec& a, double prompt, double generated, const EpisodeTotals& t) {
  TrainedShape s;
  if (a.trained == TrainedTokens::PerTurn && t.turns > 1.0) {
    const double g = generated / t.turns;
    const double o = static_cast<double>(a.observation_tokens);
    s.sequences_per_episode = t.turns;
    s.tokens_per_sequence = prompt + g + (t.turns - 1.0) * (g + o) / 2.0;
  } else {
    s.tokens_per_sequence = prompt + generated + t.observation_tokens;
  }
  return s;
}

std::vector<Episode> make_episodes(const AgentSpec& a, std::int64_t prompt, const std::vector<std::int64_t>& lengths,
                                   double mean_tokens, std::uint64_t seed) {
  std::vector<Episode> eps;
  eps.reserve(lengths.size());
  std::size_t calls = 0;
  for (const auto l : lengths) {
    Episode e;
    e.prompt = prompt;
    e.observation = a.observation_tokens;
    const int turns = episode_turns(a, static_cast<double>(l), mean_tokens);
    const std::int64_t per = std::max<std::int64_t>(1, l / turns);
    for (int k = 0; k < turns; ++k)
      e.turn_tokens.push_back(k + 1 < turns ? per : std::max<std::int64_t>(1, l - per * k));
    calls += static_cast<std::size_t>(turns - 1);
    eps.push_back(std::move(e));
  }
  // Tool latencies: the law's quantiles (j + 0.5) / calls, in an order shuffled by the seed.
  std::vector<double> lat(calls, a.tool.mean.value());
  if (a.tool.sigma > 0.0) {
    const double s = a.tool.sigma;
    for (std::size_t j = 0; j < calls; ++j) {
      const double p = (static_cast<double>(j) + 0.5) / static_cast<double>(calls);
      lat[j] = a.tool.mean.value() * std::exp(s * normal_quantile(p) - 0.5 * s * s);
    }
    std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
    std::shuffle(lat.begin(), lat.end(), rng);
  }
  std::size_t j = 0;
  for (auto& e : eps) {
    for (std::size_t k = 0; k + 1 < e.turn_tokens.size(); ++k) e.tool_s.push_back(lat[j++]);
  }
  return eps;
}

namespace {

enum class State { Waiting, Prefill, Decode, Tool, ToolQueued, Done };

struct Live {
  State state = State::Waiting;
  std::size_t turn = 0;
  std::int64_t context = 0;  ///< tokens in the episode's KV (or its cached prefix)
  std::int64_t to_prefill = 0;
  std::int64_t to_decode = 0;
  double tool_end = 0.0;
};

}  // namespace

AgenticReplicaResult simulate_agentic_replica(const serving::IterationModel& model,
                                              const std::vector<Episode>& episodes, int in_flight, int tool_slots) {
  AgenticReplicaResult r;
  const auto& eng = model.deployment().engine;
  const double capacity = model.memory().token_capacity;
  for (const auto& e : episodes) {
    double total = static_cast<double>(e.prompt);
    for (const auto t : e.turn_tokens) total += static_cast<double>(t);
    total += static_cast<double>(e.tool_s.size() * static_cast<std::size_t>(std::max<std::int64_t>(0, e.observation)));
    if (total > capacity) {
      r.reason = fmt::format(
          "an episode of {:.0f} tokens (prompt, turns and observations) does not fit the KV cache of one generator "
          "replica ({:.0f} tokens); raise the generation TP or lower --turns, --observation-tokens or the responses",
          total, capacity);
      return r;
    }
  }
  const int max_seqs = std::max(1, eng.max_num_seqs);
  const std::int64_t budget = std::max<std::int64_t>(1, eng.max_num_batched_tokens);
  const int cap = in_flight > 0 ? in_flight : static_cast<int>(episodes.size());
  std::vector<Live> live(episodes.size());
  std::size_t next = 0, done = 0;
  int flying = 0, tools_running = 0;
  double t = 0.0, kv_context = 0.0;     // kv_context: tokens held by the episodes in flight
  std::vector<std::size_t> tool_queue;  // episodes waiting for a tool slot, in order
  std::size_t queue_head = 0;
  std::vector<std::size_t> active;  // admitted, not done
  auto admit = [&] {
    while (flying < cap && next < episodes.size()) {
      live[next].state = State::Prefill;
      live[next].to_prefill = episodes[next].prompt;
      active.push_back(next);
      ++next;
      ++flying;
    }
    r.peak_in_flight = std::max(r.peak_in_flight, flying);
  };
  auto start_tool = [&](std::size_t i, double at) {
    live[i].state = State::Tool;
    live[i].tool_end = at + episodes[i].tool_s[live[i].turn];
    r.tool_seconds += episodes[i].tool_s[live[i].turn];
    ++tools_running;
  };
  auto end_turn = [&](std::size_t i) {
    auto& l = live[i];
    if (l.turn + 1 >= episodes[i].turn_tokens.size()) {
      l.state = State::Done;
      kv_context -= static_cast<double>(l.context);
      ++done;
      --flying;
      return;
    }
    if (tool_slots <= 0 || tools_running < tool_slots) {
      start_tool(i, t);
    } else {
      l.state = State::ToolQueued;
      tool_queue.push_back(i);
    }
  };
  // Tool calls ended by `t`, in the order they end; a freed slot goes to the next queued call.
  auto finish_tools = [&] {
    for (;;) {
      std::size_t best = live.size();
      for (const auto i : active)
        if (live[i].state == State::Tool && live[i].tool_end <= t &&
            (best == live.size() || live[i].tool_end < live[best].tool_end))
          best = i;
      if (best == live.size()) return;
      auto& l = live[best];
      const double ended = l.tool_end;
      --tools_running;
      ++l.turn;
      // Prefix caching keeps the context while every episode in flight fits the KV cache; else the
      // turn recomputes the whole context with the observation.
      const bool cached = eng.prefix_caching && kv_context <= capacity;
      l.to_prefill = episodes[best].observation + (cached ? 0 : l.context);
      if (!cached) {
        kv_context -= static_cast<double>(l.context);
        l.context = 0;
      }
      l.state = State::Prefill;
      if (queue_head < tool_queue.size()) start_tool(tool_queue[queue_head++], ended);
    }
  };
  admit();
  std::vector<std::size_t> decoding, prefilling;
  std::vector<std::int64_t> chunk;
  while (done < episodes.size()) {
    finish_tools();
    decoding.clear();
    prefilling.clear();
    chunk.clear();
    serving::BatchWork w;
    std::int64_t left = budget;
    for (const auto i : active) {
      if (live[i].state == State::Decode && static_cast<int>(decoding.size()) < max_seqs && left > 0) {
        decoding.push_back(i);
        w.decode_ctx_full += static_cast<double>(live[i].context);
        --left;
      }
    }
    for (const auto i : active) {
      if (left <= 0 || static_cast<int>(decoding.size() + prefilling.size()) >= max_seqs) break;
      if (live[i].state != State::Prefill) continue;
      const std::int64_t q = std::min(left, live[i].to_prefill);
      prefilling.push_back(i);
      chunk.push_back(q);
      w.prefill_tokens += static_cast<int>(q);
      w.prefill_attn_full += static_cast<double>(q) * (static_cast<double>(live[i].context) + q / 2.0);
      left -= q;
    }
    if (decoding.empty() && prefilling.empty()) {
      // Every episode in flight waits on its tool: the engine idles until the next call ends.
      double wake = std::numeric_limits<double>::infinity();
      for (const auto i : active)
        if (live[i].state == State::Tool) wake = std::min(wake, live[i].tool_end);
      if (!std::isfinite(wake)) {
        r.reason = "agentic rollout stalled: no episode can run (internal)";
        return r;
      }
      r.engine_idle_seconds += wake - t;
      t = wake;
      continue;
    }
    w.decode_seqs = static_cast<int>(decoding.size());
    w.decode_ctx_window = w.decode_ctx_full;
    w.prefill_seqs = static_cast<int>(prefilling.size());
    w.prefill_attn_window = w.prefill_attn_full;
    w.sampled = w.decode_seqs;
    for (std::size_t k = 0; k < prefilling.size(); ++k)
      if (chunk[k] == live[prefilling[k]].to_prefill) ++w.sampled;
    const double dt = model.iteration(w).total().value();
    const int running = w.decode_seqs + w.prefill_seqs;
    if (!r.steps.empty() && r.steps.back().running == running) {
      r.steps.back().end_s = t + dt;
    } else {
      r.steps.push_back({t, t + dt, running});
    }
    r.busy_sequence_seconds += running * dt;
    r.peak_kv_tokens = std::max(r.peak_kv_tokens, kv_context);
    t += dt;
    ++r.iterations;
    bool finished = false;
    for (const auto i : decoding) {
      auto& l = live[i];
      ++l.context;
      kv_context += 1.0;
      r.generated_tokens += 1.0;
      if (--l.to_decode <= 0) {
        end_turn(i);
        finished = true;
      }
    }
    for (std::size_t k = 0; k < prefilling.size(); ++k) {
      const auto i = prefilling[k];
      auto& l = live[i];
      l.context += chunk[k];
      kv_context += static_cast<double>(chunk[k]);
      r.prefill_tokens += static_cast<double>(chunk[k]);
      l.to_prefill -= chunk[k];
      if (l.to_prefill > 0) continue;
      // The prefill's last position samples the turn's first token.
      l.context += 1;
      kv_context += 1.0;
      r.generated_tokens += 1.0;
      l.to_decode = episodes[i].turn_tokens[l.turn] - 1;
      if (l.to_decode <= 0) {
        end_turn(i);
        finished = true;
      } else {
        l.state = State::Decode;
      }
    }
    if (finished) {
      std::erase_if(active, [&](std::size_t i) { return live[i].state == State::Done; });
      admit();
    }
  }
  r.makespan = core::Seconds(t);
  r.fits = true;
  return r;
}

double agentic_stream_rate(const serving::IterationModel& model, int in_flight, double turn_tokens, double tool_s,
                           double mean_context) {
  const double n = std::max(1, in_flight);
  const double g_tokens = std::max(1.0, turn_tokens);
  const auto step = [&](double k) {
    return model.decode_step_time(std::max(1, static_cast<int>(std::ceil(k))), mean_context).value();
  };
  // h(k): episodes generating when k run at once; the batch is its fixed point k = h(k).
  const auto h = [&](double k) {
    const double g = g_tokens * step(k);
    return n * g / (g + std::max(0.0, tool_s));
  };
  if (h(1.0) <= 1.0) return h(1.0) / step(1.0);  // mostly idle: under one sequence at a time on average
  double lo = 1.0, hi = n;
  for (int it = 0; it < 50; ++it) {
    const double mid = 0.5 * (lo + hi);
    (h(mid) > mid ? lo : hi) = mid;
  }
  const double k = 0.5 * (lo + hi);
  return k / step(k);
}

}  // namespace fmsim::rl
