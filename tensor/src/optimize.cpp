// The optimizer pipeline, in the order where each pass helps the next: fusion gives splitting
// more divisors, splitting gives identification blocks of a good size, reordering and
// parallelization then work on the loops that remain. Operand packing works on the fused logical
// dims and makes its own blocks, prims and order, so when it applies it replaces splitting,
// identification and reordering.
#include <omp.h>

#include <algorithm>

#include "weft/tensor/passes.hpp"

namespace weft::tensor {

void optimize(Contraction& op, const OptimizeOptions& options) {
  const bool user_prims = std::any_of(op.dims.begin(), op.dims.end(),
                                      [](const Dim& d) { return d.exec == exec_t::prim; });
  if (!user_prims) {
    fuse_dimensions(op, options.fusion);
    const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
    PackOptions packing = options.packing;
    packing.threads = threads;
    packing.imbalance = options.imbalance;
    if (options.pack && pack_operands(op, packing)) {
      parallelize(op, {.threads = threads, .imbalance = options.imbalance});
      return;
    }
    split_dimensions(op, options.split);
    identify_primitives(op, {.use_brgemm = options.use_brgemm,
                             .allow_generic_primitives = options.allow_generic_primitives});
  }
  reorder_dimensions(op);
  const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  parallelize(op, {.threads = threads, .imbalance = options.imbalance});
}

}  // namespace weft::tensor
