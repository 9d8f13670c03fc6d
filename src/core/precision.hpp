// Numeric formats a GPU computes in; shared by hardware (peak rates) and workload (bytes per value).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/vocabulary.hpp"

namespace fmsim::core {

/// Tensor-core compute precision. FP8 covers per-tensor (delayed/current) and block-scaled
/// (MXFP8) recipes; FP4 covers NVFP4/MXFP4.
enum class Precision { FP64, TF32, BF16, FP16, FP8, FP4 };

/// Every numeric format (catalog peaks, calibration keys).
inline constexpr Word<Precision> kPrecisionWordList[] = {
    {Precision::FP64, "fp64"}, {Precision::TF32, "tf32", "fp32"}, {Precision::BF16, "bf16"},
    {Precision::FP16, "fp16"}, {Precision::FP8, "fp8", "mxfp8"},  {Precision::FP4, "fp4", "nvfp4, mxfp4"},
};
inline constexpr Vocabulary<Precision> kPrecisionWords{"precision", kPrecisionWordList};

/// The compute precisions a training job may ask for (`--precision` of train, plan, run, goodput).
inline constexpr Word<Precision> kTrainingPrecisionWordList[] = {
    {Precision::BF16, "bf16"},
    {Precision::FP16, "fp16"},
    {Precision::FP8, "fp8", "mxfp8"},
    {Precision::FP4, "fp4", "nvfp4, mxfp4"},
};
inline constexpr Vocabulary<Precision> kTrainingPrecisionWords{"training precision", kTrainingPrecisionWordList};

/// Canonical lower-case name: "bf16", "fp8", ...
constexpr std::string_view to_string(Precision p) { return kPrecisionWords.name(p); }

/// Any word of kPrecisionWords (case-insensitive); nullopt otherwise.
std::optional<Precision> parse_precision(std::string_view text);

/// How an FP8 GEMM's inputs are scaled; it sets which kernel runs and how much quantisation work
/// surrounds it (Transformer Engine and torchao recipe names).
enum class Fp8Recipe {
  Tensorwise,  ///< one scale per tensor, delayed or current (TE DelayedScaling / Float8CurrentScaling, torchao
               ///< "tensorwise")
  Rowwise,  ///< one scale per row (torchao "rowwise": CUTLASS row-scaled GEMM, each operand quantised along two axes)
  Block,    ///< one scale per block of 32 or 128 values (MXFP8 on Blackwell, TE Float8BlockScaling on Hopper)
};

inline constexpr Word<Fp8Recipe> kFp8RecipeWordList[] = {
    {Fp8Recipe::Tensorwise, "tensorwise"},
    {Fp8Recipe::Rowwise, "rowwise"},
    {Fp8Recipe::Block, "block", "blockwise, mxfp8"},
};
inline constexpr Vocabulary<Fp8Recipe> kFp8RecipeWords{"FP8 recipe", kFp8RecipeWordList};

constexpr std::string_view to_string(Fp8Recipe r) { return kFp8RecipeWords.name(r); }

/// Any word of kFp8RecipeWords (case-insensitive); nullopt otherwise.
std::optional<Fp8Recipe> parse_fp8_recipe(std::string_view text);

/// "bf16", "fp8", and for FP8 under another recipe "fp8-rowwise" / "fp8-block" (layout labels).
std::string precision_label(Precision p, Fp8Recipe r);

/// Bytes of one value stored in this precision (FP4 = 0.5).
constexpr double bytes_per_value(Precision p) {
  switch (p) {
    case Precision::FP64: return 8.0;
    case Precision::TF32: return 4.0;
    case Precision::BF16: return 2.0;
    case Precision::FP16: return 2.0;
    case Precision::FP8: return 1.0;
    case Precision::FP4: return 0.5;
  }
  return 2.0;
}

}  // namespace fmsim::core
