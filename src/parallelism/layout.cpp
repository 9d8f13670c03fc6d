// Validity rules for parallel layouts, with reasons a user can act on.
#include "parallelism/layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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

namespace {

// The pipeline split: every model chunk needs a layer slot (uneven splits are allowed: Megatron's
// pipeline_model_parallel_layout and torchtitan put the remainder on some stages).
std::optional<std::string> why_invalid_split(int layers, const Layout& l) {
  const std::int64_t chunks = product({l.pp, l.vp});
  const bool counts = l.first_stage_layers > 0 || l.last_stage_layers > 0;
  if (l.first_stage_layers < 0 || l.last_stage_layers < 0) return "first/last pipeline stage layers must be positive";
  if (counts && chunks > static_cast<std::int64_t>(layers)) {
    return fmt::format("pp*vp = {} model chunks is more than the {} layers", chunks, layers);
  }
  if (counts && (l.embedding_slot || l.loss_slot)) {
    // Megatron-Core's TransformerConfig raises on this combination.
    return "first/last pipeline stage layer counts cannot be combined with the embedding or loss as pipeline slots "
           "(Megatron-Core refuses both at once)";
  }
  if (counts && l.pp == 1) return "first/last pipeline stage layer counts need pipeline parallelism (pp > 1)";
  if (l.balanced_head_layers < 0.0) return "the compute-balanced pipeline split needs a non-negative LM-head cost";
  if (l.balanced_head_layers > 0.0 && (counts || l.embedding_slot || l.loss_slot || l.vp > 1)) {
    return "the compute-balanced pipeline split (nanotron) takes no first/last stage counts, embedding or loss "
           "slots and no virtual stages";
  }
  if (l.balanced_head_layers > 0.0 && l.pp > layers) {
    return fmt::format("pp = {} stages is more than the {} layers", l.pp, layers);
  }
  if (l.greedy_split && (counts || l.balanced_head_layers > 0.0 || l.vp > 1)) {
    return "DeepSpeed's pipeline split (partition_method type:...) takes no first/last stage counts, no "
           "compute-balanced split and no virtual stages";
  }
  if (l.greedy_split && l.pp > 1) {
    // partition_balanced fills stages of B = ceil(slots / pp) slots in order; Megatron-DeepSpeed's
    // GPTModelPipe fails unless every stage has a transformer layer.
    const std::int64_t slots = std::int64_t{layers} + (l.embedding_slot ? 1 : 0) + (l.loss_slot ? 1 : 0);
    const std::int64_t b = (slots + l.pp - 1) / l.pp;
    // Stage k holds slots [k b, (k + 1) b); the last layer is slot e + layers - 1.
    const std::int64_t e = l.embedding_slot ? 1 : 0;
    const std::int64_t first_empty = b - e < 1 ? 0 : (e + layers - 1) / b + 1;
    if (first_empty < l.pp) {
      const std::string which = first_empty == 0          ? "stage 0"
                                : first_empty == l.pp - 1 ? fmt::format("stage {}", first_empty)
                                                          : fmt::format("stages {}-{}", first_empty, l.pp - 1);
      return fmt::format(
          "DeepSpeed's pipeline split fills the stages in order with {} of the {} slots{} each, which leaves {} "
          "no transformer layer (Megatron-DeepSpeed needs one on every stage)",
          b, slots, slots > layers ? " (layers and the embedding slots)" : "", which);
    }
  }
  if (counts) {
    const std::int64_t fixed = std::int64_t{l.first_stage_layers} + l.last_stage_layers;
    const int middle = l.pp - (l.first_stage_layers > 0 ? 1 : 0) - (l.last_stage_layers > 0 ? 1 : 0);
    if (fixed > layers || (middle == 0 && fixed != layers)) {
      return fmt::format("first/last pipeline stages take {} of the {} layers{}", fixed, layers,
                         middle == 0 ? " (with pp 2 they must take all of them)" : "");
    }
    return std::nullopt;
  }
  const std::int64_t slots = std::int64_t{layers} + (l.embedding_slot ? 1 : 0) + (l.loss_slot ? 1 : 0);
  if (chunks > slots) {
    return fmt::format(
        "pp*vp = {} model chunks but the {} layers{} give only {} pipeline slots, so a chunk would be empty{}", chunks,
        layers, slots > layers ? " with the embedding/loss slots" : "", slots,
        slots < layers + 2 && chunks <= layers + 2 ? " (counting the embedding and the loss as slots, Megatron's "
                                                     "account_for_embedding/loss_in_pipeline_split, "
                                                     "gives two more)"
                                                   : "");
  }
  return std::nullopt;
}

// Layers of stage s under explicit first/last stage counts: those stages take theirs, the
// others share the rest as evenly as integers allow.
int stage_layer_count(int num_layers, const Layout& l, int s) {
  const int pp = std::max(1, l.pp);
  if (pp == 1) return num_layers;
  const bool first = l.first_stage_layers > 0, last = l.last_stage_layers > 0;
  if (s == 0 && first) return l.first_stage_layers;
  if (s == pp - 1 && last) return l.last_stage_layers;
  const int middle = pp - (first ? 1 : 0) - (last ? 1 : 0);
  const int rest = num_layers - (first ? l.first_stage_layers : 0) - (last ? l.last_stage_layers : 0);
  if (middle <= 0) return 0;
  const int j = s - (first ? 1 : 0);
  return (j + 1) * rest / middle - j * rest / middle;
}

}  // namespace

LayerRange chunk_layers(int num_layers, const Layout& l, int stage, int chunk) {
  const int pp = std::max(1, l.pp), vp = std::max(1, l.vp);
  if (pp > 1 && l.balanced_head_layers > 0.0) {
    // Compute-balanced (Layout::balanced_head_layers): with layers costing 1 and thresholds
    // T_k = (k + 1) (L + r) / pp at least one layer apart, stage k ends with the first layer whose
    // running total exceeds T_k, layer floor(T_k) + 1; the last stage takes the rest and the head.
    const double total = num_layers + l.balanced_head_layers;
    const auto end = [&](int k) {
      if (k < 0) return 0;
      if (k >= pp - 1) return num_layers;
      const double t = total * (k + 1) / pp;
      return static_cast<int>(std::min<double>(num_layers, std::floor(t) + 1.0));
    };
    (void)chunk;
    return {end(stage - 1), std::max(end(stage - 1), end(stage))};
  }
  if (pp > 1 && (l.first_stage_layers > 0 || l.last_stage_layers > 0)) {
    // Chunk c of stage s holds floor((c+1) n_s / vp) - floor(c n_s / vp) of the stage's n_s layers;
    // the chunks before k = c*pp + s are chunks 0..c-1 of every stage and chunk c of stages < s.
    const auto part = [vp](int n, int c) { return (c + 1) * n / vp - c * n / vp; };
    int offset = 0;
    for (int s = 0; s < pp; ++s) {
      const int n = stage_layer_count(num_layers, l, s);
      offset += chunk * n / vp + (s < stage ? part(n, chunk) : 0);
    }
    const int n = part(stage_layer_count(num_layers, l, stage), chunk);
    return {std::min(offset, num_layers), std::min(offset + n, num_layers)};
  }
  const long e = l.embedding_slot ? 1 : 0;
  const long slots = num_layers + e + (l.loss_slot ? 1 : 0);
  if (pp > 1 && l.greedy_split) {
    // DeepSpeed's partition_balanced on unit weights (Layout::greedy_split): stage k holds slots
    // [k B, (k + 1) B) of B = ceil(slots / pp), the last stage the rest.
    const long b = (slots + pp - 1) / pp;
    const auto layer = [&](long slot) {
      return static_cast<int>(std::clamp(std::min(slot, slots) - e, 0L, static_cast<long>(num_layers)));
    };
    (void)chunk;
    return {layer(stage * b), stage == pp - 1 ? num_layers : layer((stage + 1) * b)};
  }
  const long chunks = static_cast<long>(pp) * vp;
  const long k = static_cast<long>(chunk) * pp + stage;
  const auto layer = [&](long slot) {
    return static_cast<int>(std::clamp(slot - e, 0L, static_cast<long>(num_layers)));
  };
  return {layer(k * slots / chunks), layer((k + 1) * slots / chunks)};
}

Layout with_recipe_pipeline_split(Layout l, int num_layers) {
  // In 64 bits: a file's pp x vp can pass an int (libFuzzer/UBSan: 1519362 x 4096 from a CSV row).
  const std::int64_t chunks = static_cast<std::int64_t>(l.pp) * l.vp;
  if (l.pp > 1 && chunks > 0 && l.first_stage_layers == 0 && l.last_stage_layers == 0 && !l.embedding_slot &&
      !l.loss_slot && num_layers % chunks != 0 && (num_layers + 2) % chunks == 0) {
    l.embedding_slot = true;
    l.loss_slot = true;
  }
  return l;
}

double tied_embedding_copy(const workload::ModelSpec& model, const Layout& l) {
  if (!model.tied_embeddings || l.pp <= 1) return 0.0;
  return static_cast<double>(model.vocab) * static_cast<double>(model.hidden) / std::max(1, l.tp);
}

double compute_balanced_head_layers(const workload::ModelSpec& model) {
  const double per_layer = 4.0 * static_cast<double>(model.hidden) + 3.0 * static_cast<double>(model.ffn_hidden);
  return per_layer > 0.0 ? static_cast<double>(model.vocab) / per_layer : 0.0;
}

int micro_batch_per_stage(const Layout& l) {
  if (l.pp <= 1 || l.dp <= 0) return 0;
  const std::int64_t local = l.global_batch / l.dp;
  const std::int64_t stages = static_cast<std::int64_t>(l.pp) * std::max(1, l.vp);
  return local >= stages && local % stages == 0 ? static_cast<int>(local / stages) : 0;
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
  if (l.vp > 1 && l.pp == 1) return "virtual stages (vp > 1) need pipeline parallelism (pp > 1)";
  if (auto why = why_invalid_split(model.num_layers, l)) return why;
  if (l.offload_layers < 0 || (l.offload_layers > 0 && l.offload_layers >= model.num_layers)) {
    return fmt::format("activation offload of {} layers: allowed 0 to {} (fewer than the model's layers)",
                       l.offload_layers, model.num_layers - 1);
  }
  if (l.offload_layers > 0 && l.pp > 1) {
    return "activation offloading runs with pp 1 only (Megatron-Core: no pipeline parallelism with CPU offloading)";
  }
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
  } else if (l.ep > 1 || l.etp > 1) {
    return "expert parallelism (ep or etp > 1) needs a mixture-of-experts model";
  }
  if (seq_len % l.cp != 0) return fmt::format("cp {} does not divide sequence length {}", l.cp, seq_len);
  // torchtitan's ChunkedLossWrapper splits each rank's sequence into equal chunks ("sequence length
  // must be divisible by num_chunks").
  if (l.recipe.loss_chunks < 1 || (seq_len / l.cp) % l.recipe.loss_chunks != 0) {
    return fmt::format("loss chunks {} do not divide the {} tokens of a sequence on a rank (seq / cp)",
                       l.recipe.loss_chunks, seq_len / l.cp);
  }
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
