// Dimension splitting: a seq/shared dimension too large for one primitive call becomes an outer
// loop and an inner dimension of a size the primitives like (about 64: a BRGEMM m of 64 is 8 AVX2
// vectors, an n of 64 keeps a C block of 16 KiB; the outer part of a k dim becomes the batch-reduce
// dim). Only exact divisors are used, so no remainder blocks and no tail kernels are needed.
#include <cstdlib>

#include "weft/tensor/passes.hpp"

namespace weft::tensor {

namespace {

// The divisor of `size` in [min_inner, max_inner] closest to target, or 0. For m (the rows of the
// GEMM primitive, 8 to an AVX2 vector) the lanes a block leaves empty in its last vector count
// against it: 125 rows (3 of 128 lanes idle) beat 25 (7 of 32 idle) although 25 is nearer 64.
std::int64_t pick_inner(std::int64_t size, dim_t type, const SplitOptions& o, std::int64_t max_inner) {
  constexpr std::int64_t kLanes = 8;
  std::int64_t best = 0;
  double best_score = 0.0;
  for (std::int64_t b = o.min_inner; b <= max_inner && b < size; ++b) {
    if (size % b != 0) continue;
    double score = static_cast<double>(std::llabs(b - o.target)) / static_cast<double>(o.target);
    if (type == dim_t::m) {
      const std::int64_t lanes = (b + kLanes - 1) / kLanes * kLanes;
      score += 4.0 * static_cast<double>(lanes - b) / static_cast<double>(lanes);
    }
    if (best == 0 || score < best_score) {
      best = b;
      best_score = score;
    }
  }
  return best;
}

}  // namespace

int split_dimensions(Contraction& op, const SplitOptions& options) {
  int splits = 0;
  for (std::size_t i = 0; i < op.dims.size(); ++i) {
    const Dim d = op.dims[i];
    if (d.exec == exec_t::prim || d.last_block != 0) continue;  // the user's blocks stay
    const std::int64_t max_inner = d.type == dim_t::c ? options.max_size_c : options.max_size;
    if (d.size <= max_inner) continue;
    const std::int64_t inner = pick_inner(d.size, d.type, options, max_inner);
    if (inner == 0) continue;
    Dim outer = d;
    outer.size = d.size / inner;
    outer.stride_in0 = d.stride_in0 * inner;
    outer.stride_in1 = d.stride_in1 * inner;
    outer.stride_out = d.stride_out * inner;
    op.dims[i].size = inner;
    op.dims.insert(op.dims.begin() + static_cast<std::ptrdiff_t>(i), outer);
    ++i;  // skip the inner part just created
    ++splits;
  }
  return splits;
}

}  // namespace weft::tensor
