// A planning request from the flag values of `fmsim plan` (and `fmsim validate planner`): the
// model, GPU budget, batch, systems and objective, and the search space the pinned flags narrow.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hardware/catalog.hpp"
#include "planner/planner.hpp"
#include "training/calibration.hpp"

namespace fmsim::jobspec {

/// The systems `fmsim plan` compares without --systems.
inline constexpr const char* kDefaultPlanSystems = "p5.48xlarge,p5en.48xlarge,p6-b200.48xlarge,u-p6e-gb200x72";

/// Raw flag values of a plan; empty lists search every value.
struct PlanFlags {
  std::string model = "llama3.1-70b";
  int gpus = 512;
  std::int64_t seq = 8192;
  std::int64_t document_tokens = 0;    ///< mean tokens of the documents packed per sequence (0 = unpacked)
  bool grad_reduce_in_bf16 = false;    ///< gradients reduced in 16 bits (Megatron-LM --grad-reduce-in-bf16)
  parallelism::RecipeSwitches recipe;  ///< --full-iteration-cuda-graph ... for every candidate
  std::int64_t gbs = 1024;
  std::string tokens = "15T";
  std::string systems = kDefaultPlanSystems;
  std::string objective = "time";
  int top = 3;
  std::string gpus_range;                                               ///< "MIN:MAX": every doubling from MIN, and MAX
  std::string tp, pp, vp, cp, ep, mbs, precision, recompute, sharding;  ///< comma lists pinning the search
  std::string fp8_recipe = "tensorwise";
  int max_pp = 32;
  int max_tp = 0;
  int threads = 0;
  std::string stack = "megatron";
  std::string moe_dispatcher;
  std::string task = "pretrain";
  int lora_rank = 16;                       ///< with --task lora: adapter rank
  std::string lora_targets = "all-linear";  ///< with --task lora: modules with adapters
  std::string lora_base = "bf16";           ///< with --task lora: frozen weights' storage (nf4 = QLoRA)
  std::string calibration;                  ///< "" = the shipped data/calibration/training.yaml
};

/// The items of a comma-separated flag value ("p5, p5en"), blanks trimmed, empty items dropped.
std::vector<std::string> split_comma_list(const std::string& text);

/// The request the flags describe, checked against `calibration` (the stack and every system's
/// GPU must be calibrated) and the model (pinned tp/pp/vp/cp/ep/mbs must be able to divide it).
/// InputError naming the flag otherwise.
planner::PlanRequest make_plan_request(const PlanFlags& flags, const hardware::Catalog& catalog,
                                       const training::Calibration& calibration);

}  // namespace fmsim::jobspec
