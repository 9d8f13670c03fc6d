// Fair-share as Slurm's priority/multifactor computes it, over the association tree slurmdbd keeps
// (root -> accounts -> sub-accounts -> users), with usage that decays by PriorityDecayHalfLife.
// config/sacctmgr_dump.hpp reads the tree from `sacctmgr dump` output.
//
// Fair Tree (the default since Slurm 19.05; slurm.schedmd.com/fair_tree.html):
//   Level Fairshare of an association among its siblings: LF = S / U with
//     S = RawShares(self) / RawShares(self and siblings),
//     U = RawUsage(self)  / RawUsage(self and siblings)   (LF = infinity when its usage is 0);
//   the tree is walked depth first, siblings in descending LF; every user gets a rank counting
//   down from the number of user associations, users of equal LF share one rank, and accounts of
//   equal LF have their children merged and sorted together. FairShare = rank / user count, so the
//   highest-ranked user gets 1.0.
// Classic (PriorityFlags=NO_FAIR_TREE; slurm.schedmd.com/classic_fair_share.html):
//   F = 2^(-Ueff/S), S the product of the shares down the path, normalised among siblings at each
//   level, and Ueff = Uself + (Ueff(parent) - Uself) x Sself/Ssiblings with U the usage normalised
//   to the whole cluster's.
#pragma once

#include <string>
#include <vector>

namespace fmsim::orchestration {

class FairShareTree {
 public:
  struct Association {
    std::string name;  ///< account name, or user name for a user association
    bool user = false;
    int parent = -1;        ///< -1 for root
    double raw_shares = 1;  ///< Fairshare= in sacctmgr
    double raw_usage = 0;   ///< decayed usage (node-seconds); accounts hold the sum of their subtree
    std::vector<int> children;
    double level_fs = 0;   ///< Fair Tree's S/U among its siblings
    double fairshare = 0;  ///< the factor priority/multifactor uses (users)
  };

  /// A tree holding only root.
  FairShareTree();

  /// Adds (or finds) an account under `parent` ("root" or an account); returns its index.
  int add_account(const std::string& name, const std::string& parent, double shares = 1);
  /// The user association of `user` under `account`, created with 1 share (the account, under root,
  /// too) when absent.
  int user_association(const std::string& account, const std::string& user);
  [[nodiscard]] int find_account(const std::string& name) const;  ///< -1 when absent
  /// Sets an association's raw shares (Fairshare= of `sacctmgr`; config/sacctmgr_dump.hpp reads them).
  void set_shares(int assoc, double shares);

  /// Adds usage to a user association and every account above it.
  void add_usage(int assoc, double usage);
  /// Multiplies every usage by `factor` (the half-life decay of one PriorityCalcPeriod).
  void decay(double factor);

  /// Recomputes every user's factor (Fair Tree, or classic when `fair_tree` is false).
  void recompute(bool fair_tree);
  [[nodiscard]] double fairshare(int user_assoc) const {
    return assocs_[static_cast<std::size_t>(user_assoc)].fairshare;
  }

  [[nodiscard]] const std::vector<Association>& associations() const { return assocs_; }
  [[nodiscard]] int users() const;

 private:
  int attach(Association a);  ///< appends under a.parent; returns its index
  void rank_level(std::vector<int> siblings, int& rank, int& next_rank, int user_count);
  void classic(int assoc, double parent_ueff, double parent_share, double total_usage);
  std::vector<Association> assocs_;
};

}  // namespace fmsim::orchestration
