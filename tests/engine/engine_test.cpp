// Discrete-event core and task-graph execution.
#include <gtest/gtest.h>

#include "engine/simulator.hpp"
#include "engine/task_graph.hpp"

namespace fmsim::engine {
namespace {

using core::SimTime;

// Events fire in time order; equal times by priority, then by scheduling order.
TEST(Simulator, OrdersByTimePriorityThenSequence) {
  Simulator sim;
  std::vector<int> order;
  sim.schedule_at(SimTime::from_ns(10), [&](Simulator&) { order.push_back(3); });
  sim.schedule_at(
      SimTime::from_ns(5), [&](Simulator&) { order.push_back(2); }, 1);
  sim.schedule_at(
      SimTime::from_ns(5), [&](Simulator&) { order.push_back(1); }, 0);
  sim.schedule_at(
      SimTime::from_ns(5), [&](Simulator&) { order.push_back(4); }, 1);
  EXPECT_EQ(sim.run(), SimTime::from_ns(10));
  EXPECT_EQ(order, (std::vector<int>{1, 2, 4, 3}));
}

// Handlers can schedule follow-ups; the clock advances to each event.
TEST(Simulator, HandlersScheduleFollowUps) {
  Simulator sim;
  int fired = 0;
  sim.schedule_at(SimTime::from_ns(1), [&](Simulator& s) {
    ++fired;
    s.schedule_after(SimTime::from_ns(4), [&](Simulator& s2) {
      ++fired;
      EXPECT_EQ(s2.now(), SimTime::from_ns(5));
    });
  });
  sim.run();
  EXPECT_EQ(fired, 2);
}

// Tasks on one stream run back to back: makespan = sum of durations.
TEST(TaskGraph, StreamIsSequential) {
  TaskGraph g;
  const auto s = g.add_stream("rank 0", "compute");
  g.add_task(s, SimTime::from_ns(3));
  g.add_task(s, SimTime::from_ns(4));
  EXPECT_EQ(g.run().makespan, SimTime::from_ns(7));
}

// Two streams overlap; a dependency delays the dependent task until its producer finishes:
// compute A(10) then B(10); comm C(5) depends on A -> finishes at 15; D(1) on compute depends on C
// -> starts at max(20, 15) = 20, makespan 21.
TEST(TaskGraph, CrossStreamDependencies) {
  TaskGraph g;
  const auto compute = g.add_stream("rank 0", "compute");
  const auto comm = g.add_stream("rank 0", "dp");
  const auto a = g.add_task(compute, SimTime::from_ns(10));
  g.add_task(compute, SimTime::from_ns(10));
  const auto c = g.add_task(comm, SimTime::from_ns(5), {a});
  const auto d = g.add_task(compute, SimTime::from_ns(1), {c});
  const auto r = g.run();
  EXPECT_EQ(r.finish[static_cast<std::size_t>(c)], SimTime::from_ns(15));
  EXPECT_EQ(r.start[static_cast<std::size_t>(d)], SimTime::from_ns(20));
  EXPECT_EQ(r.makespan, SimTime::from_ns(21));
  EXPECT_EQ(r.busy[static_cast<std::size_t>(comm)], SimTime::from_ns(5));
}

// A trace sink receives one event per non-empty task, on its stream's track.
TEST(TaskGraph, EmitsTraceEvents) {
  TaskGraph g;
  const auto s = g.add_stream("stage 0", "compute");
  g.add_task(s, SimTime::from_ns(3), {}, "fwd", "compute");
  g.add_task(s, SimTime::zero(), {}, "marker", "compute");
  TraceBuffer buffer;
  (void)g.run(&buffer);
  ASSERT_EQ(buffer.events().size(), 1u);
  EXPECT_EQ(buffer.events()[0].thread, "compute");
  EXPECT_EQ(buffer.events()[0].duration, SimTime::from_ns(3));
}

// Same graph, same result: execution is deterministic.
TEST(TaskGraph, Deterministic) {
  TaskGraph g;
  const auto s1 = g.add_stream("a", "x");
  const auto s2 = g.add_stream("b", "y");
  for (int i = 0; i < 50; ++i) {
    const auto t = g.add_task(s1, SimTime::from_ns(i % 7 + 1));
    g.add_task(s2, SimTime::from_ns(i % 5 + 1), {t});
  }
  EXPECT_EQ(g.run().finish, g.run().finish);
}

}  // namespace
}  // namespace fmsim::engine
