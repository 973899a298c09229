// tpp::Brgemm: the BRGEMM family of the TPP skeleton (kernel_family.hpp) and its call checks.
#include <cstdint>
#include <memory>
#include <string>

#include "emitters.hpp"
#include "kernel_family.hpp"
#include "weft/jit/error.hpp"
#include "weft/jit/log.hpp"
#include "weft/tpp/brgemm.hpp"

namespace weft::tpp {
namespace {

// The rules of check_args without a message (nullptr: none), inlined into the functor's call: a few
// predictable compares, nothing next to even the smallest kernel.
inline const char* arg_problem(const BrgemmDesc& d, const BrgemmArgs& args) {
  if (args.c == nullptr) return "BrgemmArgs::c is null";
  if (args.count < 0) return "BrgemmArgs::count is negative";
  if (args.count > 0) {
    switch (d.batch) {
      case BrgemmBatch::strided:
        if (args.a == nullptr) return "BrgemmArgs::a is null";
        if (args.b == nullptr) return "BrgemmArgs::b is null";
        break;
      case BrgemmBatch::offsets:
        if (args.a == nullptr) return "BrgemmArgs::a is null";
        if (args.b == nullptr) return "BrgemmArgs::b is null";
        if (args.offsets_a == nullptr) return "BrgemmArgs::offsets_a is null (an offsets batch)";
        if (args.offsets_b == nullptr) return "BrgemmArgs::offsets_b is null (an offsets batch)";
        break;
      case BrgemmBatch::addresses:
        if (args.addresses_a == nullptr) return "BrgemmArgs::addresses_a is null (an addresses batch)";
        if (args.addresses_b == nullptr) return "BrgemmArgs::addresses_b is null (an addresses batch)";
        break;
    }
  }
  if (d.bias != BrgemmBias::none && args.bias == nullptr) return "BrgemmArgs::bias is null (the descriptor adds a bias)";
  return nullptr;
}

[[noreturn, gnu::cold, gnu::noinline]] void reject_args(const BrgemmDesc& d, const BrgemmArgs& args) {
  throw Error("brgemm " + to_string(d) + ": " + arg_problem(d, args) + " (count " + std::to_string(args.count) + ")");
}

}  // namespace

namespace detail {

template <>
struct FamilyOps<BrgemmFamily> {
  static constexpr const char* kName = "brgemm";
  struct Checks {};  // arg_problem reads the descriptor's batch kind and bias directly
  static Checks checks(const BrgemmDesc&) { return {}; }
  static bool args_ok(Checks, const BrgemmDesc& d, const BrgemmArgs& args) { return arg_problem(d, args) == nullptr; }
  static void reject_args(const BrgemmDesc& d, const BrgemmArgs& args) { tpp::reject_args(d, args); }
  static BrgemmPlan plan(const BrgemmDesc& d, jit::Isa isa) { return plan_brgemm(d, isa); }
  static std::unique_ptr<jit::GeneratedCode> emit(const BrgemmDesc& d, const BrgemmPlan& plan) {
    log().debug("brgemm: {} plan {}", to_string(d), to_string(plan));
    return emit_kernel(d, plan);
  }
  static void reference(const BrgemmDesc& d, const BrgemmArgs& args) { brgemm_reference(d, args); }
  static std::string code_name(const BrgemmDesc& d, jit::Isa) { return to_string(d); }
};

}  // namespace detail

template class TppKernel<BrgemmFamily>;
template class GeneratedKernel<BrgemmFamily>;

BrgemmCode brgemm_kernel(const BrgemmDesc& d, jit::Isa isa) {
  return BrgemmCode(detail::KernelFamily<BrgemmFamily>::generated(d, isa));
}

void check_args(const BrgemmDesc& d, const BrgemmArgs& args) {
  if (arg_problem(d, args) != nullptr) [[unlikely]]
    reject_args(d, args);
}

void Brgemm::operator()(const float* a, const float* b, float* c, std::int64_t count, std::int64_t stride_a,
                        std::int64_t stride_b) const {
  if (desc().batch != BrgemmBatch::strided || desc().bias != BrgemmBias::none || desc().types != DataTypes{})
    throw Error("brgemm " + to_string(desc()) +
                ": the (a, b, c, count, strides) call is for strided FP32 kernels without bias; pass BrgemmArgs");
  BrgemmArgs args;
  args.a = a;
  args.b = b;
  args.c = c;
  args.count = count;
  args.stride_a = stride_a;
  args.stride_b = stride_b;
  (*this)(args);
}

std::size_t brgemm_cache_size() { return detail::KernelFamily<BrgemmFamily>::size(); }

}  // namespace weft::tpp
