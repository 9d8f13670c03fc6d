// A planner-like sample report used by the report tests and the browser test.
#pragma once

#include <cmath>

#include "report/document.hpp"

namespace fmsim::report::testing {

inline Document sample_report() {
  Document doc;
  doc.title = "Training plan: llama3-70b on 512 GPUs";
  doc.subtitle = "15T tokens, bf16, p5.48xlarge (8x H100 80 GiB per node), EFA 3200 Gbps";
  doc.footer = "fmsim plan --model llama3-70b --gpus 512 --system p5.48xlarge";

  Section summary{.title = "Summary", .blocks = {}};
  summary
      .add(KeyFigures{{{"best layout", "tp8 pp4 dp16"},
                       {"step time", "12.7 s"},
                       {"MFU", "41.2%"},
                       {"time to train", "54.3 d"},
                       {"cost", "$6.41M"}}})
      .add(Paragraph{"The best layout keeps tensor parallelism inside one NVLink domain (8 GPUs) and pipelines "
                     "across 4 stages; data parallelism spans 16 replicas.",
                     ParagraphStyle::Normal})
      .add(Paragraph{"Layout tp4 pp2 dp64 does not fit: 93.1 GiB per GPU > 80 GiB HBM.", ParagraphStyle::Warning});

  Section layouts{.title = "Layouts", .blocks = {}};
  layouts.add(Table{.caption = "Candidate layouts, best first",
                    .header = {"layout", "step time (s)", "MFU", "memory per GPU", "tokens/s per GPU", "notes"},
                    .rows = {{"tp8 pp4 dp16", "12.7", "41.2%", "61.5 GiB", "3,210", "1F1B, 8 microbatches"},
                             {"tp8 pp8 dp8", "13.4", "39.0%", "48.2 GiB", "3,041", "bubble 9%"},
                             {"tp4 pp8 dp16", "14.9", "35.1%", "72.8 GiB", "2,735", ""},
                             {"tp8 pp2 dp32", "15.8", "33.1%", "79.1 GiB", "2,580", "near capacity"},
                             {"tp4 pp2 dp64", "n/a", "n/a", "93.1 GiB", "n/a", "out of memory"}},
                    .align = {},
                    .highlight_row = 0,
                    .note = "Step time for a global batch of 1,024 sequences of 8,192 tokens."});
  const double nan = std::nan("");
  layouts.add(StackedBarChart{.id = "breakdown",
                              .title = "Step time breakdown",
                              .value_label = "time per step (s)",
                              .unit = "s",
                              .bars = {"tp8 pp4 dp16", "tp8 pp8 dp8", "tp4 pp8 dp16", "tp8 pp2 dp32", "tp4 pp2 dp64"},
                              .segments = {"compute", "tp", "dp", "pp", "ep", "bubble", "optimizer", "other"},
                              .values = {{9.1, 1.2, 0.6, 0.3, 0.0, 1.1, 0.3, 0.1},
                                         {8.9, 1.2, 0.4, 0.6, 0.0, 1.9, 0.3, 0.1},
                                         {9.6, 0.9, 0.9, 0.5, 0.0, 2.4, 0.4, 0.2},
                                         {9.3, 1.2, 2.8, 0.2, 0.0, 1.8, 0.4, 0.1},
                                         {nan, nan, nan, nan, nan, nan, nan, nan}},
                              .highlight_bar = 0});
  layouts.add(BarChart{.id = "memory",
                       .title = "Memory per GPU",
                       .value_label = "memory per GPU (GiB)",
                       .unit = "GiB",
                       .labels = {"tp8 pp4 dp16", "tp8 pp8 dp8", "tp4 pp8 dp16", "tp8 pp2 dp32", "tp4 pp2 dp64"},
                       .values = {61.5, 48.2, 72.8, 79.1, 93.1},
                       .reference = ReferenceLine{.value = 80.0, .label = "HBM capacity 80 GiB"},
                       .highlight_bar = 0});

  Section scaling{.title = "Scaling", .blocks = {}};
  scaling.add(LineChart{
      .id = "scaling",
      .title = "Throughput per GPU vs cluster size",
      .x_label = "GPUs",
      .y_label = "tokens/s per GPU",
      .x_unit = "",
      .y_unit = "tokens/s",
      .series = {{"H100 (p5.48xlarge)", {64, 128, 256, 512, 1024, 2048}, {3420, 3390, 3330, 3210, 3020, 2710}},
                 {"H200 (p5e.48xlarge)", {64, 128, 256, 512, 1024, 2048}, {3810, 3790, 3720, 3600, 3380, nan}},
                 {"B200 (p6-b200)", {64, 128, 256, 512, 1024, 2048}, {7050, 6980, 6850, 6610, 6190, 5520}}},
      .log_x = true});

  Section systems{.title = "Systems", .blocks = {}};
  systems.add(GroupedBarChart{.id = "systems",
                              .title = "Time and cost to train, by system",
                              .groups = {"llama3-8b", "llama3-70b", "llama3-405b"},
                              .series = {"p5.48xlarge", "p5e.48xlarge", "p6-b200"},
                              .panels = {{.title = "time to train",
                                          .value_label = "days",
                                          .unit = "d",
                                          .values = {{6.1, 5.4, 3.0}, {54.3, 48.4, 26.4}, {301, 262, 141}}},
                                         {.title = "cost",
                                          .value_label = "cost (million USD)",
                                          .unit = "M USD",
                                          .values = {{0.72, 0.81, 0.65}, {6.41, 7.26, 5.71}, {35.6, 39.3, nan}}}}});
  doc.sections = {summary, layouts, scaling, systems};
  return doc;
}

}  // namespace fmsim::report::testing
