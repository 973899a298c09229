#include "gemm_upd.hpp"

#include <algorithm>
#include <utility>

#include <weft/jit/error.hpp>

#include "block_loops.hpp"

namespace weft::samples {
namespace {

std::int64_t blocked_size(const GemmUpdConfig& c) {
  return (c.M + c.bm - 1) / c.bm * c.bm * ((c.K + c.bk - 1) / c.bk) * c.bk;
}

std::int64_t validated_n_step(const GemmUpdConfig& c) {
  const std::int64_t step = c.validated_step("nbf", c.nbf, c.n_blocking());
  if (c.n_partial_filters < 0) throw Error("n_partial_filters must be >= 0");
  if (c.n_partial_filters > 0 && blocked_size(c) > PartialSums::kMaxCopyFloats) {
    throw Error("n_partial_filters " + std::to_string(c.n_partial_filters) + " with M x K = " +
                std::to_string(c.M) + " x " + std::to_string(c.K) + ": the copies of dW (" +
                std::to_string(blocked_size(c)) + " floats each, padding included) are summed by a "
                "reduction TPP, whose stride between copies is at most 2^28 floats; use "
                "n_partial_filters 0 for this size");
  }
  return step;
}

}  // namespace

GemmUpd::GemmUpd(GemmUpdConfig config)
    : GemmPass(std::move(config)),
      n_step_(validated_n_step(config_)),
      filter_size_(blocked_size(config_)),
      input_t_(config_.bk, config_.bn, n_blocking().blocks(), k_blocking().blocks(), false, config_.private_trans),
      // dW block (im, ik) = sum over in of dY tile (bm x bn) * X^T tile (bn x bk). The N padding
      // of dY and X is zero, so every tile reduces over a full bn.
      kernels_(m_blocking(), k_blocking(), config_.bn,
               {.lda = config_.bm, .ldb = config_.bn, .ldc = config_.bm}, {}),
      accumulate_(m_blocking(), k_blocking(), config_.bn,
                  {.lda = config_.bm, .ldb = config_.bn, .ldc = config_.bm}, {.accumulate = true}),
      partial_filters_(filter_size_, config_.n_partial_filters),
      loop_(config_.make_loop({1, 1, n_step_})) {
  if (config_.n_partial_filters == 0) {
    require_sequential_reduction(loop_.dynamic().nest(), 2, (n_blocking().blocks() + n_step_ - 1) / n_step_,
                                 ", or partial filters");
  }
}

bool GemmUpd::uses_partial_filters() const {
  if (config_.n_partial_filters <= 0) return false;
  for (const auto& level : loop_.dynamic().nest().levels) {
    if (level.loop == 2 && level.par != parlooper::ParKind::none) return true;  // c is parallel
  }
  return false;
}

void GemmUpd::run(const float* grad_out, const float* input, float* grad_weight) const {
  if (grad_out == nullptr || input == nullptr || grad_weight == nullptr) throw Error("GemmUpd::run: null buffer");
  const std::int64_t Mb = m_blocking().blocks(), Nb = n_blocking().blocks(), Kb = k_blocking().blocks();
  const std::int64_t bm = config_.bm, bn = config_.bn, bk = config_.bk;
  input_t_.start(input);
  const bool partial = uses_partial_filters();
  if (partial) partial_filters_.start();
  const std::int64_t copies_count = config_.n_partial_filters;

  loop_([&](int* ind) {
    const std::int64_t ik = ind[0], im = ind[1], in = ind[2];
    const std::int64_t count = std::min(n_step_, Nb - in);
    tpp::BrgemmArgs args;
    args.a = grad_out + (in * Mb + im) * bn * bm;
    args.b = input_t_.tiles(parlooper::ThreadedLoop<3>::get_tid(ind), in, count, ik) + input_t_.offset(in, ik);
    args.count = count;
    args.stride_a = Mb * bn * bm;
    args.stride_b = Kb * bk * bn;
    const std::int64_t c_offset = (im * Kb + ik) * bk * bm;
    if (partial) {
      const int copy = loop_.get_tid_in_parallel_dim('c', ind);
      if (copy < 0 || copy >= copies_count) {
        throw Error("n_partial_filters (" + std::to_string(copies_count) +
                    ") is smaller than the parallel degree of loop c (" +
                    std::to_string(loop_.get_loop_parallel_degree('c', ind)) + ")");
      }
      args.c = partial_filters_.copy(copy) + c_offset;
      accumulate_.get(im == Mb - 1, ik == Kb - 1, false, false)(args);
    } else {
      args.c = grad_weight + c_offset;
      kernels_.get(im == Mb - 1, ik == Kb - 1, in == 0, in + n_step_ >= Nb)(args);
    }
  });
  if (partial) partial_filters_.reduce_into(grad_weight);
}

GemmPassLayout GemmUpd::layout() const {
  return {.left = {m_blocking(), n_blocking(), false, false},
          .right = {k_blocking(), n_blocking(), false, true},
          .out = {m_blocking(), k_blocking(), true, false}};
}

std::string GemmUpd::measure_tag(int threads) const {
  const auto& c = config_;
  return c.measure_tag(c.nbf, threads) + "_private_act_trans" + std::to_string(c.private_trans ? 1 : 0) +
         "_npartialFilters" + std::to_string(c.n_partial_filters);
}

std::uint64_t GemmUpd::run_memory_bytes(int threads) const {
  std::uint64_t bytes = input_t_.memory_bytes(threads);
  if (uses_partial_filters()) bytes = weft::add_bytes(bytes, partial_filters_.memory_bytes());
  return bytes;
}

}  // namespace weft::samples
