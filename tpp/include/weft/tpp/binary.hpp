// Binary TPPs: C(M x N, ld_out) = A op B, column-major (M contiguous), in the data types
// BinaryDesc::types names: f32 (the default), bf16 A and B and/or C with f32 arithmetic, or f64,
// every op in each (docs/tpp_eltwise.md, "Data types"); the typed call `add_bias(x, bias, y)` is
// FP32 only. Either input may be broadcast: a row (1 x N, element j at p[j], repeated down the
// rows), a column (M x 1, element i at p[i], repeated across the columns) or a scalar (p[0]).
//
//   using namespace weft::tpp;
//   Binary add_bias(BinaryDesc{.op = BinaryOp::add, .m = 64, .n = 32, .ld_in0 = 64, .ld_out = 64,
//                              .bcast1 = Broadcast::col});
//   add_bias(x, bias, y);                       // y(i, j) = x(i, j) + bias[i]
//
// The kernels come from a thread-safe cache keyed by the descriptor and the ISA (the functor's second
// argument, jit::selected_isa() by default); Isa::reference (WEFT_ISA=reference) runs
// binary_reference(). Descriptor -> validate -> plan_binary -> emit (private) -> binary_reference,
// as every TPP family. See docs/tpp_eltwise.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "weft/jit/cpu.hpp"
#include "weft/tpp/data_types.hpp"
#include "weft/tpp/tpp_kernel.hpp"

namespace weft::tpp {

enum class BinaryOp : std::uint8_t {
  add,
  sub,
  mul,
  div,  // IEEE division
  min,  // IEEE 754-2019 minimum: NaN if either operand is NaN; min(-0, +0) = -0 (min_max_relu.hpp)
  max,  // IEEE 754-2019 maximum: NaN if either operand is NaN; max(-0, +0) = +0
};

enum class Broadcast : std::uint8_t { none, row, col, scalar };

struct BinaryDesc {
  BinaryOp op = BinaryOp::add;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t ld_in0 = 0;  // >= m unless bcast0 is set (then unused)
  std::int64_t ld_in1 = 0;  // >= m unless bcast1 is set
  std::int64_t ld_out = 0;  // >= m
  Broadcast bcast0 = Broadcast::none;
  Broadcast bcast1 = Broadcast::none;
  // in: A and B; out: C; compute: the arithmetic: in and out each f32 or bf16 with compute f32, or
  // all f64 (bf16 is widened to f32, the result rounded once to bf16).
  DataTypes types = {};

  bool operator==(const BinaryDesc&) const = default;
};

struct BinaryDescHash {
  std::size_t operator()(const BinaryDesc& d) const noexcept;
};

// The one argument of a generated binary kernel, `void kernel(const BinaryArgs*)`, whatever the
// data types: the descriptor's `types` say what the pointers point to (in0, in1: types.in; out:
// types.out).
struct BinaryArgs {
  const void* in0 = nullptr;  // A
  const void* in1 = nullptr;  // B
  void* out = nullptr;        // C (may alias A or B when that input is not broadcast and has ld_out)
};

using BinaryKernelFn = void (*)(const BinaryArgs*);

struct BinaryPlan {
  weft::jit::Isa isa = weft::jit::Isa::reference;  // as every TPP plan; plan_binary sets it
  // Elements per vector register of the compute type: floats for f32 and bf16 data (bf16 widened to
  // f32 lanes), doubles for f64. rows, tail and full_vectors count these.
  int lanes = 8;
  bool flat = false;          // every full input and C contiguous: one column of m * n elements
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t full_vectors = 0;
  int tail = 0;
  int unroll = 4;
  bool nontemporal = false;   // flat and C at least kBinaryNontemporalBytes (bytes of types.out)
};

constexpr std::int64_t kBinaryNontemporalBytes = std::int64_t{8} << 20;

// Throws weft::Error naming the problem (sizes, leading dimensions, an op or broadcast outside
// its enum, data types without kernels: see why_unsupported_elementwise).
void validate(const BinaryDesc& desc);
// Throws weft::Error naming the BinaryArgs pointer that is null (all three are read or written,
// a broadcast input too). Binary::operator() and binary_reference() check every call.
void check_args(const BinaryDesc& desc, const BinaryArgs& args);
// Pure; validates first (throws weft::Error for an invalid descriptor).
BinaryPlan plan_binary(const BinaryDesc& desc, weft::jit::Isa isa);

// The reference in every type: bf16 read as floats (exact), computed as in f32, bf16 C written with
// jit::to_bfloat16 (min / max with bf16 in and out keep the selected input's bits, or give the
// all-ones NaN); f64 in double.
void binary_reference(const BinaryDesc& desc, const BinaryArgs& args);
float binary_reference_value(BinaryOp op, float a, float b);

std::string to_string(BinaryOp op);
std::string to_string(Broadcast b);
std::string to_string(const BinaryDesc& desc);

using BinaryFamily = TppFamily<BinaryDesc, BinaryDescHash, BinaryArgs, BinaryPlan>;
// Generated code with its owner (see GeneratedKernel): what binary_kernel() returns.
using BinaryCode = GeneratedKernel<BinaryFamily>;
extern template class TppKernel<BinaryFamily>;
extern template class GeneratedKernel<BinaryFamily>;

// A binary kernel for one descriptor and ISA: the members of TppKernel (construction from
// (desc, isa), the checked call on BinaryArgs, desc(), plan(), isa(), kernel(), code()), and a
// typed call.
class Binary : public TppKernel<BinaryFamily> {
 public:
  using TppKernel::TppKernel;
  using TppKernel::operator();

  // FP32 only (types all f32; other types: the BinaryArgs call). Throws weft::Error for another
  // descriptor's types and for arguments check_args() rejects.
  void operator()(const float* in0, const float* in1, float* out) const;
};

// The generated code of `desc` for `isa`, from the same cache as Binary (any ISA on any host; run
// only where the CPU has it). Callable as a BinaryKernelFn (unchecked); the code stays valid as long
// as the returned object lives. Throws weft::Error when unsupported and for Isa::reference.
BinaryCode binary_kernel(const BinaryDesc& desc, weft::jit::Isa isa);
// Bytes of machine code generated for `desc` (for tests and emission checks on foreign ISAs).
std::size_t binary_code_size(const BinaryDesc& desc, weft::jit::Isa isa);

}  // namespace weft::tpp
