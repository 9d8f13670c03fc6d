// The engines' host costs measured from serving rows (fit_engine_overheads): on rows whose
// residuals follow the model exactly, the fit returns the costs that made them.
#include "jobspec/validate_inference.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace fmsim::jobspec {
namespace {

InferenceRowResult row(serving::EngineKind engine, int clients, double tpot_gap_ms, double ttft_gap_ms) {
  InferenceRowResult r;
  r.predicted = true;
  r.row.engine = engine;
  r.row.scenario = config::BenchmarkScenario::ClosedLoop;
  r.row.concurrency = clients;
  r.tpot = {10.0 + tpot_gap_ms, 10.0};
  r.ttft = {100.0 + ttft_gap_ms, 100.0};
  return r;
}

TEST(EngineOverheadFit, RecoversTheHostCostsThatMadeTheResiduals) {
  // TPOT residual = iteration_overhead + sequence_overhead x clients (no attention DP, no batch
  // cap); TTFT residual at <= 8 clients = request_overhead + that step cost.
  const double it_ms = 2.5, seq_us = 20.0, req_ms = 60.0;
  std::vector<InferenceRowResult> rows;
  for (const int c : {1, 2, 4, 8, 16, 64, 256}) {
    const double step_ms = it_ms + seq_us * 1e-3 * c;
    rows.push_back(row(serving::EngineKind::Vllm, c, step_ms, req_ms + step_ms));
  }
  // A broken measurement (a TPOT 50x its neighbours') does not pull a least-absolute-deviations fit.
  rows.push_back(row(serving::EngineKind::Vllm, 32, 500.0, 0.0));
  const auto fits = fit_engine_overheads(rows, [](const config::InferenceRow&) { return true; });
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_EQ(fits[0].engine, serving::EngineKind::Vllm);
  EXPECT_NEAR(fits[0].iteration_overhead_s, it_ms * 1e-3, 1e-6);
  EXPECT_NEAR(fits[0].sequence_overhead_s, seq_us * 1e-6, 1e-8);
  EXPECT_NEAR(fits[0].request_overhead_s, req_ms * 1e-3, 1e-6);
  EXPECT_EQ(fits[0].tpot_rows, 8);
  EXPECT_EQ(fits[0].ttft_rows, 4);  // 1, 2, 4 and 8 clients
  // Rows the predicate leaves out take no part.
  const auto none = fit_engine_overheads(rows, [](const config::InferenceRow&) { return false; });
  EXPECT_TRUE(none.empty());
}

TEST(EngineOverheadFit, HostCostsAreNeverNegative) {
  // Residuals that fall with load would give a negative slope: it is held at zero.
  std::vector<InferenceRowResult> rows;
  for (const int c : {1, 4, 16, 64}) rows.push_back(row(serving::EngineKind::TrtLlm, c, 5.0 - 0.05 * c, -10.0));
  const auto fits = fit_engine_overheads(rows, [](const config::InferenceRow&) { return true; });
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_GE(fits[0].iteration_overhead_s, 0.0);
  EXPECT_EQ(fits[0].sequence_overhead_s, 0.0);
  EXPECT_EQ(fits[0].request_overhead_s, 0.0);
}

}  // namespace
}  // namespace fmsim::jobspec
