// Playback of recorded series (see recording.hpp).
#include "telemetry/recording.hpp"

#include <algorithm>

#include "observability/openmetrics.hpp"

namespace fmsim::telemetry {

std::string exposition_at(const Recording& recording, std::int64_t at_unix_s) {
  std::string out;
  for (const auto& family : recording.families) {
    bool header = false;
    for (const auto& s : family.series) {
      const auto it = std::upper_bound(s.timestamps_s.begin(), s.timestamps_s.end(), at_unix_s);
      if (it == s.timestamps_s.begin()) continue;
      if (!header) {
        out += "# HELP " + family.name + ' ' + family.help + '\n';
        out += "# TYPE " + family.name + ' ' + family.type + '\n';
        header = true;
      }
      out += s.name_and_labels;
      out += ' ';
      observability::append_metric_value(out, s.values[static_cast<std::size_t>(it - s.timestamps_s.begin() - 1)]);
      out += '\n';
    }
  }
  return out;
}

}  // namespace fmsim::telemetry
