// Traces in the public column layouts (docs/models/orchestration.md).
#include <gtest/gtest.h>

#include "config/job_trace.hpp"
#include "core/error.hpp"

namespace fmsim::config {
namespace {

// Helios/Acme cluster_log.csv: node_num wins over gpu_num; times are UTC timestamps made relative
// to the first submission; no time limit column: limit = duration x 2 in whole minutes.
TEST(Trace, HeliosLayout) {
  const std::string text =
      "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
      "7,uA,vcX,16,64,2,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-09 19:41:01,3600,0\n"
      "8,uB,vcY,4,16,1,FAILED,2020-06-09 18:41:31,2020-06-09 18:42:01,2020-06-09 18:46:10,249,30\n";
  const auto jobs = parse_trace_csv(text, "cluster_log.csv", {});
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].id, 7);
  EXPECT_EQ(jobs[0].request.nodes, 2);
  EXPECT_EQ(jobs[0].account, "vcX");
  EXPECT_EQ(jobs[0].user, "uA");
  EXPECT_EQ(jobs[0].time_limit_s, 7200);
  EXPECT_EQ(jobs[1].submit_s, 30);
  EXPECT_EQ(jobs[1].run_s, 249);
  EXPECT_EQ(jobs[1].time_limit_s, 540);  // 498 s rounded up to 9 minutes
}

// Philly-like: GPU counts only; nodes = ceil(GPUs / GPUs per node); run time from start/end.
TEST(Trace, GpusOnlyAndStartEndTimes) {
  const std::string text =
      "jobid,user,vc,num_gpus,submitted_time,start_time,end_time\n"
      "a1,u,v,12,100,150,400\n";
  TraceOptions o;
  o.gpus_per_node = 8;
  const auto jobs = parse_trace_csv(text, "philly.csv", o);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].request.nodes, 2);
  EXPECT_EQ(jobs[0].run_s, 250);
  EXPECT_EQ(jobs[0].submit_s, 0);
  EXPECT_EQ(jobs[0].name, "a1");
}

TEST(Trace, MappingAndRoundTrip) {
  TraceOptions o;
  o.column_for = {{"nodes", "N"}, {"submit", "t"}};
  const auto jobs = parse_trace_csv("t,N,duration,time_limit,partition,nice\n5,3,60,120,gpu,10\n", "x.csv", o);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].request.nodes, 3);
  EXPECT_EQ(jobs[0].time_limit_s, 120);
  EXPECT_EQ(jobs[0].partition, "gpu");
  EXPECT_EQ(jobs[0].nice, 10);
  const auto again = parse_trace_csv(write_trace_csv(jobs), "again.csv", {});
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].request.nodes, 3);
  EXPECT_EQ(again[0].run_s, 60);
  EXPECT_EQ(again[0].partition, "gpu");
}

// A row with a model is a training job: its layout, batch, sequence and tokens are read, and it
// needs no duration (fmsim cluster computes it from the step time); without tokens it is an error.
TEST(Trace, TrainingJobColumns) {
  const auto jobs = parse_trace_csv(
      "id,submit,nodes,model,tp,pp,ep,gbs,seq,tokens,reservation\n"
      "7,0,16,gpt-oss-120b,1,1,64,256,4096,2e9,cb1\n",
      "jobs.csv", {});
  ASSERT_EQ(jobs.size(), 1u);
  const auto& t = jobs[0].training;
  EXPECT_EQ(t.model, "gpt-oss-120b");
  EXPECT_EQ(t.ep, 64);
  EXPECT_EQ(t.gbs, 256);
  EXPECT_EQ(t.seq, 4096);
  EXPECT_DOUBLE_EQ(t.tokens, 2e9);
  EXPECT_EQ(jobs[0].run_s, 0);
  EXPECT_EQ(jobs[0].reservation, "cb1");
  EXPECT_THROW(parse_trace_csv("id,submit,nodes,model\n1,0,2,llama3.1-8b\n", "jobs.csv", {}), core::InputError);
  EXPECT_THROW(parse_trace_csv("id,submit,nodes,model,tokens,tp\n1,0,2,llama3.1-8b,1e9,2.5\n", "jobs.csv", {}),
               core::InputError);
}

TEST(Trace, ErrorsNameFileLineAndColumn) {
  try {
    parse_trace_csv("id,submit,nodes,duration\n1,0,2,100\n2,0,x,100\n", "t.csv", {});
    FAIL();
  } catch (const core::InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("t.csv:3"), std::string::npos) << what;
    EXPECT_NE(what.find("nodes"), std::string::npos) << what;
  }
  EXPECT_THROW(parse_trace_csv("id,nodes,duration\n1,2,3\n", "t.csv", {}), core::InputError);   // no submit
  EXPECT_THROW(parse_trace_csv("id,submit,duration\n1,2,3\n", "t.csv", {}), core::InputError);  // no size
  EXPECT_THROW(parse_trace_csv("id,submit,nodes,duration\n", "t.csv", {}), core::InputError);   // no rows
  // Dates are years 1900 to 9999 with non-negative clock fields: a year of -2147483648 overflowed
  // the tm_year arithmetic (fuzz_traces under UBSan), a negative minute wrapped into the hour.
  for (const char* when :
       {"-2147483648-01-01 00:00:00", "1899-12-31 00:00:00", "10000-01-01 00:00:00", "2024-01-01 00:-5:00"}) {
    try {
      parse_trace_csv(std::string("id,submit,nodes,duration\n1,") + when + ",2,100\n", "t.csv", {});
      ADD_FAILURE() << when;
    } catch (const core::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("is not a time"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(parse_trace_csv("id,submit,nodes,duration\n1,1970-01-02 00:00:00,2,100\n", "t.csv", {}).size(), 1u);
  TraceOptions o;
  o.column_for = {{"walltime", "x"}};
  EXPECT_THROW(parse_trace_csv("id,submit,nodes,duration\n1,0,1,1\n", "t.csv", o), core::InputError);
}

}  // namespace
}  // namespace fmsim::config
