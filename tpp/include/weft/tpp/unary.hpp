// Unary TPPs: B(M x N, ld_out) = op(A(M x N, ld_in)), column-major (M contiguous), in the data
// types UnaryDesc::types names: f32 (the default), bf16 in and/or out with f32 arithmetic, or f64
// (a subset of the ops; validate() says which op has kernels in which types, and
// docs/tpp_eltwise.md, "Data types", lists them). The typed call `relu(a, b)` is FP32 only; other
// types go through UnaryArgs (untyped pointers).
//
//   using namespace weft::tpp;
//   Unary relu(UnaryDesc{.op = UnaryOp::relu, .m = 64, .n = 32, .ld_in = 64, .ld_out = 80});
//   relu(a, b);                                   // b = max(a, 0), NaN kept
//
//   Unary gelu(UnaryDesc{.op = UnaryOp::gelu, .m = 16, .n = 16, .ld_in = 16, .ld_out = 16});
//   gelu(UnaryArgs{.in = a, .out = b});           // the kernel's own entry: one argument struct
//
// The kernels come from a thread-safe cache keyed by the descriptor and the ISA (the functor's second
// argument, jit::selected_isa() by default). With Isa::reference (WEFT_ISA=reference, or a CPU
// without AVX2+FMA) the functor runs unary_reference() instead of generated code.
// Descriptor -> validate -> plan_unary -> emit (private) -> unary_reference, as every TPP family.
// Every op, its accuracy and its special values are described in docs/tpp_eltwise.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "weft/jit/cpu.hpp"
#include "weft/tpp/data_types.hpp"
#include "weft/tpp/tpp_kernel.hpp"

namespace weft::tpp {

enum class UnaryOp : std::uint8_t {
  zero,        // B = 0 (A is not read)
  copy,        // B = A
  relu,        // B = A > 0 || isnan(A) ? A : +0; with mask == ReluMask::bitmask also writes the mask
  relu_bwd,    // B = pass(x) ? A : +0, where A is the incoming gradient and x the forward input
               // (UnaryArgs::aux, ld_in) or, with mask == ReluMask::bitmask, the forward's bitmask
  square,      // A * A
  reciprocal,  // 1 / A (IEEE division, correctly rounded)
  sqrt,        // sqrt(A) (correctly rounded; NaN for A < 0)
  exp,         // e^A
  sigmoid,     // 1 / (1 + e^-A)
  tanh,        // tanh(A)
  gelu,        // A * Phi(A), Phi the standard normal CDF (the exact "erf" form)
  increment,   // A + alpha
  decrement,   // A - alpha
  scale,       // A * alpha
  transpose,   // B(N x M, ld_out) = A^T; ld_out >= N
  reduce_rows_sum,  // B[i] = sum over j of A(i, j): one value per row, M contiguous floats
  reduce_rows_max,  // B[i] = max over j (NaN if any is NaN; +0 above -0: min_max_relu.hpp)
  reduce_cols_sum,  // B[j] = sum over i of A(i, j): one value per column, N contiguous floats
  reduce_cols_max,  // B[j] = max over i (as reduce_rows_max)
  // VNNI-2 (the bf16 BRGEMM's A layout): column pairs of A (m x n, n even) interleaved element by
  // element, B[(j / 2) * 2 * ld_out + 2 * i + j % 2] = A[i + j * ld_in]; ld_out >= m counts rows, a
  // column pair takes 2 * ld_out elements. Out bf16, in bf16 or f32 (then rounded as it is packed).
  vnni2_pack,
  vnni2_unpack,  // the inverse: A in VNNI-2 (ld_in rows per pair) -> B column-major (ld_out); bf16
};

// The ReLU bitmask: one bit per element, column-major, column j starting at byte j * mask_ld(m)
// with mask_ld(m) = ceil(m / 8); bit (i % 8) of byte i / 8 is set when element i passes
// (A > 0 or NaN). Bits past row m in a column's last byte are written as 0.
enum class ReluMask : std::uint8_t { none, bitmask };

constexpr std::int64_t mask_ld(std::int64_t m) { return (m + 7) / 8; }

struct UnaryDesc {
  UnaryOp op = UnaryOp::copy;
  std::int64_t m = 0;
  std::int64_t n = 0;
  // Leading dimensions in elements: >= m for column-major A and B (>= n for B of a transpose; unused
  // for a reduction's B). 0 means "given at call time" in UnaryArgs::ld_in / ld_out.
  std::int64_t ld_in = 0;
  std::int64_t ld_out = 0;
  float alpha = 0.0f;  // the constant of increment, decrement, scale
  ReluMask mask = ReluMask::none;
  // B = op(A)^T (n x m, ld_out >= n) for an element-wise op: the transpose kernel with the op fused.
  bool transpose_out = false;
  // in: A (and relu_bwd's forward input); out: B; compute: the arithmetic. validate() says which
  // op has kernels in which types (f32; bf16 in and/or out with compute f32; all f64).
  DataTypes types = {};

  bool operator==(const UnaryDesc&) const = default;
};

struct UnaryDescHash {
  std::size_t operator()(const UnaryDesc& d) const noexcept;
};

// The one argument of a generated unary kernel, `void kernel(const UnaryArgs*)`, whatever the data
// types: the descriptor's `types` say what `in` (types.in) and `out` (types.out) point to.
struct UnaryArgs {
  const void* in = nullptr;    // A
  void* out = nullptr;         // B
  const void* aux = nullptr;   // relu_bwd: forward input x (types.in, ld_in) or its bitmask
  void* mask = nullptr;        // relu with ReluMask::bitmask: the mask written
  // Read only when the descriptor's ld_in is 0. 0 here too broadcasts A's first column: every
  // column of A (and of aux) reads it (the tensor layer's inputs of stride 0 along the columns).
  std::int64_t ld_in = 0;
  std::int64_t ld_out = 0;     // read only when the descriptor's ld_out is 0
};

using UnaryKernelFn = void (*)(const UnaryArgs*);

// How a kernel is laid out; a pure function of the descriptor and the ISA (see plan_unary).
struct UnaryPlan {
  weft::jit::Isa isa = weft::jit::Isa::reference;  // as every TPP plan; plan_unary sets it
  // Elements per vector register of the compute type: floats for f32 and bf16 data (bf16 is widened
  // to f32 lanes as it is loaded: 8 on AVX2, 16 on AVX-512), doubles for f64 (4, 8). rows, tail and
  // full_vectors count elements and vectors of these lanes.
  int lanes = 8;
  bool flat = false;          // A and B are contiguous: processed as one column of m * n elements
  std::int64_t rows = 0;      // elements per column as processed (m, or m * n when flat)
  std::int64_t cols = 0;      // columns as processed (n, or 1 when flat; n / 2 column pairs for vnni2)
  std::int64_t full_vectors = 0;  // whole vectors per column
  int tail = 0;               // elements after the whole vectors (0 .. lanes - 1)
  int unroll = 1;             // vectors per step of the column loop
  bool nontemporal = false;   // streaming stores: large flat outputs (in bytes of types.out) that will not be re-read soon
  int scratch = 0;            // scratch vector registers the op needs (activation_scratch)
  int block = 8;              // transpose: square block edge (4 in f64: a ymm register of doubles)
};

// Throws weft::Error naming the problem for descriptors no kernel implements (m or n < 1, leading
// dimensions too small, an op, mask kind or flag outside its enum, an op that takes no alpha or
// mask given one, an odd n for vnni2, data types without kernels, an op without a kernel in the
// descriptor's types: in f64 only zero, copy, relu, relu_bwd, square, reciprocal, sqrt, increment,
// decrement and scale, without bitmask or transpose_out; vnni2 only into bf16, ...).
void validate(const UnaryDesc& desc);

// Throws weft::Error naming the UnaryArgs field when a call with `args` cannot run `desc`: a pointer
// the op uses is null (in unless the op is zero, out always, aux for relu_bwd, mask for relu with a
// bitmask), or a leading dimension read at call time (the descriptor's is 0) is outside [m, 2^28]
// ([n, 2^28] for the B of a transpose). Unary::operator() and unary_reference() check every call.
void check_args(const UnaryDesc& desc, const UnaryArgs& args);

// Outputs at least this large (bytes) are written with non-temporal stores when the layout is flat.
constexpr std::int64_t kNontemporalBytes = std::int64_t{8} << 20;

// Pure; validates first (throws weft::Error for an invalid descriptor).
UnaryPlan plan_unary(const UnaryDesc& desc, weft::jit::Isa isa);

// Portable reference: the test oracle and the fallback. Transcendentals are evaluated in double
// and rounded once, so it is at least as accurate as the generated code. Every type: bf16 inputs
// are read as floats (exact), the op computed as in f32, bf16 outputs written with
// jit::to_bfloat16 (the f32 result rounded once); f64 is computed in double.
void unary_reference(const UnaryDesc& desc, const UnaryArgs& args);

// Scalar value of one element-wise op on a float (in double, rounded to float): the reference's
// kernel for f32 and bf16 data.
float unary_reference_value(UnaryOp op, float x, float alpha = 0.0f);

bool is_elementwise(UnaryOp op);
std::string to_string(UnaryOp op);
std::string to_string(const UnaryDesc& desc);

using UnaryFamily = TppFamily<UnaryDesc, UnaryDescHash, UnaryArgs, UnaryPlan>;
// Generated code with its owner (see GeneratedKernel): what unary_kernel() returns.
using UnaryCode = GeneratedKernel<UnaryFamily>;
extern template class TppKernel<UnaryFamily>;
extern template class GeneratedKernel<UnaryFamily>;

// A unary kernel for one descriptor and ISA: the members of TppKernel (construction from
// (desc, isa), the checked call on UnaryArgs -- leading dimensions from the descriptor, or from the
// args where the descriptor's are 0 --, desc(), plan(), isa(), kernel(), code()), and a typed call.
class Unary : public TppKernel<UnaryFamily> {
 public:
  using TppKernel::TppKernel;
  using TppKernel::operator();

  // FP32 only (types all f32; other types: the UnaryArgs call), for descriptors with both leading
  // dimensions set. Throws weft::Error for another descriptor's types and for arguments
  // check_args() rejects.
  void operator()(const float* in, float* out) const;
};

// The generated code of `desc` for `isa`, from the same cache as Unary: AVX-512 code can be generated
// on any host, but only run where the CPU has it. Callable as a UnaryKernelFn (unchecked); the code
// stays valid as long as the returned object lives. Throws weft::Error when unsupported and for
// Isa::reference.
UnaryCode unary_kernel(const UnaryDesc& desc, weft::jit::Isa isa);

// Bytes of machine code generated for `desc` (for tests and emission checks on foreign ISAs).
std::size_t unary_code_size(const UnaryDesc& desc, weft::jit::Isa isa);

}  // namespace weft::tpp
