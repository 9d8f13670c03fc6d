// Fuzz target: a Hugging Face config.json (--model FILE), parsed and validated.
#include <exception>
#include <string>

#include "config/model_loader.hpp"
#include "core/error.hpp"
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto model = fmsim::config::parse_hf_config(text, "config.json", "fuzz");
    fmsim::config::validate_model(model, "config.json");
  } catch (const fmsim::core::InputError&) {
  } catch (const std::exception& e) {
    fmsim::fuzz::finding(std::string("parse_hf_config: ") + e.what());
  }
  return 0;
}
