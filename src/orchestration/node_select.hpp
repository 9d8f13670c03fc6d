// Which nodes a whole-node job gets, as Slurm 22.05's select/cons_tres picks them
// (src/plugins/select/cons_tres/job_test.c):
// - no topology (_eval_nodes): runs of consecutive free nodes; the smallest run that holds the
//   job, else the largest run first and so on; nodes taken from the low end of each run;
// - topology/tree (_eval_nodes_topo): under the highest switch that holds enough free nodes,
//   leaves are taken one at a time, the best leaf being the nearest to those already chosen and,
//   at equal distance, the one that holds the rest of the job with the fewest free nodes (or,
//   when none holds it, the one with most); nodes within a leaf in index order;
// - block placement (topology/block, --segment): whole segments inside NVLink blocks, blocks
//   with the fewest free nodes that still hold a segment first; --exclusive=topo takes whole blocks.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/vocabulary.hpp"
#include "orchestration/cluster_layout.hpp"

namespace fmsim::orchestration {

/// Set bits of a word. std::popcount compiles to a call into libgcc's table-driven __popcountdi2
/// when the target lacks POPCNT (generic x86-64, the project's build): 12% of the Slurm twin's
/// replay time in perf. The SWAR sum below is inline and branch-free on any target; with
/// -mpopcnt (or -march with it) the instruction is used.
inline int popcount64(std::uint64_t x) {
#if defined(__POPCNT__)
  return std::popcount(x);
#else
  x -= (x >> 1) & 0x5555555555555555ULL;
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return static_cast<int>((x * 0x0101010101010101ULL) >> 56);
#endif
}

/// A set of node indices as a bitmap.
class NodeSet {
 public:
  NodeSet() = default;
  explicit NodeSet(int size, bool all = false)
      : size_(size), words_(static_cast<std::size_t>((size + 63) / 64), all ? ~0ULL : 0ULL) {
    trim();
  }
  [[nodiscard]] int size() const { return size_; }
  /// Removes every member (keeps the size and the storage).
  void clear() {
    for (auto& w : words_) w = 0;
  }
  [[nodiscard]] bool test(int i) const { return (words_[static_cast<std::size_t>(i >> 6)] >> (i & 63)) & 1ULL; }
  void set(int i) { words_[static_cast<std::size_t>(i >> 6)] |= 1ULL << (i & 63); }
  void reset(int i) { words_[static_cast<std::size_t>(i >> 6)] &= ~(1ULL << (i & 63)); }
  /// Removes the nodes of a list, one write per run of them in one word (ascending: once per word
  /// touched) rather than per node, which makes a chain of read-modify-writes of one word.
  void reset_sorted(const std::vector<int>& nodes) {
    std::size_t i = 0;
    while (i < nodes.size()) {
      const int w = nodes[i] >> 6;
      std::uint64_t bits = 0;
      for (; i < nodes.size() && (nodes[i] >> 6) == w; ++i) bits |= 1ULL << (nodes[i] & 63);
      words_[static_cast<std::size_t>(w)] &= ~bits;
    }
  }
  [[nodiscard]] int count() const {
    int c = 0;
    for (auto w : words_) c += popcount64(w);
    return c;
  }
  NodeSet& operator&=(const NodeSet& o) {
    for (std::size_t i = 0; i < words_.size(); ++i) words_[i] &= o.words_[i];
    return *this;
  }
  NodeSet& operator|=(const NodeSet& o) {
    for (std::size_t i = 0; i < words_.size(); ++i) words_[i] |= o.words_[i];
    return *this;
  }
  void subtract(const NodeSet& o) {
    for (std::size_t i = 0; i < words_.size(); ++i) words_[i] &= ~o.words_[i];
  }
  /// Count of (this AND o) without building it.
  [[nodiscard]] int count_and(const NodeSet& o) const {
    int c = 0;
    for (std::size_t i = 0; i < words_.size(); ++i) c += popcount64(words_[i] & o.words_[i]);
    return c;
  }
  [[nodiscard]] std::vector<int> members() const;
  /// Calls f(node) for every member, ascending.
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t w = 0; w < words_.size(); ++w)
      for (std::uint64_t bits = words_[w]; bits; bits &= bits - 1) f(static_cast<int>(w * 64) + std::countr_zero(bits));
  }
  /// Maximal runs of consecutive members as [first, last] pairs, ascending.
  [[nodiscard]] std::vector<std::pair<int, int>> runs() const;
  /// Calls f(first, last) for every maximal run of consecutive members, ascending; stops early
  /// when f returns false (an f that returns nothing sees every run).
  template <class F>
  void for_each_run(F&& f) const {
    auto call = [&](int first, int last) {
      if constexpr (std::is_same_v<decltype(f(first, last)), bool>)
        return f(first, last);
      else {
        f(first, last);
        return true;
      }
    };
    int start = -1;  // first node of the run in progress; -1 when none
    for (std::size_t w = 0; w < words_.size(); ++w) {
      const std::uint64_t bits = words_[w];
      int pos = 0;
      while (pos < 64) {
        if (start < 0) {
          const std::uint64_t rest = bits >> pos;
          if (rest == 0) break;
          pos += std::countr_zero(rest);
          start = static_cast<int>(w * 64) + pos;
        }
        pos += std::countr_one(bits >> pos);
        if (pos < 64) {
          if (!call(start, static_cast<int>(w * 64) + pos - 1)) return;
          start = -1;
        }
      }
    }
    if (start >= 0) call(start, static_cast<int>(words_.size() * 64) - 1);
  }
  friend bool operator==(const NodeSet&, const NodeSet&) = default;

 private:
  void trim() {
    if (size_ % 64 && !words_.empty()) words_.back() &= (1ULL << (size_ % 64)) - 1;
  }
  int size_ = 0;
  std::vector<std::uint64_t> words_;
};

/// How a job asks for nodes.
struct NodeRequest {
  int nodes = 1;
  int segment = 0;              ///< --segment: nodes that must share one block (topology/block); 0 = none
  bool exclusive_topo = false;  ///< --exclusive=topo: its blocks are not shared with other jobs
};

/// How select/cons_tres picks a job's nodes: in node order (topology/none), within the fewest
/// leaf switches (topology/tree), or within NVLink blocks (topology/block).
enum class Placement { Consecutive, Tree, Block };
/// The words of `fmsim cluster --placement` and --compare.
inline constexpr core::Word<Placement> kPlacementWordList[] = {
    {Placement::Consecutive, "consecutive", "none"},
    {Placement::Tree, "tree"},
    {Placement::Block, "block"},
};
inline constexpr core::Vocabulary<Placement> kPlacementWords{"placement", kPlacementWordList};

/// Chooses nodes from `available` for the request; empty when it cannot be met.
/// For Placement::Block `blocked` marks blocks already held by an --exclusive=topo job (ignored
/// otherwise).
std::vector<int> select_nodes(const ClusterLayout& layout, Placement placement, const NodeSet& available,
                              const NodeRequest& request);

/// True when select_nodes would succeed (cheap count tests first).
bool can_place(const ClusterLayout& layout, Placement placement, const NodeSet& available, const NodeRequest& request);

}  // namespace fmsim::orchestration
