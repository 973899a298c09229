// Pieces the Neon transposing unary emitters share: a leading dimension in bytes from the kernel's
// UnaryArgs (from the descriptor when it has one, from the call otherwise, where 0 is allowed for
// ld_in: every column then reads A's first, the tensor layer's broadcast input), and counted loops.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

#include "weft/jit/aarch64/assembler.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::tpp::neon {

// d = ld * element_bytes: the descriptor's `ld` when not 0, else the UnaryArgs field at `field`.
inline void load_leading_dimension(jit::a64::Assembler& a, jit::a64::XReg d, jit::a64::XReg args, std::int64_t ld,
                                   std::size_t field, int element_bytes) {
  const auto shift = static_cast<unsigned>(std::countr_zero(static_cast<unsigned>(element_bytes)));
  if (ld != 0) {
    a.mov_imm(d, static_cast<std::uint64_t>(ld) << shift);
  } else {
    a.ldr(d, jit::a64::ptr(args, static_cast<std::int64_t>(field)));
    if (shift != 0) a.lsl(d, d, shift);
  }
}

// body() `count` times: not at all, inline once, or a loop counting down in `counter`.
template <class Body>
void repeat(jit::a64::Assembler& a, std::int64_t count, jit::a64::XReg counter, Body body) {
  if (count <= 0) return;
  if (count == 1) {
    body();
    return;
  }
  jit::a64::Label loop;
  a.mov_imm(counter, static_cast<std::uint64_t>(count));
  a.bind(loop);
  body();
  a.subs(counter, counter, 1);
  a.b(jit::a64::Cond::ne, loop);
}

}  // namespace weft::tpp::neon
