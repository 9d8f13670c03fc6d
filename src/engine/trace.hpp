// Trace events the engine emits while it simulates, and the sink interface exporters implement.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/sim_time.hpp"

namespace fmsim::engine {

/// One span of activity on one track. A track is one stream of one representative rank,
/// e.g. process "pp stage 0 (rank 0)", thread "compute".
struct TraceEvent {
  std::string process;   ///< groups tracks: a representative rank or a device
  std::string thread;    ///< the stream inside it: "compute", "tp", "dp", "pp", "ep"
  std::string name;      ///< what ran: "fwd mb3 layer 0-9", "all_reduce 512 MiB"
  std::string category;  ///< "compute", "comm", "bubble", "optimizer"
  core::SimTime start;
  core::SimTime duration;
  std::vector<std::pair<std::string, std::string>> args;  ///< extra key/values shown in the viewer
};

/// Receives trace events. Models never print; exporters (observability/) implement this.
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void record(const TraceEvent& event) = 0;
};

/// A sink that keeps every event in memory, in the order received.
class TraceBuffer final : public TraceSink {
 public:
  void record(const TraceEvent& event) override { events_.push_back(event); }
  [[nodiscard]] const std::vector<TraceEvent>& events() const { return events_; }

 private:
  std::vector<TraceEvent> events_;
};

}  // namespace fmsim::engine
