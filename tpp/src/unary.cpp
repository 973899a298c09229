// The unary family of the TPP skeleton (kernel_family.hpp): descriptor identity and call checks.
#include <cstdint>
#include <memory>
#include <string>

#include "emitters.hpp"
#include "kernel_family.hpp"
#include "op_properties.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/error.hpp"
#include "weft/jit/kernel_cache.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::tpp {

std::size_t UnaryDescHash::operator()(const UnaryDesc& d) const noexcept {
  std::size_t h = 0;
  weft::jit::hash_combine(h, static_cast<int>(d.op));
  weft::jit::hash_combine(h, d.m);
  weft::jit::hash_combine(h, d.n);
  weft::jit::hash_combine(h, d.ld_in);
  weft::jit::hash_combine(h, d.ld_out);
  weft::jit::hash_combine(h, d.alpha);
  weft::jit::hash_combine(h, static_cast<int>(d.mask));
  weft::jit::hash_combine(h, d.transpose_out);
  weft::jit::hash_combine(h, d.types);
  return h;
}

std::string to_string(UnaryOp op) {
  switch (op) {
    case UnaryOp::zero: return "zero";
    case UnaryOp::copy: return "copy";
    case UnaryOp::relu: return "relu";
    case UnaryOp::relu_bwd: return "relu_bwd";
    case UnaryOp::square: return "square";
    case UnaryOp::reciprocal: return "reciprocal";
    case UnaryOp::sqrt: return "sqrt";
    case UnaryOp::exp: return "exp";
    case UnaryOp::sigmoid: return "sigmoid";
    case UnaryOp::tanh: return "tanh";
    case UnaryOp::gelu: return "gelu";
    case UnaryOp::increment: return "increment";
    case UnaryOp::decrement: return "decrement";
    case UnaryOp::scale: return "scale";
    case UnaryOp::transpose: return "transpose";
    case UnaryOp::reduce_rows_sum: return "reduce_rows_sum";
    case UnaryOp::reduce_rows_max: return "reduce_rows_max";
    case UnaryOp::reduce_cols_sum: return "reduce_cols_sum";
    case UnaryOp::reduce_cols_max: return "reduce_cols_max";
    case UnaryOp::vnni2_pack: return "vnni2_pack";
    case UnaryOp::vnni2_unpack: return "vnni2_unpack";
  }
  return "op#" + std::to_string(static_cast<int>(op));
}

std::string to_string(const UnaryDesc& d) {
  std::string s = to_string(d.op) + "_m" + std::to_string(d.m) + "_n" + std::to_string(d.n) + "_lda" +
                  std::to_string(d.ld_in) + "_ldb" + std::to_string(d.ld_out);
  if (d.alpha != 0.0f) s += "_alpha" + std::to_string(d.alpha);
  if (d.mask == ReluMask::bitmask) s += "_bitmask";
  if (d.transpose_out) s += "_transposed";
  return s + name_suffix(d.types);
}

namespace {

// The same bound as a descriptor's leading dimension (validate).
constexpr std::int64_t kMaxLd = std::int64_t{1} << 28;

// min <= ld <= kMaxLd in one compare (a negative ld wraps to a huge unsigned difference).
bool ld_in_range(std::int64_t ld, std::int64_t min) {
  return static_cast<std::uint64_t>(ld) - static_cast<std::uint64_t>(min) <= static_cast<std::uint64_t>(kMaxLd - min);
}

bool transposes(const UnaryDesc& d) { return d.op == UnaryOp::transpose || d.transpose_out; }

// The rules of check_args: what a call of `d` must pass. A leading dimension minimum of 0 means
// "not read at call time" (m and n are at least 1).
struct Requirements {
  bool in, aux, mask;
  std::int64_t ld_in_min, ld_out_min;
};

Requirements requirements(const UnaryDesc& d) {
  Requirements r{};
  r.in = d.op != UnaryOp::zero;
  r.aux = d.op == UnaryOp::relu_bwd;
  r.mask = d.op == UnaryOp::relu && d.mask == ReluMask::bitmask;
  r.ld_in_min = r.in && d.ld_in == 0 ? d.m : 0;
  r.ld_out_min = d.ld_out == 0 && !detail::unary_op_properties(d.op).reduction ? (transposes(d) ? d.n : d.m) : 0;
  return r;
}

enum class ArgProblem { none, out, in, ld_in, aux, mask, ld_out };

ArgProblem arg_problem(const UnaryDesc& d, const UnaryArgs& args) {
  const Requirements r = requirements(d);
  if (args.out == nullptr) return ArgProblem::out;
  if (r.in && args.in == nullptr) return ArgProblem::in;
  if (r.ld_in_min != 0 && args.ld_in != 0 && !ld_in_range(args.ld_in, r.ld_in_min)) return ArgProblem::ld_in;
  if (r.aux && args.aux == nullptr) return ArgProblem::aux;
  if (r.mask && args.mask == nullptr) return ArgProblem::mask;
  if (r.ld_out_min != 0 && !ld_in_range(args.ld_out, r.ld_out_min)) return ArgProblem::ld_out;
  return ArgProblem::none;
}

[[noreturn, gnu::cold, gnu::noinline]] void reject_args(const UnaryDesc& d, const UnaryArgs& args, ArgProblem p) {
  auto ld = [&](const char* field, std::int64_t value, const char* bound, std::int64_t min) {
    return std::string("UnaryArgs::") + field + " is " + std::to_string(value) + ", must be " +
           (p == ArgProblem::ld_in ? "0 (every column reads A's first) or " : "") + "in [" + bound + " = " +
           std::to_string(min) + ", 2^28] (the descriptor's " + field + " is 0: given at call time)";
  };
  std::string what;
  switch (p) {
    case ArgProblem::out: what = "UnaryArgs::out is null"; break;
    case ArgProblem::in: what = "UnaryArgs::in is null (only zero does not read A)"; break;
    case ArgProblem::ld_in: what = ld("ld_in", args.ld_in, "m", d.m); break;
    case ArgProblem::aux:
      what = d.mask == ReluMask::bitmask ? "UnaryArgs::aux is null (relu_bwd reads the forward's bitmask there)"
                                         : "UnaryArgs::aux is null (relu_bwd reads the forward input there)";
      break;
    case ArgProblem::mask: what = "UnaryArgs::mask is null (relu with a bitmask writes it)"; break;
    case ArgProblem::ld_out:
      what = transposes(d) ? ld("ld_out", args.ld_out, "n", d.n) : ld("ld_out", args.ld_out, "m", d.m);
      break;
    case ArgProblem::none: what = "no problem"; break;
  }
  throw weft::Error("unary TPP " + to_string(d) + ": " + what);
}

// check_args() reduced to a few compares per call: which pointers must be set, and the range
// [min, min + span] of each call-time leading dimension (span ~0: not read at call time).
struct CallChecks {
  bool in = false, aux = false, mask = false;
  std::int64_t ld_in_min = 0, ld_out_min = 0;
  std::uint64_t ld_in_span = ~std::uint64_t{0}, ld_out_span = ~std::uint64_t{0};
};

CallChecks call_checks(const UnaryDesc& d) {
  const Requirements r = requirements(d);
  CallChecks c;
  c.in = r.in;
  c.aux = r.aux;
  c.mask = r.mask;
  c.ld_in_min = r.ld_in_min;
  c.ld_out_min = r.ld_out_min;
  if (r.ld_in_min != 0) c.ld_in_span = static_cast<std::uint64_t>(kMaxLd - r.ld_in_min);
  if (r.ld_out_min != 0) c.ld_out_span = static_cast<std::uint64_t>(kMaxLd - r.ld_out_min);
  return c;
}

// check_args() over the precomputed checks: predictable branches, the leading dimensions compared
// only where the descriptor leaves them to the call.
inline bool passes(const CallChecks& c, const UnaryArgs& args) {
  return !(args.out == nullptr || (c.in && args.in == nullptr) ||
           (c.ld_in_min != 0 && args.ld_in != 0 &&
            static_cast<std::uint64_t>(args.ld_in) - static_cast<std::uint64_t>(c.ld_in_min) > c.ld_in_span) ||
           (c.ld_out_min != 0 && static_cast<std::uint64_t>(args.ld_out) - static_cast<std::uint64_t>(c.ld_out_min) > c.ld_out_span) ||
           (c.aux && args.aux == nullptr) || (c.mask && args.mask == nullptr));
}

}  // namespace

namespace detail {

template <>
struct FamilyOps<UnaryFamily> {
  static constexpr const char* kName = "unary TPP";
  using Checks = CallChecks;
  static Checks checks(const UnaryDesc& d) { return call_checks(d); }
  static bool args_ok(const Checks& c, const UnaryDesc&, const UnaryArgs& args) { return passes(c, args); }
  static void reject_args(const UnaryDesc& d, const UnaryArgs& args) { tpp::reject_args(d, args, arg_problem(d, args)); }
  static UnaryPlan plan(const UnaryDesc& d, jit::Isa isa) { return plan_unary(d, isa); }
  static std::unique_ptr<jit::GeneratedCode> emit(const UnaryDesc& d, const UnaryPlan& plan) { return emit_kernel(d, plan); }
  static void reference(const UnaryDesc& d, const UnaryArgs& args) { unary_reference(d, args); }
  static std::string code_name(const UnaryDesc& d, jit::Isa isa) {
    return "weft_unary_" + to_string(d) + "_" + std::string(jit::to_string(isa));
  }
};

}  // namespace detail

template class TppKernel<UnaryFamily>;
template class GeneratedKernel<UnaryFamily>;

void check_args(const UnaryDesc& d, const UnaryArgs& args) {
  if (const ArgProblem p = arg_problem(d, args); p != ArgProblem::none) [[unlikely]]
    reject_args(d, args, p);
}

void Unary::operator()(const float* in, float* out) const {
  // Float pointers for other element types would run the kernel over misread data.
  if (desc().types != DataTypes{}) [[unlikely]]
    throw weft::Error("unary TPP " + to_string(desc()) + ": the typed call takes float pointers, but the data types are " +
                      to_string(desc().types) + "; call with UnaryArgs");
  UnaryArgs args;
  args.in = in;
  args.out = out;
  (*this)(args);
}

UnaryCode unary_kernel(const UnaryDesc& desc, weft::jit::Isa isa) {
  return UnaryCode(detail::KernelFamily<UnaryFamily>::generated(desc, isa));
}

std::size_t unary_code_size(const UnaryDesc& desc, weft::jit::Isa isa) {
  return unary_kernel(desc, isa).code_size();
}

}  // namespace weft::tpp
