// Reading a word of a closed setting from a flag: the setting's vocabulary (core/vocabulary.hpp)
// decides what is accepted, this turns a refusal into the InputError every command prints.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/vocabulary.hpp"

namespace fmsim::config {

/// The value `text` names; InputError naming `flag` and listing the allowed words otherwise.
template <class E>
E word_flag(const core::Vocabulary<E>& words, std::string_view text, const std::string& flag) {
  if (const auto v = words.parse(text)) return *v;
  throw core::InputError::flag(flag, words.error(text));
}

/// Each word of a comma-separated list ("zero1,fsdp"), in order; empty for an empty `text` (a
/// search over every value); InputError on any unknown word or a list of only commas.
template <class E>
std::vector<E> word_list_flag(const core::Vocabulary<E>& words, std::string_view text, const std::string& flag) {
  std::vector<E> out;
  const bool given = !text.empty();
  while (!text.empty()) {
    const auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.push_back(word_flag(words, item, flag));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  if (given && out.empty()) throw core::InputError::flag(flag, "expected one or more of: " + words.allowed());
  return out;
}

}  // namespace fmsim::config
