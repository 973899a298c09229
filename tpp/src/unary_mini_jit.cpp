// mini_jit::Unary on top of weft's unary TPPs. kernel_t has no argument struct and no room for a
// descriptor pointer, so each generate() emits a small trampoline (weft/jit/context_trampoline.hpp)
// that passes the Entry it belongs to as a fifth, floating-point argument and jumps (not calls) to
// call_entry: a C++ function, so that it checks the call (null pointers, leading dimensions) and may throw, the trampoline being gone
// from the stack by then. call_entry packs (a, b, ld_a, ld_b) into a UnaryArgs for the cached weft
// kernel, whose leading dimensions are read at call time. Entries live in a bounded kernel cache
// (WEFT_KERNEL_CACHE_SIZE); each mini_jit::Unary shares ownership of its entry, so a kernel_t stays
// valid as long as the object that returned it, evicted or not.
#include "weft/tpp/mini_jit_unary.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "weft/jit/context_trampoline.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/jit/error.hpp"
#include "weft/jit/kernel_cache.hpp"
#include "weft/tpp/unary.hpp"

namespace mini_jit {
namespace {

using weft::tpp::UnaryArgs;
using weft::tpp::UnaryDesc;
using weft::tpp::UnaryOp;

struct Entry {
  explicit Entry(const UnaryDesc& d);
  Entry(const Entry&) = delete;  // the trampoline holds its address
  Entry& operator=(const Entry&) = delete;

  UnaryDesc desc;
  weft::tpp::Unary unary;  // owns the weft kernel the trampoline reaches
  weft::tpp::UnaryKernelFn kernel;  // nullptr: the reference (WEFT_ISA=reference)
  std::unique_ptr<weft::jit::GeneratedCode> code;
  Unary::kernel_t fn = nullptr;
};

// The descriptor's bound on leading dimensions.
constexpr std::int64_t kMaxLd = std::int64_t{1} << 28;

[[noreturn, gnu::cold, gnu::noinline]] void reject(const Entry& e, const std::string& what) {
  throw weft::Error("mini_jit::Unary kernel_t (" + weft::tpp::to_string(e.desc) + "): " + what);
}

[[noreturn, gnu::cold, gnu::noinline]] void reject_ld(const Entry& e, const char* name, std::int64_t ld,
                                                      const char* bound, std::int64_t min) {
  reject(e, std::string(name) + " is " + std::to_string(ld) + ", must be in [" + bound + " = " + std::to_string(min) +
                ", 2^28]");
}

bool ld_in_range(std::int64_t ld, std::int64_t min) {
  return static_cast<std::uint64_t>(ld) - static_cast<std::uint64_t>(min) <= static_cast<std::uint64_t>(kMaxLd - min);
}

// The target of the trampoline: kernel_t's arguments, then the Entry as a double's bits (see the top).
void call_entry(const void* a, void* b, std::int64_t ld_a, std::int64_t ld_b, double entry_bits) {
  const Entry* e = std::bit_cast<const Entry*>(entry_bits);
  const UnaryDesc& d = e->desc;
  if (b == nullptr) [[unlikely]]
    reject(*e, "b is null");
  if (d.op != UnaryOp::zero) {
    if (a == nullptr) [[unlikely]]
      reject(*e, "a is null (only zero does not read A)");
    if (!ld_in_range(ld_a, d.m)) [[unlikely]]
      reject_ld(*e, "ld_a", ld_a, "m", d.m);
  }
  const bool transposed = d.op == UnaryOp::transpose || d.transpose_out;
  if (!ld_in_range(ld_b, transposed ? d.n : d.m)) [[unlikely]]
    reject_ld(*e, "ld_b", ld_b, transposed ? "n" : "m", transposed ? d.n : d.m);
  UnaryArgs args;
  args.in = a;
  args.out = b;
  args.ld_in = ld_a;
  args.ld_out = ld_b;
  if (e->kernel != nullptr) {
    e->kernel(&args);
  } else {
    weft::tpp::unary_reference(d, args);
  }
}

static_assert(sizeof(double) == sizeof(const Entry*));

Entry::Entry(const UnaryDesc& d) : desc(d), unary(d), kernel(unary.kernel()) {
  code = weft::jit::make_context_trampoline(this, reinterpret_cast<const void*>(&call_entry));
  fn = code->finalize<Unary::kernel_t>("mini_jit_unary_" + weft::tpp::to_string(desc));
}

// The descriptor is the key: the element type is part of it, so an fp32 and an fp64 kernel of one
// shape are two entries.
std::shared_ptr<const Entry> entry_for(const UnaryDesc& desc) {
  // Never destroyed: a mini_jit::Unary may be made or destroyed during static destruction.
  static auto* const cache = new weft::jit::KernelCache<UnaryDesc, Entry, weft::tpp::UnaryDescHash>;
  return cache->get_or_create(desc, [&] { return std::make_unique<Entry>(desc); });
}

}  // namespace

Unary::error_t Unary::generate(uint32_t m, uint32_t n, uint32_t trans_b, dtype_t dtype, ptype_t ptype) {
  kernel_ = nullptr;
  owner_.reset();
  error_.clear();
  const auto fail = [this](error_t code, std::string why) {
    error_ = "mini_jit::Unary::generate: " + why;
    return code;
  };
  if (dtype != dtype_t::fp32 && dtype != dtype_t::fp64)
    return fail(error_t::err_wrong_dtype, "dtype " + std::to_string(static_cast<uint32_t>(dtype)) +
                                              " is neither fp32 (0) nor fp64 (1)");
  if (m == 0 || n == 0) return fail(error_t::err_wrong_dimension, "m and n must be >= 1");
  if (trans_b > 1) return fail(error_t::err_wrong_trans, "trans_b must be 0 or 1");
  UnaryDesc desc;
  desc.m = m;
  desc.n = n;
  if (dtype == dtype_t::fp64) {
    using weft::jit::DataType;
    desc.types = {.in = DataType::f64, .out = DataType::f64, .compute = DataType::f64};
  }
  switch (ptype) {
    case ptype_t::zero:
      desc.op = UnaryOp::zero;
      // A zero B stored transposed is a zero n x m matrix with ld_b.
      if (trans_b == 1) std::swap(desc.m, desc.n);
      break;
    case ptype_t::identity:
      desc.op = trans_b == 1 ? UnaryOp::transpose : UnaryOp::copy;
      break;
    case ptype_t::relu:
      desc.op = UnaryOp::relu;
      desc.transpose_out = trans_b == 1;
      break;
    default:
      return fail(error_t::err_wrong_ptype, "ptype " + std::to_string(static_cast<uint32_t>(ptype)) +
                                                " is none of zero (0), identity (1), relu (2)");
  }
  // Every ptype has a kernel in both dtypes: a rejection is the shape's (m or n beyond what a
  // descriptor takes).
  try {
    std::shared_ptr<const Entry> entry = entry_for(desc);
    kernel_ = entry->fn;
    owner_ = std::move(entry);
  } catch (const std::exception& e) {
    return fail(error_t::err_wrong_dimension, e.what());
  }
  return error_t::success;
}

}  // namespace mini_jit
