// Inline SVG rendering of the report's four chart kinds, with nice axis ticks and legends.
#include "report/charts.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"
#include "report/document.hpp"
#include "report/svg_text.hpp"

namespace fmsim::report {
namespace {

using detail::coord;
using detail::fit_text;
using detail::text_width;
using detail::wrap_text;

constexpr double kWidth = 720.0;
constexpr double kFont = 12.0;
constexpr double kTickFont = 11.0;
constexpr const char* kWarningColor = "#D55E00";

bool is_missing(double v) { return !std::isfinite(v); }

std::string with_unit(double v, const std::string& unit) {
  if (is_missing(v)) return "n/a";
  return unit.empty() ? format_value(v) : format_value(v) + " " + unit;
}

// A value axis: the domain [lo, hi], its ticks and how tick labels are written.
struct Axis {
  double lo = 0.0;
  double hi = 1.0;
  bool log = false;
  std::vector<double> ticks;
  double divisor = 1.0;  // tick labels show value / divisor followed by suffix
  std::string suffix;
  int decimals = 0;

  // Position of v between px0 (at lo) and px1 (at hi).
  [[nodiscard]] double map(double v, double px0, double px1) const {
    const double t = log ? (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)) : (v - lo) / (hi - lo);
    return px0 + t * (px1 - px0);
  }

  [[nodiscard]] std::string label(double v) const {
    if (v == 0.0) return "0";
    if (log && divisor == 1.0) return format_value(v);
    return fmt::format("{:.{}f}{}", v / divisor, decimals, suffix);
  }
};

// Fewest decimals (0..6) that show `step` exactly: 0.25 -> 2, 2.5 -> 1, 20 -> 0.
int decimals_for(double step) {
  for (int d = 0; d < 6; ++d) {
    const double scaled = step * std::pow(10.0, d);
    if (std::abs(scaled - std::round(scaled)) < 1e-6 * std::max(1.0, scaled)) return d;
  }
  return 6;
}

Axis linear_axis(double lo, double hi, int target) {
  Axis axis;
  axis.ticks = nice_ticks(lo, hi, target);
  axis.lo = axis.ticks.front();
  axis.hi = axis.ticks.back();
  const double largest = std::max(std::abs(axis.lo), std::abs(axis.hi));
  static const std::array<std::pair<double, const char*>, 4> kSuffixes = {
      {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}};
  if (largest >= 1e4) {
    for (const auto& [divisor, suffix] : kSuffixes) {
      if (largest >= divisor * 1.0) {
        axis.divisor = divisor;
        axis.suffix = suffix;
        break;
      }
    }
  }
  const double step = axis.ticks.size() > 1 ? axis.ticks[1] - axis.ticks[0] : 1.0;
  axis.decimals = decimals_for(step / axis.divisor);
  return axis;
}

Axis log_axis(double lo, double hi) {
  Axis axis;
  axis.log = true;
  axis.ticks = log_ticks(lo, hi);
  axis.lo = std::min(axis.ticks.front(), lo);
  axis.hi = std::max(axis.ticks.back(), hi);
  return axis;
}

// Collects SVG text.
class Svg {
 public:
  Svg(std::string_view dom_id, std::string_view chart_id, std::string_view kind, std::string_view title)
      : dom_id_(dom_id) {
    out_ += fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"fmsim-chart fmsim-chart-{}\" data-chart=\"{}\" id=\"{}\" "
        "role=\"img\" aria-labelledby=\"{}-title\" font-family=\"system-ui, sans-serif\" font-size=\"12\" ",
        kind, escape_html(chart_id), escape_html(dom_id), escape_html(dom_id));
    header_end_ = out_.size();
    out_ += fmt::format("<title id=\"{}-title\">{}</title>\n", escape_html(dom_id), escape_html(title));
    text(kWidth / 2, 20, title, "chart-title", "middle");
  }

  void raw(std::string_view s) { out_ += s; }

  void text(double x, double y, std::string_view content, std::string_view cls = "", std::string_view anchor = "start",
            std::string_view extra = "") {
    out_ += fmt::format("<text x=\"{}\" y=\"{}\"", coord(x), coord(y));
    if (!cls.empty()) out_ += fmt::format(" class=\"{}\"", cls);
    if (anchor != "start") out_ += fmt::format(" text-anchor=\"{}\"", anchor);
    if (!extra.empty()) out_ += fmt::format(" {}", extra);
    out_ += fmt::format(">{}</text>\n", escape_html(content));
  }

  void line(double x1, double y1, double x2, double y2, std::string_view cls) {
    out_ += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"{}\"/>\n", coord(x1), coord(y1),
                        coord(x2), coord(y2), cls);
  }

  void rect(double x, double y, double w, double h, std::string_view fill, std::string_view cls,
            std::string_view tooltip) {
    out_ += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"", coord(x), coord(y),
                        coord(std::max(w, 0.0)), coord(std::max(h, 0.0)));
    if (!fill.empty()) out_ += fmt::format(" fill=\"{}\"", fill);
    if (!cls.empty()) out_ += fmt::format(" class=\"{}\"", cls);
    if (tooltip.empty()) {
      out_ += "/>\n";
    } else {
      out_ += fmt::format("><title>{}</title></rect>\n", escape_html(tooltip));
    }
  }

  // Closes the element, fixing the size now that the height is known.
  std::string finish(double height) {
    const std::string size = fmt::format("width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\">\n", coord(kWidth),
                                         coord(height), coord(kWidth), coord(height));
    out_.insert(header_end_, size);
    out_ += "</svg>";
    return std::move(out_);
  }

 private:
  std::string dom_id_;
  std::string out_;
  std::size_t header_end_ = 0;
};

// A legend row (wrapping) of colour swatches and names; returns the y below it.
// With `line_styles`, swatches are short line samples with markers (for line charts).
double draw_legend(Svg& svg, const std::vector<std::string>& names, double y, bool line_styles);

std::string color(std::size_t i) { return palette()[i % palette().size()]; }

const std::array<const char*, 4> kDashes = {"", "7 4", "2 3", "9 3 2 3"};

std::string marker(std::size_t series, double x, double y, std::string_view fill, std::string_view tooltip) {
  std::string shape;
  switch (series % 4) {
    case 0: shape = fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"", coord(x), coord(y), fill); break;
    case 1:
      shape = fmt::format("<rect x=\"{}\" y=\"{}\" width=\"7\" height=\"7\" fill=\"{}\"", coord(x - 3.5),
                          coord(y - 3.5), fill);
      break;
    case 2:
      shape = fmt::format("<path d=\"M{} {}L{} {}L{} {}Z\" fill=\"{}\"", coord(x), coord(y - 5), coord(x + 4.5),
                          coord(y + 3.5), coord(x - 4.5), coord(y + 3.5), fill);
      break;
    default:
      shape = fmt::format("<path d=\"M{} {}L{} {}L{} {}L{} {}Z\" fill=\"{}\"", coord(x), coord(y - 5), coord(x + 5),
                          coord(y), coord(x), coord(y + 5), coord(x - 5), coord(y), fill);
      break;
  }
  const std::string tag = series % 4 == 0 ? "circle" : series % 4 == 1 ? "rect" : "path";
  if (tooltip.empty()) return shape + " class=\"marker\"/>\n";
  return shape + fmt::format(" class=\"marker\"><title>{}</title></{}>\n", escape_html(tooltip), tag);
}

double draw_legend(Svg& svg, const std::vector<std::string>& names, double y, bool line_styles) {
  if (names.empty()) return y;
  const double swatch = line_styles ? 26.0 : 12.0;
  const double row_height = 18.0;
  const double left = 16.0;
  const double right = kWidth - 16.0;
  // Lay items out in rows first, so each row can be centred.
  struct Item {
    std::size_t index;
    std::string label;
    double width;
  };
  std::vector<std::vector<Item>> rows(1);
  double row_width = 0.0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    std::string label = fit_text(names[i], 220.0, kFont);
    const double width = swatch + 6.0 + text_width(label, kFont) + 18.0;
    if (!rows.back().empty() && row_width + width > right - left) {
      rows.emplace_back();
      row_width = 0.0;
    }
    rows.back().push_back({i, std::move(label), width});
    row_width += width;
  }
  svg.raw("<g class=\"legend\">\n");
  for (const auto& row : rows) {
    double total = 0.0;
    for (const auto& item : row) total += item.width;
    double x = std::max(left, (kWidth - total) / 2.0);
    for (const auto& item : row) {
      const std::string fill = color(item.index);
      if (line_styles) {
        const char* dash = kDashes[item.index % kDashes.size()];
        svg.raw(fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{}/>\n",
                            coord(x), coord(y - 4), coord(x + swatch), coord(y - 4), fill,
                            *dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : ""));
        svg.raw(marker(item.index, x + swatch / 2, y - 4, fill, ""));
      } else {
        svg.rect(x, y - 10, swatch, swatch, fill, "swatch", "");
      }
      svg.text(x + swatch + 6.0, y, item.label, "legend-label");
      x += item.width;
    }
    y += row_height;
  }
  svg.raw("</g>\n");
  return y;
}

// Vertical gridlines and tick labels under a horizontal value axis spanning [x0, x1].
void draw_horizontal_value_axis(Svg& svg, const Axis& axis, double x0, double x1, double top, double bottom,
                                const std::string& label) {
  svg.raw("<g class=\"x-axis\">\n");
  for (double t : axis.ticks) {
    const double x = axis.map(t, x0, x1);
    svg.line(x, top, x, bottom, "grid");
    svg.text(x, bottom + 15, axis.label(t), "tick", "middle");
  }
  svg.line(x0, bottom, x1, bottom, "axis");
  svg.text((x0 + x1) / 2, bottom + 34, label, "axis-label", "middle");
  svg.raw("</g>\n");
}

// Horizontal gridlines and tick labels left of a vertical value axis spanning [bottom, top].
void draw_vertical_value_axis(Svg& svg, const Axis& axis, double x0, double x1, double top, double bottom,
                              double label_x, const std::string& label) {
  svg.raw("<g class=\"y-axis\">\n");
  for (double t : axis.ticks) {
    const double y = axis.map(t, bottom, top);
    svg.line(x0, y, x1, y, "grid");
    svg.text(x0 - 6, y + 4, axis.label(t), "tick", "end");
  }
  svg.line(x0, top, x0, bottom, "axis");
  const double mid = (top + bottom) / 2;
  svg.text(label_x, mid, fit_text(label, bottom - top, kFont), "axis-label", "middle",
           fmt::format("transform=\"rotate(-90 {} {})\"", coord(label_x), coord(mid)));
  svg.raw("</g>\n");
}

double widest_tick(const Axis& axis, double font) {
  double widest = 0.0;
  for (double t : axis.ticks) widest = std::max(widest, text_width(axis.label(t), font));
  return widest;
}

// Shared layout of the two horizontal bar charts: labels on the left, bars to the right.
struct HorizontalLayout {
  double label_width;
  double x0;
  double x1;
  double top;
  double bar_height = 20.0;
  double gap = 10.0;
  [[nodiscard]] double bar_y(std::size_t i) const { return top + static_cast<double>(i) * (bar_height + gap); }
  [[nodiscard]] double bottom(std::size_t n) const { return bar_y(n) - gap + 8.0; }
};

HorizontalLayout horizontal_layout(const std::vector<std::string>& labels, double top) {
  double widest = 0.0;
  for (const auto& l : labels) widest = std::max(widest, text_width(l, kFont));
  const double label_width = std::min(widest, kWidth * 0.32);
  return HorizontalLayout{.label_width = label_width, .x0 = 16.0 + label_width + 8.0, .x1 = kWidth - 84.0, .top = top};
}

void draw_bar_label(Svg& svg, const HorizontalLayout& layout, std::size_t i, const std::string& label, bool best) {
  const double y = layout.bar_y(i) + layout.bar_height / 2 + 4;
  const std::string shown = fit_text(label, layout.label_width, kFont);
  if (shown == label) {
    svg.text(layout.x0 - 8, y, shown, best ? "bar-label best" : "bar-label", "end");
  } else {
    // The full label stays available as a tooltip.
    svg.raw(fmt::format("<text x=\"{}\" y=\"{}\" class=\"{}\" text-anchor=\"end\">{}<title>{}</title></text>\n",
                        coord(layout.x0 - 8), coord(y), best ? "bar-label best" : "bar-label", escape_html(shown),
                        escape_html(label)));
  }
}

}  // namespace

const std::vector<std::string>& palette() {
  static const std::vector<std::string> colors = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                                  "#56B4E9", "#D55E00", "#F0E442", "#999999"};
  return colors;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {0.0, 1.0};
  if (lo > hi) std::swap(lo, hi);
  if (hi - lo < 1e-12 * std::max(1.0, std::abs(hi))) {
    // A single value: widen to a unit interval around it (or [0, 1] for zero).
    if (lo == 0.0) return nice_ticks(0.0, 1.0, target);
    const double pad = std::abs(lo) * 0.5;
    return nice_ticks(lo - pad, hi + pad, target);
  }
  const double raw = (hi - lo) / std::max(1, target);
  const int exponent = static_cast<int>(std::floor(std::log10(raw)));
  const double magnitude = std::pow(10.0, exponent);
  const double normalized = raw / magnitude;
  double mantissa = 10.0;
  for (double candidate : {1.0, 2.0, 2.5, 5.0}) {
    if (normalized <= candidate * (1 + 1e-9)) {
      mantissa = candidate;
      break;
    }
  }
  const double step = mantissa * magnitude;
  const auto first = static_cast<long long>(std::floor(lo / step + 1e-9));
  const auto last = static_cast<long long>(std::ceil(hi / step - 1e-9));
  // k * mantissa is exact; one multiplication or division by an exact power of ten then gives
  // the double nearest the decimal tick (0.6, not 0.6000000000000001).
  const double power = std::pow(10.0, std::abs(exponent));
  std::vector<double> ticks;
  for (long long k = first; k <= last; ++k) {
    const double units = static_cast<double>(k) * mantissa;
    ticks.push_back(exponent >= 0 ? units * power : units / power);
  }
  return ticks;
}

std::vector<double> log_ticks(double lo, double hi) {
  if (!(lo > 0.0) || !std::isfinite(hi)) return {1.0, 10.0};
  if (lo > hi) std::swap(lo, hi);
  const int lo2 = static_cast<int>(std::floor(std::log2(lo) + 1e-9));
  const int hi2 = std::max(lo2 + 1, static_cast<int>(std::ceil(std::log2(hi) - 1e-9)));
  std::vector<double> ticks;
  if (hi2 - lo2 + 1 <= 12) {
    for (int e = lo2; e <= hi2; ++e) ticks.push_back(std::ldexp(1.0, e));
    return ticks;
  }
  const int lo10 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  const int hi10 = std::max(lo10 + 1, static_cast<int>(std::ceil(std::log10(hi) - 1e-9)));
  const int every = (hi10 - lo10) / 12 + 1;
  for (int e = lo10; e <= hi10; e += every) ticks.push_back(std::pow(10.0, e));
  if (ticks.back() < hi) ticks.push_back(std::pow(10.0, lo10 + ((hi10 - lo10 + every - 1) / every) * every));
  return ticks;
}

std::string format_value(double value) {
  if (!std::isfinite(value)) return std::isnan(value) ? "n/a" : (value > 0 ? "inf" : "-inf");
  const double magnitude = std::abs(value);
  const std::string sign = value < 0 ? "-" : "";
  if (magnitude >= 1e7) {
    static const std::array<std::pair<double, const char*>, 3> kSuffixes = {{{1e6, "M"}, {1e9, "G"}, {1e12, "T"}}};
    std::size_t k = kSuffixes.size() - 1;
    while (magnitude < kSuffixes[k].first) --k;
    std::string digits = format_value(magnitude / kSuffixes[k].first);
    // 999.7M would read "1,000M": move up to "1G" instead.
    if (digits.find(',') != std::string::npos && k + 1 < kSuffixes.size()) {
      ++k;
      digits = format_value(magnitude / kSuffixes[k].first);
    }
    return sign + digits + kSuffixes[k].second;
  }
  if (magnitude >= 100.0) {
    // Whole number with thousands separators.
    const std::string digits = fmt::format("{:.0f}", magnitude);
    std::string grouped;
    for (std::size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0) grouped.push_back(',');
      grouped.push_back(digits[i]);
    }
    return sign + grouped;
  }
  if (magnitude == 0.0) return "0";
  // Three significant digits, trailing zeros dropped.
  const int exponent = static_cast<int>(std::floor(std::log10(magnitude)));
  const int decimals = std::max(0, 2 - exponent);
  std::string s = fmt::format("{:.{}f}", magnitude, decimals);
  if (s.find('.') != std::string::npos) {
    while (s.ends_with('0')) s.pop_back();
    if (s.ends_with('.')) s.pop_back();
  }
  return sign + s;
}

std::string render_svg(const StackedBarChart& chart, std::string_view dom_id) {
  FMSIM_CHECK(chart.values.size() == chart.bars.size(), "stacked bar chart " + chart.id + ": one value row per bar");
  for (const auto& row : chart.values) {
    FMSIM_CHECK(row.size() == chart.segments.size(), "stacked bar chart " + chart.id + ": one value per segment");
    for (double v : row) FMSIM_CHECK(is_missing(v) || v >= 0.0, "stacked bar chart " + chart.id + ": negative value");
  }
  Svg svg(dom_id, chart.id, "stacked-bar", chart.title);
  const double legend_bottom = draw_legend(svg, chart.segments, 42.0, false);
  auto layout = horizontal_layout(chart.bars, legend_bottom + 4.0);

  std::vector<double> totals;
  double largest = 0.0;
  for (const auto& row : chart.values) {
    double total = 0.0;
    bool any = false;
    for (double v : row) {
      if (is_missing(v)) continue;
      total += v;
      any = true;
    }
    totals.push_back(any ? total : std::numeric_limits<double>::quiet_NaN());
    if (any) largest = std::max(largest, total);
  }
  const Axis axis = linear_axis(0.0, largest, 5);
  const double bottom = layout.bottom(chart.bars.size());
  draw_horizontal_value_axis(svg, axis, layout.x0, layout.x1, layout.top - 4.0, bottom, chart.value_label);

  for (std::size_t b = 0; b < chart.bars.size(); ++b) {
    const bool best = chart.highlight_bar == b;
    draw_bar_label(svg, layout, b, chart.bars[b], best);
    const double y = layout.bar_y(b);
    svg.raw(fmt::format("<g class=\"bar-group\" data-bar=\"{}\">\n", escape_html(chart.bars[b])));
    double start = 0.0;
    for (std::size_t s = 0; s < chart.segments.size(); ++s) {
      const double v = chart.values[b][s];
      if (is_missing(v) || v <= 0.0) continue;
      const double xa = axis.map(start, layout.x0, layout.x1);
      const double xb = axis.map(start + v, layout.x0, layout.x1);
      const double share = totals[b] > 0 ? 100.0 * v / totals[b] : 0.0;
      svg.rect(xa, y, xb - xa, layout.bar_height, color(s), "segment",
               fmt::format("{}: {} {} ({}% of {})", chart.bars[b], chart.segments[s], with_unit(v, chart.unit),
                           format_value(share), with_unit(totals[b], chart.unit)));
      start += v;
    }
    if (best)
      svg.rect(layout.x0 - 2, y - 2, axis.map(start, layout.x0, layout.x1) - layout.x0 + 4, layout.bar_height + 4, "",
               "highlight", "");
    const double end = is_missing(totals[b]) ? layout.x0 : axis.map(totals[b], layout.x0, layout.x1);
    svg.text(end + (best ? 9 : 6), y + layout.bar_height / 2 + 4, with_unit(totals[b], chart.unit),
             best ? "value best" : "value");
    svg.raw("</g>\n");
  }
  return svg.finish(bottom + 46.0);
}

std::string render_svg(const BarChart& chart, std::string_view dom_id) {
  FMSIM_CHECK(chart.values.size() == chart.labels.size(), "bar chart " + chart.id + ": one value per label");
  for (double v : chart.values) FMSIM_CHECK(is_missing(v) || v >= 0.0, "bar chart " + chart.id + ": negative value");
  Svg svg(dom_id, chart.id, "bar", chart.title);
  const double reference_room = chart.reference ? 20.0 : 0.0;
  auto layout = horizontal_layout(chart.labels, 42.0 + reference_room);
  double largest = chart.reference ? chart.reference->value : 0.0;
  for (double v : chart.values) {
    if (!is_missing(v)) largest = std::max(largest, v);
  }
  const Axis axis = linear_axis(0.0, largest * 1.02, 5);
  const double bottom = layout.bottom(chart.labels.size());
  draw_horizontal_value_axis(svg, axis, layout.x0, layout.x1, layout.top - 4.0, bottom, chart.value_label);

  for (std::size_t b = 0; b < chart.labels.size(); ++b) {
    const bool best = chart.highlight_bar == b;
    draw_bar_label(svg, layout, b, chart.labels[b], best);
    const double y = layout.bar_y(b);
    const double v = chart.values[b];
    svg.raw(fmt::format("<g class=\"bar-group\" data-bar=\"{}\">\n", escape_html(chart.labels[b])));
    if (is_missing(v)) {
      svg.text(layout.x0 + 6, y + layout.bar_height / 2 + 4, "n/a", "value");
      svg.raw("</g>\n");
      continue;
    }
    const bool over = chart.reference && v > chart.reference->value;
    std::string tooltip = fmt::format("{}: {}", chart.labels[b], with_unit(v, chart.unit));
    if (over) tooltip += fmt::format(" (exceeds {})", chart.reference->label);
    const double xb = axis.map(v, layout.x0, layout.x1);
    svg.rect(layout.x0, y, xb - layout.x0, layout.bar_height, over ? kWarningColor : color(0),
             over ? "bar over" : "bar", tooltip);
    if (best) svg.rect(layout.x0 - 2, y - 2, xb - layout.x0 + 4, layout.bar_height + 4, "", "highlight", "");
    svg.text(xb + (best ? 9 : 6), y + layout.bar_height / 2 + 4, with_unit(v, chart.unit),
             over   ? "value over"
             : best ? "value best"
                    : "value");
    svg.raw("</g>\n");
  }
  if (chart.reference) {
    const double x = axis.map(chart.reference->value, layout.x0, layout.x1);
    svg.raw("<g class=\"reference\">\n");
    svg.raw(fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"ref\"><title>{}</title></line>\n",
                        coord(x), coord(layout.top - 12), coord(x), coord(bottom),
                        escape_html(chart.reference->label)));
    const bool right_half = x > (layout.x0 + layout.x1) / 2;
    svg.text(right_half ? x - 4 : x + 4, layout.top - 10, chart.reference->label, "ref-label",
             right_half ? "end" : "start");
    svg.raw("</g>\n");
  }
  return svg.finish(bottom + 46.0);
}

std::string render_svg(const LineChart& chart, std::string_view dom_id) {
  double x_min = std::numeric_limits<double>::infinity();
  double x_max = -x_min;
  double y_min = x_min;
  double y_max = -x_min;
  const auto usable = [&](double x, double y) {
    return std::isfinite(x) && std::isfinite(y) && (!chart.log_x || x > 0) && (!chart.log_y || y > 0);
  };
  for (const auto& s : chart.series) {
    FMSIM_CHECK(s.x.size() == s.y.size(),
                "line chart " + chart.id + ": series " + s.name + " has x and y of different length");
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!usable(s.x[i], s.y[i])) continue;
      x_min = std::min(x_min, s.x[i]);
      x_max = std::max(x_max, s.x[i]);
      y_min = std::min(y_min, s.y[i]);
      y_max = std::max(y_max, s.y[i]);
    }
  }
  if (!std::isfinite(x_min)) {
    x_min = chart.log_x ? 1.0 : 0.0;
    x_max = chart.log_x ? 10.0 : 1.0;
    y_min = chart.log_y ? 1.0 : 0.0;
    y_max = chart.log_y ? 10.0 : 1.0;
  }
  if (!chart.log_y && chart.y_from_zero) y_min = std::min(0.0, y_min);
  const Axis x_axis = chart.log_x ? log_axis(x_min, x_max) : linear_axis(x_min, x_max, 6);
  const Axis y_axis = chart.log_y ? log_axis(y_min, y_max) : linear_axis(y_min, y_max, 5);

  std::vector<std::string> names;
  for (const auto& s : chart.series) names.push_back(s.name);
  Svg svg(dom_id, chart.id, "line", chart.title);
  const double top = draw_legend(svg, names, 42.0, true) + 6.0;
  const double bottom = top + 300.0;
  const double x0 = 16.0 + 18.0 + widest_tick(y_axis, kTickFont) + 8.0;
  const double x1 = kWidth - 24.0;
  draw_vertical_value_axis(svg, y_axis, x0, x1, top, bottom, 22.0, chart.y_label);
  draw_horizontal_value_axis(svg, x_axis, x0, x1, top, bottom, chart.x_label);

  for (std::size_t k = 0; k < chart.series.size(); ++k) {
    const auto& s = chart.series[k];
    const std::string fill = color(k);
    svg.raw(fmt::format("<g class=\"series\" data-series=\"{}\">\n", escape_html(s.name)));
    std::string path;
    bool pen_down = false;
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!usable(s.x[i], s.y[i])) {
        pen_down = false;
        continue;
      }
      path += fmt::format("{}{} {}", pen_down ? "L" : "M", coord(x_axis.map(s.x[i], x0, x1)),
                          coord(y_axis.map(s.y[i], bottom, top)));
      pen_down = true;
    }
    const char* dash = kDashes[k % kDashes.size()];
    if (!path.empty() && !chart.markers) {
      double lo = INFINITY, hi = -INFINITY;
      for (std::size_t i = 0; i < s.x.size(); ++i) {
        if (!usable(s.x[i], s.y[i])) continue;
        lo = std::min(lo, s.y[i]);
        hi = std::max(hi, s.y[i]);
      }
      svg.raw(fmt::format(
          "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"{} class=\"line\"><title>{}</title></path>\n",
          path, fill, *dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : "",
          escape_html(fmt::format("{}: {} from {} to {}", s.name, chart.y_label, with_unit(lo, chart.y_unit),
                                  with_unit(hi, chart.y_unit)))));
    } else if (!path.empty()) {
      svg.raw(fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} class=\"line\"/>\n", path,
                          fill, *dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : ""));
    }
    for (std::size_t i = 0; chart.markers && i < s.x.size(); ++i) {
      if (!usable(s.x[i], s.y[i])) continue;
      svg.raw(marker(k, x_axis.map(s.x[i], x0, x1), y_axis.map(s.y[i], bottom, top), fill,
                     fmt::format("{}: {} {}, {} {}", s.name, chart.x_label, with_unit(s.x[i], chart.x_unit),
                                 chart.y_label, with_unit(s.y[i], chart.y_unit))));
    }
    svg.raw("</g>\n");
  }
  return svg.finish(bottom + 46.0);
}

std::string render_svg(const GroupedBarChart& chart, std::string_view dom_id) {
  for (const auto& panel : chart.panels) {
    FMSIM_CHECK(panel.values.size() == chart.groups.size(),
                "grouped bar chart " + chart.id + ": one value row per group");
    for (const auto& row : panel.values) {
      FMSIM_CHECK(row.size() == chart.series.size(), "grouped bar chart " + chart.id + ": one value per series");
      for (double v : row) FMSIM_CHECK(is_missing(v) || v >= 0.0, "grouped bar chart " + chart.id + ": negative value");
    }
  }
  Svg svg(dom_id, chart.id, "grouped-bar", chart.title);
  const double top = draw_legend(svg, chart.series, 42.0, false) + 26.0;
  const double bottom = top + 220.0;
  const double gap = 28.0;
  const auto panels = static_cast<double>(std::max<std::size_t>(chart.panels.size(), 1));
  const double panel_width = (kWidth - 16.0 - gap * (panels - 1)) / panels;

  for (std::size_t p = 0; p < chart.panels.size(); ++p) {
    const auto& panel = chart.panels[p];
    double largest = 0.0;
    for (const auto& row : panel.values) {
      for (double v : row) {
        if (!is_missing(v)) largest = std::max(largest, v);
      }
    }
    const Axis axis = linear_axis(0.0, largest, 5);
    const double left = 8.0 + static_cast<double>(p) * (panel_width + gap);
    const double x0 = left + 18.0 + widest_tick(axis, kTickFont) + 8.0;
    const double x1 = left + panel_width;
    svg.raw(fmt::format("<g class=\"panel\" data-panel=\"{}\">\n", escape_html(panel.title)));
    svg.text((x0 + x1) / 2, top - 12, fit_text(panel.title, x1 - x0, kFont), "panel-title", "middle");
    draw_vertical_value_axis(svg, axis, x0, x1, top, bottom, left + 10.0, panel.value_label);
    svg.line(x0, bottom, x1, bottom, "axis");
    const double group_width = (x1 - x0) / static_cast<double>(std::max<std::size_t>(chart.groups.size(), 1));
    const double inner = group_width * 0.76;
    const double bar_width = inner / static_cast<double>(std::max<std::size_t>(chart.series.size(), 1));
    for (std::size_t g = 0; g < chart.groups.size(); ++g) {
      const double gx = x0 + static_cast<double>(g) * group_width;
      const auto lines = wrap_text(chart.groups[g], group_width - 4.0, kTickFont, 2);
      for (std::size_t l = 0; l < lines.size(); ++l) {
        svg.text(gx + group_width / 2, bottom + 15 + 13 * static_cast<double>(l), lines[l], "group-label", "middle");
      }
      for (std::size_t s = 0; s < chart.series.size(); ++s) {
        const double v = panel.values[g][s];
        const double bx = gx + (group_width - inner) / 2 + static_cast<double>(s) * bar_width;
        const std::string tooltip =
            fmt::format("{}, {}: {} {}", chart.groups[g], chart.series[s], panel.title, with_unit(v, panel.unit));
        if (is_missing(v)) {
          svg.raw(fmt::format(
              "<text x=\"{}\" y=\"{}\" class=\"small missing\" text-anchor=\"middle\">n/a<title>{}</title></text>\n",
              coord(bx + bar_width / 2), coord(bottom - 4), escape_html(tooltip)));
          continue;
        }
        const double y = axis.map(v, bottom, top);
        svg.rect(bx + 1, y, bar_width - 2, bottom - y, color(s), "bar", tooltip);
        if (bar_width >= 28.0) svg.text(bx + bar_width / 2, y - 4, format_value(v), "small value", "middle");
      }
    }
    svg.raw("</g>\n");
  }
  return svg.finish(bottom + 48.0);
}

}  // namespace fmsim::report
