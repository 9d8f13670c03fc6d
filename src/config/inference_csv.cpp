// validation/inference.csv: published spellings of engines, GPUs, models and precisions mapped to
// fmsim's names.
#include "config/inference_csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "config/csv.hpp"
#include "config/model_loader.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/vocabulary.hpp"
#include "serving/serving_mode.hpp"

namespace fmsim::config {
namespace {

// Clients of a closed loop, or a static batch, at most (the simulation keeps 3 requests per client).
constexpr int kMaxConcurrency = 4096;
// A tensor, pipeline or expert parallel width at most (the largest NVLink domain is 72 GPUs).
constexpr int kMaxWidth = 4096;

bool contains(const std::string& text, std::string_view what) {
  return core::to_lower(text).find(what) != std::string::npos;
}

std::optional<double> number(const std::string& cell) {
  if (cell.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const double v = std::stod(cell, &used);
    // nan and inf are no measurement and no layout.
    return used == cell.size() && std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// GPU SKUs -> the catalog system a row's GPUs sit in.
std::string system_key(const std::string& gpu) {
  const std::string g = core::to_lower(gpu);
  if (g.find("gb200") != std::string::npos) return "u-p6e-gb200x72";
  if (g.find("gb300") != std::string::npos) return "gb300-nvl72";
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
    r.engine_version = cell("engine_version");
    r.source_type = cell("source_type");
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
    r.model = preset_for_published_name(r.model_text);
    if (r.model.empty()) fail("no preset for model '" + r.model_text + "' (a preset matches its Hugging Face repo id)");
    r.system = system_key(r.gpu_text);
    if (r.system.empty()) fail("no catalog system for GPU '" + r.gpu_text + "'");
    // Precision: weights first word, KV from the cell or the precision text.
    std::string prec = core::to_lower(cell("precision"));
    // A blank precision is the checkpoint's own: a quantised checkpoint names its format in its
    // repo id (nvidia/...-FP8, ...-NVFP4); the others ship BF16 weights (config.json torch_dtype).
    if (prec.empty()) {
      const std::string m = core::to_lower(r.model_text);
      prec = m.find("nvfp4") != std::string::npos ? "fp4" : m.find("fp8") != std::string::npos ? "fp8" : "bf16";
    }
    if (prec.find("int4") != std::string::npos || prec.find("int8") != std::string::npos) {
      fail("precision '" + cell("precision") +
           "' (integer weight-only formats are not modelled; allowed: BF16, FP16, FP8, NVFP4, MXFP4)");
    } else if (prec.find("mxfp4") != std::string::npos) {
      r.weights = core::Precision::FP4;
      r.activations = core::Precision::FP8;  // MXFP4 weights x MXFP8 activations (TensorRT-LLM's MoE backends)
    } else if (prec.rfind("fp4", 0) == 0 || prec.rfind("nvfp4", 0) == 0)
      r.weights = core::Precision::FP4;
    else if (prec.rfind("fp8", 0) == 0)
      r.weights = core::Precision::FP8;
    else if (prec.rfind("bf16", 0) == 0 || prec.rfind("fp16", 0) == 0)
      r.weights = core::Precision::BF16;
    else
      fail("unknown precision '" + cell("precision") + "' (allowed: BF16, FP16, FP8, NVFP4, MXFP4)");
    const std::string kv = core::to_lower(cell("kv_cache_dtype")) + " " + prec;
    // Quantised checkpoints of TensorRT-LLM ship an FP8 KV cache (kv_cache_quant_algo FP8).
    r.kv = kv.find("fp8 kv") != std::string::npos || r.weights != core::Precision::BF16 ? core::Precision::FP8
                                                                                        : core::Precision::BF16;
    auto whole = [&](const char* name, int fallback) {
      const auto v = number(cell(name));
      // Outside int's range a cast is undefined; such a cell counts as absent.
      return v && *v >= -2e9 && *v <= 2e9 ? static_cast<int>(*v) : fallback;
    };
    // A parallel width: 1 to kMaxWidth, so that products of widths stay far inside int.
    auto width = [&](const char* name) {
      const int w = whole(name, 1);
      if (w < 1 || w > kMaxWidth) fail(fmt::format("{} {} out of range (1 to {})", name, w, kMaxWidth));
      return std::clamp(w, 1, kMaxWidth);
    };
    if (cell("gpu_count").empty()) fail("no gpu_count (the source's layout does not add up to a GPU count)");
    r.gpu_count = whole("gpu_count", 1);
    r.tp = width("tp");
    r.pp = width("pp");
    r.ep = width("ep");
    r.instances = whole("num_instances", 1);
    // attn_dp: blank (not stated), yes/no (the tp GPUs of a stage are attention-DP ranks), or the
    // attention DP degree d, with tp the attention TP inside one rank (AIConfigurator's layout:
    // GPUs per stage = tp x d). fmsim's attention DP spans a whole stage: d ranks of tp 1.
    auto attention = [&](const std::string& text, int& tp, bool& on, const std::string& pool_name) {
      const std::string what = pool_name.empty() ? std::string("layout:") : pool_name + " pool:";
      if (const auto degree = number(text)) {
        if (*degree > 1) {
          if (tp > 1) {
            fail(
                fmt::format("{} attention DP {} over groups of tensor parallel {} (modelled: attention DP over the "
                            "whole stage, tp 1 per rank)",
                            what, *degree, tp));
            return;
          }
          if (*degree > 4096) {
            fail(what + " attention DP degree out of range (at most 4096)");
            return;
          }
          tp = static_cast<int>(*degree);
          on = true;
        }
      } else if (const auto yes = core::kYesNoWords.parse(text)) {
        on = *yes;
      } else if (!text.empty()) {
        fail(what + " attn_dp '" + text + "' (allowed: " + core::kYesNoWords.allowed() +
             " or the attention DP degree)");
      }
    };
    attention(cell("attn_dp"), r.tp, r.attention_dp, "");
    const auto mode = serving::kServingModeWords.parse(cell("serving_mode"));
    if (!mode) {
      fail("serving mode '" + cell("serving_mode") + "' (allowed: " + serving::kServingModeWords.allowed() + ")");
    } else if (*mode == serving::ServingMode::Disaggregated) {
      r.disaggregated = true;
      // The pools' layouts (validation/inference_aic.csv's prefill_* and decode_* columns).
      auto pool = [&](const std::string& p, PoolLayout& out) {
        if (!table.has(p + "_tp") || cell((p + "_tp").c_str()).empty()) {
          fail("disaggregated row without the " + p + " pool's layout (" + p + "_tp, " + p + "_workers)");
          return;
        }
        out.tp = width((p + "_tp").c_str());
        out.pp = width((p + "_pp").c_str());
        out.ep = width((p + "_ep").c_str());
        attention(cell((p + "_attn_dp").c_str()), out.tp, out.attention_dp, p);
        if (cell((p + "_workers").c_str()).empty()) fail("disaggregated row without " + p + "_workers");
        out.workers = whole((p + "_workers").c_str(), 1);
        out.batch = whole((p + "_batch").c_str(), 0);
        if (out.tp < 1 || out.pp < 1 || out.ep < 1 || out.workers < 1 || out.batch < 0 || out.workers > 4096)
          fail(p + " pool layout out of range (tp, pp, ep >= 1; 1 <= workers <= 4096)");
      };
      pool("prefill", r.prefill);
      pool("decode", r.decode);
    }
    const double isl = number(cell("isl")).value_or(0), osl = number(cell("osl")).value_or(0);
    // Up to 1M tokens each (a longer request is no published benchmark and would overflow counts).
    r.isl = isl >= 1 && isl <= 1 << 20 ? static_cast<std::int64_t>(isl) : 0;
    r.osl = osl >= 1 && osl <= 1 << 20 ? static_cast<std::int64_t>(osl) : 0;
    if (r.isl <= 0 || r.osl <= 0) fail("no ISL/OSL (each 1 to 1,048,576 tokens)");
    const std::string sc = core::to_lower(r.scenario_text);
    const auto conc = number(cell("concurrency_or_batch"));
    if (sc.find("offline") != std::string::npos || sc.find("max-throughput") != std::string::npos) {
      r.scenario = BenchmarkScenario::Offline;
      r.arrival = serving::ArrivalKind::Offline;
    } else if (sc.find("closed-loop") != std::string::npos) {
      r.scenario = BenchmarkScenario::ClosedLoop;
      r.arrival = serving::ArrivalKind::ClosedLoop;
      if (!conc) fail("closed loop without a concurrency");
      r.concurrency = conc && *conc >= 1 && *conc <= kMaxConcurrency ? static_cast<int>(*conc) : 0;
      if (conc && r.concurrency == 0)
        fail(fmt::format("concurrency {} out of range (1 to {})", *conc, kMaxConcurrency));
    } else if (sc.find("static batch") != std::string::npos) {
      r.scenario = BenchmarkScenario::StaticBatch;
      r.arrival = serving::ArrivalKind::Offline;
      if (!conc) fail("static batch without a batch size");
      r.concurrency = conc && *conc >= 1 && *conc <= kMaxConcurrency ? static_cast<int>(*conc) : 0;
      if (conc && r.concurrency == 0) fail(fmt::format("batch {} out of range (1 to {})", *conc, kMaxConcurrency));
    } else {
      fail("unknown scenario '" + r.scenario_text + "'");
    }
    // Engine limits as the run set them (optional columns; blank = the engine's defaults).
    auto limit = [&](const std::string& column, int most, int& into) {
      if (const auto v = number(cell(column.c_str()))) {
        if (*v < 1 || *v > most)
          fail(fmt::format("{} out of range (1 to {})", column, most));
        else
          into = static_cast<int>(*v);
      }
    };
    limit("max_batch", 1 << 16, r.max_batch);
    limit("max_num_tokens", 1 << 22, r.max_num_tokens);
    limit("prefill_max_num_tokens", 1 << 22, r.prefill.max_num_tokens);
    limit("decode_max_num_tokens", 1 << 22, r.decode.max_num_tokens);
    limit("profiled_rounds", 1000, r.profiled_rounds);
    if (r.profiled_rounds > 0 && r.scenario != BenchmarkScenario::ClosedLoop)
      fail("profiled_rounds on a row that is not a closed loop");
    if (const std::string chunked = cell("chunked_prefill"); !chunked.empty()) {
      if (const auto yes = core::kYesNoWords.parse(chunked))
        r.chunked_prefill = *yes;
      else
        fail("chunked_prefill '" + chunked + "' (allowed: " + core::kYesNoWords.allowed() + ")");
    }
    if (!r.output_tok_s_per_gpu && !r.ttft_ms && !r.tpot_ms && !r.e2e_ms) fail("no measured throughput or latency");
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace fmsim::config
