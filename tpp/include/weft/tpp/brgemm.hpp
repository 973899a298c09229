// Batch-reduce GEMM (column-major, like libxsmm), in fp32, bf16 (fp32 accumulation) or fp64:
//
//   C(m x n, ldc) = epilogue( beta * C + sum_{i < count} A_i(m x k, lda) * B_i(k x n, ldb) )
//
// B_i(kk, j) is b_i[kk + j * ldb]; with BrgemmDesc::b_transposed it is b_i[kk * ldb + j] (B_i given as
// its transpose, n x k column-major, like libxsmm's 'T' for B).
//
// Data types (BrgemmDesc::types, see why_unsupported_brgemm): f32 everywhere (the default); f64
// everywhere; or A and B in bf16 with fp32 accumulators and C (and the bias) in f32 or bf16, rounded
// to nearest even on store. In bf16, A_i is in VNNI-2: each pair of k steps (kk, kk + 1), kk even,
// is stored row by row with the two values of a row adjacent,
//
//   A_i(row, kk) = a_i[(kk / 2) * 2 * lda + 2 * row + kk % 2]      (k even; lda >= m rows)
//
// which is what vdpbf16ps multiplies lane by lane with a pair of B(kk, j), B(kk + 1, j) (adjacent in
// B's column). libxsmm and PARLOOPER call the same layout "VNNI" for the weights of a row-major
// GEMM: their B is our A. UnaryOp::vnni2_pack makes it from a column-major A. Each pair is summed
// as acc += A(row, kk + 1) * B(kk + 1, j), then acc += A(row, kk) * B(kk, j), each rounded once in
// fp32 (the products of two bf16 are exact): what vdpbf16ps does, except that vdpbf16ps (Isa::
// avx512_bf16) treats denormal inputs and results as zero where the emulated paths (avx2, avx512:
// bf16 widened to fp32, fp32 FMA) keep them.
//
// beta in {0, 1}, the shape, the leading dimensions, the batch kind and the epilogue are
// compile-time properties of a kernel (fields of BrgemmDesc); the pointers, the batch count and the
// batch strides / offsets / addresses are given at call time in one BrgemmArgs struct. Leading
// dimensions, strides and offsets count elements of the operand's type.
//
//   using namespace weft::tpp;
//   BrgemmDesc d{.m = 32, .n = 32, .k = 32, .lda = 32, .ldb = 32, .ldc = 32, .beta = 0,
//                .activation = BrgemmActivation::relu};
//   Brgemm gemm(d);                                   // generated once, cached by descriptor
//   gemm(a, b, c, /*count=*/8, /*stride_a=*/32 * 32, /*stride_b=*/32 * 32);
//   // or, for offsets / addresses / bias:
//   BrgemmArgs args{.a = a, .b = b, .c = c, .count = 8, .stride_a = 1024, .stride_b = 1024};
//   gemm(args);
//
// Descriptor -> validate -> plan_brgemm (pure blocking) -> emit (private: Xbyak, AVX2 or AVX-512)
// -> brgemm_reference (portable C++, the oracle and the WEFT_ISA=reference fallback).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "weft/jit/cpu.hpp"
#include "weft/tpp/data_types.hpp"
#include "weft/tpp/tpp_kernel.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::tpp {

// How the A_i and B_i of the batch are found (from BrgemmArgs):
//   strided:   A_i = a + i * stride_a,        B_i = b + i * stride_b        (elements)
//   offsets:   A_i = a + offsets_a[i],        B_i = b + offsets_b[i]        (elements)
//   addresses: A_i = addresses_a[i],          B_i = addresses_b[i]
enum class BrgemmBatch : std::uint8_t { strided, offsets, addresses };

// Bias added to the accumulators before the activation (in C's type, types.out):
//   per_row: C(i, j) += bias[i]   (a vector of m elements, the same for every column)
//   per_col: C(i, j) += bias[j]   (a vector of n elements, the same for every row)
enum class BrgemmBias : std::uint8_t { none, per_row, per_col };

// Activation applied last, before the store, with the unary TPPs' instruction sequences (so a fused
// epilogue and a separate unary kernel give the same bits):
//   relu:  x > 0 || isnan(x) ? x : +0  (as UnaryOp::relu: NaN stays NaN, -0 becomes +0)
//   unary: any element-wise UnaryOp in BrgemmDesc::unary (exp, sigmoid, tanh, gelu, scale, ...),
//          with BrgemmDesc::unary_alpha as its constant; accuracy as documented for the unary TPPs.
//          Not in f64 (relu is).
// In bf16 the epilogue runs on the fp32 accumulators, before C is rounded.
enum class BrgemmActivation : std::uint8_t { none, relu, unary };

// Software prefetch, a hint for callers that know their access pattern (like libxsmm's prefetch
// argument to dispatch):
//   next_c: (beta = 1) each register tile, once its C is loaded, prefetches into L1 the C of the
//           tile that follows it: the next column block, and after the last one the same rows of
//           the columns right past this C, where the next call's C lies when the caller walks the
//           column blocks of a larger matrix in order (ldc apart) or contiguous blocks one after
//           another. For loops whose C streams from L2/L3 (a contraction's nest); it costs about
//           1 % when C stays in L1 across calls. Prefetches never fault, so addresses past the
//           matrix are harmless.
enum class BrgemmPrefetch : std::uint8_t { none, next_c };

struct BrgemmDesc {
  std::int32_t m = 0, n = 0, k = 0;
  // In elements; lda >= m (bf16: rows of a VNNI-2 pair block), ldb >= k (n if b_transposed), ldc >= m.
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::int32_t beta = 1;                   // 0: C is written, never read; 1: C is accumulated into
  BrgemmBatch batch = BrgemmBatch::strided;
  BrgemmBias bias = BrgemmBias::none;
  BrgemmActivation activation = BrgemmActivation::none;
  UnaryOp unary = UnaryOp::copy;  // activation == unary: an element-wise op (is_elementwise)
  float unary_alpha = 0.0f;       // its constant (increment, decrement, scale)
  BrgemmPrefetch prefetch = BrgemmPrefetch::none;
  // B_i is stored transposed: B_i(kk, j) = b_i[kk * ldb + j], ldb >= n (e.g. a convolution's
  // weight gradient, where B_i(pixel, channel) has the channels contiguous). The kernels broadcast
  // B's elements either way, at other addresses; only the m = 1 dot tiles (which load columns of B
  // as vectors along k) are not planned for it: m = 1 then gets row-panel tiles.
  bool b_transposed = false;
  // in: A and B; out: C (and the bias); compute: the accumulators (see the top of this header).
  DataTypes types = {};

  bool operator==(const BrgemmDesc&) const = default;
};

struct BrgemmDescHash {
  std::size_t operator()(const BrgemmDesc& d) const noexcept;
};

// "brgemm_m32_n32_k32_lda32_ldb32_ldc32_beta0_strided_relu" ("_b_transposed" appended when B is
// transposed, then name_suffix(types) when the types are not all f32) -- also the name the
// generated code gets in the perf map and in the log.
std::string to_string(const BrgemmDesc& d);

// Throws weft::Error naming the offending field when the descriptor cannot be generated (also for
// data types without kernels, odd k in bf16, b_transposed in bf16, a unary epilogue in f64).
void validate(const BrgemmDesc& d);

// The single argument of every generated kernel, whatever the data types: the descriptor's `types`
// say what the pointers point to (in: A and B, out: C and bias). New fields go at the end.
struct BrgemmArgs {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  std::int64_t count = 1;  // batch count; 0 means an empty sum (beta = 0 then writes epilogue(0))
  std::int64_t stride_a = 0, stride_b = 0;                      // strided, in elements
  const std::int64_t* offsets_a = nullptr;                      // offsets, in elements
  const std::int64_t* offsets_b = nullptr;
  const void* const* addresses_a = nullptr;                     // addresses
  const void* const* addresses_b = nullptr;
  const void* bias = nullptr;                                   // bias != none
};

using BrgemmKernelFn = void (*)(const BrgemmArgs*);

// Throws weft::Error naming the BrgemmArgs field when a call with `args` cannot run `d`: c null,
// count negative, or (count > 0) a pointer the batch kind reads null (a and b for strided, also
// offsets_a/b for offsets, addresses_a/b for addresses), or bias null when the descriptor adds one.
// Brgemm::operator() and brgemm_reference() check every call.
void check_args(const BrgemmDesc& d, const BrgemmArgs& args);

// ---- plan: register blocking, a pure function of (descriptor, ISA) ---------------------------------

// A run of `count` equal column blocks of `cols` columns each.
struct BrgemmColumnBlock {
  int cols = 0;
  int count = 0;
  bool operator==(const BrgemmColumnBlock&) const = default;
};

// A run of `count` row panels of `vectors` vector registers each. Only the last panel of a plan may
// end in a partial vector (`tail` rows, 0 = none); such a panel has count 1. Every panel sweeps all
// n columns in the given column blocks, with a register tile of (vectors x cols) accumulators.
//
// A `dot` panel (m = 1, AVX2, f32, B not transposed) is one row of C: vectors run along k instead, over
// A's row and B's contiguous columns, one accumulator per column of the tile (times k_split), summed
// horizontally after the batch. Its `vectors` is 1 (the row), `tail` 0.
struct BrgemmPanel {
  int vectors = 0;
  int tail = 0;
  int count = 0;
  // false: the A vectors of one k step live in registers and B is broadcast one column at a time;
  // true: the B broadcasts of one k step live in registers and A is loaded one vector at a time
  // (the only order that fits a 4 x 3 tile in 16 ymm registers; with one column A is the FMA's
  // memory operand).
  bool b_in_registers = false;
  bool dot = false;
  std::vector<BrgemmColumnBlock> columns;
  int rows(int lanes) const {
    if (dot) return vectors;
    return tail == 0 ? vectors * lanes : (vectors - 1) * lanes + tail;
  }
  bool operator==(const BrgemmPanel&) const = default;
};

// How one k step multiplies and adds (a pure function of the types and the ISA):
//   fma:        f32 or f64 FMAs, one k step per step;
//   bf16_dot:   vdpbf16ps (Isa::avx512_bf16), a pair of k per step;
//   bf16_widen: bf16 pairs widened to fp32 (a shift and a mask), two fp32 FMAs per step, which keep
//               two registers per A vector or B broadcast.
// How a k step multiplies: fma (f32, f64); bf16_dot (vdpbf16ps on a pair of k); bf16_widen (both
// operands' pairs widened into fp32 in registers, two FMAs); bf16_staged_b (AVX2: each tile's B
// columns widened into a stack buffer once per batch entry, A's pairs in registers);
// bf16_staged_ab (AVX2: both operands widened into stack buffers, A's rows of a row panel once per
// batch entry for all the panel's column blocks (BrgemmPlan::staged_a_entries), each tile's B columns
// once per entry, so that the tiles' loop is the fp32 kernel's: the fp32 register tiles, vmovups of
// the staged A, vbroadcastss of the staged B, two FMAs per pair step, the odd k first).
enum class BrgemmMath : std::uint8_t { fma, bf16_dot, bf16_widen, bf16_staged_b, bf16_staged_ab };

struct BrgemmPlan {
  jit::Isa isa = jit::Isa::reference;
  BrgemmMath math = BrgemmMath::fma;
  int lanes = 0;             // accumulator lanes per vector register (f32: 8 / 16, f64: 4 / 8)
  int vector_registers = 0;  // architectural vector registers available
  // Steps per loop iteration (== steps: the loop is fully unrolled). A step is one k, or a pair of
  // k in bf16 (k / 2 steps).
  int k_unroll = 1;
  // Independent partial sums per accumulator: step p of every batch entry goes to partial
  // p % k_split, the partials are added (pairwise) after the batch. 1 keeps the reference order.
  int k_split = 1;
  int epilogue_scratch = 0;  // vector registers the activation needs besides the accumulators
  // BrgemmDesc::prefetch == next_c, for the tiles that support it (not dot panels).
  bool prefetch_next_c = false;
  // bf16_staged_b with several row panels of the same column blocks: > 0 runs the column blocks
  // outside the panels, and the first panel's tiles keep the widened B columns of up to this many
  // batch entries side by side, which the other panels read instead of widening them again. A
  // call with more entries widens them in every tile (0: always).
  int shared_staged_entries = 0;
  // bf16_staged_ab: the batch entries whose widened A rows (of one row panel) the stack slots hold
  // (brgemm_staged_a_entry_bytes each, within 64 KiB). A call with more entries runs the kernel's
  // second body instead, generated from plan_brgemm's plan with BrgemmPlanOptions::staged_ab = -1
  // (bf16_staged_b or bf16_widen).
  int staged_a_entries = 0;
  std::vector<BrgemmPanel> panels;
  // Whether every element is summed in brgemm_reference's order (C, then batch entry by batch
  // entry, k ascending, one FMA per term), so that results agree bit for bit. k_split > 1 and dot
  // panels sum in another order (documented in docs/tpp_brgemm.md).
  bool reference_order() const;
  bool operator==(const BrgemmPlan&) const = default;
};

// Tuning knobs (benchmarks and tests enumerate them); zero means "let the plan choose".
struct BrgemmPlanOptions {
  int panel_vectors = 0;  // vectors per full row panel
  int max_cols = 0;       // upper bound on the columns of a register tile
  int k_unroll = 0;  // steps (bf16: pairs of k)
  int k_split = 0;
  // dot panels for m = 1: 1 where possible (AVX2, f32, k >= lanes, B not transposed), -1 never, 0 plan's choice
  int dot = 0;
  // An f32 or f64 kernel whose m fits one ymm vector (8 floats, 4 doubles) on AVX-512 is planned
  // and emitted as AVX2 code (ymm, dot tiles for f32 m = 1; see plan_brgemm): 0 plan's choice, -1
  // never (zmm whatever m).
  int narrow_ymm = 0;
  // bf16 on AVX2: bf16_staged_ab where it fits (0), or never (-1: bf16_staged_b / bf16_widen).
  int staged_ab = 0;
  bool operator==(const BrgemmPlanOptions&) const = default;
};

// Pure: no allocation of code, no CPU query. Validates first (throws weft::Error for an invalid
// descriptor). For Isa::reference returns an empty plan.
BrgemmPlan plan_brgemm(const BrgemmDesc& d, jit::Isa isa, const BrgemmPlanOptions& options = {});

// Vector registers a tile of the plan needs (accumulators + operands + AVX2 tail scratch), for tests.
int brgemm_tile_registers(const BrgemmPlan& plan, const BrgemmPanel& panel, int cols);

// bf16_staged_b, bf16_staged_ab: stack bytes of one batch entry's widened B columns for the plan's
// widest tile (staged_b: k floats per column, the whole rounded up to 64; staged_ab: the even and
// the odd k of a column apart, each rounded up to 8 floats).
int brgemm_staged_entry_bytes(const BrgemmPlan& plan, int k);

// bf16_staged_ab: stack bytes of one batch entry's widened A rows for the plan's tallest row panel
// (k floats per row, rows rounded up to whole vectors).
int brgemm_staged_a_entry_bytes(const BrgemmPlan& plan, int k);

// Vector registers the epilogue (bias, activation) needs besides the accumulators.
int brgemm_epilogue_scratch(const BrgemmDesc& d);

// "avx2 k_unroll=16 | 2x[2v 6c x5 + 5c x2]" ("avx512 bf16-widen k_unroll=2 | ..." for bf16) -- for
// logs, docs and tests.
std::string to_string(const BrgemmPlan& plan);

// ---- reference: portable C++, same summation order as the generated code -------------------------

void brgemm_reference(const BrgemmDesc& d, const BrgemmArgs& args);

// ---- the functor ---------------------------------------------------------------------------------

using BrgemmFamily = TppFamily<BrgemmDesc, BrgemmDescHash, BrgemmArgs, BrgemmPlan>;
// Generated code with its owner (see GeneratedKernel): what brgemm_kernel() returns.
using BrgemmCode = GeneratedKernel<BrgemmFamily>;
extern template class TppKernel<BrgemmFamily>;
extern template class GeneratedKernel<BrgemmFamily>;

// The members of TppKernel (construction from (desc, isa), the checked call, desc(), plan(), isa(),
// kernel(), code()), and a typed call for the common case.
class Brgemm : public TppKernel<BrgemmFamily> {
 public:
  using TppKernel::TppKernel;
  using TppKernel::operator();

  // A strided FP32 kernel without bias; throws weft::Error for other descriptors (other data types
  // included: call them with BrgemmArgs) and for arguments check_args() rejects.
  void operator()(const float* a, const float* b, float* c, std::int64_t count = 1, std::int64_t stride_a = 0,
                  std::int64_t stride_b = 0) const;
};

// The generated code of `d` for `isa`, from the same cache as Brgemm: code for any ISA of the target
// architecture can be generated on any host of it, but only run where the CPU has it. Callable as a
// BrgemmKernelFn (unchecked); the code stays valid as long as the returned object lives. Throws
// weft::Error for an invalid descriptor and for Isa::reference.
BrgemmCode brgemm_kernel(const BrgemmDesc& d, jit::Isa isa);

// Number of kernels in the process-wide cache (for tests).
std::size_t brgemm_cache_size();

}  // namespace weft::tpp
