// Headless Chromium for the browser tests: run it on a page with a fresh profile and read back
// what the report's probe script wrote into the DOM. Tests skip themselves when /usr/bin/chromium
// is absent (`make test-deps` installs Debian's chromium package).
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace fmsim::testing {

inline constexpr const char* kChromium = "/usr/bin/chromium";

inline bool has_chromium() { return std::filesystem::exists(kChromium); }

/// The whole content of a file ("" when it cannot be read).
inline std::string read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Runs headless Chromium on `page` with `args`: a fresh profile in dir/profile-NAME, no network
/// features, a 60 s limit so a hung browser cannot stall CI; stdout and stderr go to dir/NAME.out
/// and dir/NAME.err. Returns the exit status (-1 when it did not exit).
inline int headless_chromium(const std::filesystem::path& dir, const std::filesystem::path& page,
                             const std::string& name, const std::string& args) {
  const std::filesystem::path profile = dir / ("profile-" + name);
  const std::string command = "timeout 60 " + std::string(kChromium) +
                              " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
                              " --disable-background-networking --disable-component-update --disable-sync"
                              " --disable-dev-shm-usage --disable-extensions --hide-scrollbars"
                              " --user-data-dir='" +
                              profile.string() + "' " + args + " 'file://" + page.string() + "' > '" +
                              (dir / (name + ".out")).string() + "' 2> '" + (dir / (name + ".err")).string() + "'";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// The value of the first `attribute="..."` in a dumped DOM, or nullopt when it is not there.
inline std::optional<std::string> dom_attribute(const std::string& dom, const std::string& attribute) {
  const std::string key = " " + attribute + "=\"";
  const std::size_t at = dom.find(key);
  if (at == std::string::npos) return std::nullopt;
  const std::size_t start = at + key.size();
  return dom.substr(start, dom.find('"', start) - start);
}

/// How a report lays out in a window `width` CSS px wide: the probe script's
/// data-fmsim-page-width ("SCROLL/CLIENT") and data-fmsim-overflow (tables wider than the page).
struct PageFit {
  int exit_code = -1;
  std::optional<std::string> page_width, overflow;
  std::string log;  ///< Chromium's stderr, for failure messages
};
/// With `print`, the page is opened as PAGE#print: its probe script applies the @media print rules
/// on screen, so the layout measured is the printed one at that width.
inline PageFit page_fit(const std::filesystem::path& dir, const std::filesystem::path& page, const std::string& name,
                        int width, bool print = false) {
  PageFit fit;
  fit.exit_code = headless_chromium(dir, print ? std::filesystem::path(page.string() + "#print") : page, name,
                                    "--window-size=" + std::to_string(width) + ",1000 --dump-dom");
  const std::string dom = read_file_bytes(dir / (name + ".out"));
  fit.page_width = dom_attribute(dom, "data-fmsim-page-width");
  fit.overflow = dom_attribute(dom, "data-fmsim-overflow");
  fit.log = read_file_bytes(dir / (name + ".err"));
  return fit;
}

}  // namespace fmsim::testing
