// Values as the documents write them into JSON.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>

namespace fmsim::documents {

/// A number, or null where it is not finite (JSON has no infinity or NaN): a cost or a time that
/// never ends, a ratio to nothing.
inline nlohmann::json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

}  // namespace fmsim::documents
