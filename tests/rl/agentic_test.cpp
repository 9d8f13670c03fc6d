// Agentic rollouts (src/rl/agentic.hpp): turns per episode, trained sequences, the replica's
// episodes played with tool calls overlapped, and the streaming rate's fixed point.
#include "rl/agentic.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "../support/model_fixtures.hpp"

namespace fmsim::rl {
namespace {

collectives::CommCostFn no_comm() {
  return [](collectives::Op, collectives::CommGroup, core::Bytes) { return core::Seconds(0.0); };
}

/// The test model on one GPU with no per-iteration overheads, 64 sequences and 4,096 tokens an iteration.
serving::Deployment test_deployment() {
  serving::Deployment d;
  d.model = testing::test_model();
  d.cluster = testing::test_cluster(1);
  auto& e = d.engine;
  e.iteration_overhead = e.graph_layer_overhead = e.eager_layer_overhead = core::Seconds(0);
  e.graph_memory = core::Bytes(0);
  e.max_num_seqs = 64;
  e.max_num_batched_tokens = 4096;
  return d;
}

AgentSpec agent(double turns, double tool_s, std::int64_t observation = 0) {
  AgentSpec a;
  a.turns = turns;
  a.tool.mean = core::Seconds(tool_s);
  a.observation_tokens = observation;
  return a;
}

TEST(AgenticTurns, TurnsAreProportionalToTheEpisodesLengthWithinTheCap) {
  // round(turns x tokens / mean): twice the mean length takes twice the mean turns; the cap and
  // one turn bound it.
  auto a = agent(4.0, 1.0);
  EXPECT_EQ(episode_turns(a, 2000.0, 1000.0), 8);
  EXPECT_EQ(episode_turns(a, 1000.0, 1000.0), 4);
  EXPECT_EQ(episode_turns(a, 10.0, 1000.0), 1);
  a.turn_cap = 6;
  EXPECT_EQ(episode_turns(a, 2000.0, 1000.0), 6);
  // Never more turns than tokens.
  EXPECT_EQ(episode_turns(agent(4.0, 0.0), 3.0, 1.0), 3);
}

TEST(AgenticTrained, TrajectoryTrainsObservationsAsContextPerTurnTrainsEachTurnWithItsContext) {
  // 4 turns, 3 tool calls of 50 observation tokens, prompt 100, 800 generated tokens.
  auto a = agent(4.0, 1.0, 50);
  const EpisodeTotals t{4.0, 3.0, 150.0};
  const auto traj = trained_shape(a, 100.0, 800.0, t);
  EXPECT_DOUBLE_EQ(traj.sequences_per_episode, 1.0);
  EXPECT_DOUBLE_EQ(traj.tokens_per_sequence, 100.0 + 800.0 + 150.0);
  // Per turn: 4 sequences; turn k has 100 + (k - 1)(200 + 50) + 200 tokens: mean 100 + 200 + 3 x 250 / 2.
  a.trained = TrainedTokens::PerTurn;
  const auto per = trained_shape(a, 100.0, 800.0, t);
  EXPECT_DOUBLE_EQ(per.sequences_per_episode, 4.0);
  EXPECT_DOUBLE_EQ(per.tokens_per_sequence, (300.0 + 550.0 + 800.0 + 1050.0) / 4.0);
}

TEST(AgenticEpisodes, TurnsSplitTheTokensAndToolLatenciesKeepTheLawsMean) {
  const std::vector<std::int64_t> lengths{1000, 2000, 500, 3000};
  auto a = agent(3.0, 2.0);
  a.tool.sigma = 1.0;
  const auto eps = make_episodes(a, 64, lengths, 1625.0, 7);
  ASSERT_EQ(eps.size(), lengths.size());
  double latency = 0.0;
  std::size_t calls = 0;
  for (std::size_t i = 0; i < eps.size(); ++i) {
    EXPECT_EQ(std::accumulate(eps[i].turn_tokens.begin(), eps[i].turn_tokens.end(), std::int64_t{0}), lengths[i]);
    ASSERT_EQ(eps[i].tool_s.size() + 1, eps[i].turn_tokens.size());  // a call after every turn but the last
    for (const auto s : eps[i].tool_s) latency += s;
    calls += eps[i].tool_s.size();
  }
  ASSERT_GT(calls, 3u);
  // Stratified lognormal quantiles: the sample mean is near the law's mean (few strata: within 25%).
  EXPECT_NEAR(latency / static_cast<double>(calls), 2.0, 0.5);
}

TEST(AgenticReplica, OneEpisodeWaitsForEveryToolCallInSeries) {
  // A lone episode cannot overlap its tools: makespan >= its tool seconds + its decode iterations.
  const serving::IterationModel m(test_deployment(), no_comm());
  const auto eps = make_episodes(agent(4.0, 3.0), 64, {400}, 400.0, 1);
  const auto r = simulate_agentic_replica(m, eps, 0, 0);
  ASSERT_TRUE(r.fits) << r.reason;
  EXPECT_DOUBLE_EQ(r.tool_seconds, 9.0);
  EXPECT_DOUBLE_EQ(r.engine_idle_seconds, 9.0);
  EXPECT_GT(r.makespan.value(), 9.0 + 400 * m.decode_step_time(1, 100).value() * 0.9);
  EXPECT_DOUBLE_EQ(r.generated_tokens, 400.0);
}

TEST(AgenticReplica, ManyEpisodesOverlapTheirToolsAndATwoSlotSandboxSerialisesThem) {
  const serving::IterationModel m(test_deployment(), no_comm());
  const std::vector<std::int64_t> lengths(32, 400);
  const auto eps = make_episodes(agent(4.0, 3.0), 64, lengths, 400.0, 1);
  const auto free = simulate_agentic_replica(m, eps, 0, 0);
  ASSERT_TRUE(free.fits) << free.reason;
  // 32 episodes x 3 calls x 3 s = 288 s of tools, overlapped: far below their sum.
  EXPECT_DOUBLE_EQ(free.tool_seconds, 288.0);
  EXPECT_LT(free.makespan.value(), 0.2 * free.tool_seconds);
  // Two tool slots: at most 2 calls at once, so the calls take at least 288 / 2 s.
  const auto capped = simulate_agentic_replica(m, eps, 0, 2);
  ASSERT_TRUE(capped.fits);
  EXPECT_GE(capped.makespan.value(), 288.0 / 2.0);
  // A cap of 4 episodes in flight: 8 waves of 4, each at least one episode's 9 s of tools.
  const auto waves = simulate_agentic_replica(m, eps, 4, 0);
  EXPECT_EQ(waves.peak_in_flight, 4);
  EXPECT_GE(waves.makespan.value(), 8 * 9.0);
}

TEST(AgenticReplica, WithoutPrefixCachingEveryTurnPrefillsItsWholeContext) {
  // One episode, 2 turns of 100 tokens, 20 observation tokens, prompt 64. Cached: 64 + 20 tokens
  // prefilled; uncached: the second turn prefills the context again (64 + 100 + 20).
  auto d = test_deployment();
  const auto eps = make_episodes(agent(2.0, 1.0, 20), 64, {200}, 200.0, 1);
  const serving::IterationModel cached(d, no_comm());
  EXPECT_DOUBLE_EQ(simulate_agentic_replica(cached, eps, 0, 0).prefill_tokens, 64.0 + 20.0);
  d.engine.prefix_caching = false;
  const serving::IterationModel uncached(d, no_comm());
  EXPECT_DOUBLE_EQ(simulate_agentic_replica(uncached, eps, 0, 0).prefill_tokens, 64.0 + 64.0 + 100.0 + 20.0);
}

TEST(AgenticStreamRate, RunningBatchIsTheFixedPointOfGenerationShare) {
  const serving::IterationModel m(test_deployment(), no_comm());
  // Without tools every episode in flight decodes: rate = n / decode_step(n).
  EXPECT_NEAR(agentic_stream_rate(m, 32, 100.0, 0.0, 500.0), 32.0 / m.decode_step_time(32, 500.0).value(), 1e-6);
  // With tools the batch k solves k = n g / (g + tool), g = turn tokens x decode_step(k).
  const double rate = agentic_stream_rate(m, 32, 100.0, 2.0, 500.0);
  EXPECT_LT(rate, 32.0 / m.decode_step_time(32, 500.0).value());
  // Long tools idle the engine: under one sequence on average, rate ~ n g / (g + tool) / step(1).
  const double g1 = 100.0 * m.decode_step_time(1, 500.0).value();
  EXPECT_NEAR(agentic_stream_rate(m, 1, 100.0, 1000.0, 500.0),
              g1 / (g1 + 1000.0) / m.decode_step_time(1, 500.0).value(), 1e-9);
}

}  // namespace
}  // namespace fmsim::rl
