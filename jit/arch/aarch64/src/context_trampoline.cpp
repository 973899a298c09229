// AArch64 context trampoline (weft/jit/context_trampoline.hpp): the context into d0, the first
// floating-point argument register of AAPCS64, then a branch through x16 (IP0: the procedure-call
// scratch register a veneer may clobber, free at a call).
#include "weft/jit/context_trampoline.hpp"

#include <cstdint>

#include "weft/jit/aarch64/code_buffer.hpp"

namespace weft::jit {
namespace {

struct ContextTrampoline : a64::CodeBuffer {
  ContextTrampoline(const void* context, const void* target) {
    using namespace a64;
    mov_imm(x16, reinterpret_cast<std::uint64_t>(context));
    fmov(d0, x16);
    mov_imm(x16, reinterpret_cast<std::uint64_t>(target));
    br(x16);
  }
};

}  // namespace

std::unique_ptr<GeneratedCode> make_context_trampoline(const void* context, const void* target) {
  return std::make_unique<ContextTrampoline>(context, target);
}

}  // namespace weft::jit
