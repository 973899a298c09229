#include "gemm_workload.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <span>
#include <type_traits>
#include <utility>

#include <weft/jit/error.hpp>
#include <weft/parlooper/loop_string.hpp>

#include "block_loops.hpp"
#include "blocked_layout.hpp"
#include "gemm_pass.hpp"
#include "verification.hpp"

namespace weft::tuner {

using samples::Blocking;
using samples::GemmPassLayout;
using samples::PassMatrix;

namespace {

constexpr double kFullReferenceLimit = double(1 << 27);  // multiply-adds
constexpr std::size_t kSampledColumns = 16;

// The logical loops, which are also the dimensions they walk: a = K blocks, b = M blocks, c = N blocks.
constexpr int kLoopK = 0, kLoopM = 1, kLoopN = 2;

// What tells the passes apart. Matrices are (rows, cols) pairs of dimensions as stored (plain,
// column-major); the left operand's other dimension is the output's rows, the right one's its
// columns.
struct PassFacts {
  int reduction;
  std::array<int, 2> left, right, out;
  const char* chunks;
  std::array<const char*, 3> names;  // left, right, out
};

const PassFacts& facts(GemmPassKind pass) {
  static const PassFacts fwd{kLoopK, {kLoopM, kLoopK}, {kLoopK, kLoopN}, {kLoopM, kLoopN}, "kbf", {"A", "B", "C"}};
  static const PassFacts bwd{kLoopM, {kLoopM, kLoopK}, {kLoopM, kLoopN}, {kLoopK, kLoopN}, "mbf", {"W", "dY", "dX"}};
  static const PassFacts upd{kLoopN, {kLoopM, kLoopN}, {kLoopK, kLoopN}, {kLoopM, kLoopK}, "nbf", {"dY", "X", "dW"}};
  switch (pass) {
    case GemmPassKind::fwd: return fwd;
    case GemmPassKind::bwd: return bwd;
    case GemmPassKind::upd: return upd;
  }
  return fwd;
}

std::array<std::int64_t, 3> sizes_of(const GemmShape& s) { return {s.K, s.M, s.N}; }

std::int64_t blocks_of(std::int64_t size, long block) { return (size + block - 1) / block; }

std::string shape_text(const GemmShape& s) {
  return "M=" + std::to_string(s.M) + " N=" + std::to_string(s.N) + " K=" + std::to_string(s.K);
}

// The tiles of a knob setting, per dimension (K, M, N).
std::array<long, 3> tiles_of(const Knobs& knobs) {
  const TunedConfig c{knobs, "", {}};
  const samples::GemmLoops d;
  return {c.knob("bk", static_cast<long>(d.bk)), c.knob("bm", static_cast<long>(d.bm)),
          c.knob("bn", static_cast<long>(d.bn))};
}

// GemmFwd keeps the layouts of blocked_layout.hpp; the backward passes say theirs.
GemmPassLayout layout_of(const samples::GemmFwd& gemm) {
  return {.left = {gemm.m_blocking(), gemm.k_blocking(), true, false},
          .right = {gemm.k_blocking(), gemm.n_blocking(), false, false},
          .out = {gemm.m_blocking(), gemm.n_blocking(), false, false}};
}
GemmPassLayout layout_of(const samples::GemmBwd& bwd) { return bwd.layout(); }
GemmPassLayout layout_of(const samples::GemmUpd& upd) { return upd.layout(); }

// One run of the pass on blocked buffers; an MLP's layers write `outs` in turn.
std::function<void()> bind_run(const samples::GemmFwd& gemm, const float* left, const float* right,
                               std::span<float* const> outs) {
  // GemmFwd takes its input as float* with the layer outputs; it never writes it.
  std::vector<float*> activations{const_cast<float*>(right)};
  for (int l = 0; l < gemm.config().n_layers; ++l) activations.push_back(outs[static_cast<std::size_t>(l) % outs.size()]);
  std::vector<const float*> weights(static_cast<std::size_t>(gemm.config().n_layers), left);
  return [&gemm, activations = std::move(activations), weights = std::move(weights)] {
    gemm.run(activations, weights, {});
  };
}
template <class Pass>
std::function<void()> bind_run(const Pass& pass, const float* left, const float* right, std::span<float* const> outs) {
  float* const out = outs[0];
  return [&pass, left, right, out] { pass.run(left, right, out); };
}

// Columns `columns` of op(left)^layers x op(right) (an MLP applies the same weights `layers`
// times), column-major, accumulated in double.
std::vector<float> reference_columns(const GemmPassLayout& l, int layers, const float* left, const float* right,
                                     const std::vector<std::int64_t>& columns) {
  const std::int64_t rows = l.out.rows.size, reduction = l.reduction();
  const std::int64_t left_ld = l.left.rows.size, right_ld = l.right.rows.size;
  const auto n = static_cast<std::int64_t>(columns.size());
  std::vector<float> out(static_cast<std::size_t>(rows * n));
#pragma omp parallel for schedule(dynamic)
  for (std::int64_t c = 0; c < n; ++c) {
    const std::int64_t j = columns[static_cast<std::size_t>(c)];
    std::vector<double> v(static_cast<std::size_t>(reduction)), w;
    for (std::int64_t k = 0; k < reduction; ++k)
      v[static_cast<std::size_t>(k)] = l.right.transposed ? right[j + k * right_ld] : right[k + j * right_ld];
    for (int layer = 0; layer < layers; ++layer) {
      w.assign(static_cast<std::size_t>(rows), 0.0);
      if (l.left.transposed) {
        for (std::int64_t i = 0; i < rows; ++i) {
          const float* row = left + i * left_ld;  // row i of op(left) is stored column i
          double sum = 0;
          for (std::int64_t k = 0; k < reduction; ++k) sum += double(row[k]) * v[static_cast<std::size_t>(k)];
          w[static_cast<std::size_t>(i)] = sum;
        }
      } else {
        for (std::int64_t k = 0; k < reduction; ++k) {
          const double vk = v[static_cast<std::size_t>(k)];
          const float* column = left + k * left_ld;
          for (std::int64_t i = 0; i < rows; ++i) w[static_cast<std::size_t>(i)] += double(column[i]) * vk;
        }
      }
      v.swap(w);  // an MLP has rows == reduction
    }
    for (std::int64_t i = 0; i < rows; ++i) out[static_cast<std::size_t>(c * rows + i)] = static_cast<float>(v[static_cast<std::size_t>(i)]);
  }
  return out;
}

}  // namespace

std::string_view to_string(GemmPassKind pass) {
  switch (pass) {
    case GemmPassKind::fwd: return "fwd";
    case GemmPassKind::bwd: return "bwd";
    case GemmPassKind::upd: return "upd";
  }
  return "?";
}

GemmPassKind parse_gemm_pass(std::string_view name) {
  for (GemmPassKind pass : {GemmPassKind::fwd, GemmPassKind::bwd, GemmPassKind::upd})
    if (name == to_string(pass)) return pass;
  throw Error("'" + std::string(name) + "' is no GEMM pass (fwd, bwd or upd)");
}

const char* chunks_knob(GemmPassKind pass) { return facts(pass).chunks; }

WorkloadKey gemm_key(GemmPassKind pass, const GemmShape& shape, int threads) {
  WorkloadKey key{.kind = "gemm_" + std::string(to_string(pass)),
                  .shape = {{"M", shape.M}, {"N", shape.N}, {"K", shape.K}},
                  .dtype = "fp32",
                  .threads = threads};
  if (shape.layers > 1) {
    key.kind = "gemm_mlp";
    key.shape.emplace_back("layers", shape.layers);
  }
  return key;
}

std::int64_t partial_filters_for(const std::string& loop_string, int threads) {
  parlooper::LoopNest nest;
  try {
    nest = parlooper::parse_loop_string(loop_string, 3);
  } catch (const Error&) {
    return 0;
  }
  std::int64_t degree = 1;
  for (const auto& level : nest.levels) {
    if (level.loop != kLoopN || level.par == parlooper::ParKind::none) continue;
    if (level.par == parlooper::ParKind::collapse) return threads;
    degree *= level.ways;
  }
  return degree > 1 ? degree : 0;
}

template <class Config>
Config to_gemm_pass_config(const TunedConfig& config, const GemmShape& shape, [[maybe_unused]] int threads) {
  Config c;
  c.M = shape.M;
  c.N = shape.N;
  c.K = shape.K;
  c.bm = config.knob("bm", c.bm);
  c.bn = config.knob("bn", c.bn);
  c.bk = config.knob("bk", c.bk);
  c.loop_string = config.loop_string;
  c.k_blocks = config.blocks_of(kLoopK);
  c.m_blocks = config.blocks_of(kLoopM);
  c.n_blocks = config.blocks_of(kLoopN);
  if constexpr (std::is_same_v<Config, samples::GemmFwdConfig>) {
    c.kbf = config.knob("kbf", c.kbf);
    c.n_layers = shape.layers;
  } else {
    c.private_trans = config.knob("private_trans", 0) != 0;
    if constexpr (std::is_same_v<Config, samples::GemmBwdConfig>) {
      c.mbf = config.knob("mbf", c.mbf);
    } else {
      c.nbf = config.knob("nbf", c.nbf);
      c.n_partial_filters = partial_filters_for(c.loop_string, threads);
    }
  }
  return c;
}

template samples::GemmFwdConfig to_gemm_pass_config(const TunedConfig&, const GemmShape&, int);
template samples::GemmBwdConfig to_gemm_pass_config(const TunedConfig&, const GemmShape&, int);
template samples::GemmUpdConfig to_gemm_pass_config(const TunedConfig&, const GemmShape&, int);

struct GemmWorkload::Data {
  using Copies = std::map<std::pair<long, long>, std::vector<float>>;  // by (rows block, cols block)

  std::mutex mutex;
  std::vector<float> left, right;  // plain, as the pass stores them
  Copies left_blocked, right_blocked;
  std::map<std::pair<long, long>, std::vector<std::vector<float>>> outputs;  // one, or two for an MLP
  // The reference's output columns, every row of each.
  std::vector<std::int64_t> columns;
  std::vector<float> reference;
  bool reference_ready = false;
};

namespace {

const std::vector<float>& blocked_copy(GemmWorkload::Data::Copies& cache, const PassMatrix& m,
                                       const std::vector<float>& plain) {
  const std::pair key{static_cast<long>(m.rows.block), static_cast<long>(m.cols.block)};
  auto it = cache.find(key);
  if (it == cache.end())
    it = cache.emplace(key, samples::to_blocked(plain.data(), m.rows, m.cols, m.row_block_major)).first;
  return it->second;
}

std::uint64_t padded_bytes(const PassMatrix& m) { return bytes_needed({m.rows.padded(), m.cols.padded()}, sizeof(float)); }

template <class Pass>
class PassRunner final : public Runner {
 public:
  template <class Config>
  PassRunner(Config config, const GemmWorkload& workload, GemmWorkload::Data& data)
      : pass_(std::move(config)), layout_(layout_of(pass_)), data_(data), layers_(workload.shape().layers) {
    const auto& c = pass_.config();
    const std::string what = workload.describe() + " with tiles bm=" + std::to_string(c.bm) +
                             " bn=" + std::to_string(c.bn) + " bk=" + std::to_string(c.bk);
    check_layout(workload, what);
    const std::size_t n_outputs = layers_ > 1 ? 2 : 1;
    std::lock_guard lock(data.mutex);
    // Tiles much larger than the matrices pad the blocked copies: check before copying.
    const std::uint64_t out_bytes = padded_bytes(layout_.out);
    std::uint64_t bytes = add_bytes(padded_bytes(layout_.left), padded_bytes(layout_.right));
    for (std::size_t i = 0; i < n_outputs; ++i) bytes = add_bytes(bytes, out_bytes);
    require_memory(what + ": blocked operands", bytes);
    left_ = allocating(what + ": blocked left operand", padded_bytes(layout_.left),
                       [&] { return blocked_copy(data.left_blocked, layout_.left, data.left).data(); });
    right_ = allocating(what + ": blocked right operand", padded_bytes(layout_.right),
                        [&] { return blocked_copy(data.right_blocked, layout_.right, data.right).data(); });
    auto& outs = data.outputs[{static_cast<long>(layout_.out.rows.block), static_cast<long>(layout_.out.cols.block)}];
    allocating(what + ": blocked output", out_bytes, [&] {
      outs.resize(n_outputs, std::vector<float>(static_cast<std::size_t>(layout_.out.rows.padded() * layout_.out.cols.padded())));
    });
    for (auto& o : outs) outs_.push_back(o.data());
    run_ = bind_run(pass_, left_, right_, outs_);
  }

  void run() override { run_(); }

  CheckResult check() override {
    const PassMatrix& o = layout_.out;
    const std::int64_t rows = o.rows.size, cols = o.cols.size;
    // NaN in every real entry, so that an entry left unwritten fails; zero padding, which an MLP
    // layer reads as the next one's K padding.
    const std::vector<float> poison = samples::to_blocked(
        std::vector<float>(static_cast<std::size_t>(rows * cols), std::numeric_limits<float>::quiet_NaN()).data(),
        o.rows, o.cols, o.row_block_major);
    for (float* out : outs_) std::copy(poison.begin(), poison.end(), out);
    run_();
    std::vector<float> plain(static_cast<std::size_t>(rows * cols));
    samples::from_blocked(outs_[static_cast<std::size_t>(layers_ - 1) % outs_.size()], plain.data(), o.rows, o.cols,
                          o.row_block_major);
    std::lock_guard lock(data_.mutex);
    ensure_reference();
    std::vector<float> got;
    got.reserve(data_.reference.size());
    for (std::int64_t j : data_.columns)
      got.insert(got.end(), plain.begin() + j * rows, plain.begin() + (j + 1) * rows);
    const samples::ErrorNorms norms =
        samples::compare(got.data(), data_.reference.data(), static_cast<std::int64_t>(got.size()));
    return {norms.passed(samples::sum_tolerance(layout_.reduction()) * layers_), norms.to_string()};
  }

 private:
  // The workload's plain operands must be what the pass blocks: a sample that changes its layouts
  // must change the workload too.
  void check_layout(const GemmWorkload& workload, const std::string& what) const {
    const PassFacts& f = facts(workload.pass());
    const auto sizes = sizes_of(workload.shape());
    auto same = [&](const PassMatrix& m, const std::array<int, 2>& dims) {
      return m.rows.size == sizes[static_cast<std::size_t>(dims[0])] && m.cols.size == sizes[static_cast<std::size_t>(dims[1])];
    };
    if (!same(layout_.left, f.left) || !same(layout_.right, f.right) || !same(layout_.out, f.out))
      throw Error(what + ": the sample's operand layouts differ from the tuner workload's (gemm_workload.cpp)");
  }

  void ensure_reference() {
    if (data_.reference_ready) return;
    const std::int64_t rows = layout_.out.rows.size, cols = layout_.out.cols.size;
    const double macs = double(rows) * double(cols) * double(layout_.reduction()) * layers_;
    std::set<std::int64_t> picked;
    if (macs <= kFullReferenceLimit) {
      for (std::int64_t j = 0; j < cols; ++j) picked.insert(j);
    } else {
      picked = {0, cols - 1};
      std::mt19937_64 rng(7);
      while (picked.size() < std::min<std::size_t>(kSampledColumns, static_cast<std::size_t>(cols)))
        picked.insert(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(cols)));
    }
    data_.columns.assign(picked.begin(), picked.end());
    data_.reference = reference_columns(layout_, layers_, data_.left.data(), data_.right.data(), data_.columns);
    data_.reference_ready = true;
  }

  Pass pass_;
  GemmPassLayout layout_;
  GemmWorkload::Data& data_;
  int layers_;
  const float* left_ = nullptr;
  const float* right_ = nullptr;
  std::vector<float*> outs_;
  std::function<void()> run_;
};

}  // namespace

GemmWorkload::GemmWorkload(GemmShape shape, GemmSearchOptions options, GemmPassKind pass)
    : shape_(shape), options_(std::move(options)), pass_(pass), data_(std::make_unique<Data>()) {
  samples::require_positive({{"M", shape.M}, {"N", shape.N}, {"K", shape.K}, {"layers", shape.layers}});
  if (shape.layers > 1 && pass != GemmPassKind::fwd)
    throw Error("layers " + std::to_string(shape.layers) + ": an MLP is a forward pass, not " + std::string(to_string(pass)));
  if (shape.layers > 1 && shape.M != shape.K)
    throw Error("an MLP (layers > 1) feeds each output into the next layer, so it needs M == K");
  for (auto* list : {&options_.bm, &options_.bn, &options_.bk, &options_.chunks, &options_.private_trans}) {
    if (list->empty()) throw Error("GemmWorkload: every knob needs at least one value");
    for (long v : *list) {
      if (list == &options_.private_trans ? v != 0 && v != 1 : v <= 0)
        throw Error("GemmWorkload: knob value " + std::to_string(v) + " is out of range");
    }
  }
  // Plain operands, one blocked copy of each, the outputs and the plain output of a check at
  // least: refuse a shape this machine cannot hold before allocating any of it.
  const PassFacts& f = facts(pass);
  const auto sizes = sizes_of(shape);
  auto bytes_of = [&](const std::array<int, 2>& dims) {
    return bytes_needed({sizes[static_cast<std::size_t>(dims[0])], sizes[static_cast<std::size_t>(dims[1])]}, sizeof(float));
  };
  const std::uint64_t left_bytes = bytes_of(f.left), right_bytes = bytes_of(f.right), out_bytes = bytes_of(f.out);
  const std::uint64_t inputs = add_bytes(left_bytes, right_bytes);
  std::uint64_t total = add_bytes(add_bytes(inputs, inputs), add_bytes(out_bytes, out_bytes));
  if (shape.layers > 1) total = add_bytes(total, out_bytes);
  require_memory(describe() + " (operands, plain and blocked)", total);
  auto fill = [&](std::vector<float>& plain, std::uint64_t bytes, const std::array<int, 2>& dims, const char* name,
                  std::uint64_t seed) {
    const std::int64_t count = sizes[static_cast<std::size_t>(dims[0])] * sizes[static_cast<std::size_t>(dims[1])];
    allocating(describe() + ": " + name, bytes, [&] { plain.resize(static_cast<std::size_t>(count)); });
    samples::fill_random(plain.data(), count, seed);
  };
  fill(data_->left, left_bytes, f.left, f.names[0], 1);
  fill(data_->right, right_bytes, f.right, f.names[1], 2);
}

GemmWorkload::~GemmWorkload() = default;

std::string GemmWorkload::describe() const {
  if (shape_.layers > 1) return "MLP of " + std::to_string(shape_.layers) + " layers " + shape_text(shape_);
  if (pass_ == GemmPassKind::fwd) return "GEMM " + shape_text(shape_);
  return "GEMM " + std::string(to_string(pass_)) + " " + shape_text(shape_);
}

double GemmWorkload::flops() const {
  return 2.0 * static_cast<double>(shape_.M) * static_cast<double>(shape_.N) * static_cast<double>(shape_.K) *
         shape_.layers;
}

std::vector<Knobs> GemmWorkload::knob_choices() const {
  // Tiles larger than the matrix only add padding: keep the smallest such value at most.
  auto fitting = [](const std::vector<long>& values, std::int64_t size) {
    std::vector<long> out;
    for (long v : std::set<long>(values.begin(), values.end())) {
      out.push_back(v);
      if (v >= size) break;
    }
    return out;
  };
  const PassFacts& f = facts(pass_);
  const auto sizes = sizes_of(shape_);
  const std::set<long> chunk_values(options_.chunks.begin(), options_.chunks.end());
  const std::set<long> trans_values(options_.private_trans.begin(), options_.private_trans.end());
  std::vector<Knobs> choices;
  for (long bm : fitting(options_.bm, shape_.M))
    for (long bn : fitting(options_.bn, shape_.N))
      for (long bk : shape_.layers > 1 ? std::vector<long>{bm} : fitting(options_.bk, shape_.K)) {
        const std::array<long, 3> tiles{bk, bm, bn};
        const std::int64_t blocks = blocks_of(sizes[static_cast<std::size_t>(f.reduction)], tiles[static_cast<std::size_t>(f.reduction)]);
        std::set<std::int64_t> steps;  // chunk counts with the same chunk are the same loop
        for (long chunks : chunk_values) {
          if (chunks > blocks || !steps.insert(samples::chunk_step(blocks, chunks)).second) continue;
          Knobs knobs{{"bm", bm}, {"bn", bn}, {"bk", bk}, {f.chunks, chunks}};
          if (pass_ == GemmPassKind::fwd) {
            choices.push_back(knobs);
            continue;
          }
          for (long trans : trans_values) {
            choices.push_back(knobs);
            choices.back().emplace_back("private_trans", trans);
          }
        }
      }
  return choices;
}

std::vector<LogicalLoop> GemmWorkload::loops(const Knobs& knobs) const {
  const PassFacts& f = facts(pass_);
  const auto sizes = sizes_of(shape_);
  const auto tiles = tiles_of(knobs);
  std::vector<LogicalLoop> loops;
  for (std::size_t x = 0; x < 3; ++x) loops.push_back({0, static_cast<long>(blocks_of(sizes[x], tiles[x])), 1, false});
  LogicalLoop& r = loops[static_cast<std::size_t>(f.reduction)];
  r.step = static_cast<long>(samples::chunk_step(r.end, TunedConfig{knobs, "", {}}.knob(f.chunks, 1)));
  r.reduction = true;
  return loops;
}

std::vector<LoopSpecification> GemmWorkload::specs(const Knobs&) const {
  if (!options_.specs.empty()) return options_.specs;
  const PassFacts& f = facts(pass_);
  std::vector<LoopSpecification> specs;
  for (int row_levels = 0; row_levels <= 1; ++row_levels)
    for (int col_levels = 0; col_levels <= 1; ++col_levels) {
      LoopSpecification spec;
      for (int x = 0; x < 3; ++x) {
        const bool rows = x == f.out[0], cols = x == f.out[1];
        spec.loops.push_back({.letter = static_cast<char>('a' + x),
                              .extra_levels = rows ? row_levels : cols ? col_levels : 0,
                              .kind = rows ? 'M' : cols ? 'N' : 'K'});
      }
      specs.push_back(spec);
    }
  return specs;
}

CostInputs GemmWorkload::cost_inputs(const Knobs& knobs) const {
  const PassFacts& f = facts(pass_);
  const auto tiles = tiles_of(knobs);
  const double step = static_cast<double>(loops(knobs)[static_cast<std::size_t>(f.reduction)].step);
  auto use = [&](const char* name, const std::array<int, 2>& dims, bool written) {
    double bytes = sizeof(float);
    for (int x : dims) bytes *= static_cast<double>(tiles[static_cast<std::size_t>(x)]) * (x == f.reduction ? step : 1.0);
    return TensorUse{name, {std::min(dims[0], dims[1]), std::max(dims[0], dims[1])}, bytes, written};
  };
  CostInputs in;
  in.tensors = {use(f.names[0], f.left, false), use(f.names[1], f.right, false), use(f.names[2], f.out, true)};
  in.total_flops = flops() / shape_.layers;  // the nest runs once per layer: rank one layer
  // The AVX2 micro-kernel holds output rows in multiples of 8 floats; other heights waste lanes.
  in.body_efficiency = tiles[static_cast<std::size_t>(f.out[0])] % 8 == 0 ? 0.9 : 0.7;
  in.call_overhead_seconds = 30e-9;
  return in;
}

TunedConfig GemmWorkload::default_config(int) const {
  const samples::GemmLoops d;
  Knobs knobs{{"bm", static_cast<long>(d.bm)}, {"bn", static_cast<long>(d.bn)}, {"bk", static_cast<long>(d.bk)},
              {chunks_knob(pass_), 1}};
  if (pass_ != GemmPassKind::fwd) knobs.emplace_back("private_trans", 0);
  return {knobs, d.loop_string, {}};
}

std::unique_ptr<Runner> GemmWorkload::prepare(const TunedConfig& config) const {
  const int threads = omp_get_max_threads();  // tune() sets the team it measures with
  switch (pass_) {
    case GemmPassKind::fwd:
      return std::make_unique<PassRunner<samples::GemmFwd>>(
          to_gemm_pass_config<samples::GemmFwdConfig>(config, shape_, threads), *this, *data_);
    case GemmPassKind::bwd:
      return std::make_unique<PassRunner<samples::GemmBwd>>(
          to_gemm_pass_config<samples::GemmBwdConfig>(config, shape_, threads), *this, *data_);
    case GemmPassKind::upd:
      return std::make_unique<PassRunner<samples::GemmUpd>>(
          to_gemm_pass_config<samples::GemmUpdConfig>(config, shape_, threads), *this, *data_);
  }
  throw Error("GemmWorkload: unknown pass");
}

}  // namespace weft::tuner
