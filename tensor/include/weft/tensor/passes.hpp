// Optimizer passes over a Contraction, one per source file, each usable alone. Every pass keeps the
// result of the operation identical (tests check it on randomized configurations); they change how
// the same iteration space is cut into loops and primitives.
//
//   Contraction op = ...;                       // dimensions all exec_t::seq
//   fuse_dimensions(op);                        // (64, 25) with compatible strides -> 1600
//   split_dimensions(op);                       // 1600 -> 25 x 64
//   identify_primitives(op);                    // pick the M, N, K (, batch-reduce K) prim dims
//   // or, for a large GEMM with strided A blocks: pack_operands(op) picks them and packs A
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
// A batch-reduce dim whose A or B span (size * stride * element bytes) exceeds this is left a loop:
// sweeping megabytes of strided columns per register tile thrashes the TLB (1600^3: 0.6x slower).
inline constexpr std::int64_t kMaxBatchSpanBytes = std::int64_t{1} << 20;
// Bytes of in0 or in1 (the larger) a batch-reduce over `d` sweeps, with elements of `dtype`.
std::int64_t batch_span_bytes(const Dim& d, dtype_t dtype = dtype_t::fp32);

struct PrimitiveOptions {
  bool use_brgemm = true;
  std::int64_t max_batch_span_bytes = kMaxBatchSpanBytes;
  bool allow_generic_primitives = false;
};
void identify_primitives(Contraction& op, const PrimitiveOptions& options = {});

// Turns a gemm whose innermost loop (the last seq/shared dim in the order) is a seq k dim of size
// > 1 and of batch span <= max_batch_span_bytes into a brgemm with that dim as the batch-reduce
// dim: one kernel call keeps the output block in registers across the reduction. Bit-identical
// results (same fused multiply-adds, same order) when the BRGEMM plan sums in reference order
// (tpp::BrgemmPlan::reference_order(); narrow m = 1 / n = 1 tiles with partial sums differ
// within rounding). The lowering applies it whenever no loop_string
// override is given. Returns whether it folded.
bool fold_reduction_into_batch(Contraction& op, std::int64_t max_batch_span_bytes = kMaxBatchSpanBytes);

// Operand packing, for large GEMMs whose A (in0) blocks would be read in place with a leading
// dimension other than their rows (e.g. 1600^3 column-major: 6400 bytes between the 128-byte
// columns of a 32-row block). Re-blocks the GEMM from its logical dims (any prim/shared marks are
// chosen again): M blocks of one fp32 BRGEMM register panel's bytes of B reuse (`panel_rows`, 0 =
// fp32: one register panel, 32 rows on AVX2, 64 on AVX-512; fp64: twice that, four register panels
// of doubles, so that each byte of B streamed serves as many flops); the whole m dim when it fits, else a
// divisor in whole vectors filling at least half a panel, preferring one that gives each of
// `threads` threads as many blocks as the others within `imbalance` (the m blocks are what
// parallelize() shares), else full panels and a remainder), the whole reduction per call unless
// the A panel one register panel of the kernel streams (its rows x K elements; a block of several
// register panels is packed and multiplied panel by panel) would exceed `max_panel_bytes` (then K
// chunks), N blocks of a divisor near
// `block_cols` (else `block_cols` and a remainder); remainders become Dim::last_block (tail
// kernels); loops: c, m (blocks last), k, n; and sets Contraction::pack_in0, so each thread copies
// an A panel once into a contiguous buffer and keeps it in L2 for the whole n sweep. B and C are
// read in place (measured faster than packing them; operand_packing.cpp has the figures). Returns
// false and leaves `op` alone when the operation is not such a GEMM (needs an m dim unit-stride in
// in0 and out and a k dim unit-stride in in1; no remainders yet), the A block is contiguous
// already, the n extent is below `min_columns` or A is smaller than `min_a_bytes`.
// Run parallelize() afterwards. Results change only by rounding (the reduction order follows the
// new blocking).
// The thresholds: column-major GEMMs of 128^3 to 2048^3 ran 1.3x to 3.2x faster packed (1 thread;
// 0.88-1.04x OpenBLAS against 0.31-0.79x unpacked), 48^3 and 64^3 about 5 % slower.
struct PackOptions {
  std::int64_t panel_rows = 0;
  int threads = 1;  // the team the m blocks are shared among (optimize() passes its own)
  double imbalance = 0.02;
  std::int64_t block_cols = 50;
  std::int64_t max_panel_bytes = std::int64_t{256} << 10;
  std::int64_t min_columns = 128;
  std::int64_t min_a_bytes = std::int64_t{64} << 10;
};
bool pack_operands(Contraction& op, const PackOptions& options = {});

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

// All passes in order: fusion, then operand packing (when it applies it replaces splitting,
// identification and reordering), else splitting, primitive identification, reordering; then
// parallelization. Dimensions given as prim keep the user's choice of primitives (identification
// and packing are skipped).
struct OptimizeOptions {
  int threads = 0;  // 0: omp_get_max_threads()
  double imbalance = 0.02;
  bool use_brgemm = true;
  bool allow_generic_primitives = false;
  FusionOptions fusion{};
  SplitOptions split{};
  bool pack = true;
  PackOptions packing{};
};
void optimize(Contraction& op, const OptimizeOptions& options = {});

}  // namespace weft::tensor
