// The files under data/, compiled into the binary (see cmake/embed.cmake).
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace fmsim::core {

/// One embedded file: its path relative to data/ (e.g. "hardware/gpus.yaml"), or
/// "validation/<file>.csv" for the published measurements under validation/, and its bytes.
struct EmbeddedFile {
  std::string_view path;
  std::string_view contents;
};

/// Every file shipped under data/, sorted by path, then the validation/ measurements.
std::span<const EmbeddedFile> embedded_files();

/// The contents of data/<path> (or of validation/<file> for "validation/<file>"), if shipped.
std::optional<std::string_view> embedded_file(std::string_view path);

}  // namespace fmsim::core
