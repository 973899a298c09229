#include <weft/ops/gemm_workload.hpp>

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
#include <weft/ops/block_loops.hpp>
#include <weft/ops/blocked_layout.hpp>
#include <weft/ops/element_type.hpp>
#include <weft/ops/gemm_layout.hpp>
#include <weft/ops/gemm_reference.hpp>
#include <weft/ops/verification.hpp>
#include <weft/parlooper/loop_string.hpp>
#include <weft/tuner/tile_bound.hpp>

namespace weft::ops {

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
  // By dimension (K, M, N): the tiles the sample requires even in bf16, for its VNNI-2 pairs
  // (GemmLoops::require_even_in_bf16 in gemm_fwd.cpp, gemm_bwd.cpp, gemm_upd.cpp).
  std::array<bool, 3> bf16_pairs;
};

const PassFacts& facts(GemmPassKind pass) {
  static const PassFacts fwd{kLoopK, {kLoopM, kLoopK}, {kLoopK, kLoopN}, {kLoopM, kLoopN}, "kbf", {"A", "B", "C"},
                             {true, false, false}};
  static const PassFacts bwd{kLoopM, {kLoopM, kLoopK}, {kLoopM, kLoopN}, {kLoopK, kLoopN}, "mbf", {"W", "dY", "dX"},
                             {true, true, false}};
  static const PassFacts upd{kLoopN, {kLoopM, kLoopN}, {kLoopK, kLoopN}, {kLoopM, kLoopK}, "nbf", {"dY", "X", "dW"},
                             {true, false, true}};
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
std::array<long, 3> tiles_of(const tuner::Knobs& knobs) {
  const tuner::TunedConfig c{knobs, "", {}};
  const GemmLoops d;
  return {c.knob("bk", static_cast<long>(d.bk)), c.knob("bm", static_cast<long>(d.bm)),
          c.knob("bn", static_cast<long>(d.bn))};
}

// Tile `value` of dimension `dim` (K, M, N) as the pass takes it in `dtype`: one more where bf16
// pairs the elements along it and the value is odd. An MLP's bm is its bk.
long paired_tile(const GemmShape& shape, GemmPassKind pass, jit::DataType dtype, int dim, long value) {
  if (dtype != jit::DataType::bf16) return value;
  const auto& pairs = facts(pass).bf16_pairs;
  const bool paired = pairs[static_cast<std::size_t>(dim)] || (shape.layers > 1 && dim == kLoopM && pairs[kLoopK]);
  return paired ? value + value % 2 : value;
}

// One run of the pass on blocked buffers; an MLP's layers write `outs` in turn.
template <class T>
std::function<void()> bind_run(const GemmFwd& gemm, const T* left, const T* right, std::span<T* const> outs) {
  // GemmFwd takes its input as T* with the layer outputs; it never writes it.
  std::vector<T*> activations{const_cast<T*>(right)};
  for (int l = 0; l < gemm.config().n_layers; ++l) activations.push_back(outs[static_cast<std::size_t>(l) % outs.size()]);
  std::vector<const T*> weights(static_cast<std::size_t>(gemm.config().n_layers), left);
  return [&gemm, activations = std::move(activations), weights = std::move(weights)] {
    gemm.run(std::span<T* const>(activations), std::span<const T* const>(weights), {});
  };
}
template <class Pass, class T>
std::function<void()> bind_run(const Pass& pass, const T* left, const T* right, std::span<T* const> outs) {
  T* const out = outs[0];
  return [&pass, left, right, out] { pass.run(left, right, out); };
}

// Columns `columns` of op(m) (the plain matrix `plain` as the product reads it), plain column-major.
std::vector<float> columns_of(const PassMatrix& m, const std::vector<float>& plain, const std::vector<std::int64_t>& columns) {
  const std::int64_t ld = m.rows.size, rows = m.transposed ? m.cols.size : m.rows.size;
  std::vector<float> out;
  out.reserve(static_cast<std::size_t>(rows) * columns.size());
  for (std::int64_t j : columns)
    for (std::int64_t k = 0; k < rows; ++k) out.push_back(plain[static_cast<std::size_t>(m.transposed ? j + k * ld : k + j * ld)]);
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

GemmSearchOptions default_gemm_search(jit::DataType dtype) {
  GemmSearchOptions options;
  options.dtype = dtype;
  if (dtype == jit::DataType::bf16) options.bn.push_back(128);
  return options;
}

tuner::WorkloadKey gemm_key(GemmPassKind pass, const GemmShape& shape, int threads, jit::DataType dtype) {
  tuner::WorkloadKey key{.kind = "gemm_" + std::string(to_string(pass)),
                  .shape = {{"M", shape.M}, {"N", shape.N}, {"K", shape.K}},
                  .dtype = dtype == jit::DataType::bf16 ? "bf16" : dtype == jit::DataType::f64 ? "fp64" : "fp32",
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
Config to_gemm_pass_config(const tuner::TunedConfig& config, const GemmShape& shape, [[maybe_unused]] int threads) {
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
  if constexpr (std::is_same_v<Config, GemmFwdConfig>) {
    c.kbf = config.knob("kbf", c.kbf);
    c.n_layers = shape.layers;
  } else {
    c.private_trans = config.knob("private_trans", 0) != 0;
    if constexpr (std::is_same_v<Config, GemmBwdConfig>) {
      c.mbf = config.knob("mbf", c.mbf);
    } else {
      c.nbf = config.knob("nbf", c.nbf);
      c.n_partial_filters = partial_filters_for(c.loop_string, threads);
    }
  }
  return c;
}

template GemmFwdConfig to_gemm_pass_config(const tuner::TunedConfig&, const GemmShape&, int);
template GemmBwdConfig to_gemm_pass_config(const tuner::TunedConfig&, const GemmShape&, int);
template GemmUpdConfig to_gemm_pass_config(const tuner::TunedConfig&, const GemmShape&, int);

struct GemmWorkload::Data {
  // Blocked copies by (rows block, cols block); outputs by the output's: one, or two for an MLP.
  template <class T>
  struct Blocked {
    std::map<std::pair<long, long>, std::vector<T>> left, right;
    std::map<std::pair<long, long>, std::vector<std::vector<T>>> outputs;
  };
  template <class T>
  Blocked<T>& blocked() {
    if constexpr (std::is_same_v<T, float>) {
      return f32;
    } else if constexpr (std::is_same_v<T, double>) {
      return f64;
    } else {
      return bf16;
    }
  }

  std::mutex mutex;
  std::vector<float> left, right;  // plain, as the pass stores them; in bf16 the values of bf16
  Blocked<float> f32;
  Blocked<bfloat16> bf16;
  Blocked<double> f64;  // the float values, exactly
  // The reference's output columns, every row of each, and those columns of op(right).
  std::vector<std::int64_t> columns;
  std::vector<float> right_columns;
  // FP32 and FP64: op(left)^layers x op(right) on those columns. bf16: one layer's, with the magnitudes of
  // its bound, by the terms each call adds (Bf16Sum::chunk_terms).
  using Bf16Reference = std::pair<std::vector<float>, Bf16Magnitudes>;
  std::vector<float> reference;
  std::map<std::int64_t, Bf16Reference> bf16_references;
};

namespace {

template <class T>
const std::vector<T>& blocked_copy(std::map<std::pair<long, long>, std::vector<T>>& cache, const PassMatrix& m,
                                   const std::vector<float>& plain) {
  const std::pair key{static_cast<long>(m.rows.block), static_cast<long>(m.cols.block)};
  auto it = cache.find(key);
  if (it == cache.end())
    it = cache.emplace(key, to_blocked<T>(plain.data(), m.rows, m.cols, m.row_block_major, m.order)).first;
  return it->second;
}

std::uint64_t padded_bytes(const PassMatrix& m, std::size_t element) {
  return bytes_needed({m.rows.padded(), m.cols.padded()}, element);
}

// op(left) x `in` (columns of op(right)'s height, plain) in double precision, as the samples check
// (gemm_reference.hpp); with `magnitudes`, those of the bf16 bound too.
std::vector<float> reference_of(const GemmPassLayout& l, const std::vector<float>& left, const std::vector<float>& in,
                                Bf16Magnitudes* magnitudes = nullptr, std::int64_t chunk_terms = 0) {
  const std::int64_t rows = l.out.rows.size, reduction = l.reduction();
  const std::int64_t n = static_cast<std::int64_t>(in.size()) / reduction;
  std::vector<float> out(static_cast<std::size_t>(rows * n));
  gemm_reference(rows, n, reduction, {left.data(), l.left.transposed}, in.data(), nullptr, false, out.data(),
                          magnitudes, chunk_terms);
  return out;
}

// A prepared candidate; T is the workload's element type (float, bfloat16 or double).
template <class Pass, class T>
class PassRunner final : public tuner::Runner {
 public:
  template <class Config>
  PassRunner(Config config, const GemmWorkload& workload, GemmWorkload::Data& data)
      : pass_(std::move(config)), layout_(pass_.layout()), workload_(workload), data_(data),
        layers_(workload.shape().layers) {
    const auto& c = pass_.config();
    what_ = workload.describe() + " with tiles bm=" + std::to_string(c.bm) + " bn=" + std::to_string(c.bn) +
            " bk=" + std::to_string(c.bk);
    check_layout();
    const std::size_t n_outputs = layers_ > 1 ? 2 : 1;
    auto& blocked = data.blocked<T>();
    std::lock_guard lock(data.mutex);
    // Tiles much larger than the matrices pad the blocked copies: check before copying.
    const std::uint64_t out_bytes = padded_bytes(layout_.out, sizeof(T));
    std::uint64_t bytes = add_bytes(padded_bytes(layout_.left, sizeof(T)), padded_bytes(layout_.right, sizeof(T)));
    for (std::size_t i = 0; i < n_outputs; ++i) bytes = add_bytes(bytes, out_bytes);
    require_memory(what_ + ": blocked operands", bytes);
    left_ = allocating(what_ + ": blocked left operand", padded_bytes(layout_.left, sizeof(T)),
                       [&] { return blocked_copy(blocked.left, layout_.left, data.left).data(); });
    right_ = allocating(what_ + ": blocked right operand", padded_bytes(layout_.right, sizeof(T)),
                        [&] { return blocked_copy(blocked.right, layout_.right, data.right).data(); });
    auto& outs = blocked.outputs[{static_cast<long>(layout_.out.rows.block), static_cast<long>(layout_.out.cols.block)}];
    allocating(what_ + ": blocked output", out_bytes, [&] { outs.resize(n_outputs, std::vector<T>(out_elements())); });
    for (auto& o : outs) outs_.push_back(o.data());
    run_ = bind_run(pass_, left_, right_, std::span<T* const>(outs_));
  }

  void run() override { run_(); }

  tuner::CheckResult check() override {
    constexpr bool bf16 = std::is_same_v<T, bfloat16>;
    // A bf16 MLP is checked layer by layer from each layer's own input: one output per layer.
    std::vector<std::vector<T>> layer_outputs;
    std::vector<T*> outs = outs_;
    std::function<void()> run = run_;
    if (bf16 && layers_ > 1) {
      const std::uint64_t bytes = bytes_needed({layers_, out_elements()}, sizeof(T));
      require_memory(what_ + ": one output per layer for the check", bytes);
      allocating(what_ + ": one output per layer for the check", bytes,
                 [&] { layer_outputs.assign(static_cast<std::size_t>(layers_), std::vector<T>(out_elements())); });
      outs.clear();
      for (auto& o : layer_outputs) outs.push_back(o.data());
      run = bind_run(pass_, left_, right_, std::span<T* const>(outs));
    }
    // NaN in every real entry, so that an entry left unwritten fails; zero padding, which an MLP
    // layer reads as the next one's K padding.
    const PassMatrix& o = layout_.out;
    const std::vector<T> poison = to_blocked<T>(
        std::vector<float>(static_cast<std::size_t>(o.rows.size * o.cols.size), std::numeric_limits<float>::quiet_NaN())
            .data(),
        o.rows, o.cols, o.row_block_major, o.order);
    for (T* out : outs) std::copy(poison.begin(), poison.end(), out);
    run();
    std::lock_guard lock(data_.mutex);
    ensure_columns();
    if constexpr (bf16) {
      return check_bf16(outs);
    } else {
      std::vector<float> got = output_columns(outs[static_cast<std::size_t>(layers_ - 1) % outs.size()], layers_ - 1);
      if (data_.reference.empty()) {
        data_.reference = data_.right_columns;
        for (int l = 0; l < layers_; ++l) data_.reference = reference_of(layout_, data_.left, data_.reference);
      }
      const ErrorNorms norms =
          compare(got.data(), data_.reference.data(), static_cast<std::int64_t>(got.size()));
      const double tolerance = std::is_same_v<T, double> ? kF64CheckedAsFloat : sum_tolerance(layout_.reduction());
      return {norms.passed(tolerance * layers_), norms.to_string()};
    }
  }

 private:
  std::int64_t out_elements() const { return layout_.out.rows.padded() * layout_.out.cols.padded(); }

  // The workload's plain operands must be what the pass blocks: a sample that changes its layouts
  // must change the workload too.
  void check_layout() const {
    const PassFacts& f = facts(workload_.pass());
    const auto sizes = sizes_of(workload_.shape());
    auto same = [&](const PassMatrix& m, const std::array<int, 2>& dims) {
      return m.rows.size == sizes[static_cast<std::size_t>(dims[0])] && m.cols.size == sizes[static_cast<std::size_t>(dims[1])];
    };
    if (!same(layout_.left, f.left) || !same(layout_.right, f.right) || !same(layout_.out, f.out) ||
        layout_.dtype != workload_.dtype())
      throw Error(what_ + ": the sample's operand layouts differ from the tuner workload's (gemm_workload.cpp)");
  }

  // Picks the columns the checks compare: all of them up to kFullReferenceLimit multiply-adds.
  void ensure_columns() {
    if (!data_.columns.empty()) return;
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
    data_.right_columns = columns_of(layout_.right, data_.right, data_.columns);
  }

  // The checked columns of a blocked output (that of `layer`), after the workload's inspection.
  std::vector<float> output_columns(const T* out, int layer) const {
    const PassMatrix& o = layout_.out;
    std::vector<float> plain(static_cast<std::size_t>(o.rows.size * o.cols.size));
    from_blocked(out, plain.data(), o.rows, o.cols, o.row_block_major, o.order);
    std::vector<float> got = columns_of(o, plain, data_.columns);
    workload_.inspect_checked_output(got, layer);
    return got;
  }

  // Every layer's every checked element within its bf16 bound (the sample's Bf16Sum), each layer
  // from its own input: op(right), then the previous layer's output as the run rounded it.
  tuner::CheckResult check_bf16(const std::vector<T*>& outs) const {
    const Bf16Sum sum = pass_.bf16_sum();
    auto reference = [&](const std::vector<float>& in) {
      GemmWorkload::Data::Bf16Reference r;
      r.first = reference_of(layout_, data_.left, in, &r.second, sum.chunk_terms);
      return r;
    };
    // The first layer's, from op(right), is the workload's, kept per chunking.
    auto first = data_.bf16_references.find(sum.chunk_terms);
    if (first == data_.bf16_references.end())
      first = data_.bf16_references.emplace(sum.chunk_terms, reference(data_.right_columns)).first;
    auto layer_text = [&](int l) {
      return layers_ > 1 ? "; layer " + std::to_string(l + 1) + " of " + std::to_string(layers_) : std::string();
    };
    GemmWorkload::Data::Bf16Reference later;
    std::vector<float> in;
    ErrorNorms worst;
    int worst_layer = 0;
    for (int l = 0; l < layers_; ++l) {
      std::vector<float> got = output_columns(outs[static_cast<std::size_t>(l)], l);
      if (l > 0) later = reference(in);
      const auto& [ref, magnitudes] = l == 0 ? first->second : later;
      const ErrorNorms norms =
          compare_within(got.data(), ref.data(), magnitudes, static_cast<std::int64_t>(got.size()), sum);
      if (!norms.passed(0)) return {false, norms.to_string() + layer_text(l)};
      if (l == 0 || norms.worst_error_to_bound > worst.worst_error_to_bound) {
        worst = norms;
        worst_layer = l;
      }
      in = std::move(got);
    }
    return {true, worst.to_string() + layer_text(worst_layer)};
  }

  Pass pass_;
  GemmPassLayout layout_;
  const GemmWorkload& workload_;
  GemmWorkload::Data& data_;
  int layers_;
  std::string what_;
  const T* left_ = nullptr;
  const T* right_ = nullptr;
  std::vector<T*> outs_;
  std::function<void()> run_;
};

}  // namespace

GemmWorkload::GemmWorkload(GemmShape shape, GemmSearchOptions options, GemmPassKind pass)
    : shape_(shape), options_(std::move(options)), pass_(pass), data_(std::make_unique<Data>()) {
  require_positive({{"M", shape.M}, {"N", shape.N}, {"K", shape.K}, {"layers", shape.layers}});
  if (options_.dtype != jit::DataType::f32 && options_.dtype != jit::DataType::bf16 &&
      options_.dtype != jit::DataType::f64)
    throw Error("GemmWorkload: data type " + std::string(jit::to_string(options_.dtype)) +
                ": the GEMM samples compute in f32, bf16 (with f32 accumulation) or f64");
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
  if (options_.tile_bound && !knob_choices().empty()) key(1);  // one bm and one bk, else throws
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
    fill_random(plain.data(), count, seed);
  };
  fill(data_->left, left_bytes, f.left, f.names[0], 1);
  fill(data_->right, right_bytes, f.right, f.names[1], 2);
  // bf16: the values the runs read, so that the reference computes on the same ones.
  if (options_.dtype == jit::DataType::bf16) {
    round_to_element_type<bfloat16>(data_->left);
    round_to_element_type<bfloat16>(data_->right);
  }
}

GemmWorkload::~GemmWorkload() = default;

std::string GemmWorkload::describe() const {
  const std::string in = options_.dtype == jit::DataType::f32 ? "" : " in " + std::string(jit::to_string(options_.dtype));
  if (shape_.layers > 1) return "MLP of " + std::to_string(shape_.layers) + " layers " + shape_text(shape_) + in;
  if (pass_ == GemmPassKind::fwd) return "GEMM " + shape_text(shape_) + in;
  return "GEMM " + std::string(to_string(pass_)) + " " + shape_text(shape_) + in;
}

void GemmWorkload::inspect_checked_output(std::span<float>, int) const {}

tuner::WorkloadKey GemmWorkload::key(int threads) const {
  const tuner::WorkloadKey free = gemm_key(pass_, shape_, threads, options_.dtype);
  return options_.tile_bound ? tuner::tile_bound_key(free, knob_choices(), {"bm", "bk"}) : free;
}

double GemmWorkload::flops() const {
  return 2.0 * static_cast<double>(shape_.M) * static_cast<double>(shape_.N) * static_cast<double>(shape_.K) *
         shape_.layers;
}

std::vector<tuner::Knobs> GemmWorkload::knob_choices() const {
  const PassFacts& f = facts(pass_);
  const auto sizes = sizes_of(shape_);
  // The tiles of dimension `dim` as the pass takes them (even where bf16 pairs along it). Tiles
  // larger than the matrix only add padding: keep the smallest such value at most.
  auto fitting = [&](const std::vector<long>& values, int dim) {
    std::set<long> taken;
    for (long v : values) taken.insert(paired_tile(shape_, pass_, options_.dtype, dim, v));
    std::vector<long> out;
    for (long v : taken) {
      out.push_back(v);
      if (v >= sizes[static_cast<std::size_t>(dim)]) break;
    }
    return out;
  };
  const std::set<long> chunk_values(options_.chunks.begin(), options_.chunks.end());
  const std::set<long> trans_values(options_.private_trans.begin(), options_.private_trans.end());
  std::vector<tuner::Knobs> choices;
  for (long bm : fitting(options_.bm, kLoopM))
    for (long bn : fitting(options_.bn, kLoopN))
      for (long bk : shape_.layers > 1 ? std::vector<long>{bm} : fitting(options_.bk, kLoopK)) {
        const std::array<long, 3> tiles{bk, bm, bn};
        const std::int64_t blocks = blocks_of(sizes[static_cast<std::size_t>(f.reduction)], tiles[static_cast<std::size_t>(f.reduction)]);
        std::set<std::int64_t> steps;  // chunk counts with the same chunk are the same loop
        for (long chunks : chunk_values) {
          if (chunks > blocks || !steps.insert(chunk_step(blocks, chunks)).second) continue;
          tuner::Knobs knobs{{"bm", bm}, {"bn", bn}, {"bk", bk}, {f.chunks, chunks}};
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

std::vector<tuner::LogicalLoop> GemmWorkload::loops(const tuner::Knobs& knobs) const {
  const PassFacts& f = facts(pass_);
  const auto sizes = sizes_of(shape_);
  const auto tiles = tiles_of(knobs);
  std::vector<tuner::LogicalLoop> loops;
  for (std::size_t x = 0; x < 3; ++x) loops.push_back({0, static_cast<long>(blocks_of(sizes[x], tiles[x])), 1, false});
  tuner::LogicalLoop& r = loops[static_cast<std::size_t>(f.reduction)];
  r.step = static_cast<long>(chunk_step(r.end, tuner::TunedConfig{knobs, "", {}}.knob(f.chunks, 1)));
  r.reduction = true;
  return loops;
}

std::vector<tuner::LoopSpecification> GemmWorkload::specs(const tuner::Knobs&) const {
  if (!options_.specs.empty()) return options_.specs;
  const PassFacts& f = facts(pass_);
  std::vector<tuner::LoopSpecification> specs;
  for (int row_levels = 0; row_levels <= 1; ++row_levels)
    for (int col_levels = 0; col_levels <= 1; ++col_levels) {
      tuner::LoopSpecification spec;
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

tuner::CostInputs GemmWorkload::cost_inputs(const tuner::Knobs& knobs) const {
  const PassFacts& f = facts(pass_);
  const auto tiles = tiles_of(knobs);
  const double step = static_cast<double>(loops(knobs)[static_cast<std::size_t>(f.reduction)].step);
  auto use = [&](const char* name, const std::array<int, 2>& dims, bool written) {
    auto bytes = static_cast<double>(jit::size_of(options_.dtype));
    for (int x : dims) bytes *= static_cast<double>(tiles[static_cast<std::size_t>(x)]) * (x == f.reduction ? step : 1.0);
    return tuner::TensorUse{name, {std::min(dims[0], dims[1]), std::max(dims[0], dims[1])}, bytes, written};
  };
  tuner::CostInputs in;
  in.tensors = {use(f.names[0], f.left, false), use(f.names[1], f.right, false), use(f.names[2], f.out, true)};
  in.total_flops = flops() / shape_.layers;  // the nest runs once per layer: rank one layer
  // The AVX2 micro-kernel holds output rows in multiples of 8 floats; other heights waste lanes.
  in.body_efficiency = tiles[static_cast<std::size_t>(f.out[0])] % 8 == 0 ? 0.9 : 0.7;
  in.call_overhead_seconds = 30e-9;
  return in;
}

tuner::TunedConfig GemmWorkload::default_config(int threads) const {
  const GemmLoops d;
  auto tile = [&](int dim, std::int64_t value) {
    return paired_tile(shape_, pass_, options_.dtype, dim, static_cast<long>(value));
  };
  tuner::Knobs knobs{{"bm", tile(kLoopM, d.bm)}, {"bn", tile(kLoopN, d.bn)}, {"bk", tile(kLoopK, d.bk)}, {chunks_knob(pass_), 1}};
  if (pass_ != GemmPassKind::fwd) knobs.emplace_back("private_trans", 0);
  const tuner::TunedConfig plain{knobs, d.loop_string, {}};
  // A tile-bound baseline has the bound tiles (the best may be the baseline).
  return options_.tile_bound ? tuner::with_tiles(plain, key(threads).tiles) : plain;
}

std::unique_ptr<tuner::Runner> GemmWorkload::prepare(const tuner::TunedConfig& config) const {
  const int threads = omp_get_max_threads();  // tune() sets the team it measures with
  switch (pass_) {
    case GemmPassKind::fwd: return prepare_pass<GemmFwd, GemmFwdConfig>(config, threads);
    case GemmPassKind::bwd: return prepare_pass<GemmBwd, GemmBwdConfig>(config, threads);
    case GemmPassKind::upd: return prepare_pass<GemmUpd, GemmUpdConfig>(config, threads);
  }
  throw Error("GemmWorkload: unknown pass");
}

template <class Pass, class Config>
std::unique_ptr<tuner::Runner> GemmWorkload::prepare_pass(const tuner::TunedConfig& config, int threads) const {
  Config c = to_gemm_pass_config<Config>(config, shape_, threads);
  c.dtype = options_.dtype;
  if (c.bf16()) return std::make_unique<PassRunner<Pass, bfloat16>>(std::move(c), *this, *data_);
  if (c.f64()) return std::make_unique<PassRunner<Pass, double>>(std::move(c), *this, *data_);
  return std::make_unique<PassRunner<Pass, float>>(std::move(c), *this, *data_);
}

}  // namespace weft::ops
