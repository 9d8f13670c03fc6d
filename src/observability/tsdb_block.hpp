// A Prometheus TSDB block written directly: what `promtool tsdb create-blocks-from openmetrics`
// would make of the same series, without the text in between. A stock Prometheus 2.x opens it
// (the block directory inside its --storage.tsdb.path).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "observability/metrics_output.hpp"

namespace fmsim::observability {

/// Writes one block, DIR/<ULID>/ with meta.json, index and chunks/000001...:
///
/// - chunks: segment files (magic 0x85BD40DD, version 1) of XOR-encoded chunks of at most 120
///   samples (Prometheus' Gorilla encoding: delta-of-delta timestamps, XOR'd values), each
///   `len <uvarint> | encoding 1 <1b> | data | CRC32C <4b>`;
/// - index: format version 2 (symbol table, 16-byte aligned series with their chunk metadata,
///   postings per label pair and for all series, the postings offset table, the table of
///   contents), every section with its CRC32C;
/// - meta.json: ULID, [minTime, maxTime) in milliseconds, stats, compaction level 1, version 1.
///
/// Series with identical samples (the nodes of a synchronous job) point at the same chunks: the
/// samples are encoded and written once. Prometheus reads each series through its own chunk
/// references; a later compaction writes them out separately.
/// The ULID is derived from the first sample's time and the contents (same calls, same bytes).
/// Writing goes to DIR/.<ULID>.partial, renamed into place by finish(); a failure leaves nothing.
class TsdbBlockWriter final : public MetricsOutput {
 public:
  /// `dir` must exist. Throws WriteError naming the path when a file cannot be written.
  explicit TsdbBlockWriter(std::string dir);
  TsdbBlockWriter(const TsdbBlockWriter&) = delete;
  TsdbBlockWriter& operator=(const TsdbBlockWriter&) = delete;
  ~TsdbBlockWriter() override;

  void family(std::string_view name, SeriesType type, std::string_view help, std::string_view unit = {},
              bool exporter_name = false) override;
  void shared_series(const std::vector<Labels>& label_sets, const std::vector<std::int64_t>& timestamps_s,
                     const std::vector<double>& values) override;
  /// As Prometheus stores a histogram scraped in the classic format: one series per bucket
  /// (<name>_bucket with le), <name>_count and <name>_sum.
  void histogram_series(const Labels& labels, const std::vector<double>& bounds,
                        const std::vector<std::int64_t>& timestamps_s,
                        const std::vector<std::vector<double>>& cumulative, const std::vector<double>& sums) override;
  [[nodiscard]] bool thins() const override { return false; }
  /// One series under `name` as it was read back from text (a backfill of a recorded file): any
  /// valid metric name (a histogram's _bucket, _count and _sum are series of their own), no family
  /// and no type rules; labels valid, non-empty and not yet written under `name`; timestamps
  /// strictly increasing.
  void raw_series(std::string_view name, const Labels& labels, const std::vector<std::int64_t>& timestamps_s,
                  const std::vector<double>& values);

  /// Writes the index and meta.json and moves the block into place; returns its directory.
  std::string finish();

  [[nodiscard]] std::uint64_t samples_written() const { return samples_; }
  [[nodiscard]] std::uint64_t series_written() const { return series_.size(); }
  /// Bytes of the block (chunks, index and meta.json) once finished.
  [[nodiscard]] std::uint64_t bytes_written() const { return bytes_; }

 private:
  struct ChunkMeta {
    std::int64_t min_ms = 0, max_ms = 0;
    std::uint64_t ref = 0;
  };
  struct Series {
    Labels labels;            // sorted by name, __name__ included
    std::size_t samples = 0;  // index into chunks_
  };

  std::size_t add_samples(const std::vector<std::int64_t>& timestamps_s, const std::vector<double>& values);
  void add_series(Labels labels, std::string_view name, std::size_t samples);
  void write_chunk(const std::string& data, ChunkMeta& meta);
  void open_segment();
  void close_segment();

  std::string dir_;
  std::string partial_;
  std::string family_;
  SeriesType type_ = SeriesType::Gauge;
  std::vector<std::string> families_;
  std::vector<Series> series_;
  std::vector<std::vector<ChunkMeta>> chunks_;  // per distinct sample set
  std::FILE* segment_ = nullptr;
  int segment_index_ = 0;
  std::uint64_t segment_size_ = 0;
  std::string buffer_;
  std::int64_t min_ms_ = 0, max_ms_ = 0;
  bool any_sample_ = false;
  std::uint64_t samples_ = 0;
  std::uint64_t chunk_count_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint64_t content_hash_ = 14695981039346656037ULL;
  bool finished_ = false;
};

/// CRC-32C (Castagnoli) of `data`, as Prometheus' TSDB checksums its sections.
std::uint32_t crc32c(std::string_view data, std::uint32_t crc = 0);

/// Prometheus' XOR chunk of these samples (timestamps in milliseconds, at most 65,535 samples):
/// the 2-byte sample count then the bit stream, byte for byte what chunkenc.XORChunk appends.
std::string xor_chunk(const std::int64_t* timestamps_ms, const double* values, std::size_t n);

}  // namespace fmsim::observability
