// Optimizer passes over a Contraction, one per source file, each usable alone. Every pass keeps the
// result of the operation identical (tests check it on randomized configurations); they change how
// the same iteration space is cut into loops and primitives.
//
//   Contraction op = ...;                       // dimensions all exec_t::seq
//   fuse_dimensions(op);                        // (64, 25) with compatible strides -> 1600
//   split_dimensions(op);                       // 1600 -> 25 x 64
//   identify_primitives(op);                    // pick the M, N, K (, batch-reduce K) prim dims
//   reorder_dimensions(op);                     // loop order for locality
//   parallelize(op, {.threads = 2});            // mark an outer run of loops shared
//   // or all of them, in that order:
//   optimize(op, {.threads = 2});
#pragma once

#include <cstdint>

#include "weft/tensor/contraction.hpp"

namespace weft::tensor {

// Merges an outer dimension with the next one in the order when both have the same type and
// execution type (seq or prim) and, in every tensor, stride(outer) == stride(inner) * size(inner);
// only pairs where one is smaller than `small_size` (so splitting afterwards has more choice).
struct FusionOptions {
  std::int64_t small_size = 64;
  std::int64_t max_fused_size = std::int64_t{1} << 24;
};
// Returns the number of fusions made.
int fuse_dimensions(Contraction& op, const FusionOptions& options = {});

// Splits every seq/shared dimension larger than `max_size` into (outer, inner) where inner is the
// divisor of the size closest to `target` within [min_inner, max_size] (for m, weighed against the
// vector lanes the block leaves idle: multiples of 8 first, 125 before 25). Sizes without such a
// divisor are left whole (no remainder blocks).
struct SplitOptions {
  std::int64_t target = 64;
  std::int64_t min_inner = 16;
  std::int64_t max_size = 128;       // m, n, k dimensions
  std::int64_t max_size_c = 256;     // c dimensions (unary and element-wise operations)
};
int split_dimensions(Contraction& op, const SplitOptions& options = {});

// Marks the primitive dimensions (exec_t::prim) of a configuration whose dimensions are seq/shared:
//   gemm/brgemm: M = an m dim unit-stride in in0 and out, K = a k dim unit-stride in in1, N = the n
//     dim with the smallest output stride, and for brgemm (chosen when `use_brgemm` and another k
//     dim exists) the innermost remaining k dim as the batch-reduce dim. main becomes gemm or brgemm.
//   unary/binary element-wise: the dim unit-stride in out and the one unit-stride in in0 (a
//     transpose when they differ), else the next dim by output stride.
// With `allow_generic_primitives`, GEMM dims that fit no TPP layout are picked by smallest stride.
// Throws ConfigError when no dimension fits. Prim dims already marked are cleared first.
// A batch-reduce dim whose A or B span (size * stride * 4 bytes) exceeds this is left a loop:
// sweeping megabytes of strided columns per register tile thrashes the TLB (1600^3: 0.6x slower).
inline constexpr std::int64_t kMaxBatchSpanBytes = std::int64_t{1} << 20;
// Bytes of in0 or in1 (the larger) a batch-reduce over `d` sweeps.
std::int64_t batch_span_bytes(const Dim& d);

struct PrimitiveOptions {
  bool use_brgemm = true;
  std::int64_t max_batch_span_bytes = kMaxBatchSpanBytes;
  bool allow_generic_primitives = false;
};
void identify_primitives(Contraction& op, const PrimitiveOptions& options = {});

// Turns a gemm whose innermost loop (the last seq/shared dim in the order) is a seq k dim of size
// > 1 and of batch span <= max_batch_span_bytes into a brgemm with that dim as the batch-reduce
// dim: one kernel call keeps the output block in registers across the reduction. Bit-identical
// results (same fused multiply-adds, same order). The lowering applies it whenever no loop_string
// override is given. Returns whether it folded.
bool fold_reduction_into_batch(Contraction& op, std::int64_t max_batch_span_bytes = kMaxBatchSpanBytes);

// Orders the seq/shared dimensions: c, then n and m by decreasing output stride (the output is
// walked in memory order, blocks of in1 stay hot across m), k loops innermost (the output block is
// reused across the reduction, and first/last touches are cheap); prim dims last.
void reorder_dimensions(Contraction& op);

// Marks as shared the outermost run of non-k loop dimensions whose combined trip count lets
// `threads` threads share it with an imbalance of at most `imbalance` (ceil(I/T) * T / I - 1), or
// the whole run of non-k loops when no prefix is balanced enough. Nothing for threads <= 1.
struct ParallelOptions {
  int threads = 1;
  double imbalance = 0.02;
};
void parallelize(Contraction& op, const ParallelOptions& options);

// All passes in order: fusion, splitting, primitive identification, reordering, parallelization.
// Dimensions given as prim keep the user's choice of primitives (identification is skipped).
struct OptimizeOptions {
  int threads = 0;  // 0: omp_get_max_threads()
  double imbalance = 0.02;
  bool use_brgemm = true;
  bool allow_generic_primitives = false;
  FusionOptions fusion{};
  SplitOptions split{};
};
void optimize(Contraction& op, const OptimizeOptions& options = {});

}  // namespace weft::tensor
