// validation/inference.csv: published spellings of engines, GPUs, models and precisions mapped to
// fmsim's names.
#include "config/inference_csv.hpp"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <sstream>

#include "config/csv.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/vocabulary.hpp"
#include "serving/plan.hpp"

namespace fmsim::config {
namespace {

bool contains(const std::string& text, std::string_view what) {
  return core::to_lower(text).find(what) != std::string::npos;
}

std::optional<double> number(const std::string& cell) {
  if (cell.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const double v = std::stod(cell, &used);
    return used == cell.size() ? std::optional<double>(v) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Published model names -> presets of the same architecture.
std::string model_key(const std::string& text) {
  const std::string t = core::to_lower(text);
  const std::pair<const char*, const char*> table[] = {
      {"llama-3.1-8b", "llama3.1-8b"},        {"llama-3.3-70b", "llama3.1-70b"},
      {"llama-3-70b", "llama3.1-70b"},        {"llama-3.1-70b", "llama3.1-70b"},
      {"llama-3.1-405b", "llama3.1-405b"},    {"qwen3-235b-a22b", "qwen3-235b-a22b"},
      {"deepseek-r1", "deepseek-v3"},         {"deepseek-v3", "deepseek-v3"},
      {"gpt-oss-120b", "gpt-oss-120b"},       {"gpt-oss-20b", "gpt-oss-20b"},
      {"mixtral-8x7b", "mixtral-8x7b"},       {"mixtral-8x22b", "mixtral-8x22b"},
      {"llama-4-maverick", "llama4-maverick"}};
  for (const auto& [k, v] : table) {
    if (t.find(k) != std::string::npos) return v;
  }
  return {};
}

// GPU SKUs -> the catalog system a row's GPUs sit in.
std::string system_key(const std::string& gpu) {
  const std::string g = core::to_lower(gpu);
  if (g.find("gb200") != std::string::npos) return "u-p6e-gb200x72";
  if (g.find("gb300") != std::string::npos) return {};  // no GB300 system in the catalog yet
  if (g.find("b300") != std::string::npos) return "p6-b300.48xlarge";
  if (g.find("b200") != std::string::npos) return "p6-b200.48xlarge";
  if (g.find("h200") != std::string::npos) return "p5en.48xlarge";
  if (g.find("h100") != std::string::npos) return "p5.48xlarge";
  if (g.find("a100") != std::string::npos) return "p4de.24xlarge";
  return {};
}

}  // namespace

std::vector<InferenceRow> read_inference_csv(const std::string& csv_path) {
  std::string path;  // what messages call the file: csv_path, or the built-in copy's name
  const std::string text = read_measurements(csv_path, "inference.csv", "--csv", path);
  const CsvTable table(parse_csv(text, path), path, "empty file: expected a header row");
  table.require({"id",
                 "engine",
                 "gpu",
                 "gpu_count",
                 "model",
                 "precision",
                 "kv_cache_dtype",
                 "tp",
                 "pp",
                 "ep",
                 "attn_dp",
                 "num_instances",
                 "serving_mode",
                 "scenario",
                 "isl",
                 "osl",
                 "concurrency_or_batch",
                 "output_tok_s_per_gpu",
                 "ttft_ms_mean",
                 "tpot_ms_mean",
                 "e2e_ms_mean"},
                "missing column (validation/README.md lists the schema)");
  std::vector<InferenceRow> rows;
  for (std::size_t i = 0; i < table.rows(); ++i) {
    auto cell = [&](const char* name) { return table.cell(i, name); };
    InferenceRow r;
    r.line = table.line(i);
    r.id = cell("id");
    r.engine_text = cell("engine");
    r.gpu_text = cell("gpu");
    r.model_text = cell("model");
    r.scenario_text = cell("scenario");
    r.output_tok_s_per_gpu = number(cell("output_tok_s_per_gpu"));
    r.ttft_ms = number(cell("ttft_ms_mean"));
    r.tpot_ms = number(cell("tpot_ms_mean"));
    r.e2e_ms = number(cell("e2e_ms_mean"));
    auto fail = [&](std::string why) {
      if (r.reason.empty()) r.reason = std::move(why);
    };
    // Engine.
    if (contains(r.engine_text, "tensorrt") || contains(r.engine_text, "nim"))
      r.engine = serving::EngineKind::TrtLlm;
    else if (contains(r.engine_text, "vllm"))
      r.engine = serving::EngineKind::Vllm;
    else if (contains(r.engine_text, "sglang"))
      r.engine = serving::EngineKind::Sglang;
    else
      fail("unknown engine '" + r.engine_text + "'");
    r.model = model_key(r.model_text);
    if (r.model.empty()) fail("no preset for model '" + r.model_text + "'");
    r.system = system_key(r.gpu_text);
    if (r.system.empty()) fail("no catalog system for GPU '" + r.gpu_text + "'");
    // Precision: weights first word, KV from the cell or the precision text.
    const std::string prec = core::to_lower(cell("precision"));
    if (prec.find("mxfp4") != std::string::npos) {
      r.weights = core::Precision::FP4;
      r.activations = core::Precision::FP8;  // MXFP4 weights x MXFP8 activations (TensorRT-LLM's MoE backends)
    } else if (prec.rfind("fp4", 0) == 0)
      r.weights = core::Precision::FP4;
    else if (prec.rfind("fp8", 0) == 0)
      r.weights = core::Precision::FP8;
    else if (prec.rfind("bf16", 0) == 0 || prec.rfind("fp16", 0) == 0)
      r.weights = core::Precision::BF16;
    else
      fail("unknown precision '" + cell("precision") + "'");
    const std::string kv = core::to_lower(cell("kv_cache_dtype")) + " " + prec;
    // Quantised checkpoints of TensorRT-LLM ship an FP8 KV cache (kv_cache_quant_algo FP8).
    r.kv = kv.find("fp8 kv") != std::string::npos || r.weights != core::Precision::BF16 ? core::Precision::FP8
                                                                                        : core::Precision::BF16;
    auto whole = [&](const char* name, int fallback) {
      const auto v = number(cell(name));
      // Outside int's range a cast is undefined; such a cell counts as absent.
      return v && *v >= -2e9 && *v <= 2e9 ? static_cast<int>(*v) : fallback;
    };
    r.gpu_count = whole("gpu_count", 1);
    r.tp = whole("tp", 1);
    r.pp = whole("pp", 1);
    r.ep = whole("ep", 1);
    r.instances = whole("num_instances", 1);
    // attn_dp: blank (not stated), yes/no, or the attention DP degree.
    const std::string adp = cell("attn_dp");
    if (const auto degree = number(adp)) {
      r.attention_dp = *degree > 1;
    } else if (const auto yes = core::kYesNoWords.parse(adp)) {
      r.attention_dp = *yes;
    } else if (!adp.empty()) {
      fail("attn_dp '" + adp + "' (allowed: " + core::kYesNoWords.allowed() + " or the attention DP degree)");
    }
    if (serving::kServingModeWords.parse(cell("serving_mode")) != serving::ServingMode::Aggregated)
      fail("serving mode '" + cell("serving_mode") + "' (only aggregated rows are predicted)");
    r.isl = static_cast<std::int64_t>(number(cell("isl")).value_or(0));
    r.osl = static_cast<std::int64_t>(number(cell("osl")).value_or(0));
    if (r.isl <= 0 || r.osl <= 0) fail("no ISL/OSL");
    const std::string sc = core::to_lower(r.scenario_text);
    const auto conc = number(cell("concurrency_or_batch"));
    if (sc.find("offline") != std::string::npos || sc.find("max-throughput") != std::string::npos) {
      r.scenario = BenchmarkScenario::Offline;
      r.arrival = serving::ArrivalKind::Offline;
    } else if (sc.find("closed-loop") != std::string::npos) {
      r.scenario = BenchmarkScenario::ClosedLoop;
      r.arrival = serving::ArrivalKind::ClosedLoop;
      if (!conc) fail("closed loop without a concurrency");
      r.concurrency = conc ? static_cast<int>(*conc) : 0;
    } else if (sc.find("static batch") != std::string::npos) {
      r.scenario = BenchmarkScenario::StaticBatch;
      r.arrival = serving::ArrivalKind::Offline;
      if (!conc) fail("static batch without a batch size");
      r.concurrency = conc ? static_cast<int>(*conc) : 0;
    } else {
      fail("unknown scenario '" + r.scenario_text + "'");
    }
    if (!r.output_tok_s_per_gpu && !r.ttft_ms && !r.tpot_ms && !r.e2e_ms) fail("no measured throughput or latency");
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace fmsim::config
