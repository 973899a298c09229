#include "gemm_workload.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

#include <weft/jit/error.hpp>

#include "blocked_layout.hpp"
#include "block_loops.hpp"
#include "gemm_reference.hpp"

namespace weft::tuner {

using samples::Blocking;
using samples::GemmFwd;
using samples::GemmFwdConfig;

namespace {

constexpr double kFullReferenceLimit = double(1 << 27);  // multiply-adds
constexpr std::size_t kSampledEntries = 2048;

std::int64_t blocks_of(std::int64_t size, long block) { return (size + block - 1) / block; }

}  // namespace

struct GemmWorkload::Data {
  std::mutex mutex;
  std::vector<float> a, b;  // plain column-major, A M x K, B K x N
  std::map<std::pair<long, long>, std::vector<float>> a_blocked, b_blocked, c_blocked;
  // Reference values at `positions` (column-major linear indices of C); all of C when full.
  bool full = false;
  std::vector<std::int64_t> positions;
  std::vector<float> reference;
  bool reference_ready = false;

  const std::vector<float>& blocked(std::map<std::pair<long, long>, std::vector<float>>& cache,
                                    long r, long c, const Blocking& rows, const Blocking& cols,
                                    const std::vector<float>& plain, bool row_major) {
    auto it = cache.find({r, c});
    if (it == cache.end())
      it = cache.emplace(std::pair{r, c}, samples::to_blocked(plain.data(), rows, cols, row_major)).first;
    return it->second;
  }
};

samples::GemmFwdConfig to_gemm_config(const TunedConfig& config, const GemmShape& shape) {
  GemmFwdConfig c;
  c.M = shape.M;
  c.N = shape.N;
  c.K = shape.K;
  c.bm = config.knob("bm", c.bm);
  c.bn = config.knob("bn", c.bn);
  c.bk = config.knob("bk", c.bk);
  c.kbf = config.knob("kbf", c.kbf);
  c.loop_string = config.loop_string;
  c.k_blocks = config.blocks_of(0);
  c.m_blocks = config.blocks_of(1);
  c.n_blocks = config.blocks_of(2);
  return c;
}

WorkloadKey gemm_key(const GemmShape& shape, int threads) {
  return {.kind = "gemm_fwd", .shape = {{"M", shape.M}, {"N", shape.N}, {"K", shape.K}}, .dtype = "fp32",
          .threads = threads};
}

GemmWorkload::GemmWorkload(GemmShape shape, GemmSearchOptions options)
    : shape_(shape), options_(std::move(options)), data_(std::make_unique<Data>()) {
  samples::require_positive({{"M", shape.M}, {"N", shape.N}, {"K", shape.K}});
  for (auto* list : {&options_.bm, &options_.bn, &options_.bk, &options_.kbf}) {
    if (list->empty()) throw Error("GemmWorkload: every knob needs at least one value");
    for (long v : *list) samples::require_positive({{"GEMM knob", v}});
  }
  // Plain A and B, one blocked copy of each, blocked C and the plain C of a check at least: refuse
  // a shape this machine cannot hold before allocating any of it.
  const std::uint64_t a_bytes = bytes_needed({shape.M, shape.K}, sizeof(float));
  const std::uint64_t b_bytes = bytes_needed({shape.K, shape.N}, sizeof(float));
  const std::uint64_t c_bytes = bytes_needed({shape.M, shape.N}, sizeof(float));
  const std::uint64_t total = add_bytes(add_bytes(a_bytes, b_bytes), c_bytes);
  require_memory(describe() + " (A, B and C, plain and blocked)", add_bytes(total, total));
  allocating(describe() + ": A (M x K)", a_bytes, [&] { data_->a.resize(static_cast<std::size_t>(shape.M * shape.K)); });
  allocating(describe() + ": B (K x N)", b_bytes, [&] { data_->b.resize(static_cast<std::size_t>(shape.K * shape.N)); });
  samples::fill_random(data_->a.data(), shape.M * shape.K, 1);
  samples::fill_random(data_->b.data(), shape.K * shape.N, 2);
}

GemmWorkload::~GemmWorkload() = default;

std::string GemmWorkload::describe() const {
  return "GEMM M=" + std::to_string(shape_.M) + " N=" + std::to_string(shape_.N) + " K=" + std::to_string(shape_.K);
}

double GemmWorkload::flops() const {
  return 2.0 * static_cast<double>(shape_.M) * static_cast<double>(shape_.N) * static_cast<double>(shape_.K);
}

std::vector<Knobs> GemmWorkload::knob_choices() const {
  // Tiles larger than the matrix only add padding: keep the smallest such value at most.
  auto fitting = [](const std::vector<long>& values, std::int64_t size) {
    std::set<long> sorted(values.begin(), values.end());
    std::vector<long> out;
    for (long v : sorted) {
      out.push_back(v);
      if (v >= size) break;
    }
    return out;
  };
  std::vector<Knobs> choices;
  for (long bm : fitting(options_.bm, shape_.M))
    for (long bn : fitting(options_.bn, shape_.N))
      for (long bk : fitting(options_.bk, shape_.K)) {
        const std::int64_t kb = blocks_of(shape_.K, bk);
        std::set<std::int64_t> steps;  // kbf values with the same chunk are the same loop
        for (long kbf : std::set<long>(options_.kbf.begin(), options_.kbf.end())) {
          if (kbf > kb || !steps.insert(samples::chunk_step(kb, kbf)).second) continue;
          choices.push_back({{"bm", bm}, {"bn", bn}, {"bk", bk}, {"kbf", kbf}});
        }
      }
  return choices;
}

std::vector<LogicalLoop> GemmWorkload::loops(const Knobs& knobs) const {
  const TunedConfig c{knobs, "", {}};
  const std::int64_t kb = blocks_of(shape_.K, c.knob("bk", 32));
  const std::int64_t k_step = samples::chunk_step(kb, c.knob("kbf", 1));
  return {{0, static_cast<long>(kb), static_cast<long>(k_step), true},
          {0, static_cast<long>(blocks_of(shape_.M, c.knob("bm", 32))), 1, false},
          {0, static_cast<long>(blocks_of(shape_.N, c.knob("bn", 32))), 1, false}};
}

std::vector<LoopSpecification> GemmWorkload::specs(const Knobs&) const {
  if (!options_.specs.empty()) return options_.specs;
  std::vector<LoopSpecification> specs;
  for (int j = 0; j <= 1; ++j)
    for (int k = 0; k <= 1; ++k)
      specs.push_back(parse_loop_spec("a_0_K,b_" + std::to_string(j) + "_M,c_" + std::to_string(k) + "_N"));
  return specs;
}

CostInputs GemmWorkload::cost_inputs(const Knobs& knobs) const {
  const TunedConfig c{knobs, "", {}};
  const double bm = static_cast<double>(c.knob("bm", 32)), bn = static_cast<double>(c.knob("bn", 32)),
               bk = static_cast<double>(c.knob("bk", 32));
  const double k_step = static_cast<double>(loops(knobs)[0].step);
  CostInputs in;
  in.tensors = {{"A", {0, 1}, bm * bk * k_step * 4, false},
                {"B", {0, 2}, bk * bn * k_step * 4, false},
                {"C", {1, 2}, bm * bn * 4, true}};
  in.total_flops = flops();
  // The AVX2 micro-kernel holds rows in multiples of 8 floats; other heights waste lanes.
  in.body_efficiency = static_cast<long>(bm) % 8 == 0 ? 0.9 : 0.7;
  in.call_overhead_seconds = 30e-9;
  return in;
}

TunedConfig GemmWorkload::default_config(int) const {
  const GemmFwdConfig d;
  return {{{"bm", d.bm}, {"bn", d.bn}, {"bk", d.bk}, {"kbf", d.kbf}}, d.loop_string, {}};
}

namespace {

class GemmRunner : public Runner {
 public:
  GemmRunner(GemmFwdConfig config, GemmWorkload::Data& data, const GemmShape& shape)
      : gemm_(std::move(config)), data_(data), shape_(shape) {
    const auto& c = gemm_.config();
    std::lock_guard lock(data.mutex);
    const Blocking mB = gemm_.m_blocking(), nB = gemm_.n_blocking(), kB = gemm_.k_blocking();
    const std::string what = "GEMM M=" + std::to_string(shape.M) + " N=" + std::to_string(shape.N) +
                             " K=" + std::to_string(shape.K) + " with tiles bm=" + std::to_string(c.bm) +
                             " bn=" + std::to_string(c.bn) + " bk=" + std::to_string(c.bk);
    const std::uint64_t a_bytes = bytes_needed({mB.blocks() * mB.block, kB.blocks() * kB.block}, sizeof(float));
    const std::uint64_t b_bytes = bytes_needed({kB.blocks() * kB.block, nB.blocks() * nB.block}, sizeof(float));
    const std::uint64_t c_bytes = bytes_needed({mB.blocks() * mB.block, nB.blocks() * nB.block}, sizeof(float));
    // Tiles much larger than the matrix pad the blocked copies: check before copying.
    require_memory(what + ": blocked A, B and C", add_bytes(add_bytes(a_bytes, b_bytes), c_bytes));
    a_ = allocating(what + ": blocked A", a_bytes, [&] {
      return data.blocked(data.a_blocked, static_cast<long>(c.bm), static_cast<long>(c.bk), mB, kB, data.a, true).data();
    });
    b_ = const_cast<float*>(allocating(what + ": blocked B", b_bytes, [&] {
      return data.blocked(data.b_blocked, static_cast<long>(c.bk), static_cast<long>(c.bn), kB, nB, data.b, false).data();
    }));
    auto& out = data.c_blocked[{static_cast<long>(c.bm), static_cast<long>(c.bn)}];
    allocating(what + ": blocked C", c_bytes,
               [&] { out.resize(static_cast<std::size_t>(mB.blocks() * mB.block * nB.blocks() * nB.block)); });
    c_ = out.data();
    c_size_ = out.size();
  }

  void run() override {
    float* acts[] = {b_, c_};
    const float* wts[] = {a_};
    gemm_.run(acts, wts, {});
  }

  CheckResult check() override {
    std::fill(c_, c_ + c_size_, std::numeric_limits<float>::quiet_NaN());
    run();
    const std::int64_t M = shape_.M, N = shape_.N, K = shape_.K;
    std::vector<float> plain = allocating("GEMM check: plain C (M x N)", bytes_needed({M, N}, sizeof(float)),
                                          [&] { return std::vector<float>(static_cast<std::size_t>(M * N)); });
    samples::from_blocked(c_, plain.data(), gemm_.m_blocking(), gemm_.n_blocking(), false);
    std::lock_guard lock(data_.mutex);
    ensure_reference();
    std::vector<float> got;
    if (data_.full) {
      got = std::move(plain);
    } else {
      for (std::int64_t p : data_.positions) got.push_back(plain[static_cast<std::size_t>(p)]);
    }
    const samples::ErrorNorms norms =
        samples::compare(got.data(), data_.reference.data(), static_cast<std::int64_t>(got.size()));
    return {norms.passed(samples::sum_tolerance(K)), norms.to_string()};
  }

 private:
  void ensure_reference() {
    if (data_.reference_ready) return;
    const std::int64_t M = shape_.M, N = shape_.N, K = shape_.K;
    if (static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K) <= kFullReferenceLimit) {
      data_.full = true;
      data_.reference.resize(static_cast<std::size_t>(M * N));
      samples::gemm_reference(M, N, K, data_.a.data(), data_.b.data(), nullptr, false, data_.reference.data());
    } else {
      std::mt19937_64 rng(7);
      std::set<std::int64_t> picked{0, M - 1, (N - 1) * M, M * N - 1};
      while (picked.size() < kSampledEntries) picked.insert(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(M * N)));
      data_.positions.assign(picked.begin(), picked.end());
      for (std::int64_t p : data_.positions) {
        const std::int64_t i = p % M, j = p / M;
        double sum = 0;
        for (std::int64_t k = 0; k < K; ++k)
          sum += double(data_.a[static_cast<std::size_t>(i + k * M)]) * double(data_.b[static_cast<std::size_t>(k + j * K)]);
        data_.reference.push_back(static_cast<float>(sum));
      }
    }
    data_.reference_ready = true;
  }

  GemmFwd gemm_;
  GemmWorkload::Data& data_;
  GemmShape shape_;
  const float* a_ = nullptr;
  float* b_ = nullptr;
  float* c_ = nullptr;
  std::size_t c_size_ = 0;
};

}  // namespace

std::unique_ptr<Runner> GemmWorkload::prepare(const TunedConfig& config) const {
  return std::make_unique<GemmRunner>(to_gemm_config(config, shape_), *data_, shape_);
}

}  // namespace weft::tuner
