// Loads of a unary kernel's arguments (UnaryArgs, in x0) shared by the Neon unary emitters: a
// leading dimension in bytes, from the descriptor when it has one, from the call otherwise (where 0
// is allowed for ld_in: every column then reads A's first, the tensor layer's broadcast input).
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

}  // namespace weft::tpp::neon
