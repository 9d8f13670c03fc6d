// Reading YAML into specs with errors that say `file:line: field: message` (shared by every loader).
//
// A YamlNode is a yaml-cpp node that remembers which file it came from, its 1-based line and its
// field path ("gpus[3].bf16"), so any conversion failure becomes a core::InputError naming all
// three. Typical use in a loader:
//
//   const YamlDocument doc = load_yaml_file(path, "--cluster");
//   const YamlNode root = doc.node();
//   root.check_keys({"kind", "system", "count"});          // unknown key -> error with did-you-mean
//   const std::string system = root["system"].as_string();  // missing -> "missing required field"
//   const int count = root["count"].as_int(Bound::Positive);
//   if (const auto cap = root.find("capacity")) bytes = cap->as_bytes(Bound::Positive);
//   for (const YamlNode& item : root["storage"].items()) { ... item["mount"] ... }
//
// Quantities parse through core::parse_* and must carry a unit ("80 GiB", "400 Gbps", "2.5 us").
#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/units.hpp"
#include "core/vocabulary.hpp"

namespace fmsim::config {

/// Which numbers a field accepts; the error message says which was violated.
enum class Bound { Any, NonNegative, Positive };

/// The magnitudes a quantity of one kind can have, orders of magnitude beyond every GPU, link,
/// store and duration there is: a non-zero value outside it is a typo or a slipped unit ("1e-30
/// TB/s" of HBM), and the time it would imply (1.6e10 s to read 16 GB at 1 B/s) overflows the
/// models' integer clock (2^63 ns, 292 years). `example` is shown when the unit is missing.
struct PhysicalRange {
  double lo = 0, hi = 0;   ///< in the quantity's base unit (B, B/s, FLOP/s, s, W)
  std::string_view noun;   ///< "bandwidth"
  std::string_view shown;  ///< "1 MB/s to 1 EB/s"
  std::string_view example;
};
inline constexpr PhysicalRange kBytesRange{1.0, 1e21, "size", "1 B to 1 ZB", "80 GiB"};
inline constexpr PhysicalRange kBandwidthRange{1e6, 1e18, "bandwidth", "1 MB/s to 1 EB/s", "400 Gbps"};
inline constexpr PhysicalRange kFlopsRange{1e9, 1e21, "compute rate", "1 GFLOPS to 1 ZFLOPS", "989.4 TFLOPS"};
inline constexpr PhysicalRange kDurationRange{1e-9, 3.2e9, "duration", "1 ns to 100 years", "20 us"};
inline constexpr PhysicalRange kPowerRange{1e-3, 1e8, "power", "1 mW to 100 MW", "700 W"};

class YamlNode;

/// A parsed document and the file name errors should report for it.
struct YamlDocument {
  std::string file;  ///< path as given by the user, or e.g. "data/hardware/gpus.yaml" for shipped data
  YAML::Node root;

  /// The root as a YamlNode with an empty field path.
  [[nodiscard]] YamlNode node() const;
};

/// Reads and parses a YAML file. An unreadable file is reported against `flag` (or the path when
/// `flag` is empty); malformed YAML as `file:line: malformed YAML: ...`.
YamlDocument load_yaml_file(const std::string& path, const std::string& flag = "");

/// Parses YAML text already in memory (embedded data, tests); `file` names it in messages.
YamlDocument load_yaml_text(std::string_view text, const std::string& file);

/// 1-based line of a node; 0 when unknown (an undefined node, or one built in memory).
int line_of(const YAML::Node& node);

/// A node of a YAML document with its file, line and field path, and conversions that raise
/// core::InputError(file, line, path, message) on bad input.
///
/// Indexing a missing key yields an undefined node that remembers the parent's line; reading a
/// value from it reports "missing required field". Use find() or has() for optional fields.
class YamlNode {
 public:
  YamlNode(std::string file, YAML::Node node, std::string path, int fallback_line = 0);
  YamlNode(const YamlNode& other) = default;
  /// Rebinds this YamlNode to `other`'s node. (Plain YAML::Node assignment would instead
  /// overwrite the node this one refers to, inside its document.)
  YamlNode& operator=(const YamlNode& other);

  [[nodiscard]] const std::string& file() const { return file_; }
  /// Dotted field path for messages: "gpus[3].bf16"; empty for a document root.
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] int line() const { return line_; }
  [[nodiscard]] const YAML::Node& raw() const { return *node_; }

  [[nodiscard]] bool is_defined() const { return defined_; }
  [[nodiscard]] bool is_null() const { return defined_ && node_->IsNull(); }
  [[nodiscard]] bool is_map() const { return defined_ && node_->IsMap(); }
  [[nodiscard]] bool is_sequence() const { return defined_ && node_->IsSequence(); }
  [[nodiscard]] bool is_scalar() const { return defined_ && node_->IsScalar(); }

  /// Throws core::InputError(file, line, path, message).
  [[noreturn]] void fail(const std::string& message) const;

  // --- structure ---------------------------------------------------------------------------

  /// True if this is a mapping holding `key`.
  [[nodiscard]] bool has(std::string_view key) const;
  /// The child under `key` (must be a mapping); undefined when absent.
  [[nodiscard]] YamlNode operator[](std::string_view key) const;
  /// The child under `key`, or nullopt when absent or null (`key:` with no value).
  [[nodiscard]] std::optional<YamlNode> find(std::string_view key) const;
  /// Elements of a sequence, with paths "path[i]". Fails unless this is a sequence.
  [[nodiscard]] std::vector<YamlNode> items() const;
  /// Key/value pairs of a mapping in file order (values carry paths "path.key"). Fails unless
  /// this is a mapping, or when a key is repeated (yaml-cpp would silently keep the first).
  [[nodiscard]] std::vector<std::pair<std::string, YamlNode>> entries() const;
  /// Fails unless this is a mapping whose keys are all in `allowed`; an unknown key is reported
  /// at its own line with the closest allowed names. Also rejects repeated keys.
  void check_keys(std::initializer_list<std::string_view> allowed) const;
  void check_keys(const std::vector<std::string>& allowed) const;
  /// Fails unless this is a mapping (message names what was expected, e.g. "a GPU entry").
  void expect_map(std::string_view what) const;

  // --- scalars -----------------------------------------------------------------------------

  /// The scalar text. Fails on a missing field, a mapping or a sequence, or an empty value.
  [[nodiscard]] std::string as_string() const;
  /// A finite number ("0.74", "1e-3"), checked against `bound`.
  [[nodiscard]] double as_number(Bound bound = Bound::Any) const;
  /// A whole number ("64"); "1.5" and "64 GPUs" are rejected.
  [[nodiscard]] int as_int(Bound bound = Bound::Any) const;
  /// true/false (also yes/no, on/off).
  [[nodiscard]] bool as_bool() const;
  /// A word of `words` (canonical name or alias, case-insensitive); fails listing the allowed words.
  template <class E>
  [[nodiscard]] E as_word(const core::Vocabulary<E>& words) const {
    const std::string text = as_string();
    if (const auto v = words.parse(text)) return *v;
    fail(words.error(text));
  }
  /// The word of `words` a map key names, this node being the key's value (the architecture of
  /// `gpus: {hopper: ...}`); fails at this node listing the allowed words.
  template <class E>
  [[nodiscard]] E key_word(std::string_view key, const core::Vocabulary<E>& words) const {
    if (const auto v = words.parse(key)) return *v;
    fail(words.error(key));
  }
  /// The canonical name of the word of `words` this holds ("distopt" -> "zero1").
  template <class E>
  [[nodiscard]] std::string as_word_name(const core::Vocabulary<E>& words) const {
    return std::string(words.name(as_word(words)));
  }
  /// A scalar or a sequence of scalars, as strings.
  [[nodiscard]] std::vector<std::string> as_string_list() const;

  // Quantities: a number and a unit, parsed by core::parse_*; a bare number is rejected, and so is
  // a non-zero magnitude outside the quantity's PhysicalRange.
  [[nodiscard]] core::Bytes as_bytes(Bound bound = Bound::Positive) const;
  [[nodiscard]] core::BytesPerSecond as_bandwidth(Bound bound = Bound::Positive) const;
  [[nodiscard]] core::FlopsPerSecond as_flops_rate(Bound bound = Bound::Positive) const;
  [[nodiscard]] core::Seconds as_duration(Bound bound = Bound::Positive) const;
  [[nodiscard]] core::Watts as_power(Bound bound = Bound::Positive) const;
  /// A number with one of the units in `units` (exact match after the number), e.g.
  /// as_number_with_unit({{"req/s", 1.0}, {"IOPS", 1.0}}) for "5500 req/s". Returns the
  /// number times the unit's factor.
  [[nodiscard]] double as_number_with_unit(std::initializer_list<std::pair<std::string_view, double>> units,
                                           Bound bound = Bound::Positive) const;

  /// Fails with the bound's message if `value` violates it; for values computed by the caller.
  void check_bound(double value, Bound bound, std::string_view shown) const;

 private:
  template <class T>
  T parse_quantity(core::Parsed<T> (*parse)(std::string_view), Bound bound, const PhysicalRange& range) const;

  std::string file_;
  std::optional<YAML::Node> node_;  // always engaged; optional only so assignment can rebind
  std::string path_;
  int line_ = 0;
  bool defined_ = false;
};

/// A data-file value with provenance, written `{value: "989.4 TFLOPS", source: "[GK-H100]"}`
/// with optional `verified: false`, `derived: true`, `note: "..."` and, for a fitted calibration
/// value, `prior: x` (the benchmark figure the fit starts from and is anchored to).
struct SourcedValue {
  YamlNode value;                        ///< the `value` child (convert with as_bytes() etc.)
  std::optional<YamlNode> prior;         ///< the `prior` child, when given
  std::optional<YamlNode> prior_spread;  ///< the `prior_spread` child (1-sigma of ln(prior)), when given
  std::string source;                    ///< empty when the value was written as a plain scalar
  bool verified = true;
  bool derived = false;
  std::string note;
};

/// Reads `node` as a sourced value. With `require_source`, a plain scalar or a mapping without a
/// non-empty `source` is an error; without it a plain scalar is accepted (source left empty).
/// `prior` and `prior_spread` are unknown keys unless `allow_prior` (fitted calibration values only).
SourcedValue read_sourced(const YamlNode& node, bool require_source, bool allow_prior = false);

}  // namespace fmsim::config
