// The BRGEMM kernels a blocked pass needs for one output tiling: for every combination of (remainder block along M?,
// remainder block along N?, first chunk of the reduction?, last chunk?). The first chunk is the
// output block's first touch (beta = 0, unless the table accumulates into existing data); the
// last chunk carries the fused epilogue (its last touch).
//
//   BrgemmTable kernels(m_blocking, n_blocking, bk, {.lda = bm, .ldb = bk, .ldc = bm},
//                       {.bias = BrgemmBias::per_row, .relu = true});
//   kernels.get(im == Mb - 1, in == Nb - 1, ik == 0, ik + step >= Kb)(args);
//
// `types` are every kernel's (tpp/brgemm.hpp): all f32 by default; bf16 in with f32 or bf16 out.
#pragma once

#include <cstdint>
#include <vector>

#include <weft/ops/blocked_layout.hpp>
#include <weft/ops/pass_code.hpp>
#include <weft/tpp/brgemm.hpp>

namespace weft::ops {

struct LeadingDims {
  std::int64_t lda = 0, ldb = 0, ldc = 0;
};

struct Epilogue {
  tpp::BrgemmBias bias = tpp::BrgemmBias::none;
  bool relu = false;
  bool accumulate = false;  // true: never beta = 0 (C holds partial sums to add to)
  // The beta = 1 kernels' hint (tpp::BrgemmPrefetch): next_c when consecutive calls write
  // consecutive output blocks (output_prefetch in block_loops.hpp).
  tpp::BrgemmPrefetch prefetch_c = tpp::BrgemmPrefetch::none;
};

class BrgemmTable {
 public:
  // With PassCode::check the kernels are planned only (pass_code.hpp), and get() must not be called.
  BrgemmTable(const Blocking& m, const Blocking& n, std::int64_t k, const LeadingDims& ld,
              const Epilogue& epilogue, const tpp::DataTypes& types = {}, PassCode code = PassCode::build);

  // m_tail / n_tail: the block is the last one along M / N (shorter when the size has a remainder).
  const tpp::Brgemm& get(bool m_tail, bool n_tail, bool first, bool last) const {
    return kernels_[static_cast<std::size_t>((m_tail && m_has_tail_ ? 8 : 0) |
                                             (n_tail && n_has_tail_ ? 4 : 0) | (first ? 2 : 0) |
                                             (last ? 1 : 0))];
  }

 private:
  bool m_has_tail_, n_has_tail_;
  std::vector<tpp::Brgemm> kernels_;  // 16, many of them the same cached kernel
};

}  // namespace weft::ops
