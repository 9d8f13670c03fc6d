#include "orchestration/fair_share.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fmsim::orchestration {

FairShareTree::FairShareTree() {
  Association root;
  root.name = "root";
  assocs_.push_back(root);
}

int FairShareTree::find_account(const std::string& name) const {
  for (std::size_t i = 0; i < assocs_.size(); ++i)
    if (!assocs_[i].user && assocs_[i].name == name) return static_cast<int>(i);
  return -1;
}

int FairShareTree::add_account(const std::string& name, const std::string& parent, double shares) {
  if (const int found = find_account(name); found >= 0) return found;
  int p = find_account(parent);
  if (p < 0) p = add_account(parent, "root");
  Association a;
  a.name = name;
  a.parent = p;
  a.raw_shares = shares;
  return attach(std::move(a));
}

int FairShareTree::attach(Association a) {
  const int parent = a.parent;
  assocs_.push_back(std::move(a));
  const int idx = static_cast<int>(assocs_.size()) - 1;
  assocs_[static_cast<std::size_t>(parent)].children.push_back(idx);
  return idx;
}

int FairShareTree::user_association(const std::string& account_in, const std::string& user) {
  const std::string account = account_in.empty() ? "root" : account_in;
  const int acct = find_account(account) >= 0 ? find_account(account) : add_account(account, "root");
  for (int c : assocs_[static_cast<std::size_t>(acct)].children)
    if (assocs_[static_cast<std::size_t>(c)].user && assocs_[static_cast<std::size_t>(c)].name == user) return c;
  Association u;
  u.name = user;
  u.user = true;
  u.parent = acct;
  return attach(std::move(u));
}

void FairShareTree::set_shares(int assoc, double shares) {
  assocs_[static_cast<std::size_t>(assoc)].raw_shares = shares;
}

int FairShareTree::users() const {
  return static_cast<int>(std::count_if(assocs_.begin(), assocs_.end(), [](const Association& a) { return a.user; }));
}

void FairShareTree::add_usage(int assoc, double usage) {
  for (int a = assoc; a >= 0; a = assocs_[static_cast<std::size_t>(a)].parent)
    assocs_[static_cast<std::size_t>(a)].raw_usage += usage;
}

void FairShareTree::decay(double factor) {
  for (auto& a : assocs_) a.raw_usage *= factor;
}

void FairShareTree::recompute(bool fair_tree) {
  // Level fairshare of every association among its siblings (also what sshare -l shows).
  for (auto& parent : assocs_) {
    double shares = 0, usage = 0;
    for (int c : parent.children) {
      shares += assocs_[static_cast<std::size_t>(c)].raw_shares;
      usage += assocs_[static_cast<std::size_t>(c)].raw_usage;
    }
    for (int c : parent.children) {
      auto& a = assocs_[static_cast<std::size_t>(c)];
      const double s = shares > 0 ? a.raw_shares / shares : 0.0;
      const double u = usage > 0 ? a.raw_usage / usage : 0.0;
      a.level_fs = u > 0 ? s / u : std::numeric_limits<double>::infinity();
    }
  }
  const int n = users();
  if (n == 0) return;
  if (!fair_tree) {
    const double total = assocs_[0].raw_usage;
    for (int c : assocs_[0].children) classic(c, 0.0, 1.0, total);
    return;
  }
  int rank = n, next_rank = n;
  rank_level(assocs_[0].children, rank, next_rank, n);
}

void FairShareTree::rank_level(std::vector<int> siblings, int& rank, int& next_rank, int user_count) {
  // Descending level fairshare; equal values keep their order (users and accounts as added).
  std::stable_sort(siblings.begin(), siblings.end(), [&](int a, int b) {
    return assocs_[static_cast<std::size_t>(a)].level_fs > assocs_[static_cast<std::size_t>(b)].level_fs;
  });
  double previous = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t i = 0; i < siblings.size(); ++i) {
    const auto& a = assocs_[static_cast<std::size_t>(siblings[i])];
    const bool tied = a.level_fs == previous;
    if (a.user) {
      if (!tied) rank = next_rank;
      assocs_[static_cast<std::size_t>(siblings[i])].fairshare = static_cast<double>(rank) / user_count;
      --next_rank;
    } else {
      // Accounts tied with this one: their children are ranked together.
      std::vector<int> merged = a.children;
      std::size_t j = i + 1;
      for (; j < siblings.size(); ++j) {
        const auto& b = assocs_[static_cast<std::size_t>(siblings[j])];
        if (b.user || b.level_fs != a.level_fs) break;
        merged.insert(merged.end(), b.children.begin(), b.children.end());
      }
      rank_level(merged, rank, next_rank, user_count);
      i = j - 1;
    }
    previous = a.level_fs;
  }
}

void FairShareTree::classic(int assoc, double parent_ueff, double parent_share, double total_usage) {
  auto& a = assocs_[static_cast<std::size_t>(assoc)];
  double sibling_shares = 0;
  for (int c : assocs_[static_cast<std::size_t>(a.parent)].children)
    sibling_shares += assocs_[static_cast<std::size_t>(c)].raw_shares;
  const double local = sibling_shares > 0 ? a.raw_shares / sibling_shares : 0.0;
  const double share = parent_share * local;
  const double u = total_usage > 0 ? a.raw_usage / total_usage : 0.0;
  const double ueff = a.parent == 0 ? u : u + (parent_ueff - u) * local;
  if (a.user) a.fairshare = share > 0 ? std::pow(2.0, -ueff / share) : 0.0;
  for (int c : a.children) classic(c, ueff, share, total_usage);
}

}  // namespace fmsim::orchestration
