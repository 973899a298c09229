#include <weft/ops/gemm_upd.hpp>

#include <algorithm>
#include <array>
#include <type_traits>
#include <utility>

#include <weft/jit/error.hpp>
#include <weft/ops/block_loops.hpp>

#include "vnni2_f32.hpp"

namespace weft::ops {
namespace {

// Elements per reduction task: large enough to amortize a call, small enough to balance.
constexpr std::int64_t kReduceChunk = 4096;
// The largest leading dimension a unary TPP takes: the stride between partial filters.
constexpr std::int64_t kMaxReduceStride = std::int64_t{1} << 28;

std::int64_t blocked_size(const GemmUpdConfig& c);

std::int64_t validated_n_step(const GemmUpdConfig& c) {
  const std::int64_t step = c.validated_step("nbf", c.nbf, c.n_blocking());
  c.require_even_in_bf16("bn", c.bn, "the dY tiles are repacked in VNNI-2 along N, this pass's reduction");
  c.require_even_in_bf16("bk", c.bk, "dW is written in the weights' VNNI-2 tiles, pairs along K");
  if (c.n_partial_filters < 0) throw Error("n_partial_filters must be >= 0");
  if (c.plain_input && !GemmUpd::takes_plain_input(c)) {
    throw Error("a plain input X needs K % bk == 0 and N % bn == 0 (K = " + std::to_string(c.K) + ", bk = " +
                std::to_string(c.bk) + ", N = " + std::to_string(c.N) + ", bn = " + std::to_string(c.bn) +
                "): its tiles are transposed whole, and the reduction over N needs zero padding a plain X has not");
  }
  if (c.plain_grad_output && !GemmUpd::takes_plain_grad_output(c)) {
    throw Error("a plain dY needs M % bm == 0 and N % bn == 0 (M = " + std::to_string(c.M) + ", bm = " +
                std::to_string(c.bm) + ", N = " + std::to_string(c.N) + ", bn = " + std::to_string(c.bn) +
                "): its tiles are read whole, and the reduction over N needs zero padding a plain dY has not");
  }
  if (c.n_partial_filters > 0 && blocked_size(c) > kMaxReduceStride) {
    throw Error("n_partial_filters " + std::to_string(c.n_partial_filters) + " with M x K = " +
                std::to_string(c.M) + " x " + std::to_string(c.K) + ": the copies of dW (" +
                std::to_string(blocked_size(c)) + " elements each, padding included) are summed by a "
                "reduction TPP, whose stride between copies is at most 2^28 elements; use "
                "n_partial_filters 0 for this size");
  }
  return step;
}

// A kernel over the partial filters, in their types (GemmLoops::sum_types).
tpp::UnaryDesc desc(tpp::UnaryOp op, std::int64_t m, std::int64_t n, std::int64_t ld_in, std::int64_t ld_out,
                    const tpp::DataTypes& types) {
  tpp::UnaryDesc d;
  d.op = op;
  d.m = m;
  d.n = n;
  d.ld_in = ld_in;
  d.ld_out = ld_out;
  d.types = types;
  return d;
}

std::int64_t blocked_size(const GemmUpdConfig& c) {
  return (c.M + c.bm - 1) / c.bm * c.bm * ((c.K + c.bk - 1) / c.bk) * c.bk;
}

long chunks_of(std::int64_t size) { return static_cast<long>((size + kReduceChunk - 1) / kReduceChunk); }

}  // namespace

GemmUpd::GemmUpd(GemmUpdConfig config, PassCode code)
    : GemmPass(std::move(config)),
      n_step_(validated_n_step(config_)),
      filter_size_(blocked_size(config_)),
      reduce_chunk_(std::min(kReduceChunk, filter_size_)),
      input_t_(config_.bk, config_.bn, n_blocking().blocks(), k_blocking().blocks(), false, config_.private_trans,
               config_.dtype, TileTransform::transpose, code, config_.plain_input ? config_.K : 0),
      zero_chunk_(make_kernel<tpp::Unary>(
          desc(tpp::UnaryOp::zero, reduce_chunk_, 1, reduce_chunk_, reduce_chunk_, config_.sum_types()), code)),
      // dW chunk = sum over the P copies: a reduction along the columns of a (chunk x P) matrix
      // whose columns are the copies, filter_size_ apart.
      // Without partial filters these kernels never run; their stride then only has to be valid.
      reduce_chunk_full_(make_kernel<tpp::Unary>(desc(tpp::UnaryOp::reduce_rows_sum, reduce_chunk_,
                                                      std::max<std::int64_t>(1, config_.n_partial_filters),
                                                      config_.n_partial_filters > 0 ? filter_size_ : reduce_chunk_, 0,
                                                      config_.sum_types()),
                                                 code)),
      reduce_chunk_tail_(make_kernel<tpp::Unary>(
          desc(tpp::UnaryOp::reduce_rows_sum,
               filter_size_ % reduce_chunk_ == 0 ? reduce_chunk_ : filter_size_ % reduce_chunk_,
               std::max<std::int64_t>(1, config_.n_partial_filters),
               config_.n_partial_filters > 0 ? filter_size_ : reduce_chunk_, 0, config_.sum_types()),
          code)),
      // dW block (im, ik) = sum over in of dY tile (bm x bn) * X^T tile (bn x bk). The N padding
      // of dY and X is zero, so every tile reduces over a full bn.
      kernels_(m_blocking(), k_blocking(), config_.bn,
               {.lda = grad_output_ld(), .ldb = config_.bn, .ldc = config_.bm},
               {}, config_.brgemm_types(), code),
      accumulate_(m_blocking(), k_blocking(), config_.bn,
                  {.lda = grad_output_ld(), .ldb = config_.bn, .ldc = config_.bm},
                  {.accumulate = true},
                  // The operands' type in, the copies' out: f32 copies in bf16 too.
                  {.in = config_.brgemm_types().in, .out = config_.sum_types().out, .compute = config_.sum_types().compute},
                  code),
      partial_loop_(make_loop<2>({parlooper::LoopSpecs{0L, std::max(1L, static_cast<long>(config_.n_partial_filters))},
                                  parlooper::LoopSpecs{0L, chunks_of(filter_size_)}},
                                 "AB", code)),
      reduce_loop_(make_loop<1>({parlooper::LoopSpecs{0L, chunks_of(filter_size_)}}, "A", code)) {
  const std::array<parlooper::LoopSpecs, 3> specs = config_.loop_specs({1, 1, n_step_});
  const parlooper::LoopNest nest = checked_nest(config_.loop_string, specs);
  reduction_parallel_ = std::any_of(nest.levels.begin(), nest.levels.end(), [](const parlooper::LoopLevel& level) {
    return level.loop == 2 && level.par != parlooper::ParKind::none;
  });
  if (config_.n_partial_filters == 0)
    require_sequential_reduction(nest, 2, reduction_chunks(), ", or partial filters");
  if (code == PassCode::build) loop_.emplace(specs, config_.loop_string);
  if (!config_.bf16()) return;
  grad_out_v_.emplace(config_.bm, config_.bn, n_blocking().blocks(), m_blocking().blocks(), false,
                      config_.private_trans, config_.dtype, TileTransform::vnni2_pack, code,
                      config_.plain_grad_output ? config_.M : 0);
  const auto pack = [&](jit::DataType in) {
    return tpp::UnaryDesc{.op = tpp::UnaryOp::vnni2_pack, .m = config_.bm, .n = config_.bk, .ld_in = config_.bm,
                          .ld_out = config_.bm, .types = {.in = in, .out = jit::DataType::bf16}};
  };
  pack_tile_ = make_kernel<tpp::Unary>(pack(jit::DataType::bf16), code);
  kernels_f32_.emplace(m_blocking(), k_blocking(), config_.bn,
                       LeadingDims{.lda = config_.bm, .ldb = config_.bn, .ldc = config_.bm}, Epilogue{},
                       tpp::DataTypes{.in = jit::DataType::bf16, .out = jit::DataType::f32, .compute = jit::DataType::f32},
                       code);
  pack_sums_ = make_kernel<tpp::Unary>(pack(jit::DataType::f32), code);
  if (!uses_partial_filters()) return;
  reduce_tile_ = make_kernel<tpp::Unary>(desc(tpp::UnaryOp::reduce_rows_sum, config_.bm * config_.bk,
                                              config_.n_partial_filters, filter_size_, 0, config_.sum_types()),
                                         code);
  tile_loop_ = make_loop<1>(
      {parlooper::LoopSpecs{0L, static_cast<long>(m_blocking().blocks() * k_blocking().blocks())}}, "A", code);
}

bool GemmUpd::uses_partial_filters() const {
  return config_.n_partial_filters > 0 && reduction_parallel_;
}

template <class Sum>
void GemmUpd::zero_partial_filters() const {
  partial_filters_.resize(static_cast<std::size_t>(config_.n_partial_filters * filter_size_) * sizeof(Sum));
  Sum* copies = partial_filters<Sum>();
  (*partial_loop_)([&](int* ind) {
    const std::int64_t begin = ind[1] * reduce_chunk_;
    const std::int64_t count = std::min(reduce_chunk_, filter_size_ - begin);
    Sum* out = copies + ind[0] * filter_size_ + begin;
    if (count == reduce_chunk_) {
      (*zero_chunk_)(tpp::UnaryArgs{.out = out});
    } else {
      std::fill(out, out + count, Sum{});  // one short tail per copy
    }
  });
}

template <class T>
void GemmUpd::reduce_partial_filters(T* grad_weight) const {
  const T* copies = partial_filters<T>();
  (*reduce_loop_)([&](int* ind) {
    const std::int64_t begin = ind[0] * reduce_chunk_;
    const bool tail = begin + reduce_chunk_ > filter_size_;
    (tail ? *reduce_chunk_tail_ : *reduce_chunk_full_)(tpp::UnaryArgs{.in = copies + begin, .out = grad_weight + begin});
  });
}

template <class Out>
void GemmUpd::reduce_partial_filters_vnni2(Out* grad_weight, bool column_major) const {
  const float* copies = partial_filters<float>();
  const std::int64_t tile = config_.bm * config_.bk;
  (*tile_loop_)([&](int* ind) {
    thread_local std::vector<float> sum;
    sum.resize(static_cast<std::size_t>(tile));
    (*reduce_tile_)(copies + ind[0] * tile, sum.data());
    if constexpr (std::is_same_v<Out, float>) {
      if (column_major) {
        std::copy(sum.begin(), sum.end(), grad_weight + ind[0] * tile);
      } else {
        detail::vnni2_order_f32(sum.data(), config_.bm, config_.bk, grad_weight + ind[0] * tile);
      }
    } else {
      (*pack_sums_)(tpp::UnaryArgs{.in = sum.data(), .out = grad_weight + ind[0] * tile});
    }
  });
}

template <class T, class Out>
void GemmUpd::run_typed(const T* grad_out, const T* input, Out* grad_weight, bool column_major) const {
  require_buffers_of<T>(config_.dtype, "GemmUpd::run");
  require_buffers("GemmUpd::run", {{"grad_out", grad_out}, {"input", input}, {"grad_weight", grad_weight}});
  const std::int64_t Mb = m_blocking().blocks(), Nb = n_blocking().blocks(), Kb = k_blocking().blocks();
  const std::int64_t bm = config_.bm, bn = config_.bn, bk = config_.bk;
  constexpr bool bf16 = std::is_same_v<T, bfloat16>;
  constexpr bool widened = bf16 && std::is_same_v<Out, float>;  // bf16 pass, f32 dW
  using Sum = std::conditional_t<std::is_same_v<T, double>, double, float>;  // sum_types()
  const ActivationTiles dy = grad_output_tiles();
  input_t_.start(input);
  if constexpr (bf16) grad_out_v_->start(grad_out);
  const bool partial = uses_partial_filters();
  if (partial) zero_partial_filters<Sum>();
  Sum* copies = partial_filters<Sum>();
  const std::int64_t copies_count = config_.n_partial_filters;

  (*loop_)([&](int* ind) {
    const std::int64_t ik = ind[0], im = ind[1], in = ind[2];
    const std::int64_t count = std::min(n_step_, Nb - in);
    const int tid = parlooper::ThreadedLoop<3>::get_tid(ind);
    tpp::BrgemmArgs args;
    // dY tiles: read in place in f32, from their VNNI-2 copies in bf16 (the same [Nb][Mb] slots).
    args.a = bf16 ? grad_out_v_->tiles<T>(tid, in, count, im) + grad_out_v_->offset(in, im)
                  : grad_out + dy.offset(im, in);
    args.b = input_t_.tiles<T>(tid, in, count, ik) + input_t_.offset(in, ik);
    args.count = count;
    args.stride_a = bf16 ? Mb * bn * bm : dy.col_tile_stride();
    args.stride_b = Kb * bk * bn;
    const std::int64_t c_offset = (im * Kb + ik) * bk * bm;
    if (partial) {
      const int copy = loop_->get_tid_in_parallel_dim('c', ind);
      if (copy < 0 || copy >= copies_count) {
        throw Error("n_partial_filters (" + std::to_string(copies_count) +
                    ") is smaller than the parallel degree of loop c (" +
                    std::to_string(loop_->get_loop_parallel_degree('c', ind)) + ")");
      }
      args.c = copies + copy * filter_size_ + c_offset;
      accumulate_.get(im == Mb - 1, ik == Kb - 1, false, false)(args);
    } else {
      Out* const c = grad_weight + c_offset;
      args.c = c;
      const bool first = in == 0, last = in + n_step_ >= Nb;
      // The kernels of an edge block write its real rows and columns only: its padding (in dW or
      // in the scratch it goes through) is zeroed first, so that dW's padding is zero.
      const bool edge = (im == Mb - 1 && m_blocking().padded() != config_.M) ||
                        (ik == Kb - 1 && k_blocking().padded() != config_.K);
      // A widened pass sums in f32 (kernels with bf16 in, f32 out).
      const BrgemmTable& table = [&]() -> const BrgemmTable& {
        if constexpr (widened) {
          return *kernels_f32_;
        } else {
          return kernels_;
        }
      }();
      // bf16: dW's tiles are VNNI-2, BRGEMM writes C column-major, and a TPP does not pack in
      // place, so a complete block goes into dW's tile through a tile of scratch.
      thread_local std::vector<Out> scratch;
      const auto into_vnni2 = [&](const Out* from, Out* to) {
        if constexpr (widened) {
          detail::vnni2_order_f32(from, bm, bk, to);
        } else {
          (*pack_tile_)(tpp::UnaryArgs{.in = from, .out = to});
        }
      };
      // A widened pass asked for column-major dW (run_f32_column_major) writes each block as the
      // BRGEMM sums it: in place over several chunks, or copied from the scratch of one.
      const bool in_vnni2 = !(widened && column_major);
      if constexpr (bf16) {
        scratch.resize(static_cast<std::size_t>(bm * bk));
        if (first && last && in_vnni2) {
          // One chunk: summed into the scratch, packed from there (one pass over dW).
          if (edge) std::fill(scratch.begin(), scratch.end(), Out{});
          args.c = scratch.data();
          table.get(im == Mb - 1, ik == Kb - 1, true, true)(args);
          into_vnni2(scratch.data(), c);
          return;
        }
      }
      if (first && edge) std::fill(c, c + bm * bk, Out{});
      table.get(im == Mb - 1, ik == Kb - 1, first, last)(args);
      if constexpr (bf16) {
        if (last && in_vnni2) {  // several chunks summed in place: packed into the scratch, copied back
          into_vnni2(c, scratch.data());
          std::copy(scratch.begin(), scratch.end(), c);
        }
      }
    }
  });
  if (partial) {
    if constexpr (bf16) {
      reduce_partial_filters_vnni2(grad_weight, column_major);
    } else {
      reduce_partial_filters(grad_weight);
    }
  }
}

void GemmUpd::run(const float* grad_out, const float* input, float* grad_weight) const {
  run_typed(grad_out, input, grad_weight);
}

void GemmUpd::run(const bfloat16* grad_out, const bfloat16* input, bfloat16* grad_weight) const {
  run_typed(grad_out, input, grad_weight);
}

void GemmUpd::run(const double* grad_out, const double* input, double* grad_weight) const {
  run_typed(grad_out, input, grad_weight);
}

void GemmUpd::run(const bfloat16* grad_out, const bfloat16* input, float* grad_weight) const {
  run_typed(grad_out, input, grad_weight);
}

void GemmUpd::run_f32_column_major(const bfloat16* grad_out, const bfloat16* input, float* grad_weight) const {
  run_typed(grad_out, input, grad_weight, true);
}

GemmPassLayout GemmUpd::layout() const {
  // dW in the weights' layout: VNNI-2 tiles in bf16.
  const TileOrder dw_order = config_.bf16() ? TileOrder::vnni2 : TileOrder::column_major;
  PassMatrix x = ActivationTiles{k_blocking(), n_blocking(), config_.plain_input}.matrix();
  x.transposed = true;
  return {.left = grad_output_tiles().matrix(),
          .right = x,
          .out = {m_blocking(), k_blocking(), true, false, dw_order},
          .dtype = config_.dtype};
}

Bf16Sum GemmUpd::bf16_sum() const {
  const std::int64_t N = config_.N, chunks = reduction_chunks();
  // Partial filters: f32 copies, each re-read by its calls, summed (P - 1 additions), rounded once.
  if (uses_partial_filters())
    return {.terms = N, .additions = N + chunks + config_.n_partial_filters, .roundings = 1};
  // Otherwise each chunk's call re-reads dW and rounds it to bf16 on store.
  return {.terms = N, .additions = N + chunks, .roundings = chunks, .chunk_terms = n_step_ * config_.bn};
}

std::string GemmUpd::measure_tag(int threads) const {
  const auto& c = config_;
  return c.measure_tag(c.nbf, threads) + "_private_act_trans" + std::to_string(c.private_trans ? 1 : 0) +
         "_npartialFilters" + std::to_string(c.n_partial_filters) + c.precision_tag();
}

std::uint64_t GemmUpd::run_memory_bytes(int threads) const {
  std::uint64_t bytes = input_t_.memory_bytes(threads);
  if (grad_out_v_) bytes = weft::add_bytes(bytes, grad_out_v_->memory_bytes(threads));
  if (uses_partial_filters())
    bytes = weft::add_bytes(bytes, weft::bytes_needed({config_.n_partial_filters, filter_size_},
                                                      jit::size_of(config_.sum_types().out)));
  return bytes;
}

}  // namespace weft::ops
