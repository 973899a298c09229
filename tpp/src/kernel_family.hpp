// One TPP family's kernels: the cache entry (descriptor, plan, call checks, code), the process-wide
// bounded cache keyed by (descriptor, ISA), and the members of the public TppKernel<Family>. A family's .cpp
// specializes FamilyOps and instantiates TppKernel<Family> explicitly; its emitter stays private.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "weft/jit/cpu.hpp"
#include "weft/jit/error.hpp"
#include "weft/jit/generated_code.hpp"
#include "weft/jit/kernel_cache.hpp"
#include "weft/tpp/tpp_kernel.hpp"

namespace weft::tpp::detail {

// What a family supplies, as static members of its specialization:
//   kName                        the start of its messages ("brgemm", "unary TPP", ...)
//   Checks, checks(desc)         what every call must pass, worked out once from the descriptor
//   args_ok(checks, desc, args)  those checks, inlined into the call: a few predictable compares
//   reject_args(desc, args)      [[noreturn]]: throws weft::Error naming the bad Args field
//   plan(desc, isa)              the family's plan_X: validates, then blocks (pure)
//   emit(desc, plan)             the family's private emitter; the code is not yet finalized
//   reference(desc, args)        the portable reference
//   code_name(desc, isa)         the generated code's name in the perf map and the log
template <class Family>
struct FamilyOps;

template <class Family>
struct KernelEntry {
  using Ops = FamilyOps<Family>;
  using Desc = typename Family::Desc;
  using KernelFn = typename TppKernel<Family>::KernelFn;

  // Emitting works for any ISA of the target architecture on any host of it; running the code
  // needs the CPU.
  KernelEntry(const Desc& d, jit::Isa target)
      : desc(d), plan(Ops::plan(d, target)), checks(Ops::checks(d)), isa(target) {
    if (isa == jit::Isa::reference) return;
    code = Ops::emit(desc, plan);
    fn = code->template finalize<KernelFn>(Ops::code_name(desc, isa));
  }

  Desc desc;
  typename Family::Plan plan;
  typename Ops::Checks checks;
  jit::Isa isa;
  std::unique_ptr<jit::GeneratedCode> code;  // null for Isa::reference
  KernelFn fn = nullptr;                  // null for Isa::reference
};

template <class Family>
class KernelFamily {
 public:
  using Desc = typename Family::Desc;
  using Entry = KernelEntry<Family>;

  using EntryPtr = std::shared_ptr<const Entry>;

  // The entry of (desc, isa), made on first use. Throws weft::Error for an invalid descriptor.
  static EntryPtr entry(const Desc& desc, jit::Isa isa) {
    return cache().get_or_create(Key{desc, isa}, [&] { return std::make_unique<Entry>(desc, isa); });
  }

  // The same for callers that need generated code (even for an ISA this CPU cannot run, e.g. to
  // check the emitter): throws weft::Error for Isa::reference.
  static EntryPtr generated(const Desc& desc, jit::Isa isa) {
    if (isa == jit::Isa::reference)
      throw Error(std::string(FamilyOps<Family>::kName) + ": no generated code for the reference ISA");
    return entry(desc, isa);
  }

  // The same for callers that run the code: throws weft::Error for an ISA this CPU cannot run.
  static EntryPtr runnable(const Desc& desc, jit::Isa isa) {
    if (isa != jit::Isa::reference && !jit::can_run(isa, jit::cpu_features()))
      throw Error(std::string(FamilyOps<Family>::kName) + " " + to_string(desc) + ": this CPU cannot run " +
                  std::string(jit::to_string(isa)) + " code");
    return entry(desc, isa);
  }

  static std::size_t size() { return cache().size(); }

 private:
  struct Key {
    Desc desc;
    jit::Isa isa;
    bool operator==(const Key&) const = default;
  };

  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept {
      std::size_t seed = typename Family::DescHash{}(k.desc);
      jit::hash_combine(seed, static_cast<int>(k.isa));
      return seed;
    }
  };

  // Never destroyed: a kernel may be made or dropped during static destruction.
  static jit::KernelCache<Key, Entry, KeyHash>& cache() {
    static auto* const instance = new jit::KernelCache<Key, Entry, KeyHash>;
    return *instance;
  }
};

}  // namespace weft::tpp::detail

namespace weft::tpp {

template <class Family>
TppKernel<Family>::TppKernel(const Desc& desc, jit::Isa isa)
    : entry_(detail::KernelFamily<Family>::runnable(desc, isa)) {}

template <class Family>
void TppKernel<Family>::operator()(const Args& args) const {
  using Ops = detail::FamilyOps<Family>;
  const detail::KernelEntry<Family>& e = *entry_;
  if (!Ops::args_ok(e.checks, e.desc, args)) [[unlikely]]
    Ops::reject_args(e.desc, args);
  if (e.fn != nullptr) {
    e.fn(&args);
  } else {
    Ops::reference(e.desc, args);
  }
}

template <class Family>
const typename TppKernel<Family>::Desc& TppKernel<Family>::desc() const {
  return entry_->desc;
}

template <class Family>
const typename TppKernel<Family>::Plan& TppKernel<Family>::plan() const {
  return entry_->plan;
}

template <class Family>
jit::Isa TppKernel<Family>::isa() const {
  return entry_->isa;
}

template <class Family>
typename TppKernel<Family>::KernelFn TppKernel<Family>::kernel() const {
  return entry_->fn;
}

template <class Family>
std::vector<std::uint8_t> TppKernel<Family>::code() const {
  if (!entry_->code) return {};
  const auto bytes = entry_->code->code_bytes();
  return {bytes.begin(), bytes.end()};
}

template <class Family>
GeneratedKernel<Family>::GeneratedKernel(std::shared_ptr<const detail::KernelEntry<Family>> entry)
    : entry_(std::move(entry)), fn_(entry_->fn) {}

template <class Family>
std::size_t GeneratedKernel<Family>::code_size() const {
  return entry_->code->code_bytes().size();
}

template <class Family>
std::vector<std::uint8_t> GeneratedKernel<Family>::code() const {
  const auto bytes = entry_->code->code_bytes();
  return {bytes.begin(), bytes.end()};
}

}  // namespace weft::tpp
