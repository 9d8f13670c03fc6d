// A small deterministic discrete-event core: schedule_at(time, action), run().
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "core/sim_time.hpp"

namespace fmsim::engine {

/// Discrete-event simulator. Events fire in (time, priority, sequence) order, so equal-time events
/// run in a reproducible order: lower priority first, then the order they were scheduled.
/// Handlers receive the simulator and may schedule follow-up events. Passed by reference, never global.
class Simulator {
 public:
  using Action = std::function<void(Simulator&)>;

  /// Schedules `action` at absolute time `at` (not before now()).
  void schedule_at(core::SimTime at, Action action, int priority = 0);
  /// Schedules `action` `delay` after now().
  void schedule_after(core::SimTime delay, Action action, int priority = 0) {
    schedule_at(now_ + delay, std::move(action), priority);
  }
  /// Runs until no event is left; returns the time of the last event.
  core::SimTime run();
  /// Runs events up to and including time `until`.
  void run_until(core::SimTime until);

  [[nodiscard]] core::SimTime now() const { return now_; }
  [[nodiscard]] std::uint64_t events_processed() const { return processed_; }
  [[nodiscard]] bool empty() const { return queue_.empty(); }

 private:
  struct Event {
    core::SimTime at;
    int priority;
    std::uint64_t sequence;
    Action action;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.at != b.at) return a.at > b.at;
      if (a.priority != b.priority) return a.priority > b.priority;
      return a.sequence > b.sequence;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> queue_;
  core::SimTime now_ = core::SimTime::zero();
  std::uint64_t sequence_ = 0;
  std::uint64_t processed_ = 0;
};

}  // namespace fmsim::engine
