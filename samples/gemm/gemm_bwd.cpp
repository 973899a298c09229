#include "gemm_bwd.hpp"

#include <algorithm>
#include <utility>

#include <weft/jit/error.hpp>  // also bytes_needed, add_bytes

#include "gemm_loops.hpp"

namespace weft::samples {
namespace {

std::int64_t validated_m_step(const GemmBwdConfig& c) {
  for (auto [name, value] : {std::pair{"M", c.M}, {"N", c.N}, {"K", c.K}, {"bm", c.bm}, {"bn", c.bn},
                             {"bk", c.bk}, {"mbf", c.mbf}}) {
    require_positive(name, value);
  }
  return chunk_step((c.M + c.bm - 1) / c.bm, c.mbf);
}

tpp::UnaryDesc transpose_desc(const GemmBwdConfig& c) {
  tpp::UnaryDesc d;
  d.op = tpp::UnaryOp::transpose;
  d.m = c.bm;
  d.n = c.bk;
  d.ld_in = c.bm;
  d.ld_out = c.bk;
  return d;
}

}  // namespace

GemmBwd::GemmBwd(GemmBwdConfig config)
    : config_(std::move(config)),
      m_step_(validated_m_step(config_)),
      transpose_(transpose_desc(config_)),
      // dX block (ik, in) = sum over im of W^T tile (bk x bm) * dY tile (bm x bn). The M padding of
      // W and dY is zero, so every tile reduces over a full bm.
      kernels_(k_blocking(), n_blocking(), config_.bm,
               {.lda = config_.bk, .ldb = config_.bm, .ldc = config_.bk}, {}),
      transpose_loop_({parlooper::LoopSpecs{0L, static_cast<long>(m_blocking().blocks())},
                       parlooper::LoopSpecs{0L, static_cast<long>(k_blocking().blocks())}},
                      "AB"),
      loop_(make_gemm_loop(config_.loop_string,
                           {k_blocking().blocks(), m_blocking().blocks(), n_blocking().blocks()},
                           {1, m_step_, 1}, {config_.k_blocks, config_.m_blocks, config_.n_blocks})) {
  require_sequential_reduction(loop_.dynamic().nest(), 1,
                               (m_blocking().blocks() + m_step_ - 1) / m_step_);
}

void GemmBwd::run(const float* weight, const float* grad_out, float* grad_in) const {
  if (weight == nullptr || grad_out == nullptr || grad_in == nullptr) {
    throw Error("GemmBwd::run: null buffer");
  }
  const std::int64_t Mb = m_blocking().blocks(), Nb = n_blocking().blocks(), Kb = k_blocking().blocks();
  const std::int64_t bm = config_.bm, bn = config_.bn, bk = config_.bk;
  const std::int64_t tile = bm * bk;
  const auto transposed_size = static_cast<std::size_t>(Mb * Kb * tile);
  auto transpose_tile = [&](float* transposed, std::int64_t im, std::int64_t ik) {
    transpose_(weight + (im * Kb + ik) * tile, transposed + (ik * Mb + im) * tile);
  };

  if (!config_.private_trans) {
    shared_transposed_.resize(transposed_size);
    float* transposed = shared_transposed_.data();
    transpose_loop_([&](int* ind) { transpose_tile(transposed, ind[0], ind[1]); });
  } else {
    private_.reset(transposed_size, static_cast<std::size_t>(Kb));  // a flag per column of tiles
  }

  loop_([&](int* ind) {
    const std::int64_t ik = ind[0], im = ind[1], in = ind[2];
    const float* transposed = shared_transposed_.data();
    if (config_.private_trans) {
      const int tid = parlooper::ThreadedLoop<3>::get_tid(ind);
      float* mine = private_.copy(tid);
      if (private_.first_use(tid, static_cast<std::size_t>(ik))) {
        for (std::int64_t m = 0; m < Mb; ++m) transpose_tile(mine, m, ik);
      }
      transposed = mine;
    }
    tpp::BrgemmArgs args;
    args.a = transposed + (ik * Mb + im) * tile;
    args.b = grad_out + (in * Mb + im) * bn * bm;
    args.c = grad_in + (in * Kb + ik) * bn * bk;
    args.count = std::min(m_step_, Mb - im);
    args.stride_a = tile;
    args.stride_b = bn * bm;
    kernels_.get(ik == Kb - 1, in == Nb - 1, im == 0, im + m_step_ >= Mb)(args);
  });
}

double GemmBwd::flops() const {
  return 2.0 * static_cast<double>(config_.M) * static_cast<double>(config_.N) *
         static_cast<double>(config_.K);
}

std::string GemmBwd::measure_tag(int threads) const {
  const auto& c = config_;
  return samples::measure_tag(c.loop_string, {c.M, c.N, c.K, c.bm, c.bn, c.bk}, c.mbf, threads) +
         "_private_wt_trans" + std::to_string(c.private_trans ? 1 : 0);
}

std::uint64_t GemmBwd::run_memory_bytes(int threads) const {
  const std::uint64_t transposed = weft::bytes_needed(
      {m_blocking().blocks(), config_.bm, k_blocking().blocks(), config_.bk}, sizeof(float));
  if (!config_.private_trans) return transposed;
  return weft::add_bytes(weft::bytes_needed({threads}, transposed),
                         weft::bytes_needed({threads, k_blocking().blocks()}, 1));
}

}  // namespace weft::samples
