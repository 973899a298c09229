// Bit-exact moves of a few bytes between memory and the low bytes of a vector register, for the
// kernels that move elements without converting them (the transposes of one type, VNNI-2). Neon has
// no masked loads: a move of fewer than 16 bytes goes in pieces of 8, 4 and 2 bytes (largest first,
// so each piece is aligned to its size within the run), and never touches a byte past the run, so
// that an operand's last element may sit against a guard page.
//
//   raw_load(a, v0, x7, 12, v31);   // ldr d0, [x7]; ldr s31, [x7, #8]; mov v0.s[2], v31.s[0]
//   raw_store(a, x6, v0, 6, v31);   // str s0, [x6]; ext v31.16b, v0.16b, v0.16b, #4; str h31, [x6, #4]
#pragma once

#include "weft/jit/aarch64/assembler.hpp"

namespace weft::tpp::neon {

// bytes (2..16, even) from [base + offset] into v's low bytes; the other bytes of v are unspecified.
// `spare` is clobbered when the run takes more than one piece. offset: 0, or a multiple of 16 that
// the pieces' unsigned offsets encode.
void raw_load(jit::a64::Assembler& a, jit::a64::VReg v, jit::a64::XReg base, int bytes, jit::a64::VReg spare,
              int offset = 0);

// v's low `bytes` (2..16, even) to [base + offset]; `spare` is clobbered when the run takes more than
// one piece. offset as for raw_load.
void raw_store(jit::a64::Assembler& a, jit::a64::XReg base, jit::a64::VReg v, int bytes, jit::a64::VReg spare,
               int offset = 0);

}  // namespace weft::tpp::neon
