// A stub that lets a C function with a fixed signature (the seeds' kernel_t) reach a C++ object:
//
//   void dispatch(const void* a, void* b, std::int64_t ld, double context_bits);  // kernel_t + a double
//   auto stub = weft::jit::make_context_trampoline(impl, reinterpret_cast<const void*>(&dispatch));
//   auto fn = stub->finalize<kernel_t>("mini_jit_...");  // fn(a, b, ld) calls dispatch(a, b, ld, impl)
//
// The stub puts `context`'s bits into the first floating-point argument register (xmm0 on x86-64,
// d0 on AArch64) and jumps (a tail call) to `target`: the caller's integer and stack arguments stay
// where they are, and the stub is gone from the stack when target runs, so target may throw.
// Valid for a kernel type without floating-point parameters (the register is free then); target
// reads the context as its first floating-point parameter, a double, and std::bit_casts it back.
#pragma once

#include <memory>

#include "weft/jit/generated_code.hpp"

namespace weft::jit {

// Not finalized: the caller names and installs it. One definition per architecture.
std::unique_ptr<GeneratedCode> make_context_trampoline(const void* context, const void* target);

}  // namespace weft::jit
