#include "config/sacctmgr_dump.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "core/error.hpp"

namespace fmsim::config {

namespace {

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string unquote(const std::string& s) {
  const std::string t = trim(s);
  if (t.size() >= 2 && t.front() == '\'' && t.back() == '\'') return t.substr(1, t.size() - 2);
  return t;
}

}  // namespace

orchestration::FairShareTree parse_sacctmgr_dump(const std::string& text, const std::string& path) {
  orchestration::FairShareTree tree;
  std::istringstream in(text);
  std::string parent = "root";
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (const auto hash = line.find('#'); hash != std::string::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    const auto dash = line.find(" - ");
    if (dash == std::string::npos)
      throw core::InputError(path, line_no, "line", "expected 'Cluster|Parent|Account|User - 'name'[:Key=Value...]'");
    const std::string kind = trim(line.substr(0, dash));
    std::vector<std::string> fields;
    {
      // Fields split on ':' outside quotes.
      std::string cur;
      bool quoted = false;
      for (char ch : line.substr(dash + 3)) {
        if (ch == '\'') quoted = !quoted;
        if (ch == ':' && !quoted) {
          fields.push_back(cur);
          cur.clear();
        } else {
          cur += ch;
        }
      }
      fields.push_back(cur);
    }
    const std::string name = unquote(fields[0]);
    if (name.empty()) throw core::InputError(path, line_no, kind, "the name is empty");
    double shares = 1;
    for (std::size_t i = 1; i < fields.size(); ++i) {
      const auto eq = fields[i].find('=');
      if (eq == std::string::npos) continue;
      std::string key = trim(fields[i].substr(0, eq));
      std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
      if (key != "fairshare") continue;
      const std::string v = unquote(fields[i].substr(eq + 1));
      try {
        std::size_t used = 0;
        shares = std::stod(v, &used);
        if (used != v.size() || !(shares >= 0) || !std::isfinite(shares)) throw std::invalid_argument("");
      } catch (const std::exception&) {
        throw core::InputError(path, line_no, "Fairshare",
                               fmt::format("'{}' is not a number of shares (0 or more; 'parent' is not modelled)", v));
      }
    }
    if (kind == "Cluster") continue;
    if (kind == "Parent") {
      if (name != "root" && tree.find_account(name) < 0)
        throw core::InputError(path, line_no, "Parent",
                               fmt::format("account '{}' is not defined above this line", name));
      parent = name;
    } else if (kind == "Account") {
      if (tree.find_account(name) >= 0)
        throw core::InputError(path, line_no, "Account", fmt::format("account '{}' is defined twice", name));
      tree.add_account(name, parent, shares);
    } else if (kind == "User") {
      tree.set_shares(tree.user_association(parent, name), shares);
    } else {
      throw core::InputError(path, line_no, kind, "not allowed; use Cluster, Parent, Account or User");
    }
  }
  return tree;
}

}  // namespace fmsim::config
