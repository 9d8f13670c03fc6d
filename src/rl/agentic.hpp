// Agentic (multi-turn, tool-using) rollouts: episodes that alternate model turns with tool or
// sandbox calls, played on one generator replica through the serving model's iteration cost.
//
// An episode of `turns` assistant turns generates its response tokens in turns, calls a tool after
// every turn but the last (the tool's latency is drawn from its law), and appends the tool's
// observation to its context; the engine then prefills the observation (with prefix caching: only
// the new tokens; without it, or once the cache no longer holds the context of every episode in
// flight: the whole context again) before the next turn decodes. While an episode waits on its
// tool, the engine runs the other episodes' turns: tool latency overlaps across episodes, up to
// the cap on episodes in flight (verl's agent loop: every trajectory of the batch at once; SkyRL /
// rLLM: a cap on concurrent environments) and on tool calls running at once (a sandbox's rate
// limit).
//
// Method: the engine's continuous batching played iteration by iteration (vLLM V1 scheduler:
// decodes first, then prefill chunks within max_num_batched_tokens), each iteration's time from
// serving::IterationModel. Sources: verl ToolAgentLoop (experimental/agent_loop/tool_agent_loop.py:
// tool responses appended to the prompt ids with response_mask 0, max_user_turns /
// max_assistant_turns), AsyncPartialToolAgentLoop (fully_async_policy), vLLM automatic prefix
// caching. Domain: text tools whose observations fit the context; no tool runs on the GPUs.
#pragma once

#include <cstdint>
#include <vector>

#include "core/units.hpp"
#include "core/vocabulary.hpp"
#include "serving/iteration_model.hpp"

namespace fmsim::rl {

/// Which tokens the trainer runs forward and backward over, per episode.
enum class TrainedTokens {
  /// One sequence per episode: prompt, every turn's generated tokens and every observation (the
  /// observations are context with loss mask 0: verl ToolAgentLoop's response_mask).
  Trajectory,
  /// One sequence per turn: the context before the turn (prompt, earlier turns and observations)
  /// and the turn's own tokens (step-wise agent training, e.g. SkyRL's step-wise trajectories).
  PerTurn,
};
inline constexpr core::Word<TrainedTokens> kTrainedTokensWordList[] = {
    {TrainedTokens::Trajectory, "trajectory"},
    {TrainedTokens::PerTurn, "per-turn"},
};
inline constexpr core::Vocabulary<TrainedTokens> kTrainedTokensWords{"trained tokens", kTrainedTokensWordList};

/// Latency of one tool call: `mean` seconds, lognormal with shape `sigma` (0 = every call the mean).
struct ToolLatency {
  core::Seconds mean{};
  double sigma = 0.0;
};

/// What an agentic episode does besides generating. The default is single-turn RL.
struct AgentSpec {
  double turns = 1.0;  ///< mean assistant turns per episode (verl num_turns counts both roles: turns = num_turns / 2)
  int turn_cap = 0;    ///< most assistant turns an episode may take (verl max_assistant_turns); 0 = no cap
  ToolLatency tool;    ///< per tool call (one after every turn but the last)
  std::int64_t observation_tokens = 0;  ///< tokens the environment appends per tool call (chat template included)
  std::int64_t max_agents = 0;          ///< episodes in flight on the whole generator pool; 0 = no cap
  std::int64_t tool_concurrency = 0;    ///< tool calls running at once on the whole pool; 0 = no cap
  TrainedTokens trained = TrainedTokens::Trajectory;
  [[nodiscard]] bool is_agentic() const {
    return turns > 1.0 || observation_tokens > 0 || tool.mean.value() > 0.0 || max_agents > 0;
  }
};

/// Assistant turns of an episode that generates `tokens` of a law whose mean is `mean_tokens`:
/// round(turns x tokens / mean_tokens), within [1, turn_cap] and at most one turn per token. Turns
/// are taken proportional to the episode's length (the tokens of one turn are the law's mean over
/// the mean turns): longer episodes are the ones that call more tools.
int episode_turns(const AgentSpec& a, double tokens, double mean_tokens);

/// Mean tool calls and observation tokens per episode over `lengths` (responses of the law whose
/// mean is `mean_tokens`).
struct EpisodeTotals {
  double turns = 1.0, tool_calls = 0.0, observation_tokens = 0.0;
};
EpisodeTotals episode_totals(const AgentSpec& a, const std::vector<std::int64_t>& lengths, double mean_tokens);

/// Mean trained sequence length and sequences per episode (TrainedTokens): Trajectory: one of
/// prompt + generated + observations; PerTurn: `turns` sequences, turn k (1-based) of prompt +
/// (k - 1)(g + o) + g tokens, g = generated / turns, o = observation tokens per call, whose mean is
/// prompt + g + (turns - 1)(g + o) / 2.
struct TrainedShape {
  double sequences_per_episode = 1.0;
  double tokens_per_sequence = 0.0;
};
TrainedShape trained_shape(const AgentSpec& a, double prompt, double generated, const EpisodeTotals& t);

/// One episode as the replica plays it.
struct Episode {
  std::int64_t prompt = 0;
  std::vector<std::int64_t> turn_tokens;  ///< generated tokens of each turn
  std::vector<double> tool_s;             ///< latency of the tool call after each turn but the last
  std::int64_t observation = 0;           ///< tokens each tool call appends to the context
};

/// The episodes of one replica: `lengths[i]` generated tokens, split into turns (episode_turns;
/// the remainder to the last turn), tool latencies at the quantiles (j + 0.5) / calls of the law,
/// shuffled by `seed` (a stratified, deterministic sample like the response lengths).
std::vector<Episode> make_episodes(const AgentSpec& a, std::int64_t prompt, const std::vector<std::int64_t>& lengths,
                                   double mean_tokens, std::uint64_t seed);

struct AgenticReplicaResult {
  bool fits = false;
  std::string reason;
  core::Seconds makespan{};  ///< until the replica's last episode ends
  double generated_tokens = 0.0, prefill_tokens = 0.0;
  double tool_seconds = 0.0;           ///< summed over calls
  double engine_idle_seconds = 0.0;    ///< no episode ready to run: all waiting on tools
  double busy_sequence_seconds = 0.0;  ///< sum over iterations of sequences run x duration
  int peak_in_flight = 0;
  double peak_kv_tokens = 0.0;  ///< most tokens the episodes in flight held in the KV cache at once
  std::size_t iterations = 0;
  struct Step {
    double start_s = 0.0, end_s = 0.0;
    int running = 0;
  };
  std::vector<Step> steps;  ///< iterations, coalesced while the running count is unchanged
};

/// Plays `episodes` on one replica of `model`: at most `in_flight` episodes admitted at once (in
/// order), at most `tool_slots` tool calls at once (0 = no cap), the engine's max_num_seqs and
/// max_num_batched_tokens per iteration. Prefix caching (the engine profile's) keeps an episode's
/// context across its tool call while the contexts of the episodes in flight fit the KV cache;
/// otherwise the next turn prefills the whole context.
AgenticReplicaResult simulate_agentic_replica(const serving::IterationModel& model,
                                              const std::vector<Episode>& episodes, int in_flight, int tool_slots);

/// Decode tokens per second of one replica holding `in_flight` episodes that cycle through turns
/// of `turn_tokens` tokens and tool calls of `tool_s` seconds on average (per turn, including the
/// last turn's absence of a call), contexts `mean_context`: the running batch k solves
/// k = in_flight x g(k) / (g(k) + tool_s) with g(k) = turn_tokens x decode_step(k) (bisection);
/// the rate is k / decode_step(k).
double agentic_stream_rate(const serving::IterationModel& model, int in_flight, double turn_tokens, double tool_s,
                           double mean_context);

}  // namespace fmsim::rl
