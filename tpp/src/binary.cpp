// Binary TPPs: validation, plan, reference, and the binary family of the TPP skeleton
// (kernel_family.hpp).
#include <bit>
#include <cmath>
#include <limits>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "emitters.hpp"
#include "kernel_family.hpp"
#include "op_properties.hpp"
#include "weft/jit/bfloat16.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/error.hpp"
#include "weft/jit/isa_traits.hpp"
#include "weft/jit/kernel_cache.hpp"
#include "weft/tpp/binary.hpp"
#include "weft/tpp/min_max_relu.hpp"

namespace weft::tpp {
namespace {

[[noreturn, gnu::cold, gnu::noinline]] void fail(const BinaryDesc& d, const std::string& what) {
  throw weft::Error("binary TPP " + to_string(d) + ": " + what);
}

using jit::DataType;

// Element (i, j) of an input of `type` under its broadcast: as a float for f32 and bf16 (exact), as
// a double for f64 (V).
template <class V>
V element(const void* input, DataType type, Broadcast b, std::int64_t ld, std::int64_t i, std::int64_t j) {
  std::int64_t at = 0;
  switch (b) {
    case Broadcast::none: at = i + j * ld; break;
    case Broadcast::row: at = j; break;
    case Broadcast::col: at = i; break;
    case Broadcast::scalar: at = 0; break;
  }
  if constexpr (std::is_same_v<V, double>) {
    return static_cast<const double*>(input)[at];
  } else {
    if (type == DataType::bf16) return jit::to_float(static_cast<const jit::bfloat16*>(input)[at]);
    return static_cast<const float*>(input)[at];
  }
}

// One element of the op in float or double; min / max by the rule of weft/tpp/min_max_relu.hpp.
template <class T>
T binary_value(BinaryOp op, T a, T b) {
  switch (op) {
    case BinaryOp::add: return a + b;
    case BinaryOp::sub: return a - b;
    case BinaryOp::mul: return a * b;
    case BinaryOp::div: return a / b;
    case BinaryOp::min: return minimum(a, b);
    case BinaryOp::max: return maximum(a, b);
  }
  return std::numeric_limits<T>::quiet_NaN();
}

template <class V>
void reference(const BinaryDesc& d, const BinaryArgs& args) {
  const DataType in = d.types.in, out = d.types.out;
  // min and max select one of their inputs: with bf16 in and out its bits are kept (as the kernel
  // narrows instead of rounding: keeps_bf16_bits in op_properties.hpp).
  const bool keep_bits = detail::keeps_bf16_bits(d);
  for (std::int64_t j = 0; j < d.n; ++j)
    for (std::int64_t i = 0; i < d.m; ++i) {
      const V a = element<V>(args.in0, in, d.bcast0, d.ld_in0, i, j);
      const V b = element<V>(args.in1, in, d.bcast1, d.ld_in1, i, j);
      const std::int64_t at = i + j * d.ld_out;
      if constexpr (std::is_same_v<V, double>) {
        static_cast<double*>(args.out)[at] = binary_value<double>(d.op, a, b);
      } else {
        const float c = binary_reference_value(d.op, a, b);
        if (out == DataType::f32) {
          static_cast<float*>(args.out)[at] = c;
        } else {
          static_cast<jit::bfloat16*>(args.out)[at] =
              keep_bits ? jit::bfloat16{static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(c) >> 16)} : jit::to_bfloat16(c);
        }
      }
    }
}

}  // namespace

std::size_t BinaryDescHash::operator()(const BinaryDesc& d) const noexcept {
  std::size_t h = 0;
  weft::jit::hash_combine(h, static_cast<int>(d.op));
  weft::jit::hash_combine(h, d.m);
  weft::jit::hash_combine(h, d.n);
  weft::jit::hash_combine(h, d.ld_in0);
  weft::jit::hash_combine(h, d.ld_in1);
  weft::jit::hash_combine(h, d.ld_out);
  weft::jit::hash_combine(h, static_cast<int>(d.bcast0));
  weft::jit::hash_combine(h, static_cast<int>(d.bcast1));
  weft::jit::hash_combine(h, d.types);
  return h;
}

std::string to_string(BinaryOp op) {
  switch (op) {
    case BinaryOp::add: return "add";
    case BinaryOp::sub: return "sub";
    case BinaryOp::mul: return "mul";
    case BinaryOp::div: return "div";
    case BinaryOp::min: return "min";
    case BinaryOp::max: return "max";
  }
  return "op#" + std::to_string(static_cast<int>(op));
}

std::string to_string(Broadcast b) {
  switch (b) {
    case Broadcast::none: return "none";
    case Broadcast::row: return "row";
    case Broadcast::col: return "col";
    case Broadcast::scalar: return "scalar";
  }
  return "bcast#" + std::to_string(static_cast<int>(b));
}

std::string to_string(const BinaryDesc& d) {
  std::string s = to_string(d.op) + "_m" + std::to_string(d.m) + "_n" + std::to_string(d.n) + "_ld" +
                  std::to_string(d.ld_in0) + "_" + std::to_string(d.ld_in1) + "_" + std::to_string(d.ld_out);
  if (d.bcast0 != Broadcast::none) s += "_a" + to_string(d.bcast0);
  if (d.bcast1 != Broadcast::none) s += "_b" + to_string(d.bcast1);
  return s + name_suffix(d.types);
}

void validate(const BinaryDesc& d) {
  if (static_cast<int>(d.op) > static_cast<int>(BinaryOp::max))
    fail(d, "op " + std::to_string(static_cast<int>(d.op)) + " is no BinaryOp (add, sub, mul, div, min, max)");
  for (auto [b, name] : {std::pair{d.bcast0, "bcast0"}, std::pair{d.bcast1, "bcast1"}})
    if (static_cast<int>(b) > static_cast<int>(Broadcast::scalar))
      fail(d, std::string(name) + " " + std::to_string(static_cast<int>(b)) + " is no Broadcast (none, row, col, scalar)");
  if (d.m < 1 || d.n < 1) fail(d, "m and n must be >= 1");
  constexpr std::int64_t kMaxElements = std::int64_t{1} << 28;
  if (d.m > kMaxElements || d.n > kMaxElements || d.m * d.n > kMaxElements) fail(d, "more than 2^28 elements per call");
  if (d.ld_out < d.m) fail(d, "ld_out < m");
  if (d.bcast0 == Broadcast::none && d.ld_in0 < d.m) fail(d, "ld_in0 < m");
  if (d.bcast1 == Broadcast::none && d.ld_in1 < d.m) fail(d, "ld_in1 < m");
  if (d.ld_in0 > kMaxElements || d.ld_in1 > kMaxElements || d.ld_out > kMaxElements) fail(d, "leading dimension above 2^28");
  // Every op has kernels in every type the element-wise TPPs take.
  if (const std::string why = why_unsupported_elementwise(d.types); !why.empty()) fail(d, why);
}

BinaryPlan plan_binary(const BinaryDesc& d, weft::jit::Isa isa) {
  validate(d);
  BinaryPlan p;
  // An ISA may run another's element-wise kernels (sve128 runs Neon's: IsaTraits::elementwise).
  p.isa = weft::jit::isa_traits(isa).elementwise;
  p.lanes = weft::jit::isa_traits(p.isa).lanes(static_cast<int>(jit::size_of(d.types.compute)));
  auto contiguous = [&](Broadcast b, std::int64_t ld) { return b == Broadcast::scalar || (b == Broadcast::none && ld == d.m); };
  p.flat = d.n == 1 ? (d.bcast0 != Broadcast::row && d.bcast1 != Broadcast::row)
                    : contiguous(d.bcast0, d.ld_in0) && contiguous(d.bcast1, d.ld_in1) && d.ld_out == d.m;
  // A single column with a row broadcast is the same as a scalar; keep the general path for it.
  p.rows = p.flat ? d.m * d.n : d.m;
  p.cols = p.flat ? 1 : d.n;
  p.full_vectors = p.rows / p.lanes;
  p.tail = static_cast<int>(p.rows % p.lanes);
  p.nontemporal = p.flat && d.bcast0 != Broadcast::col && d.bcast1 != Broadcast::col &&
                  p.rows * static_cast<std::int64_t>(jit::size_of(d.types.out)) >= kBinaryNontemporalBytes;
  // Vectors per step. The streaming sweep is memory-bound and does 8: fewer loop instructions per
  // byte. Measured over 8M floats on 1 thread, interleaved with our copy (15 runs each, this Zen 3):
  // add 1.064x / max 0.990x the copy's bandwidth with 8, 1.042x / 0.974x with 4, 1.032x / 0.967x
  // with 6. Software prefetch (prefetcht0 / nta / t2, 256 B to 2 KiB ahead on both inputs, 15
  // runs each) measured no gain: within noise at 256 B, 1-9 % slower from 512 B on.
  p.unroll = p.nontemporal ? 8 : 4;
  return p;
}

float binary_reference_value(BinaryOp op, float a, float b) { return binary_value<float>(op, a, b); }

namespace {

// Inlined into the functor's call: three predictable compares.
inline bool args_ok(const BinaryArgs& args) {
  return args.in0 != nullptr && args.in1 != nullptr && args.out != nullptr;
}

[[noreturn, gnu::cold, gnu::noinline]] void reject_args(const BinaryDesc& d, const BinaryArgs& args) {
  fail(d, std::string("BinaryArgs::") + (args.in0 == nullptr ? "in0" : args.in1 == nullptr ? "in1" : "out") +
              " is null");
}

}  // namespace

void check_args(const BinaryDesc& d, const BinaryArgs& args) {
  if (!args_ok(args)) [[unlikely]]
    reject_args(d, args);
}

void binary_reference(const BinaryDesc& d, const BinaryArgs& args) {
  validate(d);
  check_args(d, args);
  if (d.types.compute == DataType::f64) {
    reference<double>(d, args);
  } else {
    reference<float>(d, args);
  }
}

namespace detail {

template <>
struct FamilyOps<BinaryFamily> {
  static constexpr const char* kName = "binary TPP";
  struct Checks {};  // every pointer is read or written, whatever the descriptor
  static Checks checks(const BinaryDesc&) { return {}; }
  static bool args_ok(Checks, const BinaryDesc&, const BinaryArgs& args) { return tpp::args_ok(args); }
  static void reject_args(const BinaryDesc& d, const BinaryArgs& args) { tpp::reject_args(d, args); }
  static BinaryPlan plan(const BinaryDesc& d, jit::Isa isa) { return plan_binary(d, isa); }
  static std::unique_ptr<jit::GeneratedCode> emit(const BinaryDesc& d, const BinaryPlan& plan) { return emit_kernel(d, plan); }
  static void reference(const BinaryDesc& d, const BinaryArgs& args) { binary_reference(d, args); }
  static std::string code_name(const BinaryDesc& d, jit::Isa isa) {
    return "weft_binary_" + to_string(d) + "_" + std::string(jit::to_string(isa));
  }
};

}  // namespace detail

template class TppKernel<BinaryFamily>;
template class GeneratedKernel<BinaryFamily>;

void Binary::operator()(const float* in0, const float* in1, float* out) const {
  // Float pointers for other element types would run the kernel over misread data.
  if (desc().types != DataTypes{}) [[unlikely]]
    fail(desc(), "the typed call takes float pointers, but the data types are " + to_string(desc().types) +
                     "; call with BinaryArgs");
  (*this)(BinaryArgs{in0, in1, out});
}

BinaryCode binary_kernel(const BinaryDesc& desc, weft::jit::Isa isa) {
  return BinaryCode(detail::KernelFamily<BinaryFamily>::generated(desc, isa));
}

std::size_t binary_code_size(const BinaryDesc& desc, weft::jit::Isa isa) {
  return binary_kernel(desc, isa).code_size();
}

}  // namespace weft::tpp
