// Event-by-event engine scheduler (vLLM V1 / SGLang / TensorRT-LLM in-flight batching).
#include "serving/simulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <tuple>

#include "core/sim_time.hpp"

namespace fmsim::serving {

// ---------------------------------------------------------------------------------------------
void DurationHistogram::add(double seconds, double weight) {
  // The tokens of one iteration mostly share one gap: reuse the last bin for the same value.
  int bin = last_bin_;
  if (seconds != last_seconds_) {
    const double l = seconds > 0 ? std::log10(seconds) + 6.0 : -1.0;  // 1 us -> 0
    bin = l < 0 ? 0 : static_cast<int>(l * kPerDecade) + 1;
    bin = std::min(bin, kBins + 1);
    last_seconds_ = seconds;
    last_bin_ = bin;
  }
  bins_[static_cast<std::size_t>(bin)] += weight;
  count_ += weight;
  sum_ += seconds * weight;
}

double DurationHistogram::quantile(double q) const {
  if (count_ <= 0) return 0.0;
  const double target = q * count_;
  double acc = 0;
  for (int b = 0; b < kBins + 2; ++b) {
    const double w = bins_[static_cast<std::size_t>(b)];
    if (w > 0 && acc + w >= target) {
      if (b == 0) return 1e-6;
      const double lo = std::pow(10.0, (b - 1.0) / kPerDecade - 6.0), hi = std::pow(10.0, 1.0 * b / kPerDecade - 6.0);
      const double f = std::clamp((target - acc) / w, 0.0, 1.0);
      return lo * std::pow(hi / lo, f);
    }
    acc += w;
  }
  return std::pow(10.0, 4.0);
}

void DurationHistogram::merge(const DurationHistogram& o) {
  for (std::size_t b = 0; b < bins_.size(); ++b) bins_[b] += o.bins_[b];
  count_ += o.count_;
  sum_ += o.sum_;
}

double DurationHistogram::count_below(double bound) const {
  double acc = 0;
  for (int b = 0; b < kBins + 2; ++b) {
    const double hi = b == 0 ? 1e-6 : std::pow(10.0, 1.0 * b / kPerDecade - 6.0);
    if (hi > bound * (1 + 1e-9)) break;
    acc += bins_[static_cast<std::size_t>(b)];
  }
  return acc;
}

LatencyStats latency_stats(std::vector<double> v) {
  LatencyStats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  auto pct = [&](double q) {
    const double pos = q * (static_cast<double>(v.size()) - 1);
    const auto i = static_cast<std::size_t>(pos);
    const double f = pos - static_cast<double>(i);
    return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v.back();
  };
  s.p50 = pct(0.5);
  s.p90 = pct(0.9);
  s.p99 = pct(0.99);
  s.max = v.back();
  return s;
}

// ---------------------------------------------------------------------------------------------
namespace {

core::SimTime at(double seconds) { return core::SimTime::from_seconds(core::Seconds(seconds)); }

void accumulate(IterationCost& into, const IterationCost& c) {
  into.linear += c.linear;
  into.experts += c.experts;
  into.attention += c.attention;
  into.other += c.other;
  into.tp_comm += c.tp_comm;
  into.ep_comm += c.ep_comm;
  into.pp_comm += c.pp_comm;
  into.overhead += c.overhead;
  into.draft += c.draft;
}

struct Seq {
  int request = 0, sample = 0;
  double arrival = 0;
  std::int64_t input = 0;
  std::int64_t target_out = 0;
  std::int64_t prefill_target = 0;  // tokens to run through prefill (prompt, + generated after a recompute)
  std::int64_t computed = 0;        // of prefill_target
  std::int64_t generated = 0;
  std::int64_t kv_tokens = 0;      // tokens whose KV is stored
  std::int64_t shared_tokens = 0;  // of kv_tokens, held by a prefix-cache entry
  double own_bytes = 0;            // KV bytes charged to this sequence
  int prefix_key = -1;             // prefix-cache entry it may share
  std::int64_t prefix_tokens = 0;
  bool holds_ref = false;
  bool swapped = false;
  bool prefilled = false;  // disaggregated decode: arrives with its prompt's KV and first token
  bool offloaded = false;  // its KV sits in the offload tier (swapped out)
  double first_token = -1, finish = -1, last_token = -1;
  double spec_credit = 0;
  std::int64_t cached = 0;
  int preemptions = 0;
  int rank = 0;               // attention-DP rank holding its KV and running its attention
  std::vector<int> children;  // n-sample siblings released when this prefill completes
  std::int64_t stamp = 0;     // order of admission to the running batch (the running list's order)
  // In the decode cohort (Scheduler::join_cohort): tokens and KV are implied by the cohort's
  // iteration count; the fields above are brought up to date when it leaves (materialize).
  int cohort_slot = -1;                  // position in cohort_, -1 outside it
  int cohort_epoch = 0;                  // joins so far (tells stale finish-queue entries apart)
  std::int64_t kv_off = 0, gen_off = 0;  // kv_tokens, generated = these + the cohort's iterations
  std::int64_t kv_join = 0;              // kv_tokens when it joined
  double own_join = 0;                   // own_bytes when it joined
  bool decoding() const { return computed >= prefill_target; }
};

struct PrefixEntry {
  std::int64_t tokens = 0;
  double bytes = 0;
  int refs = 0;
  double last_use = 0;
};

// Expected duration of one closed-loop request (ClientStart::Spread): its prompt prefilled alone
// in chunks of the prefill engine's token budget, then its output tokens at a decode batch of
// `batch` (speculative steps emit several).
double closed_loop_cycle(const IterationModel& prefill, const IterationModel& decode, const WorkloadSpec& w,
                         int batch) {
  const double isl = std::max(1.0, w.input.mean), osl = std::max(1.0, w.output.mean);
  const int budget = std::max(1, prefill.deployment().engine.max_num_batched_tokens);
  const int chunk = static_cast<int>(std::min(isl, static_cast<double>(budget)));
  const double step = decode.decode_step_time(std::max(1, batch), isl + osl / 2).value() /
                      decode.deployment().speculation.tokens_per_step();
  return prefill.prefill_time(chunk).value() * std::ceil(isl / chunk) + (osl - 1) * step;
}

// The request path's time outside the GPU for request `req`: `mean`, or with
// WorkloadSpec::random_path_time an exponential draw of that mean from a counter-based generator
// (splitmix64 of the seed and the request), so a request's draw does not depend on the order
// requests are played in.
double path_time(const WorkloadSpec& w, double mean, int req) {
  if (!w.random_path_time || mean <= 0) return mean;
  std::uint64_t z = w.seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(req) * 0xD1B54A32D192ED03ULL + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  const double u = static_cast<double>(z >> 11) * 0x1.0p-53;  // [0, 1)
  return -mean * std::log1p(-u);
}

class Scheduler {
 public:
  Scheduler(const IterationModel& model, const WorkloadSpec& w, const std::vector<Request>& reqs,
            engine::TraceSink* trace, std::string lane = "replica 0")
      : m_(model), e_(model.deployment().engine), w_(w), reqs_(reqs), trace_(trace), lane_(std::move(lane)) {
    capacity_ = model.kv_capacity();
    overhead_ = w.path == RequestPath::Server ? e_.request_overhead.value() : 0.0;
    const auto& d = model.deployment();
    per_seq_tokens_ = d.speculation.kind == SpeculativeKind::None ? 1 : 1 + d.speculation.draft_tokens;
    tokens_per_step_ = d.speculation.tokens_per_step();
    window_ = d.model.sliding_window;
    host_bw_ = d.gpu_cal.host_link_bandwidth.value();
    const std::int64_t bs = e_.block_size;
    block_mask_ = bs > 0 && (bs & (bs - 1)) == 0 ? bs - 1 : -1;
    // Attention DP: each rank schedules its own requests, with the engine's batch and token limits
    // per rank ("--max_batch_size: max batch size in each rank; --max_num_tokens: max num tokens in
    // each rank", TensorRT-LLM DeepSeek-R1 best-performance guide, trtllm-bench with
    // enable_attention_dp).
    ranks_ = std::max(1, d.attention_dp);
    rank_budget_.assign(static_cast<std::size_t>(ranks_), 0);
    rank_count_.assign(static_cast<std::size_t>(ranks_), 0);
    rank_work_.assign(static_cast<std::size_t>(ranks_), BatchWork{});
    cohort_rank_n_.assign(static_cast<std::size_t>(ranks_), 0);
    cohort_rank_kv_off_.assign(static_cast<std::size_t>(ranks_), 0);
    if (e_.block_size > 1) bucket_n_.assign(static_cast<std::size_t>(e_.block_size), 0);
    block_growth_ = block_growth();
    block_bytes_ = m_.kv_bytes(1.0);
    budget_bytes_ = m_.kv_bytes(static_cast<double>(ranks_) * e_.max_num_batched_tokens);
  }

  ServeResult run() {
    ServeResult r;
    if (!fits(r)) return r;
    start_arrivals();
    fast_forward_ = trace_ == nullptr;
    cohort_on_ = fast_forward_ && per_seq_tokens_ == 1 && tokens_per_step_ == 1.0;
    while (step(r)) {
      if (w_.stop_after > 0 && ended_below_stop_ >= w_.stop_after) break;
    }
    finish(r);
    return r;
  }

  /// Fleet mode: no arrivals of its own; the router hands it requests with `inject`.
  ServeResult run_external_start() {
    fixed_path_ = true;                 // the fleet and disaggregated drivers add one request path to every request
    fast_forward_ = trace_ == nullptr;  // bounded by horizon_, which the driver sets before each step
    cohort_on_ = fast_forward_ && per_seq_tokens_ == 1 && tokens_per_step_ == 1.0;
    ServeResult r;
    if (!fits(r)) return r;
    release_time_.assign(reqs_.size(), std::numeric_limits<double>::infinity());
    remaining_samples_.assign(reqs_.size(), 0);
    return r;
  }

  bool fits(ServeResult& r) const {
    r.memory = m_.memory();
    r.gpus = m_.deployment().gpus();
    if (capacity_ <= m_.kv_bytes(1.0)) {
      r.fits = false;
      r.reason = fmt::format("weights and workspace leave no room for a KV cache ({:.1f} GiB weights per GPU)",
                             m_.memory().weights.value() / (1024.0 * 1024 * 1024));
      return false;
    }
    return true;
  }

  /// Time the scheduler has reached (end of its last iteration).
  [[nodiscard]] double now() const { return now_; }
  /// Requests admitted or waiting, not finished.
  [[nodiscard]] int outstanding() const { return static_cast<int>(running_.size() + cohort_.size() + waiting_.size()); }
  [[nodiscard]] bool idle() const { return running_.empty() && cohort_.empty() && waiting_.empty(); }

  /// Fleet mode: request `req` arrives at time `t` (>= now()).
  void inject(int req, double t) { inject(req, t, overhead_); }
  /// The same with this request's own path time (the disaggregated closed loop's drawn ones).
  void inject(int req, double t, double path) {
    now_ = std::max(now_, t + path);
    release_request(req, t + path, t);
  }

  /// Disaggregated decode pool: the samples of `req` arrive at `t` with their prompt's KV
  /// (transferred from a prefill instance) and the first token produced at `first_token`.
  void inject_prefilled(int req, double arrival, double first_token, double t, bool first_from_decode = false) {
    now_ = std::max(now_, t);
    const std::size_t first = seqs_.size();
    release_request(req, arrival);
    for (std::size_t i = first; i < seqs_.size(); ++i) {
      Seq& q = seqs_[i];
      q.arrival = arrival;
      q.prefilled = true;
      q.computed = q.prefill_target;
      q.kv_tokens = q.input;
      q.generated = 1;
      // Streamed by this instance: the first token leaves with its first step (set in step()).
      q.first_token = first_from_decode ? -1.0 : first_token;
      q.last_token = t;
      q.prefix_key = -1;
      if (i > first) waiting_.push_back(static_cast<int>(i));
    }
    seqs_[first].children.clear();
    // Samples done with their first token never reach the decode batch.
    for (std::size_t i = first; i < seqs_.size(); ++i) {
      Seq& q = seqs_[i];
      if (q.generated < q.target_out) continue;
      q.finish = first_token;
      std::erase(waiting_, static_cast<int>(i));
      finish_request_sample(q, t);
    }
  }

  void start_arrivals() {
    // Arrival order.
    order_.resize(reqs_.size());
    for (std::size_t i = 0; i < reqs_.size(); ++i) order_[i] = static_cast<int>(i);
    if (w_.arrival != ArrivalKind::ClosedLoop) {
      std::stable_sort(order_.begin(), order_.end(),
                       [&](int a, int b) { return reqs_[a].arrival_s < reqs_[b].arrival_s; });
    }
    release_time_.assign(reqs_.size(), std::numeric_limits<double>::infinity());
    remaining_samples_.assign(reqs_.size(), 0);
    if (w_.arrival == ArrivalKind::ClosedLoop) {
      const int clients = std::min<int>(w_.concurrency, static_cast<int>(reqs_.size()));
      const double cycle = w_.client_start == ClientStart::Spread ? closed_loop_cycle(m_, m_, w_, clients) : 0.0;
      for (int i = 0; i < clients; ++i) release_time_[order_[i]] = cycle * i / clients + path_of(order_[i]);
      next_closed_ = clients;
    } else {
      for (std::size_t i = 0; i < reqs_.size(); ++i)
        release_time_[i] =
            (w_.arrival == ArrivalKind::Offline ? 0.0 : reqs_[i].arrival_s) + path_of(static_cast<int>(i));
    }
  }

  void finish(ServeResult& r) {
    dissolve_cohort();
    for (const auto& s : seqs_) {
      RequestResult rr;
      rr.request = s.request;
      rr.sample = s.sample;
      rr.arrival = core::Seconds(s.arrival);
      rr.first_token = core::Seconds(s.first_token);
      rr.finish = core::Seconds(s.finish);
      rr.input_tokens = s.input;
      rr.output_tokens = s.generated;
      rr.cached_tokens = s.cached;
      rr.preemptions = s.preemptions;
      r.requests.push_back(rr);
    }
    r.itl = itl_;
    r.preemptions = preemptions_;
    r.offloads = offloads_;
    r.rejected = rejected_;
    r.time_by_part = parts_;
    double first = std::numeric_limits<double>::infinity(), last = 0;
    for (const auto& s : seqs_) {
      first = std::min(first, s.arrival);
      if (s.finish >= 0) last = std::max(last, s.finish);
    }
    r.duration = core::Seconds(last > first ? last - first : 0.0);
  }

  // (The fleet and disaggregated drivers below call step/finish/inject directly.)
  double free_bytes() const { return capacity_ - used_; }

  // Frees unreferenced prefix-cache entries, least recently used first, until `need` bytes are free.
  bool make_room(double need) {
    if (free_bytes() >= need) return true;
    while (free_bytes() < need) {
      int victim = -1;
      double oldest = std::numeric_limits<double>::infinity();
      for (const auto& [k, p] : prefixes_) {
        if (p.refs == 0 && p.bytes > 0 && p.last_use < oldest) {
          oldest = p.last_use;
          victim = k;
        }
      }
      if (victim < 0) return false;
      used_ -= prefixes_[victim].bytes;
      prefixes_.erase(victim);
    }
    return true;
  }

  void release_request(int req, double now, double sent = -1.0) {
    const auto& rq = reqs_[static_cast<std::size_t>(req)];
    const int n = static_cast<int>(rq.output_tokens.size());
    remaining_samples_[static_cast<std::size_t>(req)] = n;
    const int parent = static_cast<int>(seqs_.size());
    for (int s = 0; s < n; ++s) {
      Seq q;
      q.request = req;
      q.sample = s;
      q.arrival = sent >= 0 ? sent : now - path_of(req);  // `now` is when the engine receives it
      q.input = rq.input_tokens;
      q.target_out = std::max<std::int64_t>(1, rq.output_tokens[static_cast<std::size_t>(s)]);
      q.prefill_target = rq.input_tokens;
      if (rq.prefix_group >= 0) {
        q.prefix_key = rq.prefix_group;
        q.prefix_tokens = rq.prefix_tokens;
      }
      if (n > 1) {  // samples share the whole prompt: a private prefix entry per request
        q.prefix_key = 1'000'000 + req;
        q.prefix_tokens = rq.input_tokens;
      }
      seqs_.push_back(q);
      if (s == 0) {
        waiting_.push_back(parent);
      } else {
        seqs_[static_cast<std::size_t>(parent)].children.push_back(parent + s);
      }
    }
  }

  void release_arrivals(double now) {
    if (w_.arrival == ArrivalKind::ClosedLoop) {
      for (; next_release_ < reqs_.size() && release_time_[order_[next_release_]] <= now; ++next_release_) {
        release_request(order_[next_release_], release_time_[order_[next_release_]]);
      }
      return;
    }
    for (; next_release_ < order_.size() && release_time_[order_[next_release_]] <= now; ++next_release_) {
      release_request(order_[next_release_], release_time_[order_[next_release_]]);
    }
  }

  double next_arrival() const {
    if (next_release_ < order_.size()) return release_time_[order_[next_release_]];
    return std::numeric_limits<double>::infinity();
  }

  void free_seq(Seq& s) {
    used_ -= s.own_bytes;
    s.own_bytes = 0;
    if (s.holds_ref) {
      auto it = prefixes_.find(s.prefix_key);
      if (it != prefixes_.end()) it->second.refs--;
      s.holds_ref = false;
    }
  }

  // Preempts a running sequence: recompute drops its KV, swap moves it to host memory.
  double preempt(int idx) {
    Seq& s = seqs_[static_cast<std::size_t>(idx)];
    s.preemptions++;
    preemptions_++;
    double cost = 0;
    const auto& tier = m_.deployment().kv_offload;
    const double gpus = m_.deployment().gpus();
    if (tier.tier != KvTier::None && offloaded_ + s.own_bytes <= tier.capacity.value()) {
      // Offload to the tier below HBM; every GPU moves its own shard at the tier's rate.
      cost = s.own_bytes / (tier.bandwidth.value() * gpus);
      offloaded_ += s.own_bytes;
      s.offloaded = true;
      s.swapped = true;
      offloads_++;
      free_seq(s);
    } else if (e_.preemption == PreemptionMode::Swap) {
      cost = s.own_bytes / (host_bw_ * gpus);
      s.swapped = true;
      free_seq(s);
    } else {
      free_seq(s);
      s.prefill_target = s.input + s.generated;
      s.computed = 0;
      s.kv_tokens = 0;
      s.shared_tokens = 0;
    }
    waiting_.push_front(idx);
    return cost;
  }

  /// One iteration (or a jump to the next arrival); false when nothing is left to do.
  bool step(ServeResult& r) {
    double& now = now_;
    auto& batch = batch_;
    auto& still = still_;
    {
      release_arrivals(now);
      if (running_.empty() && cohort_.empty() && waiting_.empty()) {
        const double t = next_arrival();
        if (!std::isfinite(t)) return false;
        now = std::max(now, t);
        return true;
      }
      if (fast_forward_ && cohort_.empty() && decode_stretch(r)) return true;
      if (cohort_stretch(r)) return true;
      if (!cohort_.empty() && !cohort_can_step()) dissolve_cohort();
      batch.clear();
      double extra = 0;  // swap time
      std::fill(rank_budget_.begin(), rank_budget_.end(), e_.max_num_batched_tokens);
      std::fill(rank_count_.begin(), rank_count_.end(), 0);
      BatchWork w;
      // 0. The decode cohort: one token each, before every other running sequence (they were all
      // admitted before any running sequence still in prefill, cohort_can_step), so the budget and
      // the KV they take come first, as in the running list's order.
      const auto cohort_n = static_cast<int>(cohort_.size());
      if (cohort_n > 0) {
        if (e_.admission == KvAdmission::OnDemand) used_ += cohort_growth();
        for (int k = 0; k < ranks_; ++k)
          rank_budget_[static_cast<std::size_t>(k)] -= cohort_rank_n_[static_cast<std::size_t>(k)];
      }
      // 1. Running sequences, oldest first: decodes, then continuing prefill chunks.
      still.clear();
      for (std::size_t i = 0; i < running_.size(); ++i) {
        const int idx = running_[i];
        Seq& s = seqs_[static_cast<std::size_t>(idx)];
        if (s.finish >= 0 || is_preempted(idx)) continue;
        int& budget = rank_budget_[static_cast<std::size_t>(s.rank)];
        if (s.decoding()) {
          if (e_.admission == KvAdmission::OnDemand) {
            // The next token lands in the sequence's partly filled last block: nothing to allocate.
            const bool same_block = window_ <= 0 && per_seq_tokens_ == 1 && !starts_block(s.kv_tokens);
            const double grow =
                same_block ? 0.0 : kv_of(s.kv_tokens + per_seq_tokens_) - kv_of(s.shared_tokens) - s.own_bytes;
            bool ok = grow <= 0 || make_room(grow);
            while (!ok) {
              // Preempt the most recently admitted other sequence.
              int victim = -1;
              for (std::size_t j = running_.size(); j-- > i + 1;) {
                const int v = running_[j];
                if (seqs_[static_cast<std::size_t>(v)].finish < 0 && !is_preempted(v)) {
                  victim = v;
                  break;
                }
              }
              if (victim < 0) break;
              extra += preempt(victim);
              mark_preempted(victim);
              ok = make_room(grow);
            }
            if (!ok) {
              extra += preempt(idx);
              mark_preempted(idx);
              continue;
            }
            if (grow > 0) {
              s.own_bytes += grow;
              used_ += grow;
            }
          }
          budget -= per_seq_tokens_;
          batch.emplace_back(idx, 0);
          still.push_back(idx);
        } else {
          still.push_back(idx);
          if (budget <= 0) continue;
          const auto chunk = static_cast<int>(std::min<std::int64_t>(s.prefill_target - s.computed, budget));
          if (!schedule_prefill(s, chunk)) continue;
          budget -= chunk;
          batch.emplace_back(idx, chunk);
        }
      }
      // Drop preempted ones from the running list.
      running_.clear();
      for (int idx : still) {
        if (!is_preempted(idx)) {
          running_.push_back(idx);
          rank_count_[static_cast<std::size_t>(seqs_[static_cast<std::size_t>(idx)].rank)]++;
        }
      }
      for (int k = 0; k < ranks_; ++k)
        rank_count_[static_cast<std::size_t>(k)] += cohort_rank_n_[static_cast<std::size_t>(k)];
      preempted_now_.clear();
      // 2. Admission, first come first served, while budget, slots and KV last. Attention DP: a new
      // request goes to the rank running the fewest (TensorRT-LLM's attention-DP scheduler
      // balances the active requests per rank).
      while (!waiting_.empty()) {
        int rank = -1;
        for (int r = 0; r < ranks_; ++r) {
          const auto ri = static_cast<std::size_t>(r);
          if (rank_budget_[ri] > 0 && rank_count_[ri] < e_.max_num_seqs &&
              (rank < 0 || rank_count_[ri] < rank_count_[static_cast<std::size_t>(rank)])) {
            rank = r;
          }
        }
        if (rank < 0) break;
        int& budget = rank_budget_[static_cast<std::size_t>(rank)];
        const int idx = waiting_.front();
        Seq& s = seqs_[static_cast<std::size_t>(idx)];
        s.rank = rank;
        if (s.prefilled) {  // its prompt's KV arrived with it: allocate and start decoding
          const double ctx = e_.admission == KvAdmission::ReserveFull ? static_cast<double>(s.input + s.target_out)
                                                                      : static_cast<double>(s.kv_tokens);
          const double need = m_.kv_bytes(ctx);
          if (!make_room(need)) break;
          s.own_bytes = need;
          used_ += need;
          s.prefilled = false;
          waiting_.pop_front();
          push_running(idx);
          rank_count_[static_cast<std::size_t>(rank)]++;
          continue;
        }
        if (s.swapped) {
          if (!make_room(s_bytes_of(s))) break;
          s.own_bytes = s_bytes_of(s);
          used_ += s.own_bytes;
          const auto& tier = m_.deployment().kv_offload;
          if (s.offloaded) {  // reload from the offload tier
            extra += s.own_bytes / (tier.bandwidth.value() * m_.deployment().gpus());
            offloaded_ -= s.own_bytes;
            s.offloaded = false;
          } else {
            extra += s.own_bytes / (host_bw_ * m_.deployment().gpus());
          }
          s.swapped = false;
          waiting_.pop_front();
          push_running(idx);
          rank_count_[static_cast<std::size_t>(rank)]++;
          continue;
        }
        attach_prefix(s, now);
        std::int64_t remaining = s.prefill_target - s.computed;
        if (!e_.chunked_prefill && remaining > budget && (!batch.empty() || cohort_n > 0)) {
          detach_prefix(s);
          break;
        }
        const auto chunk = static_cast<int>(e_.chunked_prefill ? std::min<std::int64_t>(remaining, budget) : remaining);
        const double reserve_ctx = e_.admission == KvAdmission::ReserveFull
                                       ? static_cast<double>(s.input + s.target_out)
                                       : static_cast<double>(s.computed + chunk);
        const double need = m_.kv_bytes(reserve_ctx) - kv_of(s.shared_tokens);
        if (!make_room(need)) {
          detach_prefix(s);
          if (running_.empty() && batch.empty() && cohort_n == 0) {  // can never fit: reject
            waiting_.pop_front();
            rejected_++;
            s.finish = -2;
            if (track_ended_) rejected_now_.push_back(s.request);
            finish_request_sample(s, now);
            continue;
          }
          break;
        }
        if (e_.admission == KvAdmission::ReserveFull) {
          s.own_bytes = need;
          used_ += need;
        }
        waiting_.pop_front();
        push_running(idx);
        rank_count_[static_cast<std::size_t>(rank)]++;
        if (!schedule_prefill(s, chunk)) continue;
        budget -= chunk;
        batch.emplace_back(idx, chunk);
      }
      if (batch.empty() && cohort_n == 0) {
        const double t = next_arrival();
        if (!std::isfinite(t)) {
          if (running_.empty() && waiting_.empty()) return false;
          if (running_.empty()) {  // head of queue cannot be admitted and nothing frees memory: reject it
            const int idx = waiting_.front();
            waiting_.pop_front();
            rejected_++;
            seqs_[static_cast<std::size_t>(idx)].finish = -2;
            if (track_ended_) rejected_now_.push_back(seqs_[static_cast<std::size_t>(idx)].request);
            finish_request_sample(seqs_[static_cast<std::size_t>(idx)], now);
          }
          return true;
        }
        now = std::max(now, t);
        return true;
      }
      // 3. Cost of the iteration.
      auto add_work = [&](BatchWork& b, const Seq& s, int chunk) {
        if (chunk == 0) {
          b.decode_seqs++;
          b.decode_ctx_full += static_cast<double>(s.kv_tokens);
          b.decode_ctx_window += window_ > 0 ? std::min<double>(static_cast<double>(s.kv_tokens), window_)
                                             : static_cast<double>(s.kv_tokens);
          b.sampled++;
        } else {
          const double before = static_cast<double>(s.computed);
          b.prefill_tokens += chunk;
          b.prefill_seqs++;
          b.prefill_attn_full += chunk * (before + chunk / 2.0);
          b.prefill_attn_window +=
              chunk * (window_ > 0 ? std::min(before + chunk / 2.0, window_) : before + chunk / 2.0);
          if (s.computed + chunk >= s.prefill_target) b.sampled++;
        }
      };
      if (ranks_ > 1) std::fill(rank_work_.begin(), rank_work_.end(), BatchWork{});
      for (const auto& [idx, chunk] : batch) {
        const Seq& s = seqs_[static_cast<std::size_t>(idx)];
        add_work(w, s, chunk);
        if (ranks_ > 1) add_work(rank_work_[static_cast<std::size_t>(s.rank)], s, chunk);
      }
      if (cohort_n > 0) {
        // Whole token counts: the sums are exact in any order.
        add_cohort_work(w, cohort_n, cohort_kv_off_);
        if (ranks_ > 1) {
          for (int k = 0; k < ranks_; ++k) {
            const auto ki = static_cast<std::size_t>(k);
            add_cohort_work(rank_work_[ki], cohort_rank_n_[ki], cohort_rank_kv_off_[ki]);
          }
        }
      }
      const IterationCost cost = cost_of(w);
      add_parts(cost);
      const double dt = cost.total().value() + extra;
      const double start = now;
      now += dt;
      // 4. Apply: tokens come out at the end of the iteration, in the running list's order (the
      // cohort's members that finish now among the others, by admission).
      cohort_finishers();
      std::size_t f = 0;
      for (const auto& [idx, chunk] : batch) {
        const std::int64_t stamp = seqs_[static_cast<std::size_t>(idx)].stamp;
        for (; f < finishers_.size() && seqs_[static_cast<std::size_t>(finishers_[f])].stamp < stamp; ++f)
          apply_one(finishers_[f], 0, start, now);
        apply_one(idx, chunk, start, now);
      }
      for (; f < finishers_.size(); ++f) apply_one(finishers_[f], 0, start, now);
      // The cohort's other members: one token each, all after the same gap.
      if (!cohort_.empty()) itl_.add(now - cohort_last_, static_cast<double>(cohort_.size()));
      cohort_iter_++;
      cohort_last_ = now;
      // Finished sequences leave the running list; steady decoders move to the cohort.
      const bool joins = cohort_on_ && cohort_may_grow();
      std::erase_if(running_, [&](int idx) {
        const Seq& s = seqs_[static_cast<std::size_t>(idx)];
        if (s.finish >= 0) return true;
        if (!joins || !joinable(s, now)) return false;
        join_cohort(idx);
        return true;
      });
      IterationSample smp;
      smp.time = core::Seconds(now);
      smp.duration = core::Seconds(dt);
      smp.running = static_cast<int>(batch.size()) + cohort_n;
      smp.decode_seqs = w.decode_seqs;
      smp.prefill_tokens = w.prefill_tokens;
      smp.tokens = w.decode_seqs * per_seq_tokens_ + w.prefill_tokens;
      smp.waiting = static_cast<int>(waiting_.size());
      smp.kv_usage = std::clamp(used_ / capacity_, 0.0, 1.0);
      smp.preemptions = preemptions_;
      r.iterations.push_back(smp);
      if (trace_ != nullptr) {
        trace_->record({lane_,
                        "iterations",
                        w.prefill_tokens > 0 ? fmt::format("mixed b{} +{} prefill", w.decode_seqs, w.prefill_tokens)
                                             : fmt::format("decode b{}", w.decode_seqs),
                        w.prefill_tokens > 0 ? "prefill" : "decode",
                        at(start),
                        at(dt),
                        {{"decode_seqs", std::to_string(w.decode_seqs)},
                         {"prefill_tokens", std::to_string(w.prefill_tokens)},
                         {"kv_usage", fmt::format("{:.3f}", smp.kv_usage)},
                         {"waiting", std::to_string(smp.waiting)}}});
      }
    }
    return true;
  }

  // ---- The decode cohort -------------------------------------------------------------------
  // Running sequences in a plain steady decode (one token per iteration, no speculation, past
  // any sliding window, their first token out) leave the running list for the cohort, where they
  // are advanced together: each iteration adds their count and the sum of their contexts to the
  // batch, their KV growth (the members whose next token opens a block, counted by the block
  // offset of their context) and one ITL gap for all, without visiting them. A member is visited
  // only when it finishes (a queue by the iteration it ends in) or when the cohort is dissolved:
  // when memory could run short this iteration (a make_room could then evict or preempt, which
  // depends on the running list's order), when a running sequence still in prefill was admitted
  // before a member (its chunk would see the budget before the member's token), and at the end.
  // The iterations, tokens, KV and times are those of the running list played sequence by
  // sequence (test CohortPlaysAsStepByStep); only sums of ITL and KV bytes are taken in another
  // order.

  /// The cost of an iteration doing `w` (and, with attention DP, rank_work_). A decode-only batch
  /// without attention DP or speculation: iteration() of the same batch size with no context
  /// (computed once per size), its attention from the contexts (IterationModel::decode_attention):
  /// the same figures, the rest of the step not recomputed every iteration.
  IterationCost cost_of(const BatchWork& w) {
    if (ranks_ > 1) return m_.iteration(w, rank_work_);
    if (per_seq_tokens_ != 1 || w.prefill_tokens != 0 || w.prefill_seqs != 0 || w.decode_seqs <= 0 ||
        w.sampled != w.decode_seqs)
      return m_.iteration(w);
    const auto n = static_cast<std::size_t>(w.decode_seqs);
    if (n >= decode_base_.size()) decode_base_.resize(n + 1);
    auto& base = decode_base_[n];
    if (!base) {
      BatchWork z;
      z.decode_seqs = w.decode_seqs;
      z.sampled = w.sampled;
      base = m_.iteration(z);
    }
    IterationCost c = *base;
    c.attention = m_.decode_attention(w.decode_ctx_full, w.decode_ctx_window);
    return c;
  }

  /// The sample of a decode-only iteration of `batch` sequences that took `dt` and ended now.
  IterationSample decode_only_sample(double dt, int batch) const {
    IterationSample smp;
    smp.time = core::Seconds(now_);
    smp.duration = core::Seconds(dt);
    smp.running = batch;
    smp.decode_seqs = batch;
    smp.tokens = batch;
    smp.waiting = static_cast<int>(waiting_.size());
    smp.kv_usage = std::clamp(used_ / capacity_, 0.0, 1.0);
    smp.preemptions = preemptions_;
    return smp;
  }

  /// Appends `idx` to the running list, which stays in admission order.
  void push_running(int idx) {
    seqs_[static_cast<std::size_t>(idx)].stamp = next_stamp_++;
    running_.push_back(idx);
  }

  /// KV bytes of one more block of the layers without a window (what a member's token that opens
  /// a block allocates; members are past the window, whose blocks no longer grow).
  double block_growth() const {
    const std::int64_t bs = std::max(1, e_.block_size);
    const auto past = static_cast<std::int64_t>(std::ceil(window_ / static_cast<double>(bs)) + 2) * bs;
    return m_.kv_bytes(static_cast<double>(past + 1)) - m_.kv_bytes(static_cast<double>(past));
  }

  /// Members whose token this iteration opens a block: context % block_size == 0.
  int cohort_at_block_start() const {
    const std::int64_t bs = static_cast<std::int64_t>(bucket_n_.size());
    if (bs <= 1) return static_cast<int>(cohort_.size());
    return bucket_n_[static_cast<std::size_t>(((-cohort_iter_) % bs + bs) % bs)];
  }
  double cohort_growth() const { return cohort_at_block_start() * block_growth_; }

  /// KV bytes the running list's own sequences may take in one iteration, at most: a block (of
  /// every layer) per decode, the token budget of every rank in prefill chunks plus a block each.
  double running_reserve() const {
    return static_cast<double>(running_.size() + 1) * 2.0 * block_bytes_ + budget_bytes_;
  }

  /// Whether the cohort can take this iteration ahead of the running list: no make_room of this
  /// iteration's running sequences can run short, and none still in prefill was admitted before
  /// a member.
  bool cohort_can_step() const {
    if (e_.admission == KvAdmission::OnDemand && free_bytes() < cohort_growth() + running_reserve()) return false;
    for (const int idx : running_) {
      const Seq& s = seqs_[static_cast<std::size_t>(idx)];
      if (!s.decoding() && s.stamp < cohort_max_stamp_) return false;
    }
    return true;
  }

  /// Whether sequences may join: twice the room cohort_can_step asks for (so that a cohort
  /// dissolved for lack of memory does not form again at once).
  bool cohort_may_grow() const {
    if (e_.admission != KvAdmission::OnDemand) return true;
    return free_bytes() >=
           2.0 * (static_cast<double>(cohort_.size() + running_.size()) * block_growth_ + running_reserve());
  }

  /// Whether running sequence `s`, which took part in the iteration that ended at `now`, decodes
  /// steadily from here: one token per iteration until it finishes.
  bool joinable(const Seq& s, double now) {
    if (!s.decoding() || s.generated < 1 || s.generated >= s.target_out || s.first_token < 0 || s.last_token != now ||
        !s.children.empty() || s.swapped || s.spec_credit != 0.0)
      return false;
    const std::int64_t bs = std::max(1, e_.block_size);
    if (window_ > 0 && static_cast<double>(s.kv_tokens) < window_ + static_cast<double>(bs)) return false;
    // Its KV is exactly its blocks (what the growth per block assumes).
    return e_.admission != KvAdmission::OnDemand || s.own_bytes == kv_of(s.kv_tokens) - kv_of(s.shared_tokens);
  }

  void join_cohort(int idx) {
    Seq& s = seqs_[static_cast<std::size_t>(idx)];
    s.kv_off = s.kv_tokens - cohort_iter_;
    s.gen_off = s.generated - cohort_iter_;
    s.kv_join = s.kv_tokens;
    s.own_join = s.own_bytes;
    s.cohort_epoch++;
    s.cohort_slot = static_cast<int>(cohort_.size());
    cohort_.push_back(idx);
    cohort_kv_off_ += s.kv_off;
    const auto r = static_cast<std::size_t>(s.rank);
    cohort_rank_n_[r]++;
    cohort_rank_kv_off_[r] += s.kv_off;
    if (bucket_n_.size() > 1) bucket_n_[static_cast<std::size_t>(bucket_of(s.kv_off))]++;
    // It finishes in the iteration where generated reaches target_out: gen_off + iteration + 1.
    cohort_ends_.push({s.target_out - s.gen_off - 1, s.stamp, idx, s.cohort_epoch});
    cohort_max_stamp_ = std::max(cohort_max_stamp_, s.stamp);
  }

  std::int64_t bucket_of(std::int64_t kv_off) const {
    const auto bs = static_cast<std::int64_t>(bucket_n_.size());
    return (kv_off % bs + bs) % bs;
  }

  /// Brings member `idx`'s fields up to date before this iteration's token (`grown`: its KV for
  /// that token already allocated) and takes it out of the cohort.
  void leave_cohort(int idx, bool grown) {
    Seq& s = seqs_[static_cast<std::size_t>(idx)];
    s.kv_tokens = s.kv_off + cohort_iter_;
    s.generated = s.gen_off + cohort_iter_;
    s.last_token = cohort_last_;
    if (e_.admission == KvAdmission::OnDemand) {
      // One block per token that opened one: multiples of block_size in [kv_join, kv_tokens).
      const std::int64_t bs = std::max(1, e_.block_size);
      const std::int64_t end = s.kv_tokens + (grown ? 1 : 0);
      auto blocks_to = [&](std::int64_t t) { return (t + bs - 1) / bs; };
      const std::int64_t opened = blocks_to(end) - blocks_to(s.kv_join);
      // Whole byte counts add exactly: one product is the same sum (a 1-token page opens a block
      // every token).
      const double whole = s.own_join + static_cast<double>(opened) * block_growth_;
      if (std::floor(block_growth_) == block_growth_ && std::floor(s.own_join) == s.own_join && whole < 0x1p53) {
        s.own_bytes = whole;
      } else {
        s.own_bytes = s.own_join;
        for (std::int64_t k = 0; k < opened; ++k) s.own_bytes += block_growth_;
      }
    }
    const auto slot = static_cast<std::size_t>(s.cohort_slot);
    const int last = cohort_.back();
    cohort_[slot] = last;
    seqs_[static_cast<std::size_t>(last)].cohort_slot = static_cast<int>(slot);
    cohort_.pop_back();
    s.cohort_slot = -1;
    cohort_kv_off_ -= s.kv_off;
    const auto r = static_cast<std::size_t>(s.rank);
    cohort_rank_n_[r]--;
    cohort_rank_kv_off_[r] -= s.kv_off;
    if (bucket_n_.size() > 1) bucket_n_[static_cast<std::size_t>(bucket_of(s.kv_off))]--;
    if (cohort_.empty()) cohort_max_stamp_ = -1;
  }

  /// Members whose last token comes out this iteration, in admission order, out of the cohort
  /// (finishers_), with their KV of this iteration allocated.
  void cohort_finishers() {
    finishers_.clear();
    while (!cohort_ends_.empty() && cohort_ends_.top().iteration <= cohort_iter_) {
      const CohortEnd e = cohort_ends_.top();
      cohort_ends_.pop();
      const Seq& s = seqs_[static_cast<std::size_t>(e.seq)];
      if (s.cohort_slot < 0 || s.cohort_epoch != e.epoch) continue;  // left the cohort before
      finishers_.push_back(e.seq);
    }
    for (const int idx : finishers_) leave_cohort(idx, true);
  }

  /// Every member back to the running list, in admission order.
  void dissolve_cohort() {
    if (cohort_.empty()) return;
    const auto mid = static_cast<std::ptrdiff_t>(running_.size());
    std::vector<int> members = cohort_;
    for (const int idx : members) leave_cohort(idx, false);
    auto by_stamp = [&](int a, int b) {
      return seqs_[static_cast<std::size_t>(a)].stamp < seqs_[static_cast<std::size_t>(b)].stamp;
    };
    std::sort(members.begin(), members.end(), by_stamp);
    running_.insert(running_.end(), members.begin(), members.end());
    std::inplace_merge(running_.begin(), running_.begin() + mid, running_.end(), by_stamp);
    cohort_ends_ = {};
  }

  /// `n` members whose offsets sum to `kv_off` in batch `b`: contexts kv_off + n x iterations.
  void add_cohort_work(BatchWork& b, int n, std::int64_t kv_off) const {
    if (n <= 0) return;
    b.decode_seqs += n;
    b.sampled += n;
    const auto ctx = static_cast<double>(kv_off + static_cast<std::int64_t>(n) * cohort_iter_);
    b.decode_ctx_full += ctx;
    b.decode_ctx_window += window_ > 0 ? window_ * n : ctx;
  }

  /// Iterations in which the cohort is the whole batch, played in one loop: nothing else runs,
  /// nothing can be admitted (no request waits, or every slot is taken), no member finishes
  /// (the iteration in which one does is left to step()), no request arrives and no outside
  /// event comes (horizon_) before an iteration starts, and the KV growth fits as cohort_can_step
  /// asks. Each iteration is the one step() plays for that batch. Returns false when none was.
  bool cohort_stretch(ServeResult& r) {
    if (cohort_.empty() || !running_.empty() || ranks_ != 1) return false;
    if (!waiting_.empty() && static_cast<int>(cohort_.size()) < e_.max_num_seqs) return false;
    while (!cohort_ends_.empty()) {  // drop the entries of members that left the cohort
      const CohortEnd& e = cohort_ends_.top();
      const Seq& s = seqs_[static_cast<std::size_t>(e.seq)];
      if (s.cohort_slot >= 0 && s.cohort_epoch == e.epoch) break;
      cohort_ends_.pop();
    }
    const std::int64_t until = cohort_ends_.empty() ? cohort_iter_ + kStretchMax : cohort_ends_.top().iteration;
    const double next = std::min(next_arrival(), horizon_);
    const auto n = static_cast<int>(cohort_.size());
    int played = 0;
    while (cohort_iter_ < until && (played == 0 || now_ < next)) {
      double growth = 0;
      if (e_.admission == KvAdmission::OnDemand) {
        growth = cohort_growth();
        if (free_bytes() < growth + running_reserve()) break;
        used_ += growth;
      }
      BatchWork w;
      add_cohort_work(w, n, cohort_kv_off_);
      const IterationCost cost = cost_of(w);
      add_parts(cost);
      const double dt = cost.total().value() + 0.0;  // as step(), with no swap time
      now_ += dt;
      itl_.add(now_ - cohort_last_, static_cast<double>(n));
      cohort_iter_++;
      cohort_last_ = now_;
      r.iterations.push_back(decode_only_sample(dt, n));
      played++;
    }
    return played > 0;
  }

  /// Applies one iteration's outcome to sequence `idx`: a decode token (chunk 0) or a prefill chunk.
  void apply_one(int idx, int chunk, double start, double now) {
    Seq& s = seqs_[static_cast<std::size_t>(idx)];
    std::int64_t emitted = 0;
    if (chunk == 0) {
      // A disaggregated decode instance that streams the request itself: its first token (the
      // prefill's, carried with the KV) goes out as the first step holding the sequence starts.
      if (s.first_token < 0) s.first_token = start;
      s.spec_credit += tokens_per_step_;
      emitted = static_cast<std::int64_t>(std::floor(s.spec_credit));
      s.spec_credit -= static_cast<double>(emitted);
      emitted = std::min(emitted, s.target_out - s.generated);
      if (emitted > 0) itl_.add((now - s.last_token) / static_cast<double>(emitted), static_cast<double>(emitted));
      s.kv_tokens += emitted;
    } else {
      s.computed += chunk;
      s.kv_tokens += chunk;
      if (s.prefix_key >= 0 && !s.holds_ref && s.computed >= s.prefix_tokens) register_prefix(s, now);
      if (s.decoding()) {
        emitted = s.generated == 0 ? 1 : 0;  // a recomputed sequence already has its tokens
        if (s.generated > 0 && s.generated < s.target_out) emitted = 1, itl_.add(now - s.last_token);
        for (int c : s.children) waiting_.push_front(c);
        s.children.clear();
      }
    }
    if (emitted > 0) {
      if (s.first_token < 0) s.first_token = now;
      s.generated += emitted;
      s.last_token = now;
    }
    if (s.generated >= s.target_out && s.decoding()) {
      s.finish = now;
      finished_now_.push_back(s.request);
      if (e_.admission == KvAdmission::ReserveFull) {
        used_ -= s.own_bytes;
        s.own_bytes = 0;
      }
      free_seq(s);
      finish_request_sample(s, now);
    }
  }

  /// A stretch of decode-only iterations played without visiting each sequence per step: every
  /// running sequence decodes one token per iteration, none finishes, nothing is admitted (the
  /// queue is empty or every rank's batch is full) and no request arrives before the stretch
  /// ends. The iterations' costs depend only on the batch size and the sum of the contexts
  /// (capped at the window), both known in advance, and each sequence's KV grows only when it
  /// enters a new block; when the stretch's growth fits in the free KV memory, no make_room can
  /// evict and no preemption happens. The same iterations, tokens, ITL and KV usage as step by
  /// step (sums in another order). The fleet and disaggregated drivers interleave schedulers by
  /// time: they set `horizon_`, the time of the next event outside this scheduler, and the stretch
  /// starts no iteration at or after it. Returns false (nothing done) when it does not apply.
  bool decode_stretch(ServeResult& r) {
    if (per_seq_tokens_ != 1 || tokens_per_step_ != 1.0 || running_.size() < 2) return false;
    std::int64_t left = std::numeric_limits<std::int64_t>::max();
    std::fill(rank_count_.begin(), rank_count_.end(), 0);
    for (const int idx : running_) {
      const Seq& s = seqs_[static_cast<std::size_t>(idx)];
      if (s.finish >= 0 || !s.decoding() || s.first_token < 0 || s.last_token < 0 || s.generated < 1) return false;
      left = std::min(left, s.target_out - s.generated);
      rank_count_[static_cast<std::size_t>(s.rank)]++;
    }
    if (!waiting_.empty() &&
        std::any_of(rank_count_.begin(), rank_count_.end(), [&](int c) { return c < e_.max_num_seqs; }))
      return false;
    // The iteration in which a sequence finishes is played step by step.
    const std::int64_t n = std::min<std::int64_t>(left - 1, kStretchMax);
    if (n < 2) return false;
    // Per group (the whole batch, then each attention-DP rank): sequences, sum of contexts, and
    // the contexts sorted with prefix sums for the window-capped sum.
    const int groups = ranks_ > 1 ? ranks_ + 1 : 1;
    ff_ctx_.assign(static_cast<std::size_t>(groups), {});
    for (const int idx : running_) {
      const Seq& s = seqs_[static_cast<std::size_t>(idx)];
      ff_ctx_[0].push_back(static_cast<double>(s.kv_tokens));
      if (ranks_ > 1) ff_ctx_[static_cast<std::size_t>(s.rank) + 1].push_back(static_cast<double>(s.kv_tokens));
    }
    ff_prefix_.assign(static_cast<std::size_t>(groups), {});
    for (int g = 0; g < groups; ++g) {
      auto& c = ff_ctx_[static_cast<std::size_t>(g)];
      std::sort(c.begin(), c.end());
      auto& p = ff_prefix_[static_cast<std::size_t>(g)];
      p.assign(c.size() + 1, 0.0);
      for (std::size_t i = 0; i < c.size(); ++i) p[i + 1] = p[i] + c[i];
    }
    auto work_at = [&](int g, double j) {
      const auto& c = ff_ctx_[static_cast<std::size_t>(g)];
      const auto& p = ff_prefix_[static_cast<std::size_t>(g)];
      BatchWork b;
      b.decode_seqs = static_cast<int>(c.size());
      b.sampled = b.decode_seqs;
      b.decode_ctx_full = p.back() + j * static_cast<double>(c.size());
      if (window_ > 0) {
        const auto below = static_cast<std::size_t>(std::lower_bound(c.begin(), c.end(), window_ - j) - c.begin());
        b.decode_ctx_window =
            p[below] + j * static_cast<double>(below) + window_ * static_cast<double>(c.size() - below);
      } else {
        b.decode_ctx_window = b.decode_ctx_full;
      }
      return b;
    };
    // Iteration times until the next arrival, or the driver's next event (an iteration starts
    // only before it).
    const double next = std::min(next_arrival(), horizon_);
    ff_cost_.clear();
    double t = now_;
    for (std::int64_t j = 0; j < n && (j == 0 || t < next); ++j) {
      const BatchWork w = work_at(0, static_cast<double>(j));
      if (ranks_ > 1) {
        for (int g = 1; g < groups; ++g)
          rank_work_[static_cast<std::size_t>(g - 1)] = work_at(g, static_cast<double>(j));
      }
      const IterationCost cost = cost_of(w);
      ff_cost_.push_back(cost);
      t += cost.total().value();
    }
    auto m = static_cast<std::int64_t>(ff_cost_.size());
    // KV growth per iteration: a sequence allocates when its next token opens a block (every
    // iteration with a sliding window, where the step-by-step loop asks each time).
    ff_growth_.assign(static_cast<std::size_t>(m), 0.0);
    const std::int64_t bs = std::max(1, e_.block_size);
    auto walk = [&](const Seq& s, std::int64_t steps, bool record) {
      double own = s.own_bytes;
      const double shared = kv_of(s.shared_tokens);
      const std::int64_t first = window_ > 0 ? 0 : (bs - s.kv_tokens % bs) % bs;
      for (std::int64_t j = first; j < steps; j += (window_ > 0 ? 1 : bs)) {
        const double g = kv_of(s.kv_tokens + j + 1) - shared - own;
        if (g <= 0) continue;
        own += g;
        if (record) ff_growth_[static_cast<std::size_t>(j)] += g;
      }
      return own;
    };
    if (e_.admission == KvAdmission::OnDemand) {
      for (const int idx : running_) walk(seqs_[static_cast<std::size_t>(idx)], m, true);
      // Only as far as the growth fits without evicting the prefix cache.
      double grown = 0;
      const double room = free_bytes();
      for (std::int64_t j = 0; j < m; ++j) {
        if (grown + ff_growth_[static_cast<std::size_t>(j)] > room) {
          m = j;
          break;
        }
        grown += ff_growth_[static_cast<std::size_t>(j)];
      }
      if (m < 2) return false;
    }
    // Apply the m iterations.
    const auto batch_size = static_cast<int>(running_.size());
    for (std::int64_t j = 0; j < m; ++j) {
      const IterationCost& cost = ff_cost_[static_cast<std::size_t>(j)];
      add_parts(cost);
      const double dt = cost.total().value();
      const double start = now_;
      now_ += dt;
      if (j == 0) {
        for (const int idx : running_) itl_.add(now_ - seqs_[static_cast<std::size_t>(idx)].last_token);
      } else {
        itl_.add(now_ - start, static_cast<double>(batch_size));
      }
      if (e_.admission == KvAdmission::OnDemand) used_ += ff_growth_[static_cast<std::size_t>(j)];
      r.iterations.push_back(decode_only_sample(dt, batch_size));
    }
    for (const int idx : running_) {
      Seq& s = seqs_[static_cast<std::size_t>(idx)];
      if (e_.admission == KvAdmission::OnDemand) s.own_bytes = walk(s, m, false);
      s.kv_tokens += m;
      s.generated += m;
      s.last_token = now_;
    }
    return true;
  }
  static constexpr std::int64_t kStretchMax = 4096;

  double s_bytes_of(const Seq& s) const {
    return m_.kv_bytes(static_cast<double>(s.kv_tokens)) - m_.kv_bytes(static_cast<double>(s.shared_tokens));
  }

  bool schedule_prefill(Seq& s, int chunk) {
    if (chunk <= 0) return false;
    if (e_.admission == KvAdmission::OnDemand) {
      const double need = kv_of(s.computed + chunk) - kv_of(s.shared_tokens) - s.own_bytes;
      if (need > 0) {
        if (!make_room(need)) return false;
        s.own_bytes += need;
        used_ += need;
      }
    }
    return true;
  }

  // On admission: a cached prefix skips its prefill.
  void attach_prefix(Seq& s, double now) {
    if (!e_.prefix_caching || s.prefix_key < 0 || s.computed > 0) return;
    auto it = prefixes_.find(s.prefix_key);
    if (it == prefixes_.end() || it->second.tokens <= 0) return;
    auto& p = it->second;
    std::int64_t hit = std::min(p.tokens, s.prefix_tokens);
    hit = std::min(hit, s.prefill_target - 1);  // the last prompt token is always computed (its logits)
    if (hit <= 0) return;
    p.refs++;
    p.last_use = now;
    s.holds_ref = true;
    s.shared_tokens = p.tokens;
    s.computed = hit;
    s.kv_tokens = hit;
    s.cached += hit;
  }

  void detach_prefix(Seq& s) {
    if (!s.holds_ref) return;
    prefixes_[s.prefix_key].refs--;
    s.holds_ref = false;
    s.computed = 0;
    s.kv_tokens = 0;
    s.cached = 0;
    s.shared_tokens = 0;
  }

  // The first sequence to compute a prefix hands its blocks to the cache.
  void register_prefix(Seq& s, double now) {
    if (!e_.prefix_caching) return;
    const double bs = e_.block_size;
    const auto tokens = static_cast<std::int64_t>(std::floor(static_cast<double>(s.prefix_tokens) / bs) * bs);
    if (tokens <= 0) return;
    auto [it, fresh] = prefixes_.try_emplace(s.prefix_key);
    auto& p = it->second;
    if (!fresh && p.tokens >= tokens) return;  // another sequence got there first
    const double bytes = kv_of(tokens);
    // Move the blocks from the sequence to the cache entry.
    p.tokens = tokens;
    p.bytes = bytes;
    p.refs += 1;
    p.last_use = now;
    s.holds_ref = true;
    s.shared_tokens = tokens;
    s.own_bytes -= bytes;
    if (s.own_bytes < 0) {
      used_ += -s.own_bytes;
      s.own_bytes = 0;
    }
  }

  void finish_request_sample(Seq& s, double now) {
    auto& left = remaining_samples_[static_cast<std::size_t>(s.request)];
    // Children never released (their parent was rejected) count as done too.
    for (int c : s.children) {
      seqs_[static_cast<std::size_t>(c)].finish = -2;
      left--;
    }
    s.children.clear();
    if (--left > 0) return;
    // Every sample done (decoded, finished at its first token, or rejected): the request ends.
    if (s.request < w_.stop_after) ended_below_stop_++;
    if (track_ended_) ended_now_.push_back(s.request);
    if (w_.arrival != ArrivalKind::ClosedLoop) return;
    if (next_closed_ < order_.size()) {
      const double t = now + path_of(order_[next_closed_]);
      release_time_[order_[next_closed_]] = t;
      // Releases go in order_ of their times: a client done before a later-spread client's first
      // send goes first, and so does one whose request path was quicker.
      for (std::size_t j = next_closed_; j > next_release_ && release_time_[order_[j - 1]] > t; --j)
        std::swap(order_[j - 1], order_[j]);
      next_closed_++;
    }
  }

  /// Request `req`'s time on the request path (overhead_ unless the workload draws it).
  double path_of(int req) const { return fixed_path_ ? overhead_ : path_time(w_, overhead_, req); }

  bool is_preempted(int idx) const {
    return std::find(preempted_now_.begin(), preempted_now_.end(), idx) != preempted_now_.end();
  }
  void mark_preempted(int idx) { preempted_now_.push_back(idx); }

  void add_parts(const IterationCost& c) { accumulate(parts_, c); }

  /// m_.kv_bytes(tokens), the same value, from a table filled as contexts grow: the decode loop
  /// asks for it per sequence per step, and its block rounding (two divisions, two ceils) was a
  /// quarter of a long run's time.
  double kv_of(std::int64_t tokens) {
    if (tokens < 0 || tokens >= kKvTableLimit) return m_.kv_bytes(static_cast<double>(tokens));
    const auto t = static_cast<std::size_t>(tokens);
    if (t >= kv_table_.size()) {
      const std::size_t from = kv_table_.size();
      kv_table_.resize(std::max(t + 1, 2 * from));
      for (std::size_t i = from; i < kv_table_.size(); ++i) kv_table_[i] = m_.kv_bytes(static_cast<double>(i));
    }
    return kv_table_[t];
  }
  /// tokens % block_size == 0, without a division when the block size is a power of two.
  bool starts_block(std::int64_t tokens) const {
    return block_mask_ >= 0 ? (tokens & block_mask_) == 0 : tokens % e_.block_size == 0;
  }
  static constexpr std::int64_t kKvTableLimit = std::int64_t{1} << 22;  // 32 MiB of table at most

  const IterationModel& m_;
  const EngineProfile& e_;
  const WorkloadSpec& w_;
  const std::vector<Request>& reqs_;
  engine::TraceSink* trace_;
  std::string lane_;
  double capacity_ = 0, used_ = 0;
  int per_seq_tokens_ = 1;
  double tokens_per_step_ = 1;
  double window_ = 0;
  double host_bw_ = 1;
  std::vector<double> kv_table_;  // kv_of: KV bytes by context tokens
  std::int64_t block_mask_ = -1;  // block_size - 1 when it is a power of two, else -1
  int ended_below_stop_ = 0;      // requests below w_.stop_after that have ended
  std::vector<Seq> seqs_;
  std::deque<int> waiting_;
  std::vector<int> running_;
  std::vector<int> preempted_now_;
  std::map<int, PrefixEntry> prefixes_;
  std::vector<int> order_;
  std::vector<double> release_time_;
  std::vector<int> remaining_samples_;
  std::size_t next_release_ = 0, next_closed_ = 0;
  DurationHistogram itl_;
  IterationCost parts_;
  int preemptions_ = 0, rejected_ = 0;
  double now_ = 0;
  double overhead_ = 0;            // the request path outside the GPU: engine time = client send time + this
  std::vector<int> finished_now_;  // requests whose sample finished (disaggregated prefill pool reads and clears it)
  bool track_ended_ = false;       // the disaggregated closed loop asks for ended_now_
  std::vector<int> ended_now_;     // requests whose every sample ended (decoded, first-token finish or rejected)
  std::vector<int> rejected_now_;  // requests rejected here (the prefill pool's never reach decode)
  std::vector<std::pair<int, int>> batch_;  // (seq, prefill chunk or 0 for decode)
  std::vector<int> still_;
  double offloaded_ = 0;  // bytes in the KV offload tier
  int offloads_ = 0;
  int ranks_ = 1;                 // attention-DP ranks
  std::vector<int> rank_budget_;  // tokens left in this iteration, per rank
  std::vector<int> rank_count_;   // running requests, per rank
  std::vector<BatchWork> rank_work_;
  bool fixed_path_ = false;    // every request's path takes overhead_ (driven by inject)
  bool fast_forward_ = false;  // decode_stretch may play decode-only stretches at once (no trace)
  /// The driver's next event outside this scheduler (fleet, disaggregated pools): a decode stretch
  /// starts no iteration at or after it. Infinite for a single scheduler.
  double horizon_ = std::numeric_limits<double>::infinity();
  // The decode cohort (see push_running).
  struct CohortEnd {
    std::int64_t iteration;  // the cohort iteration in which its last token comes out
    std::int64_t stamp;
    int seq, epoch;
    bool operator>(const CohortEnd& o) const { return std::tie(iteration, stamp) > std::tie(o.iteration, o.stamp); }
  };
  bool cohort_on_ = false;          // sequences may join (no trace: a traced run is played sequence by sequence)
  std::vector<int> cohort_;         // members, any order
  std::int64_t cohort_iter_ = 0;    // iterations played since the start
  double cohort_last_ = 0;          // end of the last iteration: every member's last token
  std::int64_t cohort_kv_off_ = 0;  // sum of the members' kv_off
  std::vector<int> cohort_rank_n_;  // members per attention-DP rank
  std::vector<std::int64_t> cohort_rank_kv_off_;
  std::vector<int> bucket_n_;  // members by kv_off mod block_size (empty with block_size 1)
  std::int64_t cohort_max_stamp_ = -1;
  std::priority_queue<CohortEnd, std::vector<CohortEnd>, std::greater<>> cohort_ends_;
  std::vector<int> finishers_;
  std::int64_t next_stamp_ = 0;
  double block_growth_ = 0;
  double block_bytes_ = 0, budget_bytes_ = 0;  // running_reserve: one block of every layer; every rank's token budget
  std::vector<std::optional<IterationCost>> decode_base_;  // cost_of: a decode-only step without contexts, by batch
  std::vector<std::vector<double>> ff_ctx_, ff_prefix_;
  std::vector<IterationCost> ff_cost_;
  std::vector<double> ff_growth_;
};

}  // namespace

ServeResult simulate(const IterationModel& model, const WorkloadSpec& workload, const std::vector<Request>& requests,
                     engine::TraceSink* trace) {
  Scheduler s(model, workload, requests, trace);
  ServeResult r = s.run();
  trace_requests(r, trace);
  return r;
}

namespace {

// Orders `v`, the concatenation of runs beginning at `starts`, by time as std::stable_sort would
// (equal times keep the runs' order). Each scheduler's iterations come in time order, so the runs
// are merged rather than sorted again (a run out of order falls back to the sort).
void merge_iteration_runs(std::vector<IterationSample>& v, const std::vector<std::size_t>& starts) {
  auto by_time = [](const IterationSample& a, const IterationSample& b) { return a.time < b.time; };
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::size_t end = k + 1 < starts.size() ? starts[k + 1] : v.size();
    const auto first = v.begin() + static_cast<std::ptrdiff_t>(starts[k]);
    if (!std::is_sorted(first, v.begin() + static_cast<std::ptrdiff_t>(end), by_time)) {
      std::stable_sort(v.begin(), v.end(), by_time);
      return;
    }
  }
  for (std::size_t k = 1; k < starts.size(); ++k) {
    const std::size_t end = k + 1 < starts.size() ? starts[k + 1] : v.size();
    std::inplace_merge(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(starts[k]),
                       v.begin() + static_cast<std::ptrdiff_t>(end), by_time);
  }
}

// One result for several schedulers: requests and iterations of all, summed counts and times.
ServeResult merge(std::vector<ServeResult>& parts) {
  ServeResult r;
  if (parts.empty()) return r;
  r.memory = parts.front().memory;
  double first = std::numeric_limits<double>::infinity(), last = 0;
  std::vector<std::size_t> runs;
  for (auto& p : parts) {
    r.fits = r.fits && p.fits;
    if (!p.fits && r.reason.empty()) r.reason = p.reason;
    r.gpus += p.gpus;
    r.preemptions += p.preemptions;
    r.offloads += p.offloads;
    r.rejected += p.rejected;
    r.itl.merge(p.itl);
    accumulate(r.time_by_part, p.time_by_part);
    runs.push_back(r.iterations.size());
    r.iterations.insert(r.iterations.end(), p.iterations.begin(), p.iterations.end());
    for (const auto& q : p.requests) {
      first = std::min(first, q.arrival.value());
      if (q.completed()) last = std::max(last, q.finish.value());
    }
    r.requests.insert(r.requests.end(), p.requests.begin(), p.requests.end());
  }
  std::stable_sort(r.requests.begin(), r.requests.end(), [](const RequestResult& a, const RequestResult& b) {
    return std::tie(a.request, a.sample) < std::tie(b.request, b.sample);
  });
  merge_iteration_runs(r.iterations, runs);
  r.duration = core::Seconds(last > first ? last - first : 0.0);
  return r;
}

// Arrival order of open-loop / offline / trace requests.
std::vector<int> arrival_order(const WorkloadSpec& w, const std::vector<Request>& reqs) {
  std::vector<int> order(reqs.size());
  for (std::size_t i = 0; i < reqs.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const double ta = w.arrival == ArrivalKind::Offline ? 0.0 : reqs[static_cast<std::size_t>(a)].arrival_s;
    const double tb = w.arrival == ArrivalKind::Offline ? 0.0 : reqs[static_cast<std::size_t>(b)].arrival_s;
    return ta < tb;
  });
  return order;
}

// Router: picks one of `pool` for a request, from their outstanding requests.
class Router {
 public:
  explicit Router(RoutingPolicy p) : policy_(p) {}
  int pick(const std::vector<std::unique_ptr<Scheduler>>& pool, const Request& q) {
    const int n = static_cast<int>(pool.size());
    if (policy_ == RoutingPolicy::RoundRobin) return next_++ % n;
    // Join the shortest queue (fewest outstanding requests); ties go round the pool.
    int best = -1;
    for (int k = 0; k < n; ++k) {
      const int i = (next_ + k) % n;
      if (best < 0 ||
          pool[static_cast<std::size_t>(i)]->outstanding() < pool[static_cast<std::size_t>(best)]->outstanding())
        best = i;
    }
    next_ = (best + 1) % n;
    if (policy_ == RoutingPolicy::PrefixAware && q.prefix_group >= 0) {
      // Requests of one prefix group go to one replica (its prefix cache holds their shared
      // prompt) unless it is overloaded: more than kAffinityRelative x and kAffinityAbsolute
      // requests more than the shortest queue.
      const int home = q.prefix_group % n;
      const int h = pool[static_cast<std::size_t>(home)]->outstanding(),
                m = pool[static_cast<std::size_t>(best)]->outstanding();
      if (h <= kAffinityAbsolute + m || h <= kAffinityRelative * m) return home;
    }
    return best;
  }

 private:
  // The overload test of SGLang's cache-aware router (sgl-router, policy cache_aware): leave the
  // prefix's replica when its load exceeds the shortest queue's by more than balance_abs_threshold
  // and more than balance_rel_threshold times. 32 is sglang_router's first default (later 64);
  // 1.5 is sgl-model-gateway's default (sglang_router's first was 1.0001).
  static constexpr int kAffinityAbsolute = 32;
  static constexpr double kAffinityRelative = 1.5;
  RoutingPolicy policy_;
  int next_ = 0;
};

// Runs every scheduler of `pool` until it reaches time `t` or has nothing to do.
void advance(std::vector<std::unique_ptr<Scheduler>>& pool, std::vector<ServeResult>& parts, double t) {
  for (std::size_t i = 0; i < pool.size(); ++i) {
    pool[i]->horizon_ = t;
    while (!pool[i]->idle() && pool[i]->now() < t) {
      if (!pool[i]->step(parts[i])) break;
    }
  }
}

}  // namespace

void trace_requests(const ServeResult& r, engine::TraceSink* trace) {
  if (trace != nullptr) {
    // Request spans on lanes, first 2,000 requests: queue (arrival to first token) and decode.
    std::priority_queue<std::pair<double, int>, std::vector<std::pair<double, int>>, std::greater<>> free_lanes;
    int lanes = 0;
    int shown = 0;
    std::vector<const RequestResult*> done;
    for (const auto& q : r.requests)
      if (q.completed() && shown++ < 2000) done.push_back(&q);
    std::sort(done.begin(), done.end(), [](auto* a, auto* b) { return a->arrival < b->arrival; });
    for (const auto* q : done) {
      int lane;
      if (!free_lanes.empty() && free_lanes.top().first <= q->arrival.value()) {
        lane = free_lanes.top().second;
        free_lanes.pop();
      } else {
        lane = lanes++;
      }
      free_lanes.emplace(q->finish.value(), lane);
      const std::string thread = fmt::format("requests {:04d}", lane);
      const std::string name = fmt::format("req {}{}", q->request, q->sample > 0 ? fmt::format(".{}", q->sample) : "");
      const std::vector<std::pair<std::string, std::string>> args{
          {"input_tokens", std::to_string(q->input_tokens)},
          {"output_tokens", std::to_string(q->output_tokens)},
          {"ttft_ms", fmt::format("{:.2f}", 1e3 * q->ttft().value())}};
      trace->record(
          {"requests", thread, name + " ttft", "queue+prefill", at(q->arrival.value()), at(q->ttft().value()), args});
      trace->record({"requests", thread, name + " decode", "decode", at(q->first_token.value()),
                     at((q->finish - q->first_token).value()), args});
    }
  }
}

ServeResult simulate_disaggregated(const IterationModel& prefill, const IterationModel& decode,
                                   const Disaggregation& dis, const WorkloadSpec& workload,
                                   const std::vector<Request>& requests, engine::TraceSink* trace) {
  // The prefill pool computes each prompt once (its samples share it) and emits the first token.
  std::vector<Request> prompts = requests;
  for (auto& q : prompts) q.output_tokens.assign(1, 1);
  WorkloadSpec open = workload;
  if (open.arrival == ArrivalKind::ClosedLoop) open.arrival = ArrivalKind::Offline;
  std::vector<std::unique_ptr<Scheduler>> pre, dec;
  std::vector<ServeResult> pre_parts(static_cast<std::size_t>(dis.prefill_replicas)),
      dec_parts(static_cast<std::size_t>(dis.decode_replicas));
  for (int i = 0; i < dis.prefill_replicas; ++i) {
    pre.push_back(std::make_unique<Scheduler>(prefill, open, prompts, trace, fmt::format("prefill {}", i)));
    pre_parts[static_cast<std::size_t>(i)] = pre.back()->run_external_start();
    if (!pre_parts[static_cast<std::size_t>(i)].fits) return pre_parts[static_cast<std::size_t>(i)];
  }
  for (int i = 0; i < dis.decode_replicas; ++i) {
    dec.push_back(std::make_unique<Scheduler>(decode, open, requests, trace, fmt::format("decode {}", i)));
    dec_parts[static_cast<std::size_t>(i)] = dec.back()->run_external_start();
    if (!dec_parts[static_cast<std::size_t>(i)].fits) return dec_parts[static_cast<std::size_t>(i)];
  }
  // KV transfer of a prompt: its bytes over min(prefill GPUs, decode GPUs) links in parallel.
  const double links = std::min(prefill.deployment().gpus(), decode.deployment().gpus());
  const double layers = std::max(1, prefill.deployment().model.num_layers);
  auto transfer = [&](const Request& q) {
    if (dis.link_bandwidth.value() <= 0) return 0.0;
    const double whole = static_cast<double>(prefill.kv_bytes(static_cast<double>(q.input_tokens))) /
                         (dis.link_bandwidth.value() * links);
    if (dis.transfer == KvTransfer::Request) return dis.link_latency.value() + whole;
    // Layer by layer behind the prefill: only the last layer's share shows, unless the link is
    // slower than the prefill itself.
    const double compute =
        prefill.prefill_time(static_cast<int>(std::min<std::int64_t>(q.input_tokens, 1 << 20))).value();
    return dis.link_latency.value() + std::max(whole / layers, whole - compute);
  };
  struct Ready {
    double t, arrival, first_token;
    int req;
    bool operator>(const Ready& o) const { return t > o.t; }
  };
  std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready;
  std::vector<double> arrival_of(requests.size(), 0.0);
  Router pre_router(RoutingPolicy::LeastOutstanding), dec_router(RoutingPolicy::LeastOutstanding);
  const auto order = arrival_order(open, requests);
  const double path = open.path == RequestPath::Server ? prefill.deployment().engine.request_overhead.value() : 0.0;
  std::size_t next = 0;
  const double inf = std::numeric_limits<double>::infinity();
  // A closed loop: each client sends its next request when the decode pool finishes its last one
  // (every sample of it); the first sends are spread as in a single replica (ClientStart).
  const bool closed = workload.arrival == ArrivalKind::ClosedLoop;
  // A closed loop's sends wait in the order they reach the prefill pool: the send time plus the
  // request's path time (drawn per request with WorkloadSpec::random_path_time).
  using Send = std::pair<double, int>;  // (arrival at the prefill pool, request)
  std::vector<double> sent_at(requests.size(), 0.0);
  auto send = [&](double t, int q) {
    sent_at[static_cast<std::size_t>(q)] = t;
    return Send{t + path_time(workload, path, q), q};
  };
  std::priority_queue<Send, std::vector<Send>, std::greater<>> sends;
  if (closed) {
    const int clients = std::min<int>(std::max(1, workload.concurrency), static_cast<int>(order.size()));
    const double cycle =
        workload.client_start == ClientStart::Spread
            ? closed_loop_cycle(prefill, decode, workload, std::max(1, clients / std::max(1, dis.decode_replicas)))
            : 0.0;
    for (int i = 0; i < clients; ++i) sends.push(send(cycle * i / clients, order[static_cast<std::size_t>(i)]));
    next = static_cast<std::size_t>(clients);
    for (auto& x : pre) x->track_ended_ = true;
    for (auto& x : dec) x->track_ended_ = true;
  }
  // A closed loop's client sends its next request when its last one ends: decoded by the decode
  // pool (every sample), finished at its first token, or rejected by either pool.
  // WorkloadSpec::stop_after: once requests below it have all ended (at stop_at), the loop runs
  // on only while an event before stop_at is left, so every completion up to then is known.
  const int stop_after = closed ? workload.stop_after : 0;
  int ended_below = 0;
  double stop_at = inf;
  auto client_free = [&](const std::vector<int>& ended, double t) {
    for (const int q : ended) {
      if (q < stop_after && ++ended_below == stop_after) stop_at = t;
      if (next < order.size()) sends.push(send(t, order[next++]));
    }
  };
  while (true) {
    // Client send time; the prefill pool receives it `path` later (the server's request path).
    double t_sent = inf, t_arrival = inf;
    if (closed) {
      if (!sends.empty()) {
        t_arrival = sends.top().first;
        t_sent = sent_at[static_cast<std::size_t>(sends.top().second)];
      }
    } else if (next < order.size()) {
      t_sent = open.arrival == ArrivalKind::Offline ? 0.0 : requests[static_cast<std::size_t>(order[next])].arrival_s;
      t_arrival = t_sent + path;
    }
    const double t_ready = ready.empty() ? inf : ready.top().t;
    std::size_t busiest = pre.size();
    for (std::size_t i = 0; i < pre.size(); ++i) {
      if (!pre[i]->idle() && (busiest == pre.size() || pre[i]->now() < pre[busiest]->now())) busiest = i;
    }
    const double t_prefill = busiest < pre.size() ? pre[busiest]->now() : inf;
    // A closed loop steps the decode pool in time order too: its completions send new requests.
    std::size_t behind = dec.size();
    if (closed) {
      for (std::size_t i = 0; i < dec.size(); ++i) {
        if (!dec[i]->idle() && (behind == dec.size() || dec[i]->now() < dec[behind]->now())) behind = i;
      }
    }
    const double t_decode = behind < dec.size() ? dec[behind]->now() : inf;
    const double t_next = std::min({t_arrival, t_ready, t_prefill, t_decode});
    if (!std::isfinite(t_next) || t_next >= stop_at) break;
    if (t_prefill <= t_arrival && t_prefill <= t_ready && t_prefill <= t_decode) {
      // The prefill instance furthest behind runs its next iteration; finished prompts leave for
      // the decode pool after their KV transfer.
      if (!pre[busiest]->step(pre_parts[busiest])) continue;
      for (const int q : pre[busiest]->finished_now_) {
        const double done = pre[busiest]->now();
        ready.push(
            {done + transfer(requests[static_cast<std::size_t>(q)]), arrival_of[static_cast<std::size_t>(q)], done, q});
      }
      pre[busiest]->finished_now_.clear();
      if (closed) {
        client_free(pre[busiest]->rejected_now_, pre[busiest]->now());
        pre[busiest]->rejected_now_.clear();
        pre[busiest]->ended_now_.clear();  // prompts done here continue in the decode pool
      }
    } else if (t_decode < t_arrival && t_decode < t_ready) {
      // Its decode-only stretches stop before the next event elsewhere: an arrival, a transfer
      // landing, a prefill iteration, another decode instance's iteration, the end of the loop.
      double horizon = std::min({t_arrival, t_ready, t_prefill, stop_at});
      for (std::size_t i = 0; i < dec.size(); ++i) {
        if (i != behind && !dec[i]->idle()) horizon = std::min(horizon, dec[i]->now());
      }
      dec[behind]->horizon_ = horizon;
      if (!dec[behind]->step(dec_parts[behind])) continue;
      dec[behind]->finished_now_.clear();
      client_free(dec[behind]->ended_now_, dec[behind]->now());
      dec[behind]->ended_now_.clear();
      dec[behind]->rejected_now_.clear();
    } else if (t_arrival <= t_ready) {
      int q = 0;
      if (closed) {
        q = sends.top().second;
        sends.pop();
      } else {
        q = order[next++];
      }
      arrival_of[static_cast<std::size_t>(q)] = t_sent;
      pre[static_cast<std::size_t>(pre_router.pick(pre, prompts[static_cast<std::size_t>(q)]))]->inject(
          q, t_sent, t_arrival - t_sent);
    } else {
      const Ready r = ready.top();
      ready.pop();
      advance(dec, dec_parts, r.t);
      auto& target = dec[static_cast<std::size_t>(dec_router.pick(dec, requests[static_cast<std::size_t>(r.req)]))];
      target->inject_prefilled(r.req, r.arrival, r.first_token, r.t, dis.first_token == FirstTokenFrom::Decode);
      if (closed) {  // samples done at their first token end here
        client_free(target->ended_now_, r.t);
        target->ended_now_.clear();
        target->rejected_now_.clear();
      }
    }
  }
  if (!std::isfinite(stop_at)) advance(dec, dec_parts, inf);
  for (std::size_t i = 0; i < pre.size(); ++i) pre[i]->finish(pre_parts[i]);
  for (std::size_t i = 0; i < dec.size(); ++i) dec[i]->finish(dec_parts[i]);
  // Requests as the decode pool finished them; iterations, GPUs and time of both pools.
  ServeResult r = merge(dec_parts);
  ServeResult p = merge(pre_parts);
  r.gpus += p.gpus;
  r.preemptions += p.preemptions;
  r.rejected += p.rejected;
  const std::vector<std::size_t> runs{0, r.iterations.size()};
  r.iterations.insert(r.iterations.end(), p.iterations.begin(), p.iterations.end());
  merge_iteration_runs(r.iterations, runs);
  accumulate(r.time_by_part, p.time_by_part);
  trace_requests(r, trace);
  return r;
}

std::string_view to_string(RoutingPolicy p) { return kRoutingPolicyWords.name(p); }

ServeResult simulate_fleet(const IterationModel& model, const WorkloadSpec& workload,
                           const std::vector<Request>& requests, int replicas, RoutingPolicy policy,
                           engine::TraceSink* trace) {
  if (replicas <= 1 || workload.arrival == ArrivalKind::ClosedLoop) return simulate(model, workload, requests, trace);
  std::vector<std::unique_ptr<Scheduler>> pool;
  std::vector<ServeResult> parts(static_cast<std::size_t>(replicas));
  for (int i = 0; i < replicas; ++i) {
    pool.push_back(std::make_unique<Scheduler>(model, workload, requests, trace, fmt::format("replica {}", i)));
    parts[static_cast<std::size_t>(i)] = pool.back()->run_external_start();
    if (!parts[static_cast<std::size_t>(i)].fits) return parts[static_cast<std::size_t>(i)];
  }
  Router router(policy);
  // Requests reach the router once through the server's request path (the same delay for all).
  const double path = workload.path == RequestPath::Server ? model.deployment().engine.request_overhead.value() : 0.0;
  for (const int q : arrival_order(workload, requests)) {
    const double t = workload.arrival == ArrivalKind::Offline ? 0.0 : requests[static_cast<std::size_t>(q)].arrival_s;
    advance(pool, parts, t + path);
    pool[static_cast<std::size_t>(router.pick(pool, requests[static_cast<std::size_t>(q)]))]->inject(q, t);
  }
  advance(pool, parts, std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < pool.size(); ++i) pool[i]->finish(parts[i]);
  ServeResult r = merge(parts);
  trace_requests(r, trace);
  return r;
}

ServeSummary summarize(const ServeResult& r, const Slo& slo, double price_per_gpu_hour_usd) {
  ServeSummary s;
  std::vector<double> ttft, tpot, e2e;
  double out_tokens = 0, in_tokens = 0;
  int good = 0, counted = 0;
  std::vector<bool> seen;
  for (const auto& q : r.requests) {
    if (!q.completed()) continue;
    s.completed++;
    out_tokens += static_cast<double>(q.output_tokens);
    if (q.sample == 0) in_tokens += static_cast<double>(q.input_tokens);
    ttft.push_back(q.ttft().value());
    e2e.push_back(q.e2e().value());
    if (q.output_tokens > 1) tpot.push_back(q.tpot().value());
    counted++;
    const bool ok = slo.met(q.ttft(), q.tpot());
    good += ok ? 1 : 0;
  }
  const double dur = r.duration.value() > 0 ? r.duration.value() : 1.0;
  s.output_tokens_per_s = core::PerSecond(out_tokens / dur);
  s.total_tokens_per_s = core::PerSecond((out_tokens + in_tokens) / dur);
  const double g = std::max(1, r.gpus);
  s.output_tokens_per_s_per_gpu = s.output_tokens_per_s / g;
  s.total_tokens_per_s_per_gpu = s.total_tokens_per_s / g;
  s.requests_per_s = core::PerSecond(s.completed / dur);
  s.ttft = latency_stats(ttft);
  s.tpot = latency_stats(tpot);
  s.e2e = latency_stats(e2e);
  s.itl =
      LatencyStats{r.itl.mean(), r.itl.quantile(0.5), r.itl.quantile(0.9), r.itl.quantile(0.99), r.itl.quantile(1.0)};
  s.tokens_per_s_per_user = core::PerSecond(s.tpot.mean > 0 ? 1.0 / s.tpot.mean : 0.0);
  const int total = static_cast<int>(r.requests.size());
  s.slo_attainment = total > 0 ? static_cast<double>(good) / total : 0.0;
  s.goodput_requests_per_s = core::PerSecond(good / dur);
  double kv = 0, batch = 0, queue = 0, wsum = 0;
  for (const auto& it : r.iterations) {
    const double d = it.duration.value();
    kv += it.kv_usage * d;
    batch += it.running * d;
    queue += it.waiting * d;
    wsum += d;
    s.kv_usage_max = std::max(s.kv_usage_max, it.kv_usage);
    s.queue_max = std::max<double>(s.queue_max, it.waiting);
  }
  if (wsum > 0) {
    s.kv_usage_mean = kv / wsum;
    s.batch_mean = batch / wsum;
    s.queue_mean = queue / wsum;
  }
  const double usd_per_s = price_per_gpu_hour_usd * g / 3600.0;
  if (s.output_tokens_per_s.value() > 0)
    s.cost_per_million_output_tokens = usd_per_s / s.output_tokens_per_s.value() * 1e6;
  if (s.total_tokens_per_s.value() > 0)
    s.cost_per_million_total_tokens = usd_per_s / s.total_tokens_per_s.value() * 1e6;
  (void)counted;
  return s;
}

namespace {
// Output tokens of request q produced in [a, b]: the first at first_token, the others at even
// steps up to finish.
double tokens_between(const RequestResult& q, double a, double b) {
  const double f = q.first_token.value(), e = q.finish.value();
  const auto n = q.output_tokens;
  if (n <= 0 || b <= a) return 0;
  if (n == 1 || e <= f) return (f >= a && f <= b) ? static_cast<double>(n) : 0.0;
  const double step = (e - f) / static_cast<double>(n - 1);
  // k in [0, n-1] with a <= f + k step <= b.
  const double lo = std::max(0.0, std::ceil((a - f) / step));
  const double hi = std::min(static_cast<double>(n - 1), std::floor((b - f) / step));
  return hi >= lo ? hi - lo + 1 : 0.0;
}
}  // namespace

SteadyState steady_state(const ServeResult& r) {
  SteadyState s;
  std::vector<double> ends;
  double last_arrival = 0, first_arrival = std::numeric_limits<double>::infinity();
  for (const auto& q : r.requests) {
    last_arrival = std::max(last_arrival, q.arrival.value());
    first_arrival = std::min(first_arrival, q.arrival.value());
    if (q.completed()) ends.push_back(q.finish.value());
  }
  if (ends.size() < 4) return s;
  std::sort(ends.begin(), ends.end());
  const auto n = ends.size();
  const auto k = static_cast<std::size_t>(std::ceil(kSteadyWarmupFraction * static_cast<double>(n)));
  double start = ends[std::min(n - 1, std::max<std::size_t>(k, 1) - 1)];
  // Requests arriving over time: the batch, and with it every request's time, grows until the
  // requests in flight all arrived after the first ones left, about two request lifetimes in.
  if (last_arrival > first_arrival) {
    std::vector<double> e2e;
    for (const auto& q : r.requests)
      if (q.completed()) e2e.push_back(q.e2e().value());
    std::nth_element(e2e.begin(), e2e.begin() + static_cast<std::ptrdiff_t>(e2e.size() / 2), e2e.end());
    start = std::max(start, first_arrival + 2 * e2e[e2e.size() / 2]);
  }
  const double drain = ends[n - 1 - std::min(n - 1, k)];
  s.ends_at_last_arrival = last_arrival > start;
  // Arrivals over time that end before the warm-up does: the run never held the steady state.
  if (!s.ends_at_last_arrival && last_arrival > first_arrival) return s;
  const double end = s.ends_at_last_arrival ? last_arrival : drain;
  if (end <= start) return s;
  s.valid = true;
  s.start_s = start;
  s.end_s = end;
  const double mid = 0.5 * (start + end);
  double tokens = 0, first = 0, second = 0;
  int done = 0;
  for (const auto& q : r.requests) {
    if (!q.completed()) continue;
    first += tokens_between(q, start, mid);
    second += tokens_between(q, std::nextafter(mid, end), end);
    const double fin = q.finish.value();
    if (fin > start && fin <= end) done++;
  }
  tokens = first + second;
  s.output_tokens_per_s = tokens / (end - start);
  s.requests_per_s = done / (end - start);
  const double mean_half = 0.5 * (first + second);
  s.halves_gap = mean_half > 0 ? std::abs(first - second) / mean_half : 0.0;
  const bool offline = last_arrival <= first_arrival;  // every request queued at once
  s.converged = s.halves_gap <= kSteadyTolerance && (s.ends_at_last_arrival || offline);
  return s;
}

}  // namespace fmsim::serving
