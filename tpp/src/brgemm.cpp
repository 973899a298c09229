// tpp::Brgemm: a descriptor's kernel from the process-wide cache, generated on first use.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "weft/jit/error.hpp"
#include "weft/jit/kernel_cache.hpp"
#include "weft/jit/log.hpp"
#include "weft/tpp/brgemm.hpp"

namespace weft::tpp {

class BrgemmKernel {
 public:
  BrgemmKernel(const BrgemmDesc& d, jit::Isa isa) : desc_(d), plan_(plan_brgemm(d, isa)) {
    validate(d);
    if (isa == jit::Isa::reference) return;
    code_ = emit_brgemm(d, plan_);
    fn_ = code_->finalize<BrgemmKernelFn>(to_string(d));
    log().debug("brgemm: {} plan {}", to_string(d), to_string(plan_));
  }

  void run(const BrgemmArgs& args) const {
    if (fn_ != nullptr) {
      fn_(&args);
    } else {
      brgemm_reference(desc_, args);
    }
  }

  const BrgemmDesc& desc() const { return desc_; }
  const BrgemmPlan& plan() const { return plan_; }
  BrgemmKernelFn fn() const { return fn_; }
  std::vector<std::uint8_t> code() const {
    if (!code_) return {};
    const std::uint8_t* p = code_->getCode();
    return {p, p + code_->getSize()};
  }

 private:
  BrgemmDesc desc_;
  BrgemmPlan plan_;
  std::unique_ptr<jit::CodeBuffer> code_;
  BrgemmKernelFn fn_ = nullptr;
};

namespace {

struct CacheKey {
  BrgemmDesc desc;
  jit::Isa isa;
  bool operator==(const CacheKey&) const = default;
};

struct CacheKeyHash {
  std::size_t operator()(const CacheKey& k) const noexcept {
    std::size_t seed = BrgemmDescHash{}(k.desc);
    jit::hash_combine(seed, static_cast<int>(k.isa));
    return seed;
  }
};

jit::KernelCache<CacheKey, BrgemmKernel, CacheKeyHash>& cache() {
  static jit::KernelCache<CacheKey, BrgemmKernel, CacheKeyHash> instance;
  return instance;
}

}  // namespace

Brgemm::Brgemm(const BrgemmDesc& desc, jit::Isa isa)
    : kernel_(&cache().get_or_create(CacheKey{desc, isa}, [&] {
        if (isa != jit::Isa::reference && !jit::can_run(isa, jit::cpu_features()))
          throw Error("brgemm: this CPU cannot run " + std::string(jit::to_string(isa)) + " code");
        return std::make_unique<BrgemmKernel>(desc, isa);
      })) {}

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

[[noreturn, gnu::cold, gnu::noinline]] void reject_args(const BrgemmDesc& d, const BrgemmArgs& args,
                                                        const char* what) {
  throw Error("brgemm " + to_string(d) + ": " + what + " (count " + std::to_string(args.count) + ")");
}

}  // namespace

void check_args(const BrgemmDesc& d, const BrgemmArgs& args) {
  if (const char* problem = arg_problem(d, args)) [[unlikely]]
    reject_args(d, args, problem);
}

void Brgemm::operator()(const BrgemmArgs& args) const {
  if (const char* problem = arg_problem(kernel_->desc(), args)) [[unlikely]]
    reject_args(kernel_->desc(), args, problem);
  kernel_->run(args);
}

void Brgemm::operator()(const float* a, const float* b, float* c, std::int64_t count, std::int64_t stride_a,
                        std::int64_t stride_b) const {
  if (kernel_->desc().batch != BrgemmBatch::strided || kernel_->desc().bias != BrgemmBias::none)
    throw Error("brgemm " + to_string(kernel_->desc()) +
                ": the (a, b, c, count, strides) call is for strided kernels without bias; pass BrgemmArgs");
  BrgemmArgs args;
  args.a = a;
  args.b = b;
  args.c = c;
  args.count = count;
  args.stride_a = stride_a;
  args.stride_b = stride_b;
  if (const char* problem = arg_problem(kernel_->desc(), args)) [[unlikely]]
    reject_args(kernel_->desc(), args, problem);
  kernel_->run(args);
}

const BrgemmDesc& Brgemm::desc() const { return kernel_->desc(); }
const BrgemmPlan& Brgemm::plan() const { return kernel_->plan(); }
jit::Isa Brgemm::isa() const { return kernel_->plan().isa; }
BrgemmKernelFn Brgemm::kernel() const { return kernel_->fn(); }
std::vector<std::uint8_t> Brgemm::code() const { return kernel_->code(); }

std::size_t brgemm_cache_size() { return cache().size(); }

}  // namespace weft::tpp
