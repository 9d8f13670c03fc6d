// Prometheus TSDB block writer (see tsdb_block.hpp). Formats: prometheus/tsdb/docs/format/
// (index.md, chunks.md) and chunkenc/xor.go of Prometheus 2.x.
#include "observability/tsdb_block.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "observability/openmetrics.hpp"
#include "observability/prometheus.hpp"

namespace fmsim::observability {
namespace {

namespace fs = std::filesystem;

constexpr std::uint32_t kIndexMagic = 0xBAAAD700;
constexpr std::uint32_t kChunksMagic = 0x85BD40DD;
constexpr std::size_t kSamplesPerChunk = 120;                  // as Prometheus' head cuts them
constexpr std::uint64_t kSegmentBytes = 512ULL * 1024 * 1024;  // chunks.DefaultChunkSegmentSize
constexpr std::size_t kBlockFlushBytes = 1 << 20;

std::array<std::uint32_t, 256> make_crc_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0x82F63B78u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}

void put_be32(std::string& out, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<char>((v >> s) & 0xFF));
}
void put_be64(std::string& out, std::uint64_t v) {
  for (int s = 56; s >= 0; s -= 8) out.push_back(static_cast<char>((v >> s) & 0xFF));
}
void set_be32(std::string& out, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out[at + i] = static_cast<char>((v >> (24 - 8 * i)) & 0xFF);
}
void put_uvarint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void put_varint(std::string& out, std::int64_t v) {  // zig-zag, as Go's binary.PutVarint
  const std::uint64_t u = static_cast<std::uint64_t>(v) << 1;
  put_uvarint(out, v < 0 ? ~u : u);
}
void put_string(std::string& out, std::string_view s) {
  put_uvarint(out, s.size());
  out.append(s);
}
void pad_to(std::string& out, std::size_t alignment) {
  while (out.size() % alignment != 0) out.push_back('\0');
}

// Go's chunkenc.bstream: bits appended left to right; `count` = free bits in the last byte.
class BitStream {
 public:
  explicit BitStream(std::string& out) : out_(out) {}
  void bit(bool b) {
    if (count_ == 0) {
      out_.push_back('\0');
      count_ = 8;
    }
    if (b) out_.back() = static_cast<char>(static_cast<unsigned char>(out_.back()) | (1u << (count_ - 1)));
    --count_;
  }
  void byte(unsigned char b) {
    if (count_ == 0) {
      out_.push_back('\0');
      count_ = 8;
    }
    out_.back() = static_cast<char>(static_cast<unsigned char>(out_.back()) | (b >> (8 - count_)));
    out_.push_back(static_cast<char>(count_ == 8 ? 0 : static_cast<unsigned char>(b << count_)));
  }
  void bits(std::uint64_t u, int n) {
    if (n <= 0) return;
    u <<= 64 - n;
    for (; n >= 8; n -= 8, u <<= 8) byte(static_cast<unsigned char>(u >> 56));
    for (; n > 0; --n, u <<= 1) bit((u >> 63) == 1);
  }

 private:
  std::string& out_;
  int count_ = 0;
};

bool labels_less(const Labels& a, const Labels& b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i].first != b[i].first) return a[i].first < b[i].first;
    if (a[i].second != b[i].second) return a[i].second < b[i].second;
  }
  return a.size() < b.size();
}

// A ULID (Crockford base32 of 48 bits of milliseconds and 80 bits of entropy).
std::string ulid(std::int64_t ms, std::uint64_t entropy) {
  static constexpr char kAlphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  std::array<unsigned char, 16> bytes{};
  for (int i = 0; i < 6; ++i)
    bytes[i] = static_cast<unsigned char>((static_cast<std::uint64_t>(ms) >> (40 - 8 * i)) & 0xFF);
  for (int i = 0; i < 8; ++i) bytes[6 + i] = static_cast<unsigned char>((entropy >> (56 - 8 * i)) & 0xFF);
  bytes[14] = static_cast<unsigned char>((entropy >> 8) & 0xFF);  // 80 bits of entropy: the hash's
  bytes[15] = static_cast<unsigned char>(entropy & 0xFF);         // last 16 bits again
  // 26 characters of 5 bits over the 128 bits with 2 leading zero bits.
  const auto bit = [&](int j) { return j < 0 ? 0 : (bytes[static_cast<std::size_t>(j / 8)] >> (7 - j % 8)) & 1; };
  std::string out(26, '0');
  for (int i = 0; i < 26; ++i) {
    int c = 0;
    for (int j = 0; j < 5; ++j) c = (c << 1) | bit(5 * i + j - 2);
    out[static_cast<std::size_t>(i)] = kAlphabet[c];
  }
  return out;
}

}  // namespace

std::uint32_t crc32c(std::string_view data, std::uint32_t crc) {
  static const auto table = make_crc_table();
  crc = ~crc;
  for (const char ch : data) crc = table[(crc ^ static_cast<unsigned char>(ch)) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

std::string xor_chunk(const std::int64_t* t, const double* v, std::size_t n) {
  FMSIM_CHECK(n <= 65535, "an XOR chunk holds at most 65,535 samples");
  std::string out(2, '\0');
  out[0] = static_cast<char>((n >> 8) & 0xFF);
  out[1] = static_cast<char>(n & 0xFF);
  BitStream b(out);
  std::uint64_t t_delta = 0;
  unsigned leading = 0xFF, trailing = 0;
  std::string varint;
  for (std::size_t i = 0; i < n; ++i) {
    if (i == 0) {
      varint.clear();
      put_varint(varint, t[0]);
      for (const char c : varint) b.byte(static_cast<unsigned char>(c));
      b.bits(std::bit_cast<std::uint64_t>(v[0]), 64);
      continue;
    }
    const std::uint64_t delta = static_cast<std::uint64_t>(t[i] - t[i - 1]);
    if (i == 1) {
      varint.clear();
      put_uvarint(varint, delta);
      for (const char c : varint) b.byte(static_cast<unsigned char>(c));
    } else {
      const auto dod = static_cast<std::int64_t>(delta - t_delta);
      const auto in = [&](int nbits) { return -((1LL << (nbits - 1)) - 1) <= dod && dod <= (1LL << (nbits - 1)); };
      if (dod == 0) {
        b.bit(false);
      } else if (in(14)) {
        b.bits(0b10, 2);
        b.bits(static_cast<std::uint64_t>(dod), 14);
      } else if (in(17)) {
        b.bits(0b110, 3);
        b.bits(static_cast<std::uint64_t>(dod), 17);
      } else if (in(20)) {
        b.bits(0b1110, 4);
        b.bits(static_cast<std::uint64_t>(dod), 20);
      } else {
        b.bits(0b1111, 4);
        b.bits(static_cast<std::uint64_t>(dod), 64);
      }
    }
    t_delta = delta;
    // Value: XOR with the previous one (chunkenc.xorWrite).
    const std::uint64_t x = std::bit_cast<std::uint64_t>(v[i]) ^ std::bit_cast<std::uint64_t>(v[i - 1]);
    if (x == 0) {
      b.bit(false);
      continue;
    }
    b.bit(true);
    unsigned lead = static_cast<unsigned>(std::countl_zero(x));
    const auto trail = static_cast<unsigned>(std::countr_zero(x));
    if (lead >= 32) lead = 31;
    if (leading != 0xFF && lead >= leading && trail >= trailing) {
      b.bit(false);
      b.bits(x >> trailing, 64 - static_cast<int>(leading) - static_cast<int>(trailing));
      continue;
    }
    leading = lead;
    trailing = trail;
    b.bit(true);
    b.bits(lead, 5);
    const unsigned sig = 64 - lead - trail;
    b.bits(sig, 6);  // 64 significant bits are written as 0
    b.bits(x >> trail, static_cast<int>(sig));
  }
  return out;
}

TsdbBlockWriter::TsdbBlockWriter(std::string dir) : dir_(std::move(dir)) {
  partial_ = (fs::path(dir_) / ".tsdb-block.partial").string();
  std::error_code ec;
  fs::remove_all(partial_, ec);
  fs::create_directories(fs::path(partial_) / "chunks", ec);
  if (ec) throw WriteError(fmt::format("{}: cannot create directory: {}", partial_, ec.message()));
  buffer_.reserve(kBlockFlushBytes + 4096);
}

TsdbBlockWriter::~TsdbBlockWriter() {
  if (segment_ != nullptr) std::fclose(segment_);
  if (!finished_) {
    std::error_code ec;
    fs::remove_all(partial_, ec);
  }
}

void TsdbBlockWriter::family(std::string_view name, SeriesType type, std::string_view /*help*/,
                             std::string_view /*unit*/, bool exporter_name) {
  FMSIM_CHECK(!finished_, "TSDB block: family after finish()");
  FMSIM_CHECK(is_valid_metric_name(name), fmt::format("invalid metric name \"{}\"", name));
  FMSIM_CHECK(type != SeriesType::Counter || exporter_name || name.ends_with("_total"),
              fmt::format("counter \"{}\" must end in _total", name));
  const auto it = std::lower_bound(families_.begin(), families_.end(), name);
  FMSIM_CHECK(it == families_.end() || *it != name, fmt::format("metric family \"{}\" written twice", name));
  families_.insert(it, std::string(name));
  family_ = std::string(name);
  type_ = type;
}

void TsdbBlockWriter::open_segment() {
  close_segment();
  ++segment_index_;
  const auto path = fs::path(partial_) / "chunks" / fmt::format("{:06}", segment_index_);
  segment_ = std::fopen(path.c_str(), "wb");
  if (segment_ == nullptr) throw WriteError(fmt::format("{}: cannot write", path.string()));
  put_be32(buffer_, kChunksMagic);
  buffer_.push_back(1);  // chunks format v1
  buffer_.append(3, '\0');
  segment_size_ = 8;
}

void TsdbBlockWriter::close_segment() {
  if (segment_ == nullptr) return;
  const bool ok = std::fwrite(buffer_.data(), 1, buffer_.size(), segment_) == buffer_.size();
  bytes_ += buffer_.size();
  buffer_.clear();
  const bool closed = std::fclose(segment_) == 0;
  segment_ = nullptr;
  if (!ok || !closed) throw WriteError(fmt::format("{}: write failed (disk full?)", partial_));
}

void TsdbBlockWriter::write_chunk(const std::string& data, ChunkMeta& meta) {
  std::string head;
  put_uvarint(head, data.size());
  const std::uint64_t size = head.size() + 1 + data.size() + 4;
  if (segment_ == nullptr || segment_size_ + size > kSegmentBytes) open_segment();
  meta.ref = (static_cast<std::uint64_t>(segment_index_ - 1) << 32) | segment_size_;
  buffer_ += head;
  const std::size_t enc = buffer_.size();
  buffer_.push_back(1);  // chunkenc.EncXOR
  buffer_ += data;
  put_be32(buffer_, crc32c(std::string_view(buffer_).substr(enc)));
  segment_size_ += size;
  ++chunk_count_;
  if (buffer_.size() >= kBlockFlushBytes) {
    if (std::fwrite(buffer_.data(), 1, buffer_.size(), segment_) != buffer_.size()) {
      throw WriteError(fmt::format("{}: write failed (disk full?)", partial_));
    }
    bytes_ += buffer_.size();
    buffer_.clear();
  }
}

std::size_t TsdbBlockWriter::add_samples(const std::vector<std::int64_t>& timestamps_s,
                                         const std::vector<double>& values) {
  FMSIM_CHECK(timestamps_s.size() == values.size(), "TSDB block: one value per timestamp");
  std::vector<std::int64_t> ms(timestamps_s.size());
  for (std::size_t i = 0; i < ms.size(); ++i) {
    ms[i] = timestamps_s[i] * 1000;
    FMSIM_CHECK(i == 0 || ms[i] > ms[i - 1], fmt::format("{}: timestamps must increase", family_));
    FMSIM_CHECK(type_ != SeriesType::Counter || (!(values[i] < 0.0) && (i == 0 || !(values[i] < values[i - 1]))),
                fmt::format("{}: counter decreased ({} after {})", family_, values[i], i > 0 ? values[i - 1] : 0.0));
  }
  std::vector<ChunkMeta> metas;
  for (std::size_t begin = 0; begin < ms.size(); begin += kSamplesPerChunk) {
    const std::size_t n = std::min(kSamplesPerChunk, ms.size() - begin);
    const std::string data = xor_chunk(ms.data() + begin, values.data() + begin, n);
    for (const char c : data) content_hash_ = (content_hash_ ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    ChunkMeta meta{.min_ms = ms[begin], .max_ms = ms[begin + n - 1], .ref = 0};
    write_chunk(data, meta);
    metas.push_back(meta);
  }
  if (!ms.empty()) {
    min_ms_ = any_sample_ ? std::min(min_ms_, ms.front()) : ms.front();
    max_ms_ = any_sample_ ? std::max(max_ms_, ms.back()) : ms.back();
    any_sample_ = true;
  }
  chunks_.push_back(std::move(metas));
  return chunks_.size() - 1;
}

void TsdbBlockWriter::add_series(Labels labels, std::string_view name, std::size_t samples) {
  for (const auto& [key, value] : labels) {
    FMSIM_CHECK(is_valid_label_name(key) && key != "__name__",
                fmt::format("invalid label name \"{}\" on {}", key, name));
    FMSIM_CHECK(!value.empty(), fmt::format("empty label value of \"{}\" on {}", key, name));
  }
  labels.emplace_back("__name__", std::string(name));
  std::sort(labels.begin(), labels.end());
  for (std::size_t i = 1; i < labels.size(); ++i) {
    FMSIM_CHECK(labels[i].first != labels[i - 1].first,
                fmt::format("duplicate label \"{}\" on {}", labels[i].first, name));
  }
  for (const auto& [key, value] : labels) {
    for (const char c : key + '=' + value + ',')
      content_hash_ = (content_hash_ ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  }
  series_.push_back(Series{.labels = std::move(labels), .samples = samples});
}

void TsdbBlockWriter::shared_series(const std::vector<Labels>& label_sets,
                                    const std::vector<std::int64_t>& timestamps_s, const std::vector<double>& values) {
  FMSIM_CHECK(!family_.empty() && !finished_ && type_ != SeriesType::Histogram,
              "TSDB block: series outside a gauge/counter family");
  if (values.empty()) return;
  const std::size_t id = add_samples(timestamps_s, values);
  for (const auto& labels : label_sets) add_series(labels, family_, id);
  samples_ += label_sets.size() * values.size();
}

void TsdbBlockWriter::histogram_series(const Labels& labels, const std::vector<double>& bounds,
                                       const std::vector<std::int64_t>& timestamps_s,
                                       const std::vector<std::vector<double>>& cumulative,
                                       const std::vector<double>& sums) {
  FMSIM_CHECK(!family_.empty() && !finished_ && type_ == SeriesType::Histogram,
              "TSDB block: histogram outside a histogram family");
  FMSIM_CHECK(timestamps_s.size() == cumulative.size() && timestamps_s.size() == sums.size(),
              "histogram: one sample per timestamp");
  if (timestamps_s.empty()) return;
  const SeriesType type = type_;
  type_ = SeriesType::Counter;  // buckets, count and sum never decrease here
  std::vector<double> values(timestamps_s.size());
  for (std::size_t b = 0; b <= bounds.size(); ++b) {
    for (std::size_t k = 0; k < values.size(); ++k) {
      FMSIM_CHECK(cumulative[k].size() == bounds.size() + 1, "histogram: one count per bound plus the total");
      values[k] = cumulative[k][b];
    }
    Labels with_le = labels;
    std::string le;
    if (b < bounds.size()) {
      append_metric_value(le, bounds[b]);
    } else {
      le = "+Inf";
    }
    with_le.emplace_back("le", le);
    const std::size_t id = add_samples(timestamps_s, values);
    add_series(std::move(with_le), family_ + "_bucket", id);
  }
  for (std::size_t k = 0; k < values.size(); ++k) values[k] = cumulative[k].back();
  add_series(labels, family_ + "_count", add_samples(timestamps_s, values));
  type_ = SeriesType::Gauge;  // a sum may decrease with negative observations
  add_series(labels, family_ + "_sum", add_samples(timestamps_s, sums));
  type_ = type;
  samples_ += (bounds.size() + 3) * timestamps_s.size();
}

void TsdbBlockWriter::raw_series(std::string_view name, const Labels& labels,
                                 const std::vector<std::int64_t>& timestamps_s, const std::vector<double>& values) {
  FMSIM_CHECK(!finished_, "TSDB block: series after finish()");
  FMSIM_CHECK(is_valid_metric_name(name), fmt::format("invalid metric name \"{}\"", name));
  if (values.empty()) return;
  const SeriesType type = type_;
  const std::string family = std::move(family_);
  type_ = SeriesType::Gauge;
  family_ = std::string(name);
  add_series(labels, name, add_samples(timestamps_s, values));
  type_ = type;
  family_ = family;
  samples_ += values.size();
}

std::string TsdbBlockWriter::finish() {
  FMSIM_CHECK(!finished_, "TSDB block: finish() twice");
  close_segment();
  std::sort(series_.begin(), series_.end(),
            [](const Series& a, const Series& b) { return labels_less(a.labels, b.labels); });
  for (std::size_t i = 1; i < series_.size(); ++i) {
    FMSIM_CHECK(labels_less(series_[i - 1].labels, series_[i].labels), "TSDB block: the same series written twice");
  }

  // Symbol table: every label name and value, sorted.
  std::vector<std::string_view> symbols;
  for (const auto& s : series_) {
    for (const auto& [k, v] : s.labels) {
      symbols.push_back(k);
      symbols.push_back(v);
    }
  }
  std::sort(symbols.begin(), symbols.end());
  symbols.erase(std::unique(symbols.begin(), symbols.end()), symbols.end());
  std::unordered_map<std::string_view, std::uint32_t> symbol_ref;
  for (std::size_t i = 0; i < symbols.size(); ++i) symbol_ref.emplace(symbols[i], static_cast<std::uint32_t>(i));

  std::string index;
  put_be32(index, kIndexMagic);
  index.push_back(2);  // index format v2
  const std::uint64_t toc_symbols = index.size();
  put_be32(index, 0);  // len, set below
  put_be32(index, static_cast<std::uint32_t>(symbols.size()));
  for (const auto s : symbols) put_string(index, s);
  set_be32(index, toc_symbols, static_cast<std::uint32_t>(index.size() - toc_symbols - 4));
  put_be32(index, crc32c(std::string_view(index).substr(toc_symbols + 4)));

  // Series, 16-byte aligned: the ID is offset / 16. Postings collect the IDs per label pair.
  pad_to(index, 16);
  const std::uint64_t toc_series = index.size();
  std::map<std::pair<std::string_view, std::string_view>, std::vector<std::uint32_t>> postings;
  std::vector<std::uint32_t>& all = postings[{std::string_view(), std::string_view()}];
  std::uint64_t chunk_refs = 0;
  std::string entry;
  for (const auto& s : series_) {
    pad_to(index, 16);
    FMSIM_CHECK(index.size() / 16 <= 0xFFFFFFFFULL, "TSDB block: index too large");
    const auto id = static_cast<std::uint32_t>(index.size() / 16);
    entry.clear();
    put_uvarint(entry, s.labels.size());
    for (const auto& [k, v] : s.labels) {
      put_uvarint(entry, symbol_ref.at(k));
      put_uvarint(entry, symbol_ref.at(v));
      postings[{k, v}].push_back(id);
    }
    all.push_back(id);
    const auto& metas = chunks_[s.samples];
    put_uvarint(entry, metas.size());
    for (std::size_t i = 0; i < metas.size(); ++i) {
      const auto& m = metas[i];
      if (i == 0) {
        put_varint(entry, m.min_ms);
        put_uvarint(entry, static_cast<std::uint64_t>(m.max_ms - m.min_ms));
        put_uvarint(entry, m.ref);
      } else {
        put_uvarint(entry, static_cast<std::uint64_t>(m.min_ms - metas[i - 1].max_ms));
        put_uvarint(entry, static_cast<std::uint64_t>(m.max_ms - m.min_ms));
        put_varint(entry, static_cast<std::int64_t>(m.ref - metas[i - 1].ref));
      }
    }
    chunk_refs += metas.size();
    put_uvarint(index, entry.size());
    index += entry;
    put_be32(index, crc32c(entry));
  }

  // No label indices (index v2 readers do not use them); postings lists; an empty label offset
  // table; the postings offset table; the table of contents.
  pad_to(index, 4);
  const std::uint64_t toc_label_indices = index.size();
  const std::uint64_t toc_postings = index.size();
  std::vector<std::pair<std::pair<std::string_view, std::string_view>, std::uint64_t>> offsets;
  for (const auto& [key, ids] : postings) {
    pad_to(index, 4);
    offsets.emplace_back(key, index.size());
    const std::size_t start = index.size();
    put_be32(index, static_cast<std::uint32_t>(4 + 4 * ids.size()));
    put_be32(index, static_cast<std::uint32_t>(ids.size()));
    for (const std::uint32_t id : ids) put_be32(index, id);
    put_be32(index, crc32c(std::string_view(index).substr(start + 4)));
  }
  pad_to(index, 4);
  const std::uint64_t toc_label_table = index.size();
  put_be32(index, 4);
  put_be32(index, 0);
  put_be32(index, crc32c(std::string_view(index).substr(toc_label_table + 4, 4)));
  const std::uint64_t toc_postings_table = index.size();
  put_be32(index, 0);
  put_be32(index, static_cast<std::uint32_t>(offsets.size()));
  for (const auto& [key, off] : offsets) {
    put_uvarint(index, 2);
    put_string(index, key.first);
    put_string(index, key.second);
    put_uvarint(index, off);
  }
  set_be32(index, toc_postings_table, static_cast<std::uint32_t>(index.size() - toc_postings_table - 4));
  put_be32(index, crc32c(std::string_view(index).substr(toc_postings_table + 4)));
  const std::size_t toc = index.size();
  for (const std::uint64_t ref :
       {toc_symbols, toc_series, toc_label_indices, toc_label_table, toc_postings, toc_postings_table}) {
    put_be64(index, ref);
  }
  put_be32(index, crc32c(std::string_view(index).substr(toc)));

  const std::string id = ulid(any_sample_ ? min_ms_ : 0, content_hash_);
  const auto write_file = [&](const std::string& name, const std::string& data) {
    const auto path = fs::path(partial_) / name;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    const bool ok = f != nullptr && std::fwrite(data.data(), 1, data.size(), f) == data.size();
    if (f == nullptr || std::fclose(f) != 0 || !ok) throw WriteError(fmt::format("{}: write failed", path.string()));
    bytes_ += data.size();
  };
  write_file("index", index);
  write_file(
      "meta.json",
      fmt::format("{{\n  \"ulid\": \"{0}\",\n  \"minTime\": {1},\n  \"maxTime\": {2},\n  \"stats\": {{\n"
                  "    \"numSamples\": {3},\n    \"numSeries\": {4},\n    \"numChunks\": {5}\n  }},\n"
                  "  \"compaction\": {{\n    \"level\": 1,\n    \"sources\": [\"{0}\"]\n  }},\n"
                  "  \"version\": 1\n}}\n",
                  id, any_sample_ ? min_ms_ : 0, any_sample_ ? max_ms_ + 1 : 0, samples_, series_.size(), chunk_refs));
  const fs::path block = fs::path(dir_) / id;
  std::error_code ec;
  fs::remove_all(block, ec);
  fs::rename(partial_, block, ec);
  if (ec) throw WriteError(fmt::format("{}: cannot rename into place: {}", block.string(), ec.message()));
  finished_ = true;
  return block.string();
}

}  // namespace fmsim::observability
