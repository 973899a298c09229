// x86-64 context trampoline (weft/jit/context_trampoline.hpp): the context into xmm0, then a jump
// through rax, which the SysV ABI leaves free at a call (it only carries the vector-register count
// of variadic calls, and the target is not variadic).
#include "weft/jit/context_trampoline.hpp"

#include <cstdint>

#include "weft/jit/x64/code_buffer.hpp"

namespace weft::jit {
namespace {

struct ContextTrampoline : x64::CodeBuffer {
  ContextTrampoline(const void* context, const void* target) : x64::CodeBuffer(64) {
    mov(rax, reinterpret_cast<std::uint64_t>(context));
    movq(xmm0, rax);
    mov(rax, reinterpret_cast<std::uint64_t>(target));
    jmp(rax);
  }
};

}  // namespace

std::unique_ptr<GeneratedCode> make_context_trampoline(const void* context, const void* target) {
  return std::make_unique<ContextTrampoline>(context, target);
}

}  // namespace weft::jit
