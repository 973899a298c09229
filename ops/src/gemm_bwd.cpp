#include <weft/ops/gemm_bwd.hpp>

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include <weft/jit/error.hpp>
#include <weft/ops/block_loops.hpp>

namespace weft::ops {

namespace {

std::int64_t validated_m_step(const GemmBwdConfig& c) {
  const std::int64_t step = c.validated_step("mbf", c.mbf, c.m_blocking());
  c.require_even_in_bf16("bk", c.bk, "W is the forward's weight, VNNI-2 tiles pairing their elements along K");
  c.require_even_in_bf16("bm", c.bm, "the W^T tiles are VNNI-2 along M, this pass's reduction");
  if (c.plain_grad_output && !GemmBwd::takes_plain_grad_output(c)) {
    throw Error("a plain dY needs M % bm == 0 (M = " + std::to_string(c.M) + ", bm = " + std::to_string(c.bm) +
                "): the batch reduce runs over whole tiles of dY, and a plain dY has no zero padding");
  }
  return step;
}

}  // namespace

GemmBwd::GemmBwd(GemmBwdConfig config, PassCode code)
    : GemmPass(std::move(config)),
      m_step_(validated_m_step(config_)),
      weight_t_(config_.bm, config_.bk, m_blocking().blocks(), k_blocking().blocks(), true, config_.private_trans,
                config_.dtype, config_.bf16() ? TileTransform::vnni2_transpose : TileTransform::transpose, code),
      // dX block (ik, in) = sum over im of W^T tile (bk x bm) * dY tile (bm x bn). The M padding of
      // W and dY is zero, so every tile reduces over a full bm.
      kernels_(k_blocking(), n_blocking(), config_.bm,
               {.lda = config_.bk, .ldb = grad_output_tiles().ld(), .ldc = grad_input_tiles().ld()}, {},
               config_.brgemm_types(), code) {
  const std::array<parlooper::LoopSpecs, 3> specs = config_.loop_specs({1, m_step_, 1});
  require_sequential_reduction(checked_nest(config_.loop_string, specs), 1, reduction_chunks());
  if (code == PassCode::build) loop_.emplace(specs, config_.loop_string);
}

template <class T>
void GemmBwd::run_typed(const T* weight, const T* grad_out, T* grad_in) const {
  require_buffers_of<T>(config_.dtype, "GemmBwd::run");
  require_buffers("GemmBwd::run", {{"weight", weight}, {"grad_out", grad_out}, {"grad_in", grad_in}});
  const std::int64_t Mb = m_blocking().blocks(), Nb = n_blocking().blocks(), Kb = k_blocking().blocks();
  const std::int64_t bm = config_.bm, bk = config_.bk;
  const ActivationTiles dy = grad_output_tiles(), dx = grad_input_tiles();
  weight_t_.start(weight);
  (*loop_)([&](int* ind) {
    const std::int64_t ik = ind[0], im = ind[1], in = ind[2];
    const std::int64_t count = std::min(m_step_, Mb - im);
    tpp::BrgemmArgs args;
    args.a = weight_t_.tiles<T>(parlooper::ThreadedLoop<3>::get_tid(ind), im, count, ik) + weight_t_.offset(im, ik);
    args.b = grad_out + dy.offset(im, in);
    args.c = grad_in + dx.offset(ik, in);
    args.count = count;
    args.stride_a = bm * bk;
    args.stride_b = dy.row_tile_stride();
    kernels_.get(ik == Kb - 1, in == Nb - 1, im == 0, im + m_step_ >= Mb)(args);
  });
}

void GemmBwd::run(const float* weight, const float* grad_out, float* grad_in) const {
  run_typed(weight, grad_out, grad_in);
}

void GemmBwd::run(const bfloat16* weight, const bfloat16* grad_out, bfloat16* grad_in) const {
  run_typed(weight, grad_out, grad_in);
}

void GemmBwd::run(const double* weight, const double* grad_out, double* grad_in) const {
  run_typed(weight, grad_out, grad_in);
}

GemmPassLayout GemmBwd::layout() const {
  // W in the forward's layout: VNNI-2 tiles in bf16.
  const TileOrder w_order = config_.bf16() ? TileOrder::vnni2 : TileOrder::column_major;
  return {.left = {m_blocking(), k_blocking(), true, true, w_order},
          .right = grad_output_tiles().matrix(),
          .out = grad_input_tiles().matrix(),
          .dtype = config_.dtype};
}

Bf16Sum GemmBwd::bf16_sum() const {
  // Each chunk's call re-reads dX and rounds it to bf16 on store.
  return {.terms = config_.M,
          .additions = config_.M + reduction_chunks(),
          .roundings = reduction_chunks(),
          .chunk_terms = m_step_ * config_.bm};
}

std::string GemmBwd::measure_tag(int threads) const {
  return config_.measure_tag(config_.mbf, threads) + "_private_wt_trans" +
         std::to_string(config_.private_trans ? 1 : 0) + config_.precision_tag();
}

}  // namespace weft::ops
