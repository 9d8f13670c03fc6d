// Validity rules for parallel layouts, with reasons a user can act on.
#include "parallelism/layout.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <initializer_list>

namespace fmsim::parallelism {
namespace {

// The product of layout degrees, saturated at 2^62 (each degree is an int, so a product of three
// could overflow even 64 bits; any product that large divides no GPU count anyway).
std::int64_t product(std::initializer_list<int> degrees) {
  constexpr std::int64_t kCap = std::int64_t{1} << 62;
  std::int64_t p = 1;
  for (const int d : degrees) {
    if (d <= 0) return 0;
    p = (p > kCap / d) ? kCap : p * d;
  }
  return p;
}

}  // namespace

Layout with_dp(Layout layout, int gpus) {
  const std::int64_t mp = product({layout.tp, layout.pp, layout.cp});
  layout.dp = (mp > 0 && gpus % mp == 0) ? static_cast<int>(gpus / mp) : 0;
  return layout;
}

std::optional<std::string> why_invalid(const workload::ModelSpec& model, const Layout& l, int gpus,
                                       std::int64_t seq_len) {
  if (l.tp < 1 || l.pp < 1 || l.vp < 1 || l.cp < 1 || l.ep < 1 || l.etp < 1 || l.micro_batch < 1 ||
      l.global_batch < 1) {
    return "tp, pp, vp, cp, ep, etp, micro-batch and global batch must all be at least 1";
  }
  const std::int64_t mp = product({l.tp, l.pp, l.cp});
  if (gpus % mp != 0) return fmt::format("tp*pp*cp = {} does not divide {} GPUs", mp, gpus);
  if (l.dp != gpus / mp) return fmt::format("dp = {} but gpus/(tp*pp*cp) = {}", l.dp, gpus / mp);
  if (model.num_heads % l.tp != 0) {
    return fmt::format("tp {} does not divide {} attention heads", l.tp, model.num_heads);
  }
  if (model.num_kv_heads % l.tp != 0 && l.tp % model.num_kv_heads != 0) {
    return fmt::format("tp {} and {} KV heads: neither divides the other", l.tp, model.num_kv_heads);
  }
  if (model.num_layers < product({l.pp, l.vp})) {
    // Uneven splits are allowed (Megatron/torchtitan put the remainder on some stages), but every
    // model chunk needs at least one layer.
    return fmt::format("pp*vp = {} is more than the {} layers", product({l.pp, l.vp}), model.num_layers);
  }
  if (l.vp > 1 && l.pp == 1) return "virtual stages (vp > 1) need pipeline parallelism (pp > 1)";
  if (model.is_moe()) {
    if (model.moe.num_experts % l.ep != 0) {
      return fmt::format("ep {} does not divide {} experts", l.ep, model.moe.num_experts);
    }
    if (product({l.tp, l.cp, l.dp}) % product({l.ep, l.etp}) != 0) {
      return fmt::format("ep*etp = {} does not divide tp*cp*dp = {}", product({l.ep, l.etp}),
                         product({l.tp, l.cp, l.dp}));
    }
    if (model.moe.expert_ffn % l.etp != 0) {
      return fmt::format("etp {} does not divide the expert FFN width {}", l.etp, model.moe.expert_ffn);
    }
  } else if (l.ep > 1) {
    return "expert parallelism (ep > 1) needs a mixture-of-experts model";
  }
  if (seq_len % l.cp != 0) return fmt::format("cp {} does not divide sequence length {}", l.cp, seq_len);
  const std::int64_t per_step = static_cast<std::int64_t>(l.micro_batch) * l.dp;
  if (l.global_batch % per_step != 0) {
    return fmt::format("global batch {} is not a multiple of micro-batch*dp = {}", l.global_batch, per_step);
  }
  if (l.shard_group < 0 || (l.shard_group > 0 && l.dp % l.shard_group != 0)) {
    return fmt::format("FSDP shard group {} does not divide dp {}", l.shard_group, l.dp);
  }
  return std::nullopt;
}

}  // namespace fmsim::parallelism
