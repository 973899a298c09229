#include "gemm_bwd.hpp"

#include <algorithm>
#include <utility>

#include <weft/jit/error.hpp>

#include "block_loops.hpp"

namespace weft::samples {

GemmBwd::GemmBwd(GemmBwdConfig config)
    : GemmPass(std::move(config)),
      m_step_(config_.validated_step("mbf", config_.mbf, m_blocking())),
      weight_t_(config_.bm, config_.bk, m_blocking().blocks(), k_blocking().blocks(), true, config_.private_trans),
      // dX block (ik, in) = sum over im of W^T tile (bk x bm) * dY tile (bm x bn). The M padding of
      // W and dY is zero, so every tile reduces over a full bm.
      kernels_(k_blocking(), n_blocking(), config_.bm, {.lda = config_.bk, .ldb = config_.bm, .ldc = config_.bk}, {}),
      loop_(config_.make_loop({1, m_step_, 1})) {
  require_sequential_reduction(loop_.dynamic().nest(), 1, (m_blocking().blocks() + m_step_ - 1) / m_step_);
}

void GemmBwd::run(const float* weight, const float* grad_out, float* grad_in) const {
  if (weight == nullptr || grad_out == nullptr || grad_in == nullptr) throw Error("GemmBwd::run: null buffer");
  const std::int64_t Mb = m_blocking().blocks(), Nb = n_blocking().blocks(), Kb = k_blocking().blocks();
  const std::int64_t bm = config_.bm, bn = config_.bn, bk = config_.bk;
  weight_t_.start(weight);
  loop_([&](int* ind) {
    const std::int64_t ik = ind[0], im = ind[1], in = ind[2];
    const std::int64_t count = std::min(m_step_, Mb - im);
    tpp::BrgemmArgs args;
    args.a = weight_t_.tiles(parlooper::ThreadedLoop<3>::get_tid(ind), im, count, ik) + weight_t_.offset(im, ik);
    args.b = grad_out + (in * Mb + im) * bn * bm;
    args.c = grad_in + (in * Kb + ik) * bn * bk;
    args.count = count;
    args.stride_a = bm * bk;
    args.stride_b = bn * bm;
    kernels_.get(ik == Kb - 1, in == Nb - 1, im == 0, im + m_step_ >= Mb)(args);
  });
}

GemmPassLayout GemmBwd::layout() const {
  return {.left = {m_blocking(), k_blocking(), true, true},
          .right = {m_blocking(), n_blocking(), false, false},
          .out = {k_blocking(), n_blocking(), false, false}};
}

std::string GemmBwd::measure_tag(int threads) const {
  return config_.measure_tag(config_.mbf, threads) + "_private_wt_trans" + std::to_string(config_.private_trans ? 1 : 0);
}

}  // namespace weft::samples
