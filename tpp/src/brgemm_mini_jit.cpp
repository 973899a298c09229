// mini_jit::Brgemm: the seed's 8-argument kernel_t on top of tpp::Brgemm.
//
// kernel_t carries no context and passes the leading dimensions per call, while weft kernels take
// them from the descriptor. Each generate() therefore emits a small trampoline
// (weft/jit/context_trampoline.hpp) that puts the Impl it belongs to into the first floating-point
// argument register (free: kernel_t has no floating-point argument; its integer arguments stay in
// their registers and on the stack) and jumps, not calls, to dispatch(), whose 9th parameter is a
// double and so is read from there. With the trampoline gone from the stack, dispatch
// is an ordinary C++ frame below the caller's: it may throw weft::Error for a bad call. dispatch
// remembers the kernel of the last leading dimensions seen (one atomic load and three compares on a
// hit) and generates one through the weft cache on a miss.
#include "weft/tpp/mini_jit_brgemm.hpp"

#include <atomic>
#include <bit>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "weft/jit/context_trampoline.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/jit/error.hpp"
#include "weft/tpp/brgemm.hpp"

namespace mini_jit {

namespace {

struct Entry {
  std::int64_t ld_a, ld_b, ld_c;
  weft::tpp::Brgemm kernel;
};

}  // namespace

struct Brgemm::Impl {
  std::int32_t m = 0, n = 0, k = 0;
  weft::tpp::DataTypes types;  // all f32 or all f64
  std::int64_t br_size = 0;
  std::atomic<const Entry*> last{nullptr};
  std::mutex mutex;
  std::vector<std::unique_ptr<Entry>> entries;
  std::unique_ptr<weft::jit::GeneratedCode> trampoline;
  kernel_t fn = nullptr;

  const Entry& entry_for(std::int64_t ld_a, std::int64_t ld_b, std::int64_t ld_c) {
    std::lock_guard lock(mutex);
    for (const auto& e : entries)
      if (e->ld_a == ld_a && e->ld_b == ld_b && e->ld_c == ld_c) return *e;
    weft::tpp::BrgemmDesc d;
    d.m = m;
    d.n = n;
    d.k = k;
    d.lda = ld_a;
    d.ldb = ld_b;
    d.ldc = ld_c;
    d.beta = 1;
    d.types = types;
    entries.push_back(std::make_unique<Entry>(Entry{ld_a, ld_b, ld_c, weft::tpp::Brgemm(d)}));
    return *entries.back();
  }
};

namespace {

[[noreturn, gnu::cold, gnu::noinline]] void reject(const Brgemm::Impl& impl, const std::string& what) {
  throw weft::Error("mini_jit::Brgemm kernel_t (m=" + std::to_string(impl.m) + " n=" + std::to_string(impl.n) +
                    " k=" + std::to_string(impl.k) + " br_size=" + std::to_string(impl.br_size) + "): " + what);
}

// The leading dimensions a call may pass: at least the rows of its matrix, at most what keeps one
// matrix within the 2 GiB the generated code addresses (validate(BrgemmDesc)).
void check_ld(const Brgemm::Impl& impl, const char* name, std::int64_t ld, const char* rows_name, std::int64_t rows,
              std::int64_t cols) {
  const std::int64_t limit =
      std::numeric_limits<std::int32_t>::max() / static_cast<std::int64_t>(weft::jit::size_of(impl.types.in));
  if (ld < rows || ld > limit / cols) [[unlikely]]
    reject(impl, std::string(name) + " is " + std::to_string(ld) + ", must be in [" + rows_name + " = " +
                     std::to_string(rows) + ", " + std::to_string(limit / cols) + "]");
}

// The target of the trampoline: kernel_t's arguments, then the Impl as a double's bits (see the top).
void dispatch(const void* a, const void* b, void* c, std::int64_t ld_a, std::int64_t ld_b, std::int64_t ld_c,
              std::int64_t stride_a, std::int64_t stride_b, double impl_bits) {
  Brgemm::Impl* impl = std::bit_cast<Brgemm::Impl*>(impl_bits);
  const Entry* e = impl->last.load(std::memory_order_acquire);
  if (e == nullptr || e->ld_a != ld_a || e->ld_b != ld_b || e->ld_c != ld_c) [[unlikely]] {
    check_ld(*impl, "ld_a", ld_a, "m", impl->m, impl->k);
    check_ld(*impl, "ld_b", ld_b, "k", impl->k, impl->n);
    check_ld(*impl, "ld_c", ld_c, "m", impl->m, impl->n);
    e = &impl->entry_for(ld_a, ld_b, ld_c);
    impl->last.store(e, std::memory_order_release);
  }
  if (c == nullptr || (impl->br_size > 0 && (a == nullptr || b == nullptr))) [[unlikely]]
    reject(*impl, c == nullptr ? "c is null" : a == nullptr ? "a is null" : "b is null");
  weft::tpp::BrgemmArgs args;
  args.a = a;
  args.b = b;
  args.c = c;
  args.count = impl->br_size;
  args.stride_a = stride_a;
  args.stride_b = stride_b;
  e->kernel(args);
}

static_assert(sizeof(double) == sizeof(Brgemm::Impl*));

}  // namespace

Brgemm::Brgemm() = default;
Brgemm::~Brgemm() = default;

Brgemm::error_t Brgemm::generate(std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t br_size,
                                 std::uint32_t trans_a, std::uint32_t trans_b, std::uint32_t trans_c,
                                 dtype_t dtype) {
  error_.clear();
  impl_.reset();
  auto fail = [this](error_t code, std::string why) {
    error_ = "mini_jit::Brgemm::generate: " + why;
    return code;
  };
  if (dtype != dtype_t::fp32 && dtype != dtype_t::fp64) return fail(error_t::bad_param, "unknown dtype");
  if (trans_a > 1 || trans_b > 1 || trans_c > 1) return fail(error_t::bad_param, "trans_* must be 0 or 1");
  if (trans_a != 0 || trans_b != 0 || trans_c != 0)
    return fail(error_t::unsupported, "transposed (row-major) A, B or C are not supported");
  constexpr std::uint32_t max_dim = 1u << 30;
  if (m == 0 || n == 0 || k == 0) return fail(error_t::bad_param, "m, n and k must be >= 1");
  if (m > max_dim || n > max_dim || k > max_dim) return fail(error_t::bad_param, "m, n or k too large");

  auto impl = std::make_unique<Impl>();
  impl->m = static_cast<std::int32_t>(m);
  impl->n = static_cast<std::int32_t>(n);
  impl->k = static_cast<std::int32_t>(k);
  impl->br_size = br_size;
  if (dtype == dtype_t::fp64) {
    using weft::jit::DataType;
    impl->types = {.in = DataType::f64, .out = DataType::f64, .compute = DataType::f64};
  }
  try {
    // Generates the kernel for the tight leading dimensions now, so that a bad shape fails here.
    impl->last.store(&impl->entry_for(impl->m, impl->k, impl->m));
    impl->trampoline = weft::jit::make_context_trampoline(impl.get(), reinterpret_cast<const void*>(&dispatch));
    impl->fn = impl->trampoline->finalize<kernel_t>("mini_jit_brgemm_m" + std::to_string(m) + "_n" + std::to_string(n) +
                                                    "_k" + std::to_string(k) + (dtype == dtype_t::fp64 ? "_fp64" : ""));
  } catch (const weft::Error& ex) {
    return fail(error_t::bad_param, ex.what());
  }
  impl_ = std::move(impl);
  return error_t::success;
}

Brgemm::kernel_t Brgemm::get_kernel() const {
  if (!impl_) throw weft::Error("mini_jit::Brgemm::get_kernel: no successful generate() yet");
  return impl_->fn;
}

const std::string& Brgemm::error_message() const { return error_; }

}  // namespace mini_jit
