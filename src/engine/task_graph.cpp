// Event-driven execution of a TaskGraph: streams advance as their head tasks' dependencies finish.
#include "engine/task_graph.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "engine/simulator.hpp"

namespace fmsim::engine {

StreamId TaskGraph::add_stream(std::string process, std::string thread) {
  streams_.push_back(Stream{std::move(process), std::move(thread), {}});
  return static_cast<StreamId>(streams_.size() - 1);
}

TaskId TaskGraph::add_task(StreamId stream, core::SimTime duration, std::vector<TaskId> deps, std::string name,
                           std::string category) {
  FMSIM_CHECK(stream >= 0 && static_cast<std::size_t>(stream) < streams_.size(), "unknown stream");
  FMSIM_CHECK(duration >= core::SimTime::zero(), "negative task duration");
  const auto id = static_cast<TaskId>(tasks_.size());
  for (TaskId d : deps) FMSIM_CHECK(d >= 0 && d < id, "dependency on a task not yet added");
  tasks_.push_back(Task{stream, duration, std::move(deps), std::move(name), std::move(category)});
  streams_[static_cast<std::size_t>(stream)].tasks.push_back(id);
  return id;
}

void TaskGraph::add_dependency(TaskId task, TaskId dep) {
  FMSIM_CHECK(task >= 0 && static_cast<std::size_t>(task) < tasks_.size() && dep >= 0 &&
                  static_cast<std::size_t>(dep) < tasks_.size() && dep != task,
              "bad dependency");
  tasks_[static_cast<std::size_t>(task)].deps.push_back(dep);
}

TaskGraph::Result TaskGraph::run(TraceSink* sink) const {
  const std::size_t n = tasks_.size();
  Result result;
  result.start.assign(n, core::SimTime::zero());
  result.finish.assign(n, core::SimTime::zero());
  result.busy.assign(streams_.size(), core::SimTime::zero());

  std::vector<int> pending(n, 0);
  std::vector<std::vector<TaskId>> dependents(n);
  for (std::size_t i = 0; i < n; ++i) {
    pending[i] = static_cast<int>(tasks_[i].deps.size());
    for (TaskId d : tasks_[i].deps) dependents[static_cast<std::size_t>(d)].push_back(static_cast<TaskId>(i));
  }
  std::vector<std::size_t> cursor(streams_.size(), 0);
  std::vector<bool> stream_busy(streams_.size(), false);
  std::size_t finished = 0;

  Simulator sim;
  // Starts the head task of stream s if it is ready. Completion is an event that frees the
  // stream and releases dependents; ties are resolved by the simulator's deterministic order.
  std::function<void(StreamId)> try_start = [&](StreamId s) {
    const auto si = static_cast<std::size_t>(s);
    if (stream_busy[si] || cursor[si] >= streams_[si].tasks.size()) return;
    const TaskId t = streams_[si].tasks[cursor[si]];
    const auto ti = static_cast<std::size_t>(t);
    if (pending[ti] > 0) return;
    stream_busy[si] = true;
    result.start[ti] = sim.now();
    sim.schedule_after(tasks_[ti].duration, [&, t, s](Simulator& simulator) {
      const auto ti2 = static_cast<std::size_t>(t);
      const auto si2 = static_cast<std::size_t>(s);
      result.finish[ti2] = simulator.now();
      result.busy[si2] += tasks_[ti2].duration;
      stream_busy[si2] = false;
      ++cursor[si2];
      ++finished;
      for (TaskId d : dependents[ti2]) {
        if (--pending[static_cast<std::size_t>(d)] == 0) try_start(tasks_[static_cast<std::size_t>(d)].stream);
      }
      try_start(s);
    });
  };
  for (std::size_t s = 0; s < streams_.size(); ++s) try_start(static_cast<StreamId>(s));
  result.makespan = sim.run();
  FMSIM_CHECK(finished == n, "task graph has a dependency cycle or a task that can never start");

  if (sink != nullptr) {
    for (std::size_t i = 0; i < n; ++i) {
      const Task& t = tasks_[i];
      if (t.duration == core::SimTime::zero()) continue;
      const Stream& s = streams_[static_cast<std::size_t>(t.stream)];
      sink->record(TraceEvent{s.process, s.thread, t.name, t.category, result.start[i], t.duration, {}});
    }
  }
  return result;
}

}  // namespace fmsim::engine
