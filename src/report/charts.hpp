// Chart descriptions for the HTML report and their rendering as inline SVG.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fmsim::report {

// Values are plain numbers already in the unit the reader should see (pass GiB, not bytes, and
// say "memory per GPU (GiB)" in the axis label). NaN marks a missing value: it is not drawn
// (bars show "n/a"; lines break). Every element has a <title> tooltip with its exact value.

/// (a) Horizontal stacked bars, one bar per item, split into segments with a legend.
/// Example: step-time breakdown per layout (compute / tp / dp / pp / ep / bubble / optimizer / other).
struct StackedBarChart {
  std::string id;                            ///< data-chart attribute, e.g. "breakdown"
  std::string title;                         ///< e.g. "Step time breakdown"
  std::string value_label;                   ///< axis label with unit, e.g. "time per step (s)"
  std::string unit;                          ///< appended to values in tooltips and totals, e.g. "s"; may be empty
  std::vector<std::string> bars;             ///< one label per bar, top to bottom
  std::vector<std::string> segments;         ///< legend entries, left to right in each bar
  std::vector<std::vector<double>> values;   ///< [bar][segment], each >= 0 or NaN
  std::optional<std::size_t> highlight_bar;  ///< drawn with an outline and a bold label
};

/// A vertical line across a bar chart at a value, e.g. HBM capacity.
struct ReferenceLine {
  double value = 0.0;
  std::string label;  ///< e.g. "HBM capacity 80 GiB"
};

/// (b) Horizontal bars with an optional reference line; bars beyond the line are drawn in the
/// warning colour and their tooltip says so. Example: memory per GPU against HBM capacity.
struct BarChart {
  std::string id;
  std::string title;
  std::string value_label;  ///< e.g. "memory per GPU (GiB)"
  std::string unit;         ///< e.g. "GiB"
  std::vector<std::string> labels;
  std::vector<double> values;  ///< one per label, >= 0 or NaN
  std::optional<ReferenceLine> reference;
  std::optional<std::size_t> highlight_bar;
};

/// One line of a line chart: points (x[i], y[i]), drawn in x order given.
struct LineSeries {
  std::string name;
  std::vector<double> x;
  std::vector<double> y;  ///< same length as x
};

/// (c) Line chart with several series, markers and a legend.
/// Example: throughput per GPU vs GPU count (log_x), or step time vs GPU count.
struct LineChart {
  std::string id;
  std::string title;
  std::string x_label;  ///< e.g. "GPUs"
  std::string y_label;  ///< e.g. "tokens/s per GPU"
  std::string x_unit;   ///< for tooltips; may be empty
  std::string y_unit;   ///< for tooltips; may be empty
  std::vector<LineSeries> series;
  bool log_x = false;       ///< log scale: ticks at powers of 2 when they fit, else powers of 10; x must be > 0
  bool log_y = false;       ///< same for y
  bool y_from_zero = true;  ///< linear y axis starts at 0 (ignored with log_y)
  /// false: the lines alone, 1.5 px, no marker per point (series of hundreds of points, whose
  /// markers would hide the line); each line's <title> gives its lowest and highest value.
  bool markers = true;
};

/// One panel of a grouped bar chart: its own value axis.
struct GroupedBarPanel {
  std::string title;                        ///< e.g. "Time to train"
  std::string value_label;                  ///< e.g. "days"
  std::string unit;                         ///< e.g. "d"
  std::vector<std::vector<double>> values;  ///< [group][series], each >= 0 or NaN
};

/// (d) Vertical grouped bars: for each group, one bar per series, in one or more panels side by
/// side that share groups, series and legend. Example: systems (series) side by side per model
/// (group), in a "time" panel and a "cost" panel.
struct GroupedBarChart {
  std::string id;
  std::string title;
  std::vector<std::string> groups;
  std::vector<std::string> series;
  std::vector<GroupedBarPanel> panels;
};

/// Renders one chart as an inline <svg> element. `dom_id` becomes the element id ("chart-3") and
/// prefixes ids inside it. Preconditions (FMSIM_CHECK): array sizes match as documented above.
std::string render_svg(const StackedBarChart& chart, std::string_view dom_id);
std::string render_svg(const BarChart& chart, std::string_view dom_id);
std::string render_svg(const LineChart& chart, std::string_view dom_id);
std::string render_svg(const GroupedBarChart& chart, std::string_view dom_id);

/// "Nice" tick values covering [lo, hi]: multiples of 1, 2, 2.5 or 5 times a power of ten,
/// about `target` of them, the first <= lo and the last >= hi. (0, 97, 5) -> 0, 20, ..., 100.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);

/// Ticks for a log axis covering [lo, hi] (lo > 0): powers of 2 when at most 12 are needed
/// (8, 16, ..., 4096), otherwise powers of 10 (only every k-th if there are more than 12).
std::vector<double> log_ticks(double lo, double hi);

/// A value for tooltips and labels: 3 significant digits below 100 ("0.0123", "12.5"), whole
/// numbers with thousands separators up to 10 million ("1,234,567"), then k/M/G/T suffixes with
/// 3 significant digits ("12.3M"); NaN -> "n/a". Trailing zeros after the point are dropped.
std::string format_value(double value);

/// The Okabe-Ito colour-blind-safe palette (black replaced by grey for dark backgrounds), in the
/// order charts assign it to series: blue, orange, green, pink, sky blue, vermillion, yellow, grey.
const std::vector<std::string>& palette();

}  // namespace fmsim::report
