// Serving a hybrid (Mamba-2 / attention) model: only attention layers keep a KV cache; each
// running sequence holds a fixed recurrent state that the engine reserves.
#include <gtest/gtest.h>

#include "../support/model_fixtures.hpp"
#include "serving/iteration_model.hpp"

namespace fmsim::serving {
namespace {

// The test model's 16 layers as 4 attention and 12 Mamba-2 layers (every fourth attends).
Deployment hybrid_deployment() {
  Deployment d;
  d.model = testing::test_model();
  for (int i = 0; i < 16; ++i) {
    d.model.layers.push_back(
        {i % 4 == 3 ? workload::MixerKind::Attention : workload::MixerKind::Mamba, workload::FfnKind::Dense});
  }
  d.model.ssm = testing::test_mamba2();
  d.cluster = testing::test_cluster(1);
  d.engine.name = "test";
  d.engine.graph_memory = core::Bytes(0);
  d.engine.block_size = 16;
  d.engine.max_num_seqs = 64;
  d.engine.max_num_batched_tokens = 4096;
  return d;
}

TEST(HybridServing, KvForAttentionLayersAndAStatePerSequence) {
  const auto d = hybrid_deployment();
  const IterationModel m(d, testing::free_network());
  // KV: K and V of 8 heads x 128 in 16 bits, 4 attention layers.
  EXPECT_DOUBLE_EQ(m.memory().kv_bytes_per_token.value(), 2.0 * 8 * 128 * 4 * 2);
  // State per sequence, 12 Mamba layers: d x N in fp32 plus the conv window (d + 2GN) x (K - 1)
  // in 16 bits; 64 sequences of it come out of the KV pool.
  const double state = 12 * (8192.0 * 128 * 4 + (8192.0 + 2 * 8 * 128) * 3 * 2);
  auto plain = d;
  plain.model.ssm.reset();
  for (auto& l : plain.model.layers) l.mixer = workload::MixerKind::Attention;
  const IterationModel dense(plain, testing::free_network());
  // Same weights apart from the mixers: compare the pools through their definitions.
  const double pool_hybrid = m.memory().kv_cache.value() + 64 * state;
  EXPECT_NEAR(pool_hybrid,
              (m.memory().usable - m.memory().weights - m.memory().activations - m.memory().graphs).value(),
              1e-3 * pool_hybrid);
  EXPECT_GT(dense.memory().kv_bytes_per_token.value(), m.memory().kv_bytes_per_token.value());
}

}  // namespace
}  // namespace fmsim::serving
