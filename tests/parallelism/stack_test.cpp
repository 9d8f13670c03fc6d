// The software-stack vocabulary and the conventions the models read instead of a stack's name.
#include <gtest/gtest.h>

#include "parallelism/memory.hpp"
#include "parallelism/stack.hpp"

namespace fmsim::parallelism {
namespace {

// Each stack has one canonical word that parses back to it; an unknown word does not parse.
TEST(StackWords, EveryStackRoundTrips) {
  for (const Stack s : {Stack::Megatron, Stack::TorchTitan, Stack::LlmFoundry, Stack::MegatronLegacy}) {
    EXPECT_EQ(kStackWords.parse(to_string(s)), s) << to_string(s);
  }
  EXPECT_EQ(kStackWords.names(),
            (std::vector<std::string>{"megatron", "torchtitan", "llm-foundry", "megatron-legacy"}));
  EXPECT_FALSE(kStackWords.parse("deepspeed").has_value());
}

// Megatron-Core: Transformer Engine kernels are the efficiency reference, TP communication
// overlaps GEMMs, the distributed optimizer shards optimizer states only, and its performance
// recipes recompute nothing. torchtitan and llm-foundry: FSDP (fully sharded), no TP overlap,
// selective (torchtitan) or full (llm-foundry) activation checkpointing by default.
TEST(StackConventions, StatedPerStack) {
  const auto mg = stack_conventions(Stack::Megatron);
  EXPECT_TRUE(mg.reference_kernels);
  EXPECT_TRUE(mg.tp_comm_overlap);
  EXPECT_FALSE(mg.fully_sharded);
  EXPECT_EQ(mg.published_recompute, Recompute::None);
  const auto tt = stack_conventions(Stack::TorchTitan);
  EXPECT_FALSE(tt.reference_kernels);
  EXPECT_FALSE(tt.tp_comm_overlap);
  EXPECT_TRUE(tt.fully_sharded);
  EXPECT_EQ(tt.published_recompute, Recompute::Selective);
  const auto lf = stack_conventions(Stack::LlmFoundry);
  EXPECT_TRUE(lf.fully_sharded);
  EXPECT_EQ(lf.published_recompute, Recompute::Full);
}

// Megatron-LM of 2021-2022 (SC21, Korthikanti et al.): the same cuBLAS GEMMs as Megatron-Core, but
// no TP overlap, no sequence parallelism unless a run names it, plain DDP (no distributed
// optimizer), activation recomputation in every SC21 run; its memory keeps the s x s attention
// tensors (no FlashAttention) and 18 bytes of state per parameter (Korthikanti et al., Sec. 2).
TEST(StackConventions, MegatronLegacy) {
  const auto c = stack_conventions(Stack::MegatronLegacy);
  EXPECT_TRUE(c.reference_kernels);
  EXPECT_FALSE(c.tp_comm_overlap);
  EXPECT_FALSE(c.fully_sharded);
  EXPECT_FALSE(c.sequence_parallel);
  EXPECT_FALSE(c.distributed_optimizer);
  EXPECT_TRUE(c.fp16_grad_reduce_in_16_bits);
  EXPECT_FALSE(stack_conventions(Stack::Megatron).fp16_grad_reduce_in_16_bits);
  EXPECT_EQ(c.published_recompute, Recompute::Full);
  EXPECT_TRUE(stack_conventions(Stack::Megatron).sequence_parallel);
  EXPECT_TRUE(stack_conventions(Stack::Megatron).distributed_optimizer);
  const MemoryOptions o = stack_memory_options("megatron-legacy");
  EXPECT_FALSE(o.flash_attention);
  EXPECT_DOUBLE_EQ(o.state.weights + o.state.gradients + o.state.optimizer, 18.0);
}

// A calibration's own stack name has none of the known stacks' conventions, and the default
// memory options (Megatron-LM distrib_optimizer.md with fp32 gradients: 2 + 4 + 12 bytes/param).
TEST(StackConventions, UnknownNameGetsTheDefaults) {
  const auto c = stack_conventions("my-stack");
  EXPECT_FALSE(c.reference_kernels);
  EXPECT_FALSE(c.tp_comm_overlap);
  EXPECT_FALSE(c.fully_sharded);
  const MemoryOptions o = stack_memory_options("my-stack");
  EXPECT_DOUBLE_EQ(o.state.weights, 2.0);
  EXPECT_DOUBLE_EQ(o.state.gradients, 4.0);
  EXPECT_DOUBLE_EQ(o.state.optimizer, 12.0);
}

// Named stacks' memory: Megatron recipes keep a bf16 gradient buffer and 16 B/param of optimizer
// state (fp32 master, m, v and an fp32 gradient shard); the FSDP stacks keep fp32 sharded
// parameters and gradients (4 + 4) with Adam m, v (8); only torchtitan shards over dp x cp.
TEST(StackConventions, MemoryOptionsByStack) {
  const MemoryOptions mg = stack_memory_options("megatron");
  EXPECT_DOUBLE_EQ(mg.state.gradients, 2.0);
  EXPECT_DOUBLE_EQ(mg.state.optimizer + mg.state.step_grad, 16.0);  // 12 kept, 4 in the step only
  EXPECT_TRUE(mg.fp8_activations);
  const MemoryOptions tt = stack_memory_options("torchtitan");
  EXPECT_DOUBLE_EQ(tt.state.weights, 4.0);
  EXPECT_DOUBLE_EQ(tt.state.optimizer, 8.0);
  EXPECT_TRUE(tt.optimizer_over_cp);
  EXPECT_TRUE(tt.selective_op_sac);
  const MemoryOptions lf = stack_memory_options("llm-foundry");
  EXPECT_DOUBLE_EQ(lf.state.weights, 4.0);
  EXPECT_FALSE(lf.optimizer_over_cp);
  EXPECT_FALSE(lf.selective_op_sac);
}

}  // namespace
}  // namespace fmsim::parallelism
