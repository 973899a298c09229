// The frame every TPP kernel `void(const Args*)` shares (unary, binary, BRGEMM), and the one place
// that turns an ISA into a vector register type for the emitter templates:
//
//   template <class Vmm>
//   class MyCode : public KernelFrame {
//    public:
//     explicit MyCode(const MyDesc& d) : KernelFrame(VecTraits<Vmm>::bytes) {
//       emit_function({r12}, [&] { ... });  // the body; consts_ for its constants
//     }
//   };
//   std::unique_ptr<weft::jit::x64::CodeBuffer> code = emit_kernel<MyCode>(isa, "my kernel", desc);
//
// emit_function() emits: push of the callee-saved registers the body uses, the body, vzeroupper
// (SSE code after ours would pay for dirty upper halves), the pops, ret, then the constant table
// (data, never executed).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <xbyak/xbyak.h>

#include "vec_traits.hpp"
#include "weft/jit/emitting.hpp"
#include "weft/jit/x64/code_buffer.hpp"
#include "weft/jit/error.hpp"
#include "weft/jit/isa_traits.hpp"

namespace weft::tpp::detail {

// Not a template, so that the emitters' own templates see Xbyak's mnemonics without `this->`.
class KernelFrame : public weft::jit::x64::CodeBuffer {
 protected:
  explicit KernelFrame(int vector_bytes, std::size_t max_size = kDefaultSize)
      : weft::jit::x64::CodeBuffer(max_size), consts_(vector_bytes) {}

  // The whole function around body(); `callee_saved`: the SysV callee-saved registers it uses.
  template <class Body>
  void emit_function(const std::vector<Xbyak::Reg64>& callee_saved, Body&& body) {
    for (const Xbyak::Reg64& r : callee_saved) push(r);
    body();
    vzeroupper();
    for (auto r = callee_saved.rbegin(); r != callee_saved.rend(); ++r) pop(*r);
    ret();
    consts_.emit(*this);
  }

  ConstantTable consts_;
};

// Whether kernels written over `Vmm` implement `traits`: its vector width, its tail policy, FMA.
template <class Vmm>
constexpr bool vector_registers_of(const weft::jit::IsaTraits& traits) {
  return traits.vector_bytes == VecTraits<Vmm>::bytes && traits.tail == VecTraits<Vmm>::tail && traits.fma;
}

// make.template operator()<Vmm>() for the register type of `isa` (Ymm: 32-byte vectors with
// piecewise tails, Zmm: 64-byte ones with opmask tails). Throws weft::Error naming `what` for an
// ISA no register type implements (the reference ISA; a new ISA until its emitters exist).
template <class Make>
auto with_vector_registers(weft::jit::Isa isa, std::string_view what, Make&& make) {
  const weft::jit::IsaTraits& traits = weft::jit::isa_traits(isa);
  if (vector_registers_of<Xbyak::Ymm>(traits)) return make.template operator()<Xbyak::Ymm>();
  if (vector_registers_of<Xbyak::Zmm>(traits)) return make.template operator()<Xbyak::Zmm>();
  throw weft::Error(std::string(what) + ": no code generator for ISA " + std::string(weft::jit::to_string(isa)));
}

// Code<Vmm>(args...) for the register type of `isa`, with Xbyak errors reported as weft::Error
// naming `what` (the kernel).
template <template <class> class Code, class... Args>
std::unique_ptr<weft::jit::x64::CodeBuffer> emit_kernel(weft::jit::Isa isa, const std::string& what, const Args&... args) {
  return with_vector_registers(isa, what, [&]<class Vmm>() -> std::unique_ptr<weft::jit::x64::CodeBuffer> {
    return weft::jit::emitting(what, [&] { return std::make_unique<Code<Vmm>>(args...); });
  });
}

}  // namespace weft::tpp::detail
