#include "element_io.hpp"

#include <string>

#include "weft/jit/error.hpp"

namespace weft::tpp::neon {
namespace {

using namespace jit::a64;
using jit::DataType;

// bf16 constants: a zero vector (widening interleaves it below each bf16) and the binary32
// exponent field (its lanes with exponent 0 round to a signed zero).
constexpr int kZero = 0, kExponent = 1;
constexpr std::uint32_t kExponentBits = 0x7f800000u;

std::string type_name(DataType t) { return std::string(jit::to_string(t)); }

}  // namespace

int ElementIo::constant_vectors(DataType memory) { return memory == DataType::bf16 ? 2 : 0; }
int ElementIo::scratch_vectors(DataType memory) { return memory == DataType::bf16 ? 3 : 0; }

ElementIo::ElementIo(Assembler& a, DataType memory, DataType compute, XReg address, std::span<const VReg> constants,
                     std::span<const VReg> scratch)
    : a_(a),
      memory_(memory),
      compute_(compute),
      address_(address),
      constants_(constants.begin(), constants.end()),
      scratch_(scratch.begin(), scratch.end()) {
  const bool fits = compute == DataType::f32 ? (memory == DataType::f32 || memory == DataType::bf16)
                                             : (compute == DataType::f64 && memory == DataType::f64);
  if (!fits) {
    throw Error("neon element io: no moves between memory " + type_name(memory) + " and compute " +
                type_name(compute) + " (f32 or bf16 with f32, f64 with f64)");
  }
  if (static_cast<int>(constants_.size()) < constant_vectors(memory) ||
      static_cast<int>(scratch_.size()) < scratch_vectors(memory)) {
    throw Error("neon element io: memory " + type_name(memory) + " needs " + std::to_string(constant_vectors(memory)) +
                " constant and " + std::to_string(scratch_vectors(memory)) + " scratch vector registers, got " +
                std::to_string(constants_.size()) + " and " + std::to_string(scratch_.size()));
  }
}

int ElementIo::element_bytes() const { return static_cast<int>(jit::size_of(memory_)); }

void ElementIo::setup() {
  if (memory_ != DataType::bf16) return;
  a_.movi(constants_[kZero].d2(), 0);
  const WReg w(address_.index);
  a_.mov_imm(w, kExponentBits);
  a_.dup(constants_[kExponent].s4(), w);
}

void ElementIo::check_operand(VReg v, int count, const char* what) const {
  if (count < 1 || count > lanes()) {
    throw Error(std::string("neon element io: ") + what + " of " + std::to_string(count) + " elements (1.." +
                std::to_string(lanes()) + " for compute " + type_name(compute_) + ")");
  }
  for (const std::vector<VReg>* own : {&constants_, &scratch_})
    for (VReg r : *own)
      if (r.index == v.index) {
        throw Error(std::string("neon element io: ") + what + " of v" + std::to_string(v.index) +
                    ", one of its own constant or scratch registers");
      }
}

// The unsigned scaled offset where it encodes, else the unscaled one (-256..255), else the offset
// in `address` as a register index.
void ElementIo::access(bool load, unsigned bytes, unsigned reg, XReg base, std::int64_t offset) {
  const auto b = static_cast<std::int64_t>(bytes);
  const bool scaled = offset >= 0 && offset % b == 0 && offset / b <= 4095;
  const bool unscaled = offset >= -256 && offset <= 255;
  auto emit = [&](auto r) {
    if (scaled) {
      load ? a_.ldr(r, ptr(base, offset)) : a_.str(r, ptr(base, offset));
    } else if (unscaled) {
      load ? a_.ldur(r, ptr(base, offset)) : a_.stur(r, ptr(base, offset));
    } else {
      a_.mov_imm(address_, static_cast<std::uint64_t>(offset));
      load ? a_.ldr(r, ptr(base, address_)) : a_.str(r, ptr(base, address_));
    }
  };
  switch (bytes) {
    case 2: emit(HReg(reg)); return;
    case 4: emit(SReg(reg)); return;
    case 8: emit(DReg(reg)); return;
    default: emit(QReg(reg)); return;
  }
}

void ElementIo::address_of(XReg base, std::int64_t offset) {
  if (offset >= 0 && offset <= 4095) {
    a_.add(address_, base, offset);
  } else if (offset < 0 && offset >= -4095) {
    a_.sub(address_, base, -offset);
  } else if (offset > 0 && offset % 4096 == 0 && offset / 4096 <= 4095) {
    a_.add(address_, base, offset / 4096, lsl(12));
  } else {
    a_.mov_imm(address_, static_cast<std::uint64_t>(offset));
    a_.add(address_, base, address_);
  }
}

// 1, 2 or 4 elements are one scalar register's bytes; 3 are the pair's register and the third
// element as a lane (f32), or through the general register `address` (bf16: there is no 16-bit
// lane load or store here; a store moves the lane down and stores an h register).
void ElementIo::move_elements(bool load, unsigned element_bytes, unsigned reg, XReg base, std::int64_t offset,
                              int count) {
  if (count != 3) {
    access(load, element_bytes * static_cast<unsigned>(count), reg, base, offset);
    return;
  }
  access(load, element_bytes * 2, reg, base, offset);
  const std::int64_t third = offset + 2 * element_bytes;
  if (element_bytes == 4) {
    address_of(base, third);
    load ? a_.ld1(VReg(reg).s(2), ptr(address_)) : a_.st1(VReg(reg).s(2), ptr(address_));
    return;
  }
  // bf16
  if (load) {
    const WReg w(address_.index);
    if (third >= 0 && third % 2 == 0 && third / 2 <= 4095) {
      a_.ldrh(w, ptr(base, third));
    } else if (third >= -256 && third <= 255) {
      a_.ldurh(w, ptr(base, third));
    } else {
      a_.mov_imm(address_, static_cast<std::uint64_t>(third));
      a_.ldrh(w, ptr(base, address_));
    }
    a_.ins(VReg(reg).h(2), w);
  } else {
    a_.ins(VReg(reg).h(0), VReg(reg).h(2));
    access(false, 2, reg, base, third);
  }
}

void ElementIo::load(VReg v, XReg base, std::int64_t offset_bytes, int count) {
  check_operand(v, count, "a load");
  move_elements(true, static_cast<unsigned>(element_bytes()), v.index, base, offset_bytes, count);
  // bf16 is the upper half of a binary32: interleave zeros below each element.
  if (memory_ == DataType::bf16) a_.zip1(v.h8(), constants_[kZero].h8(), v.h8());
}

void ElementIo::store(XReg base, std::int64_t offset_bytes, VReg v, int count, Bf16Store mode) {
  check_operand(v, count, "a store");
  if (memory_ != DataType::bf16) {
    move_elements(false, static_cast<unsigned>(element_bytes()), v.index, base, offset_bytes, count);
    return;
  }
  const VReg out = scratch_[0];
  if (mode == Bf16Store::keep_bits) {
    a_.shrn(out.h4(), v.s4(), 16);
  } else {
    round_to_bf16(v);
  }
  move_elements(false, 2, out.index, base, offset_bytes, count);
}

// jit::to_bfloat16 on 4 lanes, in integer steps on the binary32 bits u, into scratch(0)'s low half:
//   NaN:                 (u >> 16) | 0x40 (quiet, sign and upper payload kept)
//   exponent 0:          the sign alone (zeros and denormals)
//   otherwise:           (u + 0x7fff + ((u >> 16) & 1)) >> 16 (to nearest even; carries up to inf)
// as one sum: base + increment, where base is u with NaNs quieted (fmax of a NaN with itself returns
// it quiet: its bit 22 set) and exponent-0 lanes cut to their sign, and the increment is
// 0x7fff + lsb except for NaNs (0: the quieted bits pass unrounded). The increment never exceeds
// 0x8000, so the exponent-0 lanes (low 16 bits 0) do not carry.
void ElementIo::round_to_bf16(VReg v) {
  const VReg sum = scratch_[0], t = scratch_[1], base = scratch_[2];
  a_.fcmeq(sum.s4(), v.s4(), v.s4());                        // all ones unless NaN
  a_.and_(t.b16(), v.b16(), constants_[kExponent].b16());
  a_.fcmeq(t.s4(), t.s4(), 0.0);                             // exponent 0 (the field is never NaN)
  a_.ushr(t.s4(), t.s4(), 1);                                // ... its lanes' bits below the sign
  a_.fmax(base.s4(), v.s4(), v.s4());                        // NaNs quiet, others unchanged
  a_.bic(base.b16(), base.b16(), t.b16());                   // exponent 0: the sign alone
  a_.shl(t.s4(), base.s4(), 15);
  a_.ushr(t.s4(), t.s4(), 31);                               // lsb: bit 16 of base
  a_.ushr(sum.s4(), sum.s4(), 17);                           // 0x7fff, 0 for NaN
  a_.and_(t.b16(), t.b16(), sum.b16());                      // lsb, 0 for NaN
  a_.add(sum.s4(), sum.s4(), t.s4());
  a_.add(sum.s4(), sum.s4(), base.s4());
  a_.shrn(sum.h4(), sum.s4(), 16);
}

}  // namespace weft::tpp::neon
