// Element types of a collective's buffer, as nccl-tests names them (-d/--datatype) and NCCL's
// ncclDataType_t spells them (ncclInt8 = ncclChar, ncclFloat16 = ncclHalf, ncclFloat32 =
// ncclFloat, ncclFloat64 = ncclDouble, ncclFloat8e4m3/e5m2), with their sizes.
#pragma once

#include "core/vocabulary.hpp"

namespace fmsim::collectives {

enum class DataType { Int8, Uint8, Fp8, Half, Bfloat16, Float, Int32, Uint32, Double, Int64, Uint64 };

/// The words of `fmsim collective --dtype`.
inline constexpr core::Word<DataType> kDataTypeWordList[] = {
    {DataType::Int8, "int8", "char"},
    {DataType::Uint8, "uint8"},
    {DataType::Fp8, "fp8", "f8e4m3, f8e5m2, float8"},
    {DataType::Half, "half", "float16, fp16"},
    {DataType::Bfloat16, "bfloat16", "bf16"},
    {DataType::Float, "float", "float32, fp32"},
    {DataType::Int32, "int32", "int"},
    {DataType::Uint32, "uint32"},
    {DataType::Double, "double", "float64, fp64"},
    {DataType::Int64, "int64"},
    {DataType::Uint64, "uint64"},
};
inline constexpr core::Vocabulary<DataType> kDataTypeWords{"data type", kDataTypeWordList};

/// Bytes of one element.
constexpr int element_bytes(DataType t) {
  switch (t) {
    case DataType::Int8:
    case DataType::Uint8:
    case DataType::Fp8: return 1;
    case DataType::Half:
    case DataType::Bfloat16: return 2;
    case DataType::Float:
    case DataType::Int32:
    case DataType::Uint32: return 4;
    case DataType::Double:
    case DataType::Int64:
    case DataType::Uint64: break;
  }
  return 8;
}

}  // namespace fmsim::collectives
