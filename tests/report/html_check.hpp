// A small HTML well-formedness checker for the report tests: balanced tags, quoted attributes,
// no raw '<' or stray '&' in text.
#pragma once

#include <cctype>
#include <set>
#include <string>
#include <vector>

namespace fmsim::report::testing {

/// One start tag found in the document: its name and raw attribute text.
struct StartTag {
  std::string name;
  std::string attributes;
};

/// Checks that every non-void element is closed in order (HTML void elements and XML-style
/// "<x/>" excepted), attributes are double-quoted, and text between tags has no '<' and only
/// entity-form '&' (&name; or &#digits;). <script> and <style> bodies are skipped. Returns the
/// problems found (empty when well-formed) and appends start tags to `tags` when given.
inline std::vector<std::string> check_html(const std::string& html, std::vector<StartTag>* tags = nullptr) {
  static const std::set<std::string> kVoid = {"area",  "base", "br",   "col",    "embed", "hr", "img",
                                              "input", "link", "meta", "source", "track", "wbr"};
  std::vector<std::string> problems;
  std::vector<std::string> stack;
  const auto check_text = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) {
      if (html[i] != '&') continue;
      std::size_t k = i + 1;
      if (k < to && html[k] == '#') {
        ++k;
        while (k < to && std::isdigit(static_cast<unsigned char>(html[k]))) ++k;
      } else {
        while (k < to && std::isalpha(static_cast<unsigned char>(html[k]))) ++k;
      }
      if (k == i + 1 || k >= to || html[k] != ';') problems.push_back("bare '&' at offset " + std::to_string(i));
    }
  };
  std::size_t i = 0;
  while (i < html.size()) {
    const std::size_t lt = html.find('<', i);
    check_text(i, lt == std::string::npos ? html.size() : lt);
    if (lt == std::string::npos) break;
    if (html.compare(lt, 4, "<!--") == 0) {
      i = html.find("-->", lt);
      if (i == std::string::npos) return {"unterminated comment"};
      i += 3;
      continue;
    }
    if (html.compare(lt, 2, "<!") == 0) {
      i = html.find('>', lt) + 1;
      continue;
    }
    const bool closing = lt + 1 < html.size() && html[lt + 1] == '/';
    std::size_t k = lt + (closing ? 2 : 1);
    std::string name;
    while (k < html.size() && (std::isalnum(static_cast<unsigned char>(html[k])) || html[k] == '-')) name += html[k++];
    if (name.empty()) {
      problems.push_back("raw '<' in text at offset " + std::to_string(lt));
      i = lt + 1;
      continue;
    }
    // Attributes: name="value" pairs, values without '<' or '"'.
    const std::size_t attr_start = k;
    bool self_closing = false;
    while (k < html.size() && html[k] != '>') {
      if (html[k] == '"') {
        const std::size_t end = html.find('"', k + 1);
        if (end == std::string::npos) return {"unterminated attribute in <" + name + ">"};
        if (html.find('<', k + 1) < end) problems.push_back("'<' inside an attribute of <" + name + ">");
        check_text(k + 1, end);
        k = end + 1;
        continue;
      }
      if (html[k] == '\'' || html[k] == '<') problems.push_back("bad character in tag <" + name + ">");
      if (html[k] == '/' && k + 1 < html.size() && html[k + 1] == '>') self_closing = true;
      ++k;
    }
    if (k >= html.size()) return {"unterminated tag <" + name + ">"};
    const std::string attributes = html.substr(attr_start, k - attr_start);
    i = k + 1;
    if (closing) {
      if (stack.empty() || stack.back() != name) {
        problems.push_back("</" + name + "> closes <" + (stack.empty() ? std::string("nothing") : stack.back()) + ">");
      } else {
        stack.pop_back();
      }
      continue;
    }
    if (tags != nullptr) tags->push_back({name, attributes});
    if (self_closing || kVoid.contains(name)) continue;
    if (name == "script" || name == "style") {
      const std::size_t end = html.find("</" + name + ">", i);
      if (end == std::string::npos) return {"unterminated <" + name + ">"};
      i = end + name.size() + 3;
      continue;
    }
    stack.push_back(name);
  }
  for (const auto& open : stack) problems.push_back("<" + open + "> is never closed");
  return problems;
}

}  // namespace fmsim::report::testing
