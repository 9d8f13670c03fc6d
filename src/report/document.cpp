// HTML rendering of a report document: page skeleton, inline CSS, sections, tables and charts.
#include "report/document.hpp"

#include <cctype>

#include <fmt/format.h>

#include "core/error.hpp"

namespace fmsim::report {
namespace {

// Inline style sheet: CSS variables give a light and a dark scheme; print uses the light one.
constexpr std::string_view kStyle = R"css(
:root { color-scheme: light dark; --fg: #1b1d21; --bg: #ffffff; --muted: #5c6169; --grid: #e4e6ea; --axis: #6b7078;
  --border: #d5d8dd; --card: #f4f6f8; --best: #fff3c4; --note: #e8f1fa; --warn: #fdebe6; --warn-edge: #d55e00; --link: #0b61a4; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e8eb; --bg: #16181c; --muted: #a3a8b0; --grid: #30343a; --axis: #8e949c; --border: #3a3f46;
    --card: #1f2228; --best: #3b3416; --note: #1b2a38; --warn: #3a231b; --link: #7cb8ee; }
}
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1040px; padding: 24px 28px 48px; color: var(--fg); background: var(--bg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 12px; padding-bottom: 4px; border-bottom: 1px solid var(--border); }
.subtitle { color: var(--muted); margin: 0 0 16px; }
a { color: var(--link); }
nav.toc ol { margin: 8px 0 0; padding-left: 22px; }
p.note, p.warning { padding: 8px 12px; border-radius: 4px; border-left: 4px solid var(--link); background: var(--note); }
p.warning { border-left-color: var(--warn-edge); background: var(--warn); }
.figures { display: flex; flex-wrap: wrap; gap: 12px; margin: 12px 0; }
.figure-card { background: var(--card); border: 1px solid var(--border); border-radius: 6px; padding: 8px 14px; min-width: 150px; }
.figure-card .label { color: var(--muted); font-size: 13px; }
.figure-card .value { font-size: 19px; font-weight: 600; font-variant-numeric: tabular-nums; }
.table-wrap { overflow-x: auto; margin: 12px 0; max-width: 100%; }
table { border-collapse: collapse; font-size: 14px; font-variant-numeric: tabular-nums; max-width: 100%; }
table.wide { font-size: 13px; }
caption { text-align: left; font-weight: 600; padding-bottom: 6px; }
th, td { padding: 5px 12px; border-bottom: 1px solid var(--border); text-align: left; vertical-align: top;
  overflow-wrap: break-word; }
table.wide th, table.wide td { padding: 4px 7px; }
th { border-bottom: 2px solid var(--axis); vertical-align: bottom; }
th.num, td.num { text-align: right; }
td.num { white-space: nowrap; }
tr.best td { background: var(--best); font-weight: 600; }
.badge { display: inline-block; margin-left: 6px; padding: 0 6px; border-radius: 8px; font-size: 11px; font-weight: 600;
  background: var(--fg); color: var(--bg); vertical-align: 1px; }
.table-note { color: var(--muted); font-size: 13px; margin: 4px 0 0; }
figure { margin: 16px 0; }
svg.fmsim-chart { display: block; width: 100%; max-width: 720px; height: auto; }
svg.fmsim-chart text { fill: var(--fg); font-size: 12px; }
svg.fmsim-chart .chart-title { font-size: 14px; font-weight: 600; }
svg.fmsim-chart .panel-title { font-weight: 600; }
svg.fmsim-chart .tick, svg.fmsim-chart .group-label { fill: var(--muted); font-size: 11px; }
svg.fmsim-chart .small { font-size: 10px; }
svg.fmsim-chart .best { font-weight: 700; }
svg.fmsim-chart .value.over { fill: var(--warn-edge); font-weight: 600; }
svg.fmsim-chart .grid { stroke: var(--grid); stroke-width: 1; }
svg.fmsim-chart .axis { stroke: var(--axis); stroke-width: 1; }
svg.fmsim-chart rect.segment, svg.fmsim-chart rect.bar { stroke: var(--bg); stroke-width: 0.5; }
svg.fmsim-chart .marker { stroke: var(--bg); stroke-width: 1; }
svg.fmsim-chart .value { font-variant-numeric: tabular-nums; }
svg.fmsim-chart .ref { stroke: var(--fg); stroke-width: 1.5; stroke-dasharray: 6 4; }
svg.fmsim-chart .highlight { fill: none; stroke: var(--fg); stroke-width: 1.5; }
@media (max-width: 900px) {
  body { padding: 16px 14px 32px; }
  table.wide { font-size: 12px; }
  table.wide th, table.wide td { padding: 3px 5px; }
}
footer { margin-top: 40px; color: var(--muted); font-size: 13px; border-top: 1px solid var(--border); padding-top: 8px; }
@media print {
  :root { --fg: #000; --bg: #fff; --muted: #444; --grid: #ddd; --card: #fff; --best: #eee; --note: #fff; --warn: #fff; }
  body { max-width: none; padding: 0; font-size: 12px; }
  table, table.wide { font-size: 11px; }
  th, td, table.wide th, table.wide td { padding: 3px 5px; }
  nav.toc { display: none; }
  figure, table, .figures { break-inside: avoid; }
  h2 { break-after: avoid; }
}
)css";

// Tables with at least this many columns are set tighter (table.wide).
constexpr std::size_t kWideColumns = 8;

// Marks the page for automated checks only; the report needs no script to display.
constexpr std::string_view kProbeScript =
    "window.addEventListener('error',function(){document.documentElement.setAttribute('data-fmsim-error','script')});"
    "document.addEventListener('securitypolicyviolation',function(){document.documentElement.setAttribute('data-fmsim-"
    "error','csp')});"
    "window.addEventListener('load',function(){var d=document.documentElement,b=document.body,o=[];"
    // Opened as PAGE#print, the page lays out with its @media print rules on screen, so the
    // same checks measure the printed layout (a table that scrolls on screen is cut off on paper).
    "if(location.hash=='#print'){for(var i=0;i<document.styleSheets.length;i++){var r=document.styleSheets[i]"
    ".cssRules;for(var j=0;j<r.length;j++){if(r[j].media&&r[j].media.mediaText=='print'){var s=document."
    "createElement('style'),t='';for(var k=0;k<r[j].cssRules.length;k++)t+=r[j].cssRules[k].cssText+'\\n';"
    "s.textContent=t;document.head.appendChild(s)}}}}"
    "document.querySelectorAll('.table-wrap').forEach(function(t,i){if(t.scrollWidth>t.clientWidth)"
    "o.push((i+1)+':'+t.scrollWidth+'/'+t.clientWidth)});"
    "b.setAttribute('data-fmsim-page-width',d.scrollWidth+'/'+d.clientWidth);"
    "b.setAttribute('data-fmsim-overflow',o.join(' '));b.setAttribute('data-fmsim-loaded','1')});";

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_placeholder(std::string_view cell) {
  cell = trim(cell);
  return cell.empty() || cell == "-" || cell == "\u2014" || cell == "\u2013" || cell == "n/a" || cell == "N/A";
}

// "12.5 s", "$1,234", "-3%", "80 GiB", "1.2e9", "~4.1 d": an optional sign or currency, a number,
// then a unit with no further digits ("8x H100" and "tp8 pp4" are not numeric).
bool is_numeric_cell(std::string_view cell) {
  cell = trim(cell);
  for (std::string_view prefix : {"+", "-", "\u2212", "~", "\u2248", "<", ">", "$", "\u20ac", "\u00a3"}) {
    if (cell.starts_with(prefix)) cell.remove_prefix(prefix.size());
  }
  std::size_t i = 0;
  const auto digit = [&](std::size_t k) {
    return k < cell.size() && std::isdigit(static_cast<unsigned char>(cell[k]));
  };
  if (!(digit(0) || (cell.size() > 1 && cell[0] == '.' && digit(1)))) return false;
  while (digit(i) || (i < cell.size() && (cell[i] == ',' || cell[i] == '.'))) ++i;
  if (i < cell.size() && (cell[i] == 'e' || cell[i] == 'E')) {
    std::size_t k = i + 1;
    if (k < cell.size() && (cell[k] == '+' || cell[k] == '-')) ++k;
    if (digit(k)) {
      i = k;
      while (digit(i)) ++i;
    }
  }
  for (; i < cell.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(cell[i]))) return false;
  }
  return true;
}

bool right_aligned(const Table& table, std::size_t column) {
  const Align align = column < table.align.size() ? table.align[column] : Align::Auto;
  if (align != Align::Auto) return align == Align::Right;
  bool any = false;
  for (const auto& row : table.rows) {
    if (is_placeholder(row[column])) continue;
    if (!is_numeric_cell(row[column])) return false;
    any = true;
  }
  return any;
}

class Renderer {
 public:
  std::string render(const Document& doc) {
    out_ += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    out_ += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    out_ +=
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; img-src data:\">\n";
    out_ += "<meta name=\"generator\" content=\"fmsim\">\n";
    out_ += fmt::format("<title>{}</title>\n<style>{}</style>\n<script>{}</script>\n</head>\n<body>\n",
                        escape_html(doc.title), kStyle, kProbeScript);
    out_ += fmt::format("<header>\n<h1>{}</h1>\n", escape_html(doc.title));
    if (!doc.subtitle.empty()) out_ += fmt::format("<p class=\"subtitle\">{}</p>\n", escape_html(doc.subtitle));
    out_ += "</header>\n";
    if (doc.sections.size() >= 2) {
      out_ += "<nav class=\"toc\" aria-label=\"Contents\"><strong>Contents</strong><ol>\n";
      for (std::size_t i = 0; i < doc.sections.size(); ++i) {
        out_ += fmt::format("<li><a href=\"#section-{}\">{}</a></li>\n", i + 1, escape_html(doc.sections[i].title));
      }
      out_ += "</ol></nav>\n";
    }
    out_ += "<main>\n";
    for (std::size_t i = 0; i < doc.sections.size(); ++i) {
      const auto& section = doc.sections[i];
      out_ += fmt::format("<section id=\"section-{}\">\n<h2>{}</h2>\n", i + 1, escape_html(section.title));
      for (const auto& item : section.blocks) std::visit([this](const auto& b) { block(b); }, item);
      out_ += "</section>\n";
    }
    out_ += "</main>\n";
    if (!doc.footer.empty()) out_ += fmt::format("<footer>{}</footer>\n", escape_html(doc.footer));
    out_ += "</body>\n</html>\n";
    return std::move(out_);
  }

 private:
  void block(const Paragraph& p) {
    switch (p.style) {
      case ParagraphStyle::Normal: out_ += fmt::format("<p>{}</p>\n", escape_html(p.text)); break;
      case ParagraphStyle::Note: out_ += fmt::format("<p class=\"note\">{}</p>\n", escape_html(p.text)); break;
      case ParagraphStyle::Warning:
        out_ += fmt::format("<p class=\"warning\" role=\"note\">{}</p>\n", escape_html(p.text));
        break;
    }
  }

  void block(const KeyFigures& figures) {
    out_ += "<div class=\"figures\">\n";
    for (const auto& [label, value] : figures.items) {
      out_ +=
          fmt::format("<div class=\"figure-card\"><div class=\"label\">{}</div><div class=\"value\">{}</div></div>\n",
                      escape_html(label), escape_html(value));
    }
    out_ += "</div>\n";
  }

  void block(const Table& table) {
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      FMSIM_CHECK(table.rows[r].size() == table.header.size(),
                  fmt::format("report table \"{}\": row {} has {} cells, the header {}", table.caption, r,
                              table.rows[r].size(), table.header.size()));
    }
    FMSIM_CHECK(!table.highlight_row || *table.highlight_row < table.rows.size(),
                "report table: highlight_row out of range");
    std::vector<bool> numeric;
    for (std::size_t c = 0; c < table.header.size(); ++c) numeric.push_back(right_aligned(table, c));
    // Eight columns and more get a tighter set (smaller type, less padding) so they fit the page.
    out_ += table.header.size() >= kWideColumns ? "<div class=\"table-wrap\">\n<table class=\"wide\">\n"
                                                : "<div class=\"table-wrap\">\n<table>\n";
    if (!table.caption.empty()) out_ += fmt::format("<caption>{}</caption>\n", escape_html(table.caption));
    out_ += "<thead><tr>";
    for (std::size_t c = 0; c < table.header.size(); ++c) {
      out_ +=
          fmt::format("<th scope=\"col\"{}>{}</th>", numeric[c] ? " class=\"num\"" : "", escape_html(table.header[c]));
    }
    out_ += "</tr></thead>\n<tbody>\n";
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      const bool best = table.highlight_row == r;
      out_ += best ? "<tr class=\"best\">" : "<tr>";
      for (std::size_t c = 0; c < table.header.size(); ++c) {
        out_ += fmt::format("<td{}>{}{}</td>", numeric[c] ? " class=\"num\"" : "", escape_html(table.rows[r][c]),
                            best && c == 0 ? "<span class=\"badge\">best</span>" : "");
      }
      out_ += "</tr>\n";
    }
    out_ += "</tbody>\n</table>\n";
    if (!table.note.empty()) out_ += fmt::format("<p class=\"table-note\">{}</p>\n", escape_html(table.note));
    out_ += "</div>\n";
  }

  template <class Chart>
  void block(const Chart& chart) {
    ++charts_;
    out_ += "<figure>\n";
    out_ += render_svg(chart, fmt::format("chart-{}", charts_));
    out_ += "\n</figure>\n";
  }

  std::string out_;
  int charts_ = 0;
};

}  // namespace

std::string render_html(const Document& document) { return Renderer().render(document); }

}  // namespace fmsim::report
