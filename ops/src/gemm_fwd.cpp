#include <weft/ops/gemm_fwd.hpp>

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include <weft/jit/error.hpp>
#include <weft/ops/block_loops.hpp>

namespace weft::ops {
namespace {

// Validates the configuration (the first thing the constructor does) and returns the K loop's step.
std::int64_t validated_k_step(const GemmFwdConfig& c) {
  const std::int64_t step = c.validated_step("kbf", c.kbf, c.k_blocking());
  require_positive({{"n_layers", c.n_layers}});
  c.require_even_in_bf16("bk", c.bk, "the weight tiles are VNNI-2, which pairs their elements along K");
  if (c.n_layers > 1 && (c.M != c.K || c.bm != c.bk)) {
    throw Error("an MLP (n_layers > 1) feeds each output into the next layer, so it needs "
                "M == K and bm == bk");
  }
  if (c.plain_activations && !GemmFwd::takes_plain_activations(c)) {
    throw Error("plain activations need K % bk == 0 (K = " + std::to_string(c.K) + ", bk = " + std::to_string(c.bk) +
                "): the batch reduce runs over whole tiles of x, and a plain x has no zero padding");
  }
  return step;
}

}  // namespace

GemmFwd::GemmFwd(GemmFwdConfig config, PassCode code)
    : GemmPass(std::move(config)),
      k_step_(validated_k_step(config_)),
      kernels_(m_blocking(), n_blocking(), config_.bk,
               {.lda = config_.bm, .ldb = input_tiles().ld(), .ldc = output_tiles().ld()},
               {.bias = config_.fuse_bias ? tpp::BrgemmBias::per_row : tpp::BrgemmBias::none,
                .relu = config_.fuse_relu,
                .prefetch_c = output_prefetch(config_.loop_string, 3, 0)},
               config_.brgemm_types(), code) {
  const std::array<parlooper::LoopSpecs, 3> specs = config_.loop_specs({k_step_, 1, 1});
  require_sequential_reduction(checked_nest(config_.loop_string, specs), 0, k_chunks());
  if (code == PassCode::build) loop_.emplace(specs, config_.loop_string);
}

template <class T>
void GemmFwd::run_layer(const T* input, const T* weight, const T* bias, T* output) const {
  const std::int64_t Mb = m_blocking().blocks(), Nb = n_blocking().blocks(), Kb = k_blocking().blocks();
  const std::int64_t bm = config_.bm, bk = config_.bk;
  const ActivationTiles x = input_tiles(), y = output_tiles();
  (*loop_)([&](int* ind) {
    const std::int64_t ik = ind[0], im = ind[1], in = ind[2];
    const tpp::Brgemm& gemm = kernels_.get(im == Mb - 1, in == Nb - 1, ik == 0, ik + k_step_ >= Kb);
    tpp::BrgemmArgs args;
    args.a = weight + (im * Kb + ik) * bk * bm;
    args.b = input + x.offset(ik, in);
    args.c = output + y.offset(im, in);
    args.count = std::min(k_step_, Kb - ik);
    args.stride_a = bk * bm;
    args.stride_b = x.row_tile_stride();
    args.bias = bias != nullptr ? bias + im * bm : nullptr;
    gemm(args);
  });
}

template <class T>
void GemmFwd::run_typed(std::span<T* const> activations, std::span<const T* const> weights,
                        std::span<const T* const> biases) const {
  require_buffers_of<T>(config_.dtype, "GemmFwd::run");
  const auto layers = static_cast<std::size_t>(config_.n_layers);
  if (activations.size() < layers + 1 || weights.size() < layers ||
      (config_.fuse_bias && biases.size() < layers)) {
    throw Error("GemmFwd::run: needs n_layers + 1 activations, n_layers weights and (with fused "
                "bias) n_layers biases");
  }
  const auto require = [](const void* buffer, const char* name, std::size_t index) {
    if (buffer == nullptr) throw Error("GemmFwd::run: " + std::string(name) + "[" + std::to_string(index) + "] is null");
  };
  for (std::size_t l = 0; l < layers; ++l) {
    require(activations[l], "activations", l);
    require(activations[l + 1], "activations", l + 1);
    require(weights[l], "weights", l);
    if (config_.fuse_bias) require(biases[l], "biases", l);
  }
  for (std::size_t l = 0; l < layers; ++l) {
    run_layer(activations[l], weights[l], config_.fuse_bias ? biases[l] : nullptr, activations[l + 1]);
  }
}

GemmPassLayout GemmFwd::layout() const {
  const TileOrder a_order = config_.bf16() ? TileOrder::vnni2 : TileOrder::column_major;
  return {.left = {m_blocking(), k_blocking(), true, false, a_order},
          .right = input_tiles().matrix(),
          .out = output_tiles().matrix(),
          .dtype = config_.dtype};
}

Bf16Sum GemmFwd::bf16_sum() const {
  const std::int64_t terms = config_.K + (config_.fuse_bias ? 1 : 0);
  return {.terms = terms, .additions = terms + k_chunks(), .roundings = k_chunks(), .chunk_terms = k_step_ * config_.bk};
}

void GemmFwd::run(std::span<float* const> activations, std::span<const float* const> weights,
                  std::span<const float* const> biases) const {
  run_typed(activations, weights, biases);
}

void GemmFwd::run(std::span<bfloat16* const> activations, std::span<const bfloat16* const> weights,
                  std::span<const bfloat16* const> biases) const {
  run_typed(activations, weights, biases);
}

void GemmFwd::run(std::span<double* const> activations, std::span<const double* const> weights,
                  std::span<const double* const> biases) const {
  run_typed(activations, weights, biases);
}

}  // namespace weft::ops
