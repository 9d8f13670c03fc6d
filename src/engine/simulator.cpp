// Event loop of the discrete-event core.
#include "engine/simulator.hpp"

#include "core/error.hpp"

namespace fmsim::engine {

void Simulator::schedule_at(core::SimTime at, Action action, int priority) {
  FMSIM_CHECK(at >= now_, "event scheduled in the past");
  queue_.push(Event{at, priority, sequence_++, std::move(action)});
}

core::SimTime Simulator::run() {
  while (!queue_.empty()) {
    Event e = queue_.top();
    queue_.pop();
    now_ = e.at;
    ++processed_;
    e.action(*this);
  }
  return now_;
}

void Simulator::run_until(core::SimTime until) {
  while (!queue_.empty() && queue_.top().at <= until) {
    Event e = queue_.top();
    queue_.pop();
    now_ = e.at;
    ++processed_;
    e.action(*this);
  }
  if (now_ < until) now_ = until;
}

}  // namespace fmsim::engine
