// Tasks on in-order streams with cross-stream dependencies, played on the event core.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/sim_time.hpp"
#include "engine/trace.hpp"

namespace fmsim::engine {

using TaskId = std::int32_t;
using StreamId = std::int32_t;

/// A stream executes its tasks one at a time, in the order they were added (like a CUDA stream
/// or a NCCL communicator's queue). A task starts when it reaches the head of its stream and every
/// task it depends on has finished.
///
///   stream compute: [F0]-->[F1]-->[B0]-->[B1]
///                       \           ^
///   stream pp:           [send F0]--+   (B0 of the next stage waits for the send)
class TaskGraph {
 public:
  /// Declares a stream; `process`/`thread` name its trace track.
  StreamId add_stream(std::string process, std::string thread);
  /// Appends a task to `stream`. `deps` must be tasks already added.
  TaskId add_task(StreamId stream, core::SimTime duration, std::vector<TaskId> deps = {}, std::string name = {},
                  std::string category = {});
  /// Adds a dependency after the fact (dep must finish before task starts).
  void add_dependency(TaskId task, TaskId dep);

  [[nodiscard]] std::size_t task_count() const { return tasks_.size(); }
  [[nodiscard]] std::size_t stream_count() const { return streams_.size(); }

  struct Result {
    core::SimTime makespan;
    std::vector<core::SimTime> start;   ///< per task
    std::vector<core::SimTime> finish;  ///< per task
    std::vector<core::SimTime> busy;    ///< per stream: total time running tasks
  };
  /// Plays the graph from time zero on a Simulator. When `sink` is given, emits one trace event
  /// per task with a non-zero duration. A cycle (a task that can never start) is a bug: FMSIM_CHECK.
  [[nodiscard]] Result run(TraceSink* sink = nullptr) const;

 private:
  struct Task {
    StreamId stream;
    core::SimTime duration;
    std::vector<TaskId> deps;
    std::string name;
    std::string category;
  };
  struct Stream {
    std::string process;
    std::string thread;
    std::vector<TaskId> tasks;
  };
  std::vector<Task> tasks_;
  std::vector<Stream> streams_;
};

}  // namespace fmsim::engine
