// The accepted words of a closed setting (an enum class): one canonical name per value, printed in
// every output, and the aliases a user may also type. Every flag, job file, CSV reader and binding
// that reads such a setting parses it through its table, so `--sharding distopt` means the same
// thing to every command and every error lists the same words. Each table lives beside its enum,
// in the module that owns the concept (parallelism::kShardingWords, training::kTaskWords, ...).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/strings.hpp"

namespace fmsim::core {

/// Lower case, without '-', '_' and spaces: the form words are compared in, so "Shard_Grad_Op",
/// "shard-grad-op" and "shardgradop" are one word.
std::string fold_word(std::string_view text);

/// One value and how it is written: `name` is canonical, `aliases` is a comma-separated list.
template <class E>
struct Word {
  E value;
  std::string_view name;
  std::string_view aliases = {};
};

/// The words of one setting, e.g. Vocabulary<Sharding>{"sharding", kShardingWordList}.
template <class E>
class Vocabulary {
 public:
  constexpr Vocabulary(std::string_view setting, std::span<const Word<E>> words) : setting_(setting), words_(words) {}

  /// The setting's name as used in messages ("sharding", "recompute policy").
  [[nodiscard]] constexpr std::string_view setting() const { return setting_; }
  [[nodiscard]] constexpr std::span<const Word<E>> words() const { return words_; }

  /// The value `text` names (canonical name or alias, case, '-' and '_' ignored); nullopt otherwise.
  [[nodiscard]] std::optional<E> parse(std::string_view text) const {
    // The canonical spelling needs no folding: callers that store a parsed value as its name and
    // parse it again (per estimate) take this path.
    for (const auto& w : words_) {
      if (w.name == text) return w.value;
    }
    const std::string t = fold_word(text);
    if (t.empty()) return std::nullopt;
    for (const auto& w : words_) {
      if (fold_word(w.name) == t) return w.value;
      for (const auto& a : split_aliases(w.aliases)) {
        if (fold_word(a) == t) return w.value;
      }
    }
    return std::nullopt;
  }

  /// The canonical name of `value` ("?" for a value missing from the table, which a test forbids).
  [[nodiscard]] constexpr std::string_view name(E value) const {
    for (const auto& w : words_) {
      if (w.value == value) return w.name;
    }
    return "?";
  }

  /// The canonical names, in table order.
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& w : words_) out.emplace_back(w.name);
    return out;
  }

  /// "ddp (none), zero1 (distopt, distributed-optimizer), zero2, zero3 (fsdp)": every word accepted.
  [[nodiscard]] std::string allowed() const {
    std::string out;
    for (const auto& w : words_) {
      if (!out.empty()) out += ", ";
      out += w.name;
      const auto aliases = split_aliases(w.aliases);
      if (!aliases.empty()) {
        std::vector<std::string> parts(aliases.begin(), aliases.end());
        out += " (" + join(parts, ", ") + ")";
      }
    }
    return out;
  }

  /// "unknown sharding 'x'; allowed: ...; did you mean ...?" for a word parse() refused.
  [[nodiscard]] std::string error(std::string_view text) const {
    std::vector<std::string> all;
    for (const auto& w : words_) {
      all.emplace_back(w.name);
      for (const auto& a : split_aliases(w.aliases)) all.emplace_back(a);
    }
    const auto close = closest_matches(text, all);
    std::string out = "unknown " + std::string(setting_) + " '" + std::string(text) + "'; allowed: " + allowed();
    if (!close.empty()) out += "; did you mean " + join(close, " or ") + "?";
    return out;
  }

 private:
  static std::vector<std::string> split_aliases(std::string_view aliases) {
    std::vector<std::string> out;
    while (!aliases.empty()) {
      const auto comma = aliases.find(',');
      std::string_view item = aliases.substr(0, comma);
      while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
      while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
      if (!item.empty()) out.emplace_back(item);
      if (comma == std::string_view::npos) break;
      aliases.remove_prefix(comma + 1);
    }
    return out;
  }

  std::string_view setting_;
  std::span<const Word<E>> words_;
};

/// A yes/no setting: YAML's booleans, the cells of validation CSVs ("yes", "true", "on") and
/// slurm.conf's YES/NO keys (Default=, FavorSmall=, which Slurm also accepts as 1 and 0).
inline constexpr Word<bool> kYesNoWordList[] = {
    {true, "yes", "true, on, 1"},
    {false, "no", "false, off, 0"},
};
inline constexpr Vocabulary<bool> kYesNoWords{"yes/no setting", kYesNoWordList};

/// The optimizer states' data type (Megatron-Core `--main-params-dtype`/`--exp-avg-dtype`,
/// NeMo's bf16 Adam): true when the moments (and master weights) are kept in 16 bits.
inline constexpr Word<bool> kOptimizerDtypeWordList[] = {
    {false, "fp32", "float32"},
    {true, "bf16", "bfloat16"},
};
inline constexpr Vocabulary<bool> kOptimizerDtypeWords{"optimizer dtype", kOptimizerDtypeWordList};

}  // namespace fmsim::core
