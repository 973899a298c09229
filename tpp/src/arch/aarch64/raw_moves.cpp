#include "raw_moves.hpp"

#include <string>

#include "weft/jit/error.hpp"

namespace weft::tpp::neon {
namespace {

using namespace jit::a64;

void check_bytes(const char* what, int bytes) {
  if (bytes < 2 || bytes > 16 || bytes % 2 != 0)
    throw Error(std::string("neon ") + what + ": " + std::to_string(bytes) + " bytes is no run of 2..16 even bytes");
}

// The largest piece (16, 8, 4 or 2 bytes) that fits in `left`.
int piece(int left) {
  int p = 16;
  while (p > left) p /= 2;
  return p;
}

void load_piece(Assembler& a, VReg v, XReg base, int offset, int size) {
  switch (size) {
    case 16: a.ldr(v.qreg(), ptr(base, offset)); return;
    case 8: a.ldr(v.dreg(), ptr(base, offset)); return;
    case 4: a.ldr(v.sreg(), ptr(base, offset)); return;
    default: a.ldr(v.hreg(), ptr(base, offset)); return;
  }
}

void store_piece(Assembler& a, XReg base, VReg v, int offset, int size) {
  switch (size) {
    case 16: a.str(v.qreg(), ptr(base, offset)); return;
    case 8: a.str(v.dreg(), ptr(base, offset)); return;
    case 4: a.str(v.sreg(), ptr(base, offset)); return;
    default: a.str(v.hreg(), ptr(base, offset)); return;
  }
}

}  // namespace

void raw_load(Assembler& a, VReg v, XReg base, int bytes, VReg spare, int offset) {
  check_bytes("raw_load", bytes);
  const int first = piece(bytes);
  load_piece(a, v, base, offset, first);
  for (int at = first; at < bytes;) {
    const int size = piece(bytes - at);
    load_piece(a, spare, base, offset + at, size);
    // The piece's lane in v: `at` is a multiple of the piece size (the pieces shrink).
    const auto lane = static_cast<unsigned>(at / size);
    switch (size) {
      case 8: a.ins(v.d(lane), spare.d(0)); break;
      case 4: a.ins(v.s(lane), spare.s(0)); break;
      default: a.ins(v.h(lane), spare.h(0)); break;
    }
    at += size;
  }
}

void raw_store(Assembler& a, XReg base, VReg v, int bytes, VReg spare, int offset) {
  check_bytes("raw_store", bytes);
  const int first = piece(bytes);
  store_piece(a, base, v, offset, first);
  for (int at = first; at < bytes;) {
    const int size = piece(bytes - at);
    // Bytes at.. of v down to the bottom of spare.
    a.ext(spare.b16(), v.b16(), v.b16(), static_cast<unsigned>(at));
    store_piece(a, base, spare, offset + at, size);
    at += size;
  }
}

}  // namespace weft::tpp::neon
