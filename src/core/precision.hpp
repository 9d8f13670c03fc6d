// Numeric formats a GPU computes in; shared by hardware (peak rates) and workload (bytes per value).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fmsim::core {

/// Tensor-core compute precision. FP8 covers per-tensor (delayed/current) and block-scaled
/// (MXFP8) recipes; FP4 covers NVFP4/MXFP4.
enum class Precision { FP64, TF32, BF16, FP16, FP8, FP4 };

/// Canonical lower-case name: "bf16", "fp8", ...
constexpr std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::FP64: return "fp64";
    case Precision::TF32: return "tf32";
    case Precision::BF16: return "bf16";
    case Precision::FP16: return "fp16";
    case Precision::FP8: return "fp8";
    case Precision::FP4: return "fp4";
  }
  return "?";
}

/// Parses "bf16", "fp16", "fp8", "fp4", "tf32", "fp64" (case-insensitive); nullopt otherwise.
std::optional<Precision> parse_precision(std::string_view text);

/// How an FP8 GEMM's inputs are scaled; it sets which kernel runs and how much quantisation work
/// surrounds it (Transformer Engine and torchao recipe names).
enum class Fp8Recipe {
  Tensorwise,  ///< one scale per tensor, delayed or current (TE DelayedScaling / Float8CurrentScaling, torchao "tensorwise")
  Rowwise,     ///< one scale per row (torchao "rowwise": CUTLASS row-scaled GEMM, each operand quantised along two axes)
  Block,       ///< one scale per block of 32 or 128 values (MXFP8 on Blackwell, TE Float8BlockScaling on Hopper)
};

constexpr std::string_view to_string(Fp8Recipe r) {
  switch (r) {
    case Fp8Recipe::Tensorwise: return "tensorwise";
    case Fp8Recipe::Rowwise: return "rowwise";
    case Fp8Recipe::Block: return "block";
  }
  return "?";
}

/// Parses "tensorwise", "rowwise", "block" (also "mxfp8", "blockwise"; case-insensitive).
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
