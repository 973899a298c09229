// The one functor shape of every TPP family (Brgemm, Unary, Binary): a descriptor's kernel for one
// instruction set, taken from the family's process-wide cache, generated on first use. The cache is
// bounded (WEFT_KERNEL_CACHE_SIZE, weft/jit/kernel_cache.hpp); a functor shares ownership of its
// kernel, so the code stays valid as long as the functor (or a copy) lives, evicted or not.
//
//   weft::tpp::Unary relu(weft::tpp::UnaryDesc{.op = weft::tpp::UnaryOp::relu, .m = 64, .n = 8,
//                                              .ld_in = 64, .ld_out = 64});
//   relu(weft::tpp::UnaryArgs{.in = x, .out = y});  // checked call
//   relu.kernel();                                  // the unchecked generated entry
//   relu.code();                                    // its bytes, e.g. to disassemble
//
// Every family goes descriptor -> validate -> plan -> emit -> reference; the template's members
// are defined next to the (private) emitters in tpp/src and instantiated there for each family, so
// this header and the families' headers need no Xbyak.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "weft/jit/cpu.hpp"

namespace weft::tpp {

namespace detail {
template <class Family>
struct KernelEntry;  // desc, plan, call checks, code: one cache entry (tpp/src/kernel_family.hpp)
}  // namespace detail

// A family's types: its descriptor (with its hash, the cache key), argument struct and plan.
template <class DescT, class DescHashT, class ArgsT, class PlanT>
struct TppFamily {
  using Desc = DescT;
  using DescHash = DescHashT;
  using Args = ArgsT;
  using Plan = PlanT;
};

// Family: a TppFamily (e.g. UnaryFamily).
template <class Family>
class TppKernel {
 public:
  using Desc = typename Family::Desc;
  using Args = typename Family::Args;
  using Plan = typename Family::Plan;
  using KernelFn = void (*)(const Args*);

  // Validates, plans, emits and caches on first use of (desc, isa); later constructions find the
  // cached kernel. Thread-safe. Throws weft::Error for an invalid descriptor, or for an ISA this
  // CPU cannot run (Isa::reference always runs: the family's portable reference).
  explicit TppKernel(const Desc& desc, jit::Isa isa = jit::selected_isa());

  // Runs the kernel on `args`; throws weft::Error naming the field for arguments the family's
  // check_args() rejects (a few compares per call).
  void operator()(const Args& args) const;

  const Desc& desc() const;
  const Plan& plan() const;
  jit::Isa isa() const;
  // The generated entry; nullptr for Isa::reference. It checks nothing: arguments check_args()
  // rejects are undefined behaviour there. Valid as long as this functor (or a copy of it) lives.
  KernelFn kernel() const;
  // The generated machine code (empty for Isa::reference), e.g. to write to a file and disassemble:
  //   objdump -D -b binary -m i386:x86-64 kernel.bin
  std::vector<std::uint8_t> code() const;

 private:
  // Dereferenced on every call without touching the reference count: a call costs what it cost
  // with a raw pointer.
  std::shared_ptr<const detail::KernelEntry<Family>> entry_;
};

// A family's generated code for an ISA the host may not run (to check an emitter), with its owner:
// the code stays valid as long as this object (or a copy) lives. Calling it checks nothing.
template <class Family>
class GeneratedKernel {
 public:
  using Args = typename Family::Args;
  using KernelFn = typename TppKernel<Family>::KernelFn;

  explicit GeneratedKernel(std::shared_ptr<const detail::KernelEntry<Family>> entry);

  void operator()(const Args* args) const { fn_(args); }
  KernelFn fn() const { return fn_; }
  std::size_t code_size() const;
  // The machine code, e.g. to disassemble it or to feed llvm-mca (weft-kernel-code).
  std::vector<std::uint8_t> code() const;

 private:
  std::shared_ptr<const detail::KernelEntry<Family>> entry_;
  KernelFn fn_;
};

}  // namespace weft::tpp
