// The BRGEMM emitter: follows a BrgemmPlan and writes one kernel `void(const BrgemmArgs*)`. Private to
// the TPP layer (and to the tests and benchmarks that try plans of their own), so that the public
// headers need no Xbyak.
#pragma once

#include <memory>

#include "weft/jit/x64/code_buffer.hpp"
#include "weft/tpp/brgemm.hpp"

namespace weft::tpp {

// Emits (does not finalize) the kernel for plan.isa (avx2 or avx512). Works on any x86-64 host:
// running AVX-512 code needs the CPU, emitting and disassembling it does not.
std::unique_ptr<jit::x64::CodeBuffer> emit_brgemm(const BrgemmDesc& d, const BrgemmPlan& plan);

}  // namespace weft::tpp
