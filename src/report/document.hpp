// A self-contained HTML report: title, sections of paragraphs, tables and inline SVG charts.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "report/charts.hpp"

namespace fmsim::report {

/// How a paragraph is set off from the text around it.
enum class ParagraphStyle { Normal, Note, Warning };

/// A paragraph of plain text (HTML-escaped when rendered; no markup is interpreted).
struct Paragraph {
  std::string text;
  ParagraphStyle style = ParagraphStyle::Normal;
};

/// A row of headline numbers shown as cards, e.g. {"best layout", "tp8 pp4 dp16"}, {"step time", "12.7 s"}.
struct KeyFigures {
  std::vector<std::pair<std::string, std::string>> items;  ///< label, value (both plain text)
};

/// Column alignment in a table. Auto right-aligns a column when every non-empty cell starts with a
/// number ("12.5 s", "$1,234", "80 GiB", "-3%", "1.2e9"); placeholders "-", "—", "n/a" are ignored.
enum class Align { Auto, Left, Right };

/// A table of plain-text cells.
struct Table {
  std::string caption;                         ///< shown above the table; may be empty
  std::vector<std::string> header;             ///< column titles, with units: "step time (s)"
  std::vector<std::vector<std::string>> rows;  ///< each row has header.size() cells (FMSIM_CHECK)
  std::vector<Align> align;                    ///< per column; missing entries mean Auto
  std::optional<std::size_t> highlight_row;    ///< index into rows drawn as the best row (tr.best + a "best" badge)
  std::string note;                            ///< small print under the table; may be empty
};

/// One block of a section, rendered in order.
using Block = std::variant<Paragraph, KeyFigures, Table, StackedBarChart, BarChart, LineChart, GroupedBarChart>;

/// A titled part of the report (an <h2> and its blocks); listed in the table of contents.
struct Section {
  std::string title;
  std::vector<Block> blocks;

  /// Appends a block and returns *this, for chaining: `s.add(Paragraph{"..."}).add(table)`.
  Section& add(Block block) {
    blocks.push_back(std::move(block));
    return *this;
  }
};

/// The whole report.
struct Document {
  std::string title;     ///< <title> and <h1>
  std::string subtitle;  ///< one line under the title (scenario, model, cluster); may be empty
  std::vector<Section> sections;
  std::string footer;  ///< e.g. the command line that produced it; may be empty. No clock time is
                       ///< added by the renderer, so output stays deterministic.
};

/// Renders the document as one HTML5 file that needs nothing else: inline CSS (light and dark
/// colour schemes, print rules), inline SVG charts, system fonts only, no external URLs (a
/// Content-Security-Policy forbids loading anything), no JavaScript needed to display it.
/// A short inline script only marks the page for automated checks: after load it sets on <body>
/// `data-fmsim-loaded="1"`, `data-fmsim-page-width="SCROLL/CLIENT"` (the page's scroll width and
/// its visible width in CSS px: equal when nothing sticks out at the right) and
/// `data-fmsim-overflow` (empty, or "N:SCROLL/CLIENT ..." for each table N, counted from 1, wider
/// than the page), and `data-fmsim-error` on <html> if any script error or CSP violation happens.
///
/// Tables fit the page: headers and text cells wrap between words, numbers do not;
/// tables of 8 columns or more are set in smaller type with less padding (class "wide").
///
/// Every chart is an <svg class="fmsim-chart fmsim-chart-<kind>" data-chart="<chart id>">
/// (kinds: stacked-bar, bar, line, grouped-bar), inside a <figure>. All text is HTML-escaped
/// (& < > " '). Sections get ids "section-1", "section-2", ...; charts "chart-1", "chart-2", ...
/// Deterministic: the same document renders to the same bytes.
/// Preconditions (FMSIM_CHECK): table rows match the header width; chart value arrays match
/// their label arrays (see charts.hpp).
std::string render_html(const Document& document);

/// Escapes text for HTML element content and attribute values: & < > " ' become entities.
std::string escape_html(std::string_view text);

}  // namespace fmsim::report
