// Fuzz target: a Hugging Face config.json (--model FILE), parsed and validated.
#include <string>

#include "config/model_loader.hpp"
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fmsim::fuzz::parse_or_finding("parse_hf_config", [&] {
    const auto model = fmsim::config::parse_hf_config(text, "config.json", "fuzz");
    fmsim::config::validate_model(model, "config.json");
  });
  return 0;
}
