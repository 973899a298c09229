// Encodings from the Arm Architecture Reference Manual (A64 instruction set encoding, DDI 0487).
// Each instruction starts from its fixed bits (the word with every register and immediate field
// zero) and ORs in its fields; tests/jit/arch/aarch64/assembler_golden_test.cpp checks every form
// against GNU as.
#include "weft/jit/aarch64/assembler.hpp"

#include <bit>
#include <cstdio>
#include <optional>
#include <string>

#include "weft/jit/aarch64/immediates.hpp"

namespace weft::jit::a64 {

namespace {

constexpr std::uint32_t kSf = 0x80000000u;  // 64-bit general-register form
constexpr std::uint32_t kQ = 0x40000000u;   // 128-bit vector
constexpr std::uint32_t kNop = 0xD503201Fu;

std::string hex(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "%#llx", static_cast<unsigned long long>(value));
  return text;
}

std::uint32_t u32(std::int64_t value) { return static_cast<std::uint32_t>(value); }

std::string decimal(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// log2 of the element size in bytes: the encodings' size field.
std::uint32_t size_of(Arr arr) {
  switch (arr) {
    case Arr::b8:
    case Arr::b16: return 0;
    case Arr::h4:
    case Arr::h8: return 1;
    case Arr::s2:
    case Arr::s4: return 2;
    case Arr::d2: break;
  }
  return 3;
}
std::uint32_t q_of(Arr arr) { return arr == Arr::b8 || arr == Arr::h4 || arr == Arr::s2 ? 0 : kQ; }

// Positions in the form families (forms.hpp).
unsigned fp_position(Arr arr) { return arr == Arr::s2 ? 0 : arr == Arr::s4 ? 1 : 2; }
unsigned int_position(Arr arr) { return size_of(arr); }  // 16b 8h 4s 2d
unsigned byte_position(Arr arr) { return arr == Arr::b8 ? 0 : 1; }
unsigned wide_position(Arr wide) { return size_of(wide) - 1; }  // 8h 4s 2d

std::uint32_t lane_size(Lane lane) { return static_cast<std::uint32_t>(lane); }

}  // namespace

// ---- output, labels ------------------------------------------------------------------------------

const std::vector<std::uint32_t>& Assembler::words() const {
  if (!fixups_.empty()) {
    const Fixup& f = fixups_.front();
    throw Error("a64 " + std::string(form_name(f.form)) + " at byte " + std::to_string(f.word * 4) +
                ": its label is never bound");
  }
  return words_;
}

std::vector<std::uint8_t> Assembler::bytes() const {
  std::vector<std::uint8_t> out;
  out.reserve(words().size() * 4);
  for (std::uint32_t w : words_) {
    for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<std::uint8_t>(w >> shift));
  }
  return out;
}

void Assembler::emit(Form form, std::uint32_t word) {
  words_.push_back(word);
  forms_used_.set(static_cast<std::size_t>(form));
}

void Assembler::fail(Form form, const std::string& what) const {
  throw Error("a64 " + std::string(form_name(form)) + ": " + what);
}

std::size_t Assembler::label_id(Label& label) {
  if (label.owner_ == nullptr) {
    label.owner_ = this;
    label.id_ = label_words_.size();
    label_words_.push_back(-1);
  } else if (label.owner_ != this) {
    throw Error("a64: a label of another Assembler is used");
  }
  return label.id_;
}

namespace {

// The branch word with its displacement field set to `bytes`, or an error naming the form.
std::optional<std::uint32_t> with_displacement(Form form, std::uint32_t word, std::int64_t bytes, std::string& error) {
  int bits = 0;      // width of the word-offset field
  int position = 5;  // its lowest bit
  switch (form) {
    case Form::b:
    case Form::bl:
      bits = 26;
      position = 0;
      break;
    case Form::b_cond:
    case Form::cbz_x:
    case Form::cbz_w:
    case Form::cbnz_x:
    case Form::cbnz_w: bits = 19; break;
    case Form::tbz_x:
    case Form::tbz_w:
    case Form::tbnz_x:
    case Form::tbnz_w: bits = 14; break;
    case Form::adr: {
      if (bytes < -(std::int64_t{1} << 20) || bytes >= (std::int64_t{1} << 20)) {
        error = "label is " + std::to_string(bytes) + " bytes away, beyond -1048576..1048575";
        return std::nullopt;
      }
      const std::uint32_t imm = u32(bytes) & 0x1FFFFFu;
      return word | (imm & 3u) << 29 | (imm >> 2) << 5;
    }
    default: error = "not a branch"; return std::nullopt;
  }
  const std::int64_t limit = std::int64_t{1} << (bits + 1);  // in bytes
  if (bytes < -limit || bytes >= limit) {
    error = "label is " + std::to_string(bytes) + " bytes away, beyond " + std::to_string(-limit) + ".." +
            std::to_string(limit - 4);
    return std::nullopt;
  }
  const std::uint32_t mask = (1u << bits) - 1;
  return word | (u32(bytes / 4) & mask) << position;
}

}  // namespace

void Assembler::branch_to(Form form, std::uint32_t word, Label& target) {
  const std::size_t id = label_id(target);
  if (label_words_[id] >= 0) {
    std::string error;
    const auto bytes = (label_words_[id] - static_cast<std::int64_t>(words_.size())) * 4;
    const auto patched = with_displacement(form, word, bytes, error);
    if (!patched) fail(form, error);
    emit(form, *patched);
  } else {
    fixups_.push_back({words_.size(), id, form});
    emit(form, word);
  }
}

void Assembler::bind(Label& label) {
  const std::size_t id = label_id(label);
  if (label_words_[id] >= 0) throw Error("a64: a label is bound twice");
  label_words_[id] = static_cast<std::int64_t>(words_.size());
  for (std::size_t i = 0; i < fixups_.size();) {
    const Fixup f = fixups_[i];
    if (f.label != id) {
      ++i;
      continue;
    }
    std::string error;
    const auto bytes = static_cast<std::int64_t>(words_.size() - f.word) * 4;
    const auto patched = with_displacement(f.form, words_[f.word], bytes, error);
    if (!patched) fail(f.form, error);
    words_[f.word] = *patched;
    fixups_.erase(fixups_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

void Assembler::align(std::size_t bytes) {
  if (bytes < 4 || !std::has_single_bit(bytes)) {
    throw Error("a64 align: " + std::to_string(bytes) + " is not a power of two >= 4");
  }
  while (words_.size() * 4 % bytes != 0) nop();
}

void Assembler::data(std::uint32_t word) { words_.push_back(word); }

// ---- integer arithmetic --------------------------------------------------------------------------

void Assembler::add_sub_immediate(Form form, std::uint32_t base, unsigned d, unsigned n, std::int64_t imm,
                                  Shift shift) {
  if (shift.kind != ShiftKind::lsl || (shift.amount != 0 && shift.amount != 12)) {
    fail(form, "the immediate shifts by lsl(0) or lsl(12) only");
  }
  if (imm < 0 || imm > 4095) fail(form, "immediate " + std::to_string(imm) + " is out of range 0..4095");
  emit(form, base | (shift.amount == 12 ? 1u << 22 : 0u) | u32(imm) << 10 | n << 5 | d);
}

void Assembler::add_sub_shifted(Form form, std::uint32_t base, unsigned d, unsigned n, unsigned m, Shift shift) {
  if (shift.kind == ShiftKind::ror) fail(form, "ror is not an add/sub shift (lsl, lsr, asr)");
  const unsigned width = base & kSf ? 64 : 32;
  if (shift.amount >= width) {
    fail(form, "shift " + std::to_string(shift.amount) + " is out of range 0.." + std::to_string(width - 1));
  }
  emit(form, base | static_cast<std::uint32_t>(shift.kind) << 22 | m << 16 | shift.amount << 10 | n << 5 | d);
}

void Assembler::add_sub_extended(Form form, std::uint32_t base, unsigned d, unsigned n, unsigned m, bool m_is_x,
                                 Extend extend) {
  const bool x_extend = extend.kind == ExtendKind::uxtx || extend.kind == ExtendKind::sxtx;
  if (m_is_x != x_extend) {
    fail(form,
         m_is_x ? "an x register extends with uxtx or sxtx" : "a w register extends with uxtb..sxtw, not uxtx/sxtx");
  }
  const int amount = extend.amount < 0 ? 0 : extend.amount;
  if (amount > 4) fail(form, "extend amount " + std::to_string(amount) + " is out of range 0..4");
  emit(form, base | m << 16 | static_cast<std::uint32_t>(extend.kind) << 13 | u32(amount) << 10 | n << 5 | d);
}

void Assembler::add(XOrSp d, XOrSp n, std::int64_t imm, Shift s) {
  add_sub_immediate(Form::add_x_imm, 0x91000000, d.index, n.index, imm, s);
}
void Assembler::add(WOrSp d, WOrSp n, std::int64_t imm, Shift s) {
  add_sub_immediate(Form::add_w_imm, 0x11000000, d.index, n.index, imm, s);
}
void Assembler::adds(XOrZr d, XOrSp n, std::int64_t imm, Shift s) {
  add_sub_immediate(Form::adds_x_imm, 0xB1000000, d.index, n.index, imm, s);
}
void Assembler::adds(WOrZr d, WOrSp n, std::int64_t imm, Shift s) {
  add_sub_immediate(Form::adds_w_imm, 0x31000000, d.index, n.index, imm, s);
}
void Assembler::sub(XOrSp d, XOrSp n, std::int64_t imm, Shift s) {
  add_sub_immediate(Form::sub_x_imm, 0xD1000000, d.index, n.index, imm, s);
}
void Assembler::sub(WOrSp d, WOrSp n, std::int64_t imm, Shift s) {
  add_sub_immediate(Form::sub_w_imm, 0x51000000, d.index, n.index, imm, s);
}
void Assembler::subs(XOrZr d, XOrSp n, std::int64_t imm, Shift s) {
  add_sub_immediate(Form::subs_x_imm, 0xF1000000, d.index, n.index, imm, s);
}
void Assembler::subs(WOrZr d, WOrSp n, std::int64_t imm, Shift s) {
  add_sub_immediate(Form::subs_w_imm, 0x71000000, d.index, n.index, imm, s);
}
void Assembler::cmp(XOrSp n, std::int64_t imm, Shift s) {
  add_sub_immediate(Form::cmp_x_imm, 0xF1000000, 31, n.index, imm, s);
}
void Assembler::cmp(WOrSp n, std::int64_t imm, Shift s) {
  add_sub_immediate(Form::cmp_w_imm, 0x71000000, 31, n.index, imm, s);
}
void Assembler::cmn(XOrSp n, std::int64_t imm, Shift s) {
  add_sub_immediate(Form::cmn_x_imm, 0xB1000000, 31, n.index, imm, s);
}
void Assembler::cmn(WOrSp n, std::int64_t imm, Shift s) {
  add_sub_immediate(Form::cmn_w_imm, 0x31000000, 31, n.index, imm, s);
}

void Assembler::add(XOrZr d, XOrZr n, XOrZr m, Shift s) {
  add_sub_shifted(Form::add_x_shift, 0x8B000000, d.index, n.index, m.index, s);
}
void Assembler::add(WOrZr d, WOrZr n, WOrZr m, Shift s) {
  add_sub_shifted(Form::add_w_shift, 0x0B000000, d.index, n.index, m.index, s);
}
void Assembler::adds(XOrZr d, XOrZr n, XOrZr m, Shift s) {
  add_sub_shifted(Form::adds_x_shift, 0xAB000000, d.index, n.index, m.index, s);
}
void Assembler::adds(WOrZr d, WOrZr n, WOrZr m, Shift s) {
  add_sub_shifted(Form::adds_w_shift, 0x2B000000, d.index, n.index, m.index, s);
}
void Assembler::sub(XOrZr d, XOrZr n, XOrZr m, Shift s) {
  add_sub_shifted(Form::sub_x_shift, 0xCB000000, d.index, n.index, m.index, s);
}
void Assembler::sub(WOrZr d, WOrZr n, WOrZr m, Shift s) {
  add_sub_shifted(Form::sub_w_shift, 0x4B000000, d.index, n.index, m.index, s);
}
void Assembler::subs(XOrZr d, XOrZr n, XOrZr m, Shift s) {
  add_sub_shifted(Form::subs_x_shift, 0xEB000000, d.index, n.index, m.index, s);
}
void Assembler::subs(WOrZr d, WOrZr n, WOrZr m, Shift s) {
  add_sub_shifted(Form::subs_w_shift, 0x6B000000, d.index, n.index, m.index, s);
}
void Assembler::cmp(XOrZr n, XOrZr m, Shift s) {
  add_sub_shifted(Form::cmp_x_shift, 0xEB000000, 31, n.index, m.index, s);
}
void Assembler::cmp(WOrZr n, WOrZr m, Shift s) {
  add_sub_shifted(Form::cmp_w_shift, 0x6B000000, 31, n.index, m.index, s);
}
void Assembler::cmn(XOrZr n, XOrZr m, Shift s) {
  add_sub_shifted(Form::cmn_x_shift, 0xAB000000, 31, n.index, m.index, s);
}
void Assembler::cmn(WOrZr n, WOrZr m, Shift s) {
  add_sub_shifted(Form::cmn_w_shift, 0x2B000000, 31, n.index, m.index, s);
}

void Assembler::add(XOrSp d, XOrSp n, WOrZr m, Extend e) {
  add_sub_extended(Form::add_x_ext, 0x8B200000, d.index, n.index, m.index, false, e);
}
void Assembler::add(XOrSp d, XOrSp n, XOrZr m, Extend e) {
  add_sub_extended(Form::add_x_ext, 0x8B200000, d.index, n.index, m.index, true, e);
}
void Assembler::add(WOrSp d, WOrSp n, WOrZr m, Extend e) {
  add_sub_extended(Form::add_w_ext, 0x0B200000, d.index, n.index, m.index, false, e);
}
void Assembler::adds(XOrZr d, XOrSp n, WOrZr m, Extend e) {
  add_sub_extended(Form::adds_x_ext, 0xAB200000, d.index, n.index, m.index, false, e);
}
void Assembler::adds(XOrZr d, XOrSp n, XOrZr m, Extend e) {
  add_sub_extended(Form::adds_x_ext, 0xAB200000, d.index, n.index, m.index, true, e);
}
void Assembler::adds(WOrZr d, WOrSp n, WOrZr m, Extend e) {
  add_sub_extended(Form::adds_w_ext, 0x2B200000, d.index, n.index, m.index, false, e);
}
void Assembler::sub(XOrSp d, XOrSp n, WOrZr m, Extend e) {
  add_sub_extended(Form::sub_x_ext, 0xCB200000, d.index, n.index, m.index, false, e);
}
void Assembler::sub(XOrSp d, XOrSp n, XOrZr m, Extend e) {
  add_sub_extended(Form::sub_x_ext, 0xCB200000, d.index, n.index, m.index, true, e);
}
void Assembler::sub(WOrSp d, WOrSp n, WOrZr m, Extend e) {
  add_sub_extended(Form::sub_w_ext, 0x4B200000, d.index, n.index, m.index, false, e);
}
void Assembler::subs(XOrZr d, XOrSp n, WOrZr m, Extend e) {
  add_sub_extended(Form::subs_x_ext, 0xEB200000, d.index, n.index, m.index, false, e);
}
void Assembler::subs(XOrZr d, XOrSp n, XOrZr m, Extend e) {
  add_sub_extended(Form::subs_x_ext, 0xEB200000, d.index, n.index, m.index, true, e);
}
void Assembler::subs(WOrZr d, WOrSp n, WOrZr m, Extend e) {
  add_sub_extended(Form::subs_w_ext, 0x6B200000, d.index, n.index, m.index, false, e);
}

// ---- logical -------------------------------------------------------------------------------------

void Assembler::logical_shifted(Form form, std::uint32_t base, unsigned d, unsigned n, unsigned m, Shift shift) {
  const unsigned width = base & kSf ? 64 : 32;
  if (shift.amount >= width) {
    fail(form, "shift " + std::to_string(shift.amount) + " is out of range 0.." + std::to_string(width - 1));
  }
  emit(form, base | static_cast<std::uint32_t>(shift.kind) << 22 | m << 16 | shift.amount << 10 | n << 5 | d);
}

void Assembler::logical_immediate(Form form, std::uint32_t base, unsigned d, unsigned n, std::uint64_t imm) {
  const unsigned width = base & kSf ? 64 : 32;
  if (width == 32 && imm >> 32 != 0) fail(form, "immediate " + hex(imm) + " does not fit in 32 bits");
  const std::optional<std::uint32_t> fields = encode_bitmask(imm, width);
  if (!fields) fail(form, "immediate " + hex(imm) + " is not a bitmask immediate");
  emit(form, base | *fields << 10 | n << 5 | d);
}

void Assembler::and_(XOrZr d, XOrZr n, XOrZr m, Shift s) {
  logical_shifted(Form::and_x_shift, 0x8A000000, d.index, n.index, m.index, s);
}
void Assembler::and_(WOrZr d, WOrZr n, WOrZr m, Shift s) {
  logical_shifted(Form::and_w_shift, 0x0A000000, d.index, n.index, m.index, s);
}
void Assembler::ands(XOrZr d, XOrZr n, XOrZr m, Shift s) {
  logical_shifted(Form::ands_x_shift, 0xEA000000, d.index, n.index, m.index, s);
}
void Assembler::ands(WOrZr d, WOrZr n, WOrZr m, Shift s) {
  logical_shifted(Form::ands_w_shift, 0x6A000000, d.index, n.index, m.index, s);
}
void Assembler::orr(XOrZr d, XOrZr n, XOrZr m, Shift s) {
  logical_shifted(Form::orr_x_shift, 0xAA000000, d.index, n.index, m.index, s);
}
void Assembler::orr(WOrZr d, WOrZr n, WOrZr m, Shift s) {
  logical_shifted(Form::orr_w_shift, 0x2A000000, d.index, n.index, m.index, s);
}
void Assembler::eor(XOrZr d, XOrZr n, XOrZr m, Shift s) {
  logical_shifted(Form::eor_x_shift, 0xCA000000, d.index, n.index, m.index, s);
}
void Assembler::eor(WOrZr d, WOrZr n, WOrZr m, Shift s) {
  logical_shifted(Form::eor_w_shift, 0x4A000000, d.index, n.index, m.index, s);
}
void Assembler::bic(XOrZr d, XOrZr n, XOrZr m, Shift s) {
  logical_shifted(Form::bic_x_shift, 0x8A200000, d.index, n.index, m.index, s);
}
void Assembler::bic(WOrZr d, WOrZr n, WOrZr m, Shift s) {
  logical_shifted(Form::bic_w_shift, 0x0A200000, d.index, n.index, m.index, s);
}
void Assembler::orn(XOrZr d, XOrZr n, XOrZr m, Shift s) {
  logical_shifted(Form::orn_x_shift, 0xAA200000, d.index, n.index, m.index, s);
}
void Assembler::orn(WOrZr d, WOrZr n, WOrZr m, Shift s) {
  logical_shifted(Form::orn_w_shift, 0x2A200000, d.index, n.index, m.index, s);
}
void Assembler::tst(XOrZr n, XOrZr m, Shift s) {
  logical_shifted(Form::tst_x_shift, 0xEA000000, 31, n.index, m.index, s);
}
void Assembler::tst(WOrZr n, WOrZr m, Shift s) {
  logical_shifted(Form::tst_w_shift, 0x6A000000, 31, n.index, m.index, s);
}

void Assembler::and_(XOrSp d, XOrZr n, std::uint64_t imm) {
  logical_immediate(Form::and_x_imm, 0x92000000, d.index, n.index, imm);
}
void Assembler::and_(WOrSp d, WOrZr n, std::uint64_t imm) {
  logical_immediate(Form::and_w_imm, 0x12000000, d.index, n.index, imm);
}
void Assembler::ands(XOrZr d, XOrZr n, std::uint64_t imm) {
  logical_immediate(Form::ands_x_imm, 0xF2000000, d.index, n.index, imm);
}
void Assembler::ands(WOrZr d, WOrZr n, std::uint64_t imm) {
  logical_immediate(Form::ands_w_imm, 0x72000000, d.index, n.index, imm);
}
void Assembler::orr(XOrSp d, XOrZr n, std::uint64_t imm) {
  logical_immediate(Form::orr_x_imm, 0xB2000000, d.index, n.index, imm);
}
void Assembler::orr(WOrSp d, WOrZr n, std::uint64_t imm) {
  logical_immediate(Form::orr_w_imm, 0x32000000, d.index, n.index, imm);
}
void Assembler::eor(XOrSp d, XOrZr n, std::uint64_t imm) {
  logical_immediate(Form::eor_x_imm, 0xD2000000, d.index, n.index, imm);
}
void Assembler::eor(WOrSp d, WOrZr n, std::uint64_t imm) {
  logical_immediate(Form::eor_w_imm, 0x52000000, d.index, n.index, imm);
}
void Assembler::tst(XOrZr n, std::uint64_t imm) { logical_immediate(Form::tst_x_imm, 0xF2000000, 31, n.index, imm); }
void Assembler::tst(WOrZr n, std::uint64_t imm) { logical_immediate(Form::tst_w_imm, 0x72000000, 31, n.index, imm); }

// ---- moves ---------------------------------------------------------------------------------------

void Assembler::mov(XOrZr d, XOrZr m) { emit(Form::mov_x_reg, 0xAA0003E0 | m.index << 16 | d.index); }
void Assembler::mov(WOrZr d, WOrZr m) { emit(Form::mov_w_reg, 0x2A0003E0 | m.index << 16 | d.index); }
void Assembler::mov(XSp, XReg n) { emit(Form::mov_x_sp, 0x91000000 | n.index << 5 | 31); }
void Assembler::mov(XReg d, XSp) { emit(Form::mov_x_sp, 0x91000000 | 31 << 5 | d.index); }
void Assembler::mov(WSp, WReg n) { emit(Form::mov_w_sp, 0x11000000 | n.index << 5 | 31); }
void Assembler::mov(WReg d, WSp) { emit(Form::mov_w_sp, 0x11000000 | 31 << 5 | d.index); }

void Assembler::move_wide(Form form, std::uint32_t base, unsigned d, std::uint32_t imm16, unsigned shift) {
  const unsigned width = base & kSf ? 64 : 32;
  if (imm16 > 0xFFFF) fail(form, "immediate " + hex(imm16) + " does not fit in 16 bits");
  if (shift % 16 != 0 || shift >= width) {
    fail(form, "shift " + std::to_string(shift) + " is not one of 0, 16" + (width == 64 ? ", 32, 48" : ""));
  }
  emit(form, base | (shift / 16) << 21 | imm16 << 5 | d);
}

void Assembler::movz(XReg d, std::uint32_t imm, unsigned shift) {
  move_wide(Form::movz_x, 0xD2800000, d.index, imm, shift);
}
void Assembler::movz(WReg d, std::uint32_t imm, unsigned shift) {
  move_wide(Form::movz_w, 0x52800000, d.index, imm, shift);
}
void Assembler::movn(XReg d, std::uint32_t imm, unsigned shift) {
  move_wide(Form::movn_x, 0x92800000, d.index, imm, shift);
}
void Assembler::movn(WReg d, std::uint32_t imm, unsigned shift) {
  move_wide(Form::movn_w, 0x12800000, d.index, imm, shift);
}
void Assembler::movk(XReg d, std::uint32_t imm, unsigned shift) {
  move_wide(Form::movk_x, 0xF2800000, d.index, imm, shift);
}
void Assembler::movk(WReg d, std::uint32_t imm, unsigned shift) {
  move_wide(Form::movk_w, 0x72800000, d.index, imm, shift);
}

namespace {

// movz (or movn, which starts from all ones) for the first 16-bit chunk that differs from the
// background, then movk for each further one.
struct WideMoves {
  bool inverted;  // movn
  int count;      // instructions
};
WideMoves plan_wide_moves(std::uint64_t value, unsigned chunks) {
  int zero = 0, ones = 0;
  for (unsigned i = 0; i < chunks; ++i) {
    const auto chunk = (value >> (16 * i)) & 0xFFFF;
    zero += chunk == 0;
    ones += chunk == 0xFFFF;
  }
  const bool inverted = ones > zero;
  const int count = static_cast<int>(chunks) - (inverted ? ones : zero);
  return {inverted, count < 1 ? 1 : count};
}

}  // namespace

void Assembler::mov_imm(XReg d, std::uint64_t value) {
  const WideMoves plan = plan_wide_moves(value, 4);
  if (plan.count > 1 && encode_bitmask(value, 64)) {
    orr(d, xzr, value);
    return;
  }
  const std::uint64_t background = plan.inverted ? 0xFFFF : 0;
  bool first = true;
  for (unsigned i = 0; i < 4; ++i) {
    const auto chunk = static_cast<std::uint32_t>((value >> (16 * i)) & 0xFFFF);
    if (chunk == background) continue;
    if (first) {
      plan.inverted ? movn(d, chunk ^ 0xFFFF, 16 * i) : movz(d, chunk, 16 * i);
      first = false;
    } else {
      movk(d, chunk, 16 * i);
    }
  }
  if (first) plan.inverted ? movn(d, 0) : movz(d, 0);
}

void Assembler::mov_imm(WReg d, std::int64_t signed_value) {
  if (signed_value < -(std::int64_t{1} << 31) || signed_value > 0xFFFFFFFF) {
    throw Error("a64 mov_imm w: value " + std::to_string(signed_value) + " does not fit in 32 bits");
  }
  const std::uint32_t value = static_cast<std::uint32_t>(signed_value);
  const WideMoves plan = plan_wide_moves(value, 2);
  if (plan.count > 1 && encode_bitmask(value, 32)) {
    orr(d, wzr, value);
    return;
  }
  const std::uint32_t background = plan.inverted ? 0xFFFF : 0;
  bool first = true;
  for (unsigned i = 0; i < 2; ++i) {
    const std::uint32_t chunk = (value >> (16 * i)) & 0xFFFF;
    if (chunk == background) continue;
    if (first) {
      plan.inverted ? movn(d, chunk ^ 0xFFFF, 16 * i) : movz(d, chunk, 16 * i);
      first = false;
    } else {
      movk(d, chunk, 16 * i);
    }
  }
  if (first) plan.inverted ? movn(d, 0) : movz(d, 0);
}

// ---- shifts, multiply, divide, conditional select ------------------------------------------------

// kind: 0 lsl, 1 lsr, 2 asr, as aliases of ubfm/sbfm.
void Assembler::shift_by_immediate(Form form, bool x, unsigned kind, unsigned d, unsigned n, unsigned amount) {
  const unsigned width = x ? 64 : 32;
  if (amount >= width)
    fail(form, "shift " + std::to_string(amount) + " is out of range 0.." + std::to_string(width - 1));
  const std::uint32_t base = (kind == 2 ? 0x13000000u : 0x53000000u) | (x ? kSf | 1u << 22 : 0u);
  const unsigned immr = kind == 0 ? (width - amount) % width : amount;
  const unsigned imms = kind == 0 ? width - 1 - amount : width - 1;
  emit(form, base | immr << 16 | imms << 10 | n << 5 | d);
}

void Assembler::lsl(XOrZr d, XOrZr n, unsigned a) { shift_by_immediate(Form::lsl_x_imm, true, 0, d.index, n.index, a); }
void Assembler::lsl(WOrZr d, WOrZr n, unsigned a) {
  shift_by_immediate(Form::lsl_w_imm, false, 0, d.index, n.index, a);
}
void Assembler::lsr(XOrZr d, XOrZr n, unsigned a) { shift_by_immediate(Form::lsr_x_imm, true, 1, d.index, n.index, a); }
void Assembler::lsr(WOrZr d, WOrZr n, unsigned a) {
  shift_by_immediate(Form::lsr_w_imm, false, 1, d.index, n.index, a);
}
void Assembler::asr(XOrZr d, XOrZr n, unsigned a) { shift_by_immediate(Form::asr_x_imm, true, 2, d.index, n.index, a); }
void Assembler::asr(WOrZr d, WOrZr n, unsigned a) {
  shift_by_immediate(Form::asr_w_imm, false, 2, d.index, n.index, a);
}

void Assembler::three_registers(Form form, std::uint32_t base, unsigned d, unsigned n, unsigned m) {
  emit(form, base | m << 16 | n << 5 | d);
}

void Assembler::lsl(XOrZr d, XOrZr n, XOrZr m) {
  three_registers(Form::lsl_x_reg, 0x9AC02000, d.index, n.index, m.index);
}
void Assembler::lsl(WOrZr d, WOrZr n, WOrZr m) {
  three_registers(Form::lsl_w_reg, 0x1AC02000, d.index, n.index, m.index);
}
void Assembler::lsr(XOrZr d, XOrZr n, XOrZr m) {
  three_registers(Form::lsr_x_reg, 0x9AC02400, d.index, n.index, m.index);
}
void Assembler::lsr(WOrZr d, WOrZr n, WOrZr m) {
  three_registers(Form::lsr_w_reg, 0x1AC02400, d.index, n.index, m.index);
}
void Assembler::asr(XOrZr d, XOrZr n, XOrZr m) {
  three_registers(Form::asr_x_reg, 0x9AC02800, d.index, n.index, m.index);
}
void Assembler::asr(WOrZr d, WOrZr n, WOrZr m) {
  three_registers(Form::asr_w_reg, 0x1AC02800, d.index, n.index, m.index);
}
void Assembler::mul(XOrZr d, XOrZr n, XOrZr m) { three_registers(Form::mul_x, 0x9B007C00, d.index, n.index, m.index); }
void Assembler::mul(WOrZr d, WOrZr n, WOrZr m) { three_registers(Form::mul_w, 0x1B007C00, d.index, n.index, m.index); }
void Assembler::madd(XOrZr d, XOrZr n, XOrZr m, XOrZr a) {
  three_registers(Form::madd_x, 0x9B000000 | a.index << 10, d.index, n.index, m.index);
}
void Assembler::madd(WOrZr d, WOrZr n, WOrZr m, WOrZr a) {
  three_registers(Form::madd_w, 0x1B000000 | a.index << 10, d.index, n.index, m.index);
}
void Assembler::msub(XOrZr d, XOrZr n, XOrZr m, XOrZr a) {
  three_registers(Form::msub_x, 0x9B008000 | a.index << 10, d.index, n.index, m.index);
}
void Assembler::msub(WOrZr d, WOrZr n, WOrZr m, WOrZr a) {
  three_registers(Form::msub_w, 0x1B008000 | a.index << 10, d.index, n.index, m.index);
}
void Assembler::udiv(XOrZr d, XOrZr n, XOrZr m) {
  three_registers(Form::udiv_x, 0x9AC00800, d.index, n.index, m.index);
}
void Assembler::udiv(WOrZr d, WOrZr n, WOrZr m) {
  three_registers(Form::udiv_w, 0x1AC00800, d.index, n.index, m.index);
}
void Assembler::sdiv(XOrZr d, XOrZr n, XOrZr m) {
  three_registers(Form::sdiv_x, 0x9AC00C00, d.index, n.index, m.index);
}
void Assembler::sdiv(WOrZr d, WOrZr n, WOrZr m) {
  three_registers(Form::sdiv_w, 0x1AC00C00, d.index, n.index, m.index);
}

void Assembler::conditional_select(Form form, std::uint32_t base, unsigned d, unsigned n, unsigned m, Cond cond) {
  emit(form, base | m << 16 | static_cast<std::uint32_t>(cond) << 12 | n << 5 | d);
}

void Assembler::csel(XOrZr d, XOrZr n, XOrZr m, Cond c) {
  conditional_select(Form::csel_x, 0x9A800000, d.index, n.index, m.index, c);
}
void Assembler::csel(WOrZr d, WOrZr n, WOrZr m, Cond c) {
  conditional_select(Form::csel_w, 0x1A800000, d.index, n.index, m.index, c);
}
void Assembler::csinc(XOrZr d, XOrZr n, XOrZr m, Cond c) {
  conditional_select(Form::csinc_x, 0x9A800400, d.index, n.index, m.index, c);
}
void Assembler::csinc(WOrZr d, WOrZr n, WOrZr m, Cond c) {
  conditional_select(Form::csinc_w, 0x1A800400, d.index, n.index, m.index, c);
}
void Assembler::cset(XOrZr d, Cond c) {
  if (c == Cond::al || c == Cond::nv) fail(Form::cset_x, "the condition cannot be al or nv");
  conditional_select(Form::cset_x, 0x9A800400, d.index, 31, 31, invert(c));
}
void Assembler::cset(WOrZr d, Cond c) {
  if (c == Cond::al || c == Cond::nv) fail(Form::cset_w, "the condition cannot be al or nv");
  conditional_select(Form::cset_w, 0x1A800400, d.index, 31, 31, invert(c));
}

// ---- branches and system -------------------------------------------------------------------------

void Assembler::b(Label& target) { branch_to(Form::b, 0x14000000, target); }
void Assembler::bl(Label& target) { branch_to(Form::bl, 0x94000000, target); }
void Assembler::b(Cond cond, Label& target) {
  branch_to(Form::b_cond, 0x54000000 | static_cast<std::uint32_t>(cond), target);
}
void Assembler::cbz(XOrZr t, Label& target) { branch_to(Form::cbz_x, 0xB4000000 | t.index, target); }
void Assembler::cbz(WOrZr t, Label& target) { branch_to(Form::cbz_w, 0x34000000 | t.index, target); }
void Assembler::cbnz(XOrZr t, Label& target) { branch_to(Form::cbnz_x, 0xB5000000 | t.index, target); }
void Assembler::cbnz(WOrZr t, Label& target) { branch_to(Form::cbnz_w, 0x35000000 | t.index, target); }
void Assembler::adr(XOrZr d, Label& target) { branch_to(Form::adr, 0x10000000 | d.index, target); }

void Assembler::test_bit_branch(Form form, std::uint32_t base, unsigned t, unsigned bit, Label& target) {
  const unsigned width = form == Form::tbz_x || form == Form::tbnz_x ? 64 : 32;
  if (bit >= width) fail(form, "bit " + std::to_string(bit) + " is out of range 0.." + std::to_string(width - 1));
  branch_to(form, base | (bit >> 5) << 31 | (bit & 31) << 19 | t, target);
}

void Assembler::tbz(XOrZr t, unsigned bit, Label& target) {
  test_bit_branch(Form::tbz_x, 0x36000000, t.index, bit, target);
}
void Assembler::tbz(WOrZr t, unsigned bit, Label& target) {
  test_bit_branch(Form::tbz_w, 0x36000000, t.index, bit, target);
}
void Assembler::tbnz(XOrZr t, unsigned bit, Label& target) {
  test_bit_branch(Form::tbnz_x, 0x37000000, t.index, bit, target);
}
void Assembler::tbnz(WOrZr t, unsigned bit, Label& target) {
  test_bit_branch(Form::tbnz_w, 0x37000000, t.index, bit, target);
}

void Assembler::br(XOrZr n) { emit(Form::br, 0xD61F0000 | n.index << 5); }
void Assembler::blr(XOrZr n) { emit(Form::blr, 0xD63F0000 | n.index << 5); }
void Assembler::ret(XOrZr n) { emit(Form::ret, 0xD65F0000 | n.index << 5); }
void Assembler::nop() { emit(Form::nop, kNop); }
void Assembler::udf(std::uint32_t imm16) {
  if (imm16 > 0xFFFF) fail(Form::udf, "immediate " + hex(imm16) + " does not fit in 16 bits");
  emit(Form::udf, imm16);
}
void Assembler::dmb(Barrier option) { emit(Form::dmb, 0xD50330BF | static_cast<std::uint32_t>(option) << 8); }
void Assembler::dsb(Barrier option) { emit(Form::dsb, 0xD503309F | static_cast<std::uint32_t>(option) << 8); }
void Assembler::isb() { emit(Form::isb, 0xD5033FDF); }

// ---- loads and stores ----------------------------------------------------------------------------

namespace {
// From the unsigned-offset encoding (bit 24 set) to the other addressing modes (bit 24 clear).
constexpr std::uint32_t kUnsignedOffset = 0x01000000u;
constexpr std::uint32_t kPostIndex = 0x400u, kPreIndex = 0xC00u, kRegisterOffset = 0x00200800u;
}  // namespace

// A family's forms are .uimm .unscaled .pre .post .reg (forms.hpp).
void Assembler::load_store(Form first, std::uint32_t base, unsigned bytes, unsigned t, const MemImm& mem) {
  const unsigned n = mem.base.index;
  if (mem.mode == AddrMode::offset) {
    const std::int64_t last = 4095 * std::int64_t{bytes};
    if (mem.offset < 0 || mem.offset > last) {
      fail(first, "offset " + std::to_string(mem.offset) + " is out of range 0.." + std::to_string(last) +
                      (mem.offset < 0 ? " (ldur/stur take -256..255)" : ""));
    }
    if (mem.offset % bytes != 0) {
      fail(first, "offset " + std::to_string(mem.offset) + " is not a multiple of " + std::to_string(bytes));
    }
    emit(first, base | u32(mem.offset / bytes) << 10 | n << 5 | t);
    return;
  }
  const Form form = form_at(first, mem.mode == AddrMode::pre ? 2 : 3);
  if (mem.offset < -256 || mem.offset > 255) {
    fail(form, "offset " + std::to_string(mem.offset) + " is out of range -256..255");
  }
  emit(form, (base & ~kUnsignedOffset) | (u32(mem.offset) & 0x1FF) << 12 |
                 (mem.mode == AddrMode::pre ? kPreIndex : kPostIndex) | n << 5 | t);
}

void Assembler::load_store(Form first, std::uint32_t base, unsigned bytes, unsigned t, const MemReg& mem) {
  const Form form = form_at(first, 4);
  const int scale = std::countr_zero(bytes);
  std::uint32_t s = 0;
  if (mem.amount >= 0) {
    if (mem.amount != 0 && mem.amount != scale) {
      fail(form,
           "index shift " + std::to_string(mem.amount) + " is not 0" + (scale ? " or " + std::to_string(scale) : ""));
    }
    // A byte access has two encodings of "no shift"; S=1 is the one with the amount written.
    s = bytes == 1 || mem.amount != 0 ? 1 : 0;
  }
  emit(form, (base & ~kUnsignedOffset) | kRegisterOffset | mem.index << 16 |
                 static_cast<std::uint32_t>(mem.kind) << 13 | s << 12 | mem.base.index << 5 | t);
}

void Assembler::load_store_unscaled(Form first, std::uint32_t base, unsigned t, const MemImm& mem) {
  const Form form = form_at(first, 1);
  if (mem.mode != AddrMode::offset) fail(form, "takes ptr(base, offset), not pre_ptr or post_ptr");
  if (mem.offset < -256 || mem.offset > 255) {
    fail(form, "offset " + std::to_string(mem.offset) + " is out of range -256..255");
  }
  emit(form, (base & ~kUnsignedOffset) | (u32(mem.offset) & 0x1FF) << 12 | mem.base.index << 5 | t);
}

namespace {
// A load or store that writes the base back must not also transfer that register (unpredictable).
bool writeback_overlaps(const MemImm& mem, unsigned t) {
  return mem.mode != AddrMode::offset && mem.base.index == t && t != 31;
}
}  // namespace

#define WEFT_A64_LOAD_STORE(name, reg, first, base, bytes)                                                            \
  void Assembler::name(reg t, MemImm mem) {                                                                           \
    if (writeback_overlaps(mem, t.index)) {                                                                           \
      fail(form_at(Form::first, mem.mode == AddrMode::pre ? 2 : 3), "the base register is also the transferred one"); \
    }                                                                                                                 \
    load_store(Form::first, base, bytes, t.index, mem);                                                               \
  }                                                                                                                   \
  void Assembler::name(reg t, MemReg mem) { load_store(Form::first, base, bytes, t.index, mem); }
WEFT_A64_LOAD_STORE(ldr, XOrZr, ldr_x_uimm, 0xF9400000, 8)
WEFT_A64_LOAD_STORE(ldr, WOrZr, ldr_w_uimm, 0xB9400000, 4)
WEFT_A64_LOAD_STORE(ldrb, WOrZr, ldrb_uimm, 0x39400000, 1)
WEFT_A64_LOAD_STORE(ldrh, WOrZr, ldrh_uimm, 0x79400000, 2)
WEFT_A64_LOAD_STORE(ldrsw, XOrZr, ldrsw_uimm, 0xB9800000, 4)
WEFT_A64_LOAD_STORE(str, XOrZr, str_x_uimm, 0xF9000000, 8)
WEFT_A64_LOAD_STORE(str, WOrZr, str_w_uimm, 0xB9000000, 4)
WEFT_A64_LOAD_STORE(strb, WOrZr, strb_uimm, 0x39000000, 1)
WEFT_A64_LOAD_STORE(strh, WOrZr, strh_uimm, 0x79000000, 2)
#undef WEFT_A64_LOAD_STORE

void Assembler::ldur(XOrZr t, MemImm mem) { load_store_unscaled(Form::ldr_x_uimm, 0xF9400000, t.index, mem); }
void Assembler::ldur(WOrZr t, MemImm mem) { load_store_unscaled(Form::ldr_w_uimm, 0xB9400000, t.index, mem); }
void Assembler::ldurb(WOrZr t, MemImm mem) { load_store_unscaled(Form::ldrb_uimm, 0x39400000, t.index, mem); }
void Assembler::ldurh(WOrZr t, MemImm mem) { load_store_unscaled(Form::ldrh_uimm, 0x79400000, t.index, mem); }
void Assembler::ldursw(XOrZr t, MemImm mem) { load_store_unscaled(Form::ldrsw_uimm, 0xB9800000, t.index, mem); }
void Assembler::stur(XOrZr t, MemImm mem) { load_store_unscaled(Form::str_x_uimm, 0xF9000000, t.index, mem); }
void Assembler::stur(WOrZr t, MemImm mem) { load_store_unscaled(Form::str_w_uimm, 0xB9000000, t.index, mem); }
void Assembler::sturb(WOrZr t, MemImm mem) { load_store_unscaled(Form::strb_uimm, 0x39000000, t.index, mem); }
void Assembler::sturh(WOrZr t, MemImm mem) { load_store_unscaled(Form::strh_uimm, 0x79000000, t.index, mem); }

// prfm is ldr x's encoding with opc = 10 and the prefetch operation in the Rt field; it has no
// pre- or post-index forms.
void Assembler::prfm(Prefetch op, MemImm mem) {
  if (mem.mode != AddrMode::offset) fail(Form::prfm_uimm, "takes ptr(base, offset), not pre_ptr or post_ptr");
  load_store(Form::prfm_uimm, 0xF9800000, 8, static_cast<unsigned>(op), mem);
}
void Assembler::prfm(Prefetch op, MemReg mem) {
  const int amount = mem.amount;
  if (amount > 0 && amount != 3) fail(Form::prfm_reg, "index shift " + std::to_string(amount) + " is not 0 or 3");
  const std::uint32_t s = amount > 0 ? 1 : 0;
  emit(Form::prfm_reg, 0xF8A00800 | mem.index << 16 | static_cast<std::uint32_t>(mem.kind) << 13 | s << 12 |
                           mem.base.index << 5 | static_cast<unsigned>(op));
}
void Assembler::prfum(Prefetch op, MemImm mem) {
  if (mem.mode != AddrMode::offset) fail(Form::prfum, "takes ptr(base, offset), not pre_ptr or post_ptr");
  if (mem.offset < -256 || mem.offset > 255) {
    fail(Form::prfum, "offset " + std::to_string(mem.offset) + " is out of range -256..255");
  }
  emit(Form::prfum, 0xF8800000 | (u32(mem.offset) & 0x1FF) << 12 | mem.base.index << 5 | static_cast<unsigned>(op));
}

namespace {
struct FpAccess {
  Form first;
  std::uint32_t base;
};
FpAccess fp_access(bool load, unsigned bytes) {
  switch (bytes) {
    case 16: return load ? FpAccess{Form::ldr_q_uimm, 0x3DC00000} : FpAccess{Form::str_q_uimm, 0x3D800000};
    case 8: return load ? FpAccess{Form::ldr_d_uimm, 0xFD400000} : FpAccess{Form::str_d_uimm, 0xFD000000};
    case 4: return load ? FpAccess{Form::ldr_s_uimm, 0xBD400000} : FpAccess{Form::str_s_uimm, 0xBD000000};
    default: return load ? FpAccess{Form::ldr_h_uimm, 0x7D400000} : FpAccess{Form::str_h_uimm, 0x7D000000};
  }
}
}  // namespace

void Assembler::fp_load_store(bool load, unsigned bytes, unsigned t, const MemImm& mem) {
  const FpAccess a = fp_access(load, bytes);
  load_store(a.first, a.base, bytes, t, mem);
}
void Assembler::fp_load_store(bool load, unsigned bytes, unsigned t, const MemReg& mem) {
  const FpAccess a = fp_access(load, bytes);
  load_store(a.first, a.base, bytes, t, mem);
}
void Assembler::fp_load_store_unscaled(bool load, unsigned bytes, unsigned t, const MemImm& mem) {
  const FpAccess a = fp_access(load, bytes);
  load_store_unscaled(a.first, a.base, t, mem);
}

// A family's forms are .off .pre .post; `base` is the signed-offset encoding.
void Assembler::pair(Form first, std::uint32_t base, unsigned bytes, unsigned t1, unsigned t2, const MemImm& mem) {
  const unsigned position = mem.mode == AddrMode::offset ? 0 : mem.mode == AddrMode::pre ? 1 : 2;
  const Form form = form_at(first, position);
  const std::int64_t low = -64 * std::int64_t{bytes}, high = 63 * std::int64_t{bytes};
  if (mem.offset < low || mem.offset > high) {
    fail(form, "offset " + std::to_string(mem.offset) + " is out of range " + std::to_string(low) + ".." +
                   std::to_string(high));
  }
  if (mem.offset % bytes != 0) {
    fail(form, "offset " + std::to_string(mem.offset) + " is not a multiple of " + std::to_string(bytes));
  }
  const std::uint32_t mode = position == 0   ? base
                             : position == 1 ? base | 0x00800000
                                             : (base & ~0x01800000u) | 0x00800000;
  emit(form, mode | (u32(mem.offset / bytes) & 0x7F) << 15 | t2 << 10 | mem.base.index << 5 | t1);
}

namespace {
// The member of a .off .pre .post family that `mem` selects.
Form pair_form(Form first, const MemImm& mem) {
  return form_at(first, mem.mode == AddrMode::offset ? 0 : mem.mode == AddrMode::pre ? 1 : 2);
}
}  // namespace

namespace {
// Unpredictable pairs: a load into one register twice, writeback of a transferred register.
std::string pair_conflict(bool load, bool general, unsigned t1, unsigned t2, const MemImm& mem) {
  if (load && t1 == t2) return "loads the same register twice";
  if (general && (writeback_overlaps(mem, t1) || writeback_overlaps(mem, t2))) {
    return "the base register is also a transferred one";
  }
  return {};
}
}  // namespace

void Assembler::ldp(XOrZr t1, XOrZr t2, MemImm mem) {
  if (auto e = pair_conflict(true, true, t1.index, t2.index, mem); !e.empty()) fail(pair_form(Form::ldp_x_off, mem), e);
  pair(Form::ldp_x_off, 0xA9400000, 8, t1.index, t2.index, mem);
}
void Assembler::ldp(WOrZr t1, WOrZr t2, MemImm mem) {
  if (auto e = pair_conflict(true, true, t1.index, t2.index, mem); !e.empty()) fail(pair_form(Form::ldp_w_off, mem), e);
  pair(Form::ldp_w_off, 0x29400000, 4, t1.index, t2.index, mem);
}
void Assembler::stp(XOrZr t1, XOrZr t2, MemImm mem) {
  if (auto e = pair_conflict(false, true, t1.index, t2.index, mem); !e.empty())
    fail(pair_form(Form::stp_x_off, mem), e);
  pair(Form::stp_x_off, 0xA9000000, 8, t1.index, t2.index, mem);
}
void Assembler::stp(WOrZr t1, WOrZr t2, MemImm mem) {
  if (auto e = pair_conflict(false, true, t1.index, t2.index, mem); !e.empty())
    fail(pair_form(Form::stp_w_off, mem), e);
  pair(Form::stp_w_off, 0x29000000, 4, t1.index, t2.index, mem);
}

void Assembler::fp_pair(bool load, unsigned bytes, unsigned t1, unsigned t2, const MemImm& mem) {
  Form first = Form::ldp_q_off;
  std::uint32_t base = 0xAD000000;  // stp q
  if (bytes == 8) first = Form::ldp_d_off, base = 0x6D000000;
  if (bytes == 4) first = Form::ldp_s_off, base = 0x2D000000;
  if (!load) first = form_at(first, static_cast<unsigned>(Form::stp_q_off) - static_cast<unsigned>(Form::ldp_q_off));
  if (load) base |= 0x00400000;
  if (auto e = pair_conflict(load, false, t1, t2, mem); !e.empty()) fail(pair_form(first, mem), e);
  pair(first, base, bytes, t1, t2, mem);
}

// ---- atomics and exclusives ----------------------------------------------------------------------

void Assembler::exclusive(Form form, std::uint32_t base, unsigned s, unsigned t, const MemImm& mem) {
  if (mem.mode != AddrMode::offset || mem.offset != 0) fail(form, "the address is ptr(base) without offset");
  emit(form, base | s << 16 | mem.base.index << 5 | t);
}

namespace {
// The status register of a store-exclusive must differ from the data and the base (unpredictable).
bool status_conflicts(unsigned status, unsigned t, const MemImm& mem) {
  return status == t || (status == mem.base.index && status != 31);
}
}  // namespace

void Assembler::ldar(XOrZr t, MemImm mem) { exclusive(Form::ldar_x, 0xC8DFFC00, 0, t.index, mem); }
void Assembler::ldar(WOrZr t, MemImm mem) { exclusive(Form::ldar_w, 0x88DFFC00, 0, t.index, mem); }
void Assembler::stlr(XOrZr t, MemImm mem) { exclusive(Form::stlr_x, 0xC89FFC00, 0, t.index, mem); }
void Assembler::stlr(WOrZr t, MemImm mem) { exclusive(Form::stlr_w, 0x889FFC00, 0, t.index, mem); }
void Assembler::ldxr(XOrZr t, MemImm mem) { exclusive(Form::ldxr_x, 0xC85F7C00, 0, t.index, mem); }
void Assembler::ldxr(WOrZr t, MemImm mem) { exclusive(Form::ldxr_w, 0x885F7C00, 0, t.index, mem); }
void Assembler::ldaxr(XOrZr t, MemImm mem) { exclusive(Form::ldaxr_x, 0xC85FFC00, 0, t.index, mem); }
void Assembler::ldaxr(WOrZr t, MemImm mem) { exclusive(Form::ldaxr_w, 0x885FFC00, 0, t.index, mem); }
void Assembler::stxr(WOrZr s, XOrZr t, MemImm mem) {
  if (status_conflicts(s.index, t.index, mem))
    fail(Form::stxr_x, "the status register is also the data or base register");
  exclusive(Form::stxr_x, 0xC8007C00, s.index, t.index, mem);
}
void Assembler::stxr(WOrZr s, WOrZr t, MemImm mem) {
  if (status_conflicts(s.index, t.index, mem))
    fail(Form::stxr_w, "the status register is also the data or base register");
  exclusive(Form::stxr_w, 0x88007C00, s.index, t.index, mem);
}
void Assembler::stlxr(WOrZr s, XOrZr t, MemImm mem) {
  if (status_conflicts(s.index, t.index, mem))
    fail(Form::stlxr_x, "the status register is also the data or base register");
  exclusive(Form::stlxr_x, 0xC800FC00, s.index, t.index, mem);
}
void Assembler::stlxr(WOrZr s, WOrZr t, MemImm mem) {
  if (status_conflicts(s.index, t.index, mem))
    fail(Form::stlxr_w, "the status register is also the data or base register");
  exclusive(Form::stlxr_w, 0x8800FC00, s.index, t.index, mem);
}
void Assembler::ldaddal(XOrZr s, XOrZr t, MemImm mem) { exclusive(Form::ldaddal_x, 0xF8E00000, s.index, t.index, mem); }
void Assembler::ldaddal(WOrZr s, WOrZr t, MemImm mem) { exclusive(Form::ldaddal_w, 0xB8E00000, s.index, t.index, mem); }

// ---- vector structure loads and stores -----------------------------------------------------------

namespace {
constexpr std::uint32_t kStructPost = 0x00800000u;  // post-index; Rm = 31 means by the immediate
}  // namespace

void Assembler::vector_list(bool load, Arr arr, const std::vector<unsigned>& registers, const MemImm* imm,
                            const MemPostReg* reg) {
  const unsigned count = static_cast<unsigned>(registers.size());
  const Form family = load ? Form::ld1_16b_x1_off : Form::st1_16b_x1_off;
  const unsigned mode = reg ? 2 : imm->mode == AddrMode::post ? 1 : 0;
  if (count < 1 || count > 4) {
    throw Error(std::string("a64 ") + (load ? "ld1" : "st1") + ": a list of " + std::to_string(count) +
                " registers (1 to 4 are)");
  }
  const Form form = form_at(family, int_position(arr) * 12 + (count - 1) * 3 + mode);
  for (unsigned i = 1; i < count; ++i) {
    if (registers[i] != (registers[0] + i) % 32) {
      fail(form, "v" + std::to_string(registers[i]) + " does not follow v" + std::to_string(registers[i - 1]));
    }
  }
  static constexpr std::uint32_t kOpcode[] = {0x7, 0xA, 0x6, 0x2};  // 1 to 4 registers
  std::uint32_t word =
      (load ? 0x0C400000u : 0x0C000000u) | q_of(arr) | kOpcode[count - 1] << 12 | size_of(arr) << 10 | registers[0];
  if (reg) {
    word |= kStructPost | reg->index.index << 16 | reg->base.index << 5;
  } else {
    if (imm->mode == AddrMode::pre) fail(form, "there is no pre-index form (ptr or post_ptr)");
    if (imm->mode == AddrMode::offset && imm->offset != 0) fail(form, "takes no offset: ptr(base) or post_ptr");
    if (imm->mode == AddrMode::post && imm->offset != 16 * count) {
      fail(form, "post-index " + std::to_string(imm->offset) + " is not " + std::to_string(16 * count) +
                     " (the bytes of the list)");
    }
    word |= (imm->mode == AddrMode::post ? kStructPost | 31u << 16 : 0u) | imm->base.index << 5;
  }
  emit(form, word);
}

void Assembler::vector_lane(bool load, unsigned t, unsigned lane, bool is_d, const MemImm& mem) {
  const Form first = load ? (is_d ? Form::ld1_d_lane_off : Form::ld1_s_lane_off)
                          : (is_d ? Form::st1_d_lane_off : Form::st1_s_lane_off);
  const Form form = form_at(first, mem.mode == AddrMode::post ? 1 : 0);
  const unsigned bytes = is_d ? 8 : 4;
  if (mem.mode == AddrMode::pre) fail(form, "there is no pre-index form (ptr or post_ptr)");
  if (mem.mode == AddrMode::offset && mem.offset != 0) fail(form, "takes no offset: ptr(base) or post_ptr");
  if (mem.mode == AddrMode::post && mem.offset != bytes) {
    fail(form,
         "post-index " + std::to_string(mem.offset) + " is not " + std::to_string(bytes) + " (the element bytes)");
  }
  const std::uint32_t lane_bits = is_d ? (lane << 30 | 1u << 10) : ((lane >> 1) << 30 | (lane & 1) << 12);
  emit(form, (load ? 0x0D408000u : 0x0D008000u) | lane_bits |
                 (mem.mode == AddrMode::post ? kStructPost | 31u << 16 : 0u) | mem.base.index << 5 | t);
}

void Assembler::vector_lane(bool load, unsigned t, unsigned lane, bool is_d, const MemPostReg& mem) {
  const Form first = load ? (is_d ? Form::ld1_d_lane_off : Form::ld1_s_lane_off)
                          : (is_d ? Form::st1_d_lane_off : Form::st1_s_lane_off);
  const std::uint32_t lane_bits = is_d ? (lane << 30 | 1u << 10) : ((lane >> 1) << 30 | (lane & 1) << 12);
  emit(form_at(first, 2),
       (load ? 0x0D408000u : 0x0D008000u) | lane_bits | kStructPost | mem.index.index << 16 | mem.base.index << 5 | t);
}

void Assembler::load_replicate(bool is_d, unsigned t, const MemImm& mem) {
  const Form form = form_at(is_d ? Form::ld1r_2d_off : Form::ld1r_4s_off, mem.mode == AddrMode::post ? 1 : 0);
  const unsigned bytes = is_d ? 8 : 4;
  if (mem.mode == AddrMode::pre) fail(form, "there is no pre-index form (ptr or post_ptr)");
  if (mem.mode == AddrMode::offset && mem.offset != 0) fail(form, "takes no offset: ptr(base) or post_ptr");
  if (mem.mode == AddrMode::post && mem.offset != bytes) {
    fail(form,
         "post-index " + std::to_string(mem.offset) + " is not " + std::to_string(bytes) + " (the element bytes)");
  }
  emit(form, 0x4D40C000u | (is_d ? 3u : 2u) << 10 | (mem.mode == AddrMode::post ? kStructPost | 31u << 16 : 0u) |
                 mem.base.index << 5 | t);
}

void Assembler::load_replicate(bool is_d, unsigned t, const MemPostReg& mem) {
  emit(form_at(is_d ? Form::ld1r_2d_off : Form::ld1r_4s_off, 2),
       0x4D40C000u | (is_d ? 3u : 2u) << 10 | kStructPost | mem.index.index << 16 | mem.base.index << 5 | t);
}

// ---- floating-point vector -----------------------------------------------------------------------

void Assembler::fp_vector(Form first, std::uint32_t base, Arr arr, unsigned d, unsigned n, unsigned m) {
  emit(form_at(first, fp_position(arr)), base | q_of(arr) | (arr == Arr::d2 ? 1u << 22 : 0u) | m << 16 | n << 5 | d);
}

void Assembler::fp_compare_zero(Form first, std::uint32_t base, Arr arr, unsigned d, unsigned n, double zero) {
  if (zero != 0.0) fail(form_at(first, fp_position(arr)), "compares with 0.0 only, not " + decimal(zero));
  fp_vector(first, base, arr, d, n, 0);
}

void Assembler::fp_by_element(Form first, std::uint32_t base, Arr arr, unsigned d, unsigned n, unsigned m,
                              unsigned lane) {
  // The lane index is H:L for s elements and H for d elements; M:Rm is the 5-bit register.
  const std::uint32_t h = arr == Arr::d2 ? lane : lane >> 1;
  const std::uint32_t l = arr == Arr::d2 ? 0 : lane & 1;
  emit(form_at(first, fp_position(arr)),
       base | q_of(arr) | (arr == Arr::d2 ? 1u << 22 : 0u) | l << 21 | m << 16 | h << 11 | n << 5 | d);
}

void Assembler::fp_vector_immediate(Arr arr, unsigned d, double value) {
  const Form form = form_at(Form::fmov_2s_imm, fp_position(arr));
  const std::optional<std::uint32_t> imm8 = encode_fp_imm8(value);
  if (!imm8) fail(form, "value " + decimal(value) + " is not +-(16..31)/16 * 2^(-3..4)");
  const std::uint32_t base = arr == Arr::d2 ? 0x6F00F400u : 0x0F00F400u | q_of(arr);
  emit(form, base | (*imm8 >> 5) << 16 | (*imm8 & 31) << 5 | d);
}

void Assembler::fcvtn(V2S d, V2D n) { emit(Form::fcvtn_2s, 0x0E616800 | n.index << 5 | d.index); }
void Assembler::fcvtn2(V4S d, V2D n) { emit(Form::fcvtn2_4s, 0x4E616800 | n.index << 5 | d.index); }
void Assembler::fcvtl(V2D d, V2S n) { emit(Form::fcvtl_2d, 0x0E617800 | n.index << 5 | d.index); }
void Assembler::fcvtl2(V2D d, V4S n) { emit(Form::fcvtl2_2d, 0x4E617800 | n.index << 5 | d.index); }
void Assembler::faddp(SReg d, V2S n) { emit(Form::faddp_s, 0x7E30D800 | n.index << 5 | d.index); }
void Assembler::faddp(DReg d, V2D n) { emit(Form::faddp_d, 0x7E70D800 | n.index << 5 | d.index); }
void Assembler::fmaxv(SReg d, V4S n) { emit(Form::fmaxv_4s, 0x6E30F800 | n.index << 5 | d.index); }
void Assembler::fminv(SReg d, V4S n) { emit(Form::fminv_4s, 0x6EB0F800 | n.index << 5 | d.index); }
void Assembler::fmaxnmv(SReg d, V4S n) { emit(Form::fmaxnmv_4s, 0x6E30C800 | n.index << 5 | d.index); }
void Assembler::fminnmv(SReg d, V4S n) { emit(Form::fminnmv_4s, 0x6EB0C800 | n.index << 5 | d.index); }

// ---- integer vector ------------------------------------------------------------------------------

void Assembler::int_vector(Form first, std::uint32_t base, Arr arr, unsigned d, unsigned n, unsigned m) {
  emit(form_at(first, int_position(arr)), base | q_of(arr) | size_of(arr) << 22 | m << 16 | n << 5 | d);
}

void Assembler::shift_immediate(Form first, Arr arr, unsigned d, unsigned n, unsigned shift) {
  const Form form = form_at(first, int_position(arr));
  const unsigned esize = 8u << size_of(arr);
  std::uint32_t base = 0, immh_immb = 0;  // immh:immb encodes the element size and the shift
  if (first == Form::shl_16b) {
    if (shift >= esize)
      fail(form, "shift " + std::to_string(shift) + " is out of range 0.." + std::to_string(esize - 1));
    base = 0x0F005400, immh_immb = esize + shift;
  } else {
    if (shift < 1 || shift > esize)
      fail(form, "shift " + std::to_string(shift) + " is out of range 1.." + std::to_string(esize));
    base = first == Form::sshr_16b ? 0x0F000400 : 0x2F000400, immh_immb = 2 * esize - shift;
  }
  emit(form, base | q_of(arr) | immh_immb << 16 | n << 5 | d);
}

void Assembler::widen_narrow(Form first, Arr wide, unsigned d, unsigned n, unsigned shift) {
  const Form form = form_at(first, wide_position(wide));
  const unsigned narrow_bits = 4u << size_of(wide);  // of the narrow elements
  const bool upper =
      first == Form::sshll2_8h || first == Form::ushll2_8h || first == Form::shrn2_8h || first == Form::xtn2_8h;
  const std::uint32_t q = upper ? kQ : 0;
  if (first == Form::xtn_8h || first == Form::xtn2_8h) {
    emit(form, 0x0E212800 | q | (size_of(wide) - 1) << 22 | n << 5 | d);
    return;
  }
  std::uint32_t base = 0, immh_immb = 0;
  if (first == Form::shrn_8h || first == Form::shrn2_8h) {
    if (shift < 1 || shift > narrow_bits) {
      fail(form, "shift " + std::to_string(shift) + " is out of range 1.." + std::to_string(narrow_bits));
    }
    base = 0x0F008400, immh_immb = 2 * narrow_bits - shift;
  } else {
    if (shift >= narrow_bits) {
      fail(form, "shift " + std::to_string(shift) + " is out of range 0.." + std::to_string(narrow_bits - 1));
    }
    base = first == Form::sshll_8h || first == Form::sshll2_8h ? 0x0F00A400 : 0x2F00A400;
    immh_immb = narrow_bits + shift;
  }
  emit(form, base | q | immh_immb << 16 | n << 5 | d);
}

// ---- bitwise vector, immediates, permutes --------------------------------------------------------

void Assembler::byte_vector(Form first, std::uint32_t base, Arr arr, unsigned d, unsigned n, unsigned m) {
  emit(form_at(first, byte_position(arr)), base | q_of(arr) | m << 16 | n << 5 | d);
}

void Assembler::extract(Arr arr, unsigned d, unsigned n, unsigned m, unsigned index) {
  const Form form = form_at(Form::ext_8b, byte_position(arr));
  const unsigned bytes = arr == Arr::b8 ? 8 : 16;
  if (index >= bytes) fail(form, "index " + std::to_string(index) + " is out of range 0.." + std::to_string(bytes - 1));
  emit(form, 0x2E000000 | q_of(arr) | m << 16 | index << 11 | n << 5 | d);
}

void Assembler::modified_immediate(Form form, std::uint32_t base, unsigned d, std::uint32_t imm8, std::uint32_t cmode) {
  if (imm8 > 0xFF) fail(form, "immediate " + hex(imm8) + " does not fit in 8 bits");
  emit(form, base | (imm8 >> 5) << 16 | cmode << 12 | (imm8 & 31) << 5 | d);
}

void Assembler::shifted_immediate(Form form, std::uint32_t base, bool halfword, unsigned d, std::uint32_t imm8,
                                  Shift shift) {
  const unsigned last = halfword ? 8 : 24;
  if (shift.kind != ShiftKind::lsl || shift.amount % 8 != 0 || shift.amount > last) {
    fail(form, std::string("the immediate shifts by lsl(0) or lsl(8)") + (halfword ? "" : ", lsl(16), lsl(24)"));
  }
  // cmode is 10x0 for halfwords and 0xx0 for words, x the shift in bytes.
  const std::uint32_t cmode = (halfword ? 0x8u : 0x0u) | (shift.amount / 8) << 1;
  modified_immediate(form, base, d, imm8, cmode);
}

void Assembler::movi(V8B d, std::uint32_t imm8) { modified_immediate(Form::movi_8b, 0x0F000400, d.index, imm8, 0xE); }
void Assembler::movi(V16B d, std::uint32_t imm8) { modified_immediate(Form::movi_16b, 0x4F000400, d.index, imm8, 0xE); }
void Assembler::movi(V4H d, std::uint32_t imm8, Shift s) {
  shifted_immediate(Form::movi_4h, 0x0F000400, true, d.index, imm8, s);
}
void Assembler::movi(V8H d, std::uint32_t imm8, Shift s) {
  shifted_immediate(Form::movi_8h, 0x4F000400, true, d.index, imm8, s);
}
void Assembler::movi(V2S d, std::uint32_t imm8, Shift s) {
  shifted_immediate(Form::movi_2s, 0x0F000400, false, d.index, imm8, s);
}
void Assembler::movi(V4S d, std::uint32_t imm8, Shift s) {
  shifted_immediate(Form::movi_4s, 0x4F000400, false, d.index, imm8, s);
}
void Assembler::mvni(V8H d, std::uint32_t imm8, Shift s) {
  shifted_immediate(Form::mvni_8h, 0x6F000400, true, d.index, imm8, s);
}
void Assembler::mvni(V4S d, std::uint32_t imm8, Shift s) {
  shifted_immediate(Form::mvni_4s, 0x6F000400, false, d.index, imm8, s);
}

namespace {
// imm8 bit i stands for byte i of a 64-bit mask whose bytes are each 0x00 or 0xff.
std::optional<std::uint32_t> byte_mask_imm8(std::uint64_t mask) {
  std::uint32_t imm8 = 0;
  for (unsigned i = 0; i < 8; ++i) {
    const auto byte = (mask >> (8 * i)) & 0xFF;
    if (byte != 0 && byte != 0xFF) return std::nullopt;
    imm8 |= (byte != 0 ? 1u : 0u) << i;
  }
  return imm8;
}
}  // namespace

void Assembler::movi(V2D d, std::uint64_t mask) {
  const auto imm8 = byte_mask_imm8(mask);
  if (!imm8) fail(Form::movi_2d, "value " + hex(mask) + " has a byte other than 0x00 and 0xff");
  modified_immediate(Form::movi_2d, 0x6F000400, d.index, *imm8, 0xE);
}
void Assembler::movi(DReg d, std::uint64_t mask) {
  const auto imm8 = byte_mask_imm8(mask);
  if (!imm8) fail(Form::movi_d, "value " + hex(mask) + " has a byte other than 0x00 and 0xff");
  modified_immediate(Form::movi_d, 0x2F000400, d.index, *imm8, 0xE);
}

// ---- element moves -------------------------------------------------------------------------------

namespace {
// imm5 names the element size (its lowest set bit) and the lane (the bits above it).
std::uint32_t imm5(std::uint32_t size, unsigned lane) { return (lane << (size + 1) | 1u << size) << 16; }
}  // namespace

void Assembler::duplicate(Arr arr, unsigned d, unsigned n, unsigned lane, bool from_element) {
  const Form form = arr == Arr::s2 ? (from_element ? Form::dup_elem_2s : Form::dup_gen_2s)
                                   : form_at(from_element ? Form::dup_elem_16b : Form::dup_gen_16b, int_position(arr));
  emit(form, (from_element ? 0x0E000400u : 0x0E000C00u) | q_of(arr) | imm5(size_of(arr), lane) | n << 5 | d);
}

void Assembler::insert(Lane lane, unsigned d, unsigned d_lane, unsigned n, unsigned n_lane, bool from_element) {
  const std::uint32_t size = lane_size(lane);
  if (from_element) {
    emit(form_at(Form::ins_elem_b, size), 0x6E000400 | imm5(size, d_lane) | (n_lane << size) << 11 | n << 5 | d);
  } else {
    emit(form_at(Form::ins_gen_b, size), 0x4E001C00 | imm5(size, d_lane) | n << 5 | d);
  }
}

void Assembler::move_to_general(Lane lane, unsigned d, unsigned n, unsigned n_lane) {
  const std::uint32_t size = lane_size(lane);
  emit(form_at(Form::umov_b, size), 0x0E003C00 | (lane == Lane::d ? kQ : 0u) | imm5(size, n_lane) | n << 5 | d);
}

void Assembler::fmov(SReg d, WOrZr n) { emit(Form::fmov_s_w, 0x1E270000 | n.index << 5 | d.index); }
void Assembler::fmov(WOrZr d, SReg n) { emit(Form::fmov_w_s, 0x1E260000 | n.index << 5 | d.index); }
void Assembler::fmov(DReg d, XOrZr n) { emit(Form::fmov_d_x, 0x9E670000 | n.index << 5 | d.index); }
void Assembler::fmov(XOrZr d, DReg n) { emit(Form::fmov_x_d, 0x9E660000 | n.index << 5 | d.index); }

// ---- scalar floating point -----------------------------------------------------------------------

// The s and d forms are neighbours (forms.hpp); ftype 01 selects double precision.
void Assembler::fp_scalar(Form first, std::uint32_t base, unsigned bytes, unsigned d, unsigned n, unsigned m) {
  const bool dp = bytes == 8;
  emit(form_at(first, dp ? 1 : 0), base | (dp ? 1u << 22 : 0u) | m << 16 | n << 5 | d);
}

void Assembler::fp_scalar_fused(Form first, std::uint32_t base, unsigned bytes, unsigned d, unsigned n, unsigned m,
                                unsigned a) {
  fp_scalar(first, base | a << 10, bytes, d, n, m);
}

void Assembler::fcvt(DReg d, SReg n) { emit(Form::fcvt_d_s, 0x1E22C000 | n.index << 5 | d.index); }
void Assembler::fcvt(SReg d, DReg n) { emit(Form::fcvt_s_d, 0x1E624000 | n.index << 5 | d.index); }

void Assembler::fmov(SReg d, double value) {
  const auto imm8 = encode_fp_imm8(value);
  if (!imm8) fail(Form::fmov_s_imm, "value " + decimal(value) + " is not +-(16..31)/16 * 2^(-3..4)");
  emit(Form::fmov_s_imm, 0x1E201000 | *imm8 << 13 | d.index);
}
void Assembler::fmov(DReg d, double value) {
  const auto imm8 = encode_fp_imm8(value);
  if (!imm8) fail(Form::fmov_d_imm, "value " + decimal(value) + " is not +-(16..31)/16 * 2^(-3..4)");
  emit(Form::fmov_d_imm, 0x1E601000 | *imm8 << 13 | d.index);
}

// ---- unary emitter: sums across lanes -------------------------------------------------------------

void Assembler::addv(BReg d, V16B n) { emit(Form::addv_16b, 0x4E31B800 | n.index << 5 | d.index); }
void Assembler::addv(HReg d, V8H n) { emit(Form::addv_8h, 0x4E71B800 | n.index << 5 | d.index); }
void Assembler::addv(SReg d, V4S n) { emit(Form::addv_4s, 0x4EB1B800 | n.index << 5 | d.index); }

// ---- FEAT_BF16 (Neon) ----------------------------------------------------------------------------

void Assembler::bfdot(V2S d, V4H n, V4H m) {
  emit(Form::bfdot_2s, 0x2E40FC00 | m.index << 16 | n.index << 5 | d.index);
}
void Assembler::bfdot(V4S d, V8H n, V8H m) {
  emit(Form::bfdot_4s, 0x2E40FC00 | kQ | m.index << 16 | n.index << 5 | d.index);
}
// The pair index is H:L (bits 11 and 21); M:Rm (bits 20..16) is the whole register number.
void Assembler::bfdot(V2S d, V4H n, Elem2H m) {
  emit(Form::bfdot_2s_elem,
       0x0F40F000 | (m.pair & 1) << 21 | m.index << 16 | (m.pair >> 1) << 11 | n.index << 5 | d.index);
}
void Assembler::bfdot(V4S d, V8H n, Elem2H m) {
  emit(Form::bfdot_4s_elem,
       0x0F40F000 | kQ | (m.pair & 1) << 21 | m.index << 16 | (m.pair >> 1) << 11 | n.index << 5 | d.index);
}
void Assembler::bfmmla(V4S d, V8H n, V8H m) {
  emit(Form::bfmmla_4s, 0x6E40EC00 | m.index << 16 | n.index << 5 | d.index);
}
// Q selects the odd (top) lanes.
void Assembler::bfmlalb(V4S d, V8H n, V8H m) {
  emit(Form::bfmlalb_4s, 0x2EC0FC00 | m.index << 16 | n.index << 5 | d.index);
}
void Assembler::bfmlalt(V4S d, V8H n, V8H m) {
  emit(Form::bfmlalt_4s, 0x2EC0FC00 | kQ | m.index << 16 | n.index << 5 | d.index);
}
void Assembler::bfmlalb(V4S d, V8H n, Elem<Lane::h> m) {
  bf16_by_element(Form::bfmlalb_4s_elem, 0x0FC0F000, d.index, n.index, m.index, m.lane);
}
void Assembler::bfmlalt(V4S d, V8H n, Elem<Lane::h> m) {
  bf16_by_element(Form::bfmlalt_4s_elem, 0x0FC0F000 | kQ, d.index, n.index, m.index, m.lane);
}
// The lane index is H:L:M (bits 11, 21, 20), which leaves Rm (bits 19..16) four bits: v0..v15.
void Assembler::bf16_by_element(Form form, std::uint32_t base, unsigned d, unsigned n, unsigned m, unsigned lane) {
  if (m > 15) fail(form, "the element's register v" + std::to_string(m) + " is out of range v0..v15");
  emit(form, base | (lane >> 1 & 1) << 21 | (lane & 1) << 20 | m << 16 | (lane >> 2) << 11 | n << 5 | d);
}
void Assembler::bfcvtn(V4H d, V4S n) { emit(Form::bfcvtn_4h, 0x0EA16800 | n.index << 5 | d.index); }
void Assembler::bfcvtn2(V8H d, V4S n) { emit(Form::bfcvtn2_8h, 0x4EA16800 | n.index << 5 | d.index); }
void Assembler::bfcvt(HReg d, SReg n) { emit(Form::bfcvt_h_s, 0x1E634000 | n.index << 5 | d.index); }

}  // namespace weft::jit::a64

// ---- SVE -----------------------------------------------------------------------------------------
// Scalable Vector Extension encodings (DDI 0487, "SVE encodings"): the element size is bits 23:22,
// the governing predicate bits 12:10 (or 13:10 where all sixteen are allowed).

namespace weft::jit::a64 {

namespace {

std::uint32_t sve_size(Lane lane) { return lane_size(lane) << 22; }
// Members of a family (forms.hpp): .b .h .s .d, or .h .s .d for floating point.
Form sve_member(Form first, Lane lane) { return form_at(first, lane_size(lane)); }
Form sve_fp_member(Form first, Lane lane) { return form_at(first, lane_size(lane) - 1); }
bool sve_fp_family(Form first) {
  const std::string_view name = form_name(first);
  return name.size() > 2 && name.substr(name.size() - 2) == ".h";
}
Form sve_form(Form first, Lane lane) { return sve_fp_family(first) ? sve_fp_member(first, lane) : sve_member(first, lane); }
std::string zreg(unsigned z) { return "z" + std::to_string(z); }
std::string preg(unsigned p) { return "p" + std::to_string(p); }

}  // namespace

unsigned Assembler::sve_low_predicate(Form form, unsigned p) const {
  if (p > 7) fail(form, "governing predicate " + preg(p) + " is not one of p0..p7");
  return p;
}

void Assembler::sve_ptrue(Lane lane, unsigned d, Pattern pattern) {
  emit(sve_member(Form::sve_ptrue_b, lane), 0x2518E000 | sve_size(lane) | static_cast<std::uint32_t>(pattern) << 5 | d);
}
void Assembler::pfalse(PVec<Lane::b> d) { emit(Form::sve_pfalse, 0x2518E400 | d.index); }
void Assembler::ptest(PReg g, PVec<Lane::b> n) { emit(Form::sve_ptest, 0x2550C000 | g.index << 10 | n.index << 5); }

void Assembler::sve_while(Lane lane, bool x, unsigned d, unsigned n, unsigned m) {
  emit(sve_member(x ? Form::sve_whilelt_x_b : Form::sve_whilelt_w_b, lane),
       0x25200400 | sve_size(lane) | m << 16 | (x ? 1u << 12 : 0u) | n << 5 | d);
}

void Assembler::sve_count(Form form, std::uint32_t base, unsigned d, Pattern pattern, unsigned mul) {
  if (mul < 1 || mul > 16) fail(form, "multiplier " + std::to_string(mul) + " is out of range 1..16");
  emit(form, base | (mul - 1) << 16 | static_cast<std::uint32_t>(pattern) << 5 | d);
}
void Assembler::cntb(XOrZr d, Pattern p, unsigned mul) { sve_count(Form::sve_cntb, 0x0420E000, d.index, p, mul); }
void Assembler::cnth(XOrZr d, Pattern p, unsigned mul) { sve_count(Form::sve_cnth, 0x0460E000, d.index, p, mul); }
void Assembler::cntw(XOrZr d, Pattern p, unsigned mul) { sve_count(Form::sve_cntw, 0x04A0E000, d.index, p, mul); }
void Assembler::cntd(XOrZr d, Pattern p, unsigned mul) { sve_count(Form::sve_cntd, 0x04E0E000, d.index, p, mul); }
void Assembler::incb(XOrZr d, Pattern p, unsigned mul) { sve_count(Form::sve_incb, 0x0430E000, d.index, p, mul); }
void Assembler::inch(XOrZr d, Pattern p, unsigned mul) { sve_count(Form::sve_inch, 0x0470E000, d.index, p, mul); }
void Assembler::incw(XOrZr d, Pattern p, unsigned mul) { sve_count(Form::sve_incw, 0x04B0E000, d.index, p, mul); }
void Assembler::incd(XOrZr d, Pattern p, unsigned mul) { sve_count(Form::sve_incd, 0x04F0E000, d.index, p, mul); }

namespace {
// imm6 of addvl/addpl/rdvl, or an error.
std::optional<std::uint32_t> vl_multiple(std::int64_t imm) {
  if (imm < -32 || imm > 31) return std::nullopt;
  return u32(imm) & 0x3Fu;
}
}  // namespace

void Assembler::addvl(XOrSp d, XOrSp n, std::int64_t imm) {
  const auto imm6 = vl_multiple(imm);
  if (!imm6) fail(Form::sve_addvl, "multiple " + std::to_string(imm) + " is out of range -32..31");
  emit(Form::sve_addvl, 0x04205000 | n.index << 16 | *imm6 << 5 | d.index);
}
void Assembler::addpl(XOrSp d, XOrSp n, std::int64_t imm) {
  const auto imm6 = vl_multiple(imm);
  if (!imm6) fail(Form::sve_addpl, "multiple " + std::to_string(imm) + " is out of range -32..31");
  emit(Form::sve_addpl, 0x04605000 | n.index << 16 | *imm6 << 5 | d.index);
}
void Assembler::rdvl(XOrZr d, std::int64_t imm) {
  const auto imm6 = vl_multiple(imm);
  if (!imm6) fail(Form::sve_rdvl, "multiple " + std::to_string(imm) + " is out of range -32..31");
  emit(Form::sve_rdvl, 0x04BF5000 | *imm6 << 5 | d.index);
}

// ---- SVE loads and stores ------------------------------------------------------------------------

void Assembler::sve_contiguous(Form form, std::uint32_t base, unsigned t, unsigned g, const MemVl& mem) {
  sve_low_predicate(form, g);
  if (mem.index < -8 || mem.index > 7) {
    fail(form, "offset " + std::to_string(mem.index) + " is out of range -8..7 (times the vector length)");
  }
  emit(form, base | (u32(mem.index) & 0xFu) << 16 | g << 10 | mem.base.index << 5 | t);
}

void Assembler::sve_contiguous(Form form, std::uint32_t base, unsigned shift, unsigned t, unsigned g,
                               const MemReg& mem) {
  sve_low_predicate(form, g);
  if (mem.kind != ExtendKind::uxtx) fail(form, "the index is an x register with lsl");
  if (mem.amount != static_cast<int>(shift)) {
    fail(form, "index shift " + (mem.amount < 0 ? std::string("none") : std::to_string(mem.amount)) + " is not lsl(" +
                   std::to_string(shift) + ") (the element size)");
  }
  emit(form, base | mem.index << 16 | g << 10 | mem.base.index << 5 | t);
}

void Assembler::ld1h(ZH t, PZeroing g, MemVl mem) { sve_contiguous(Form::sve_ld1h_imm, 0xA4A0A000, t.index, g.index, mem); }
void Assembler::ld1h(ZH t, PZeroing g, MemReg mem) {
  sve_contiguous(Form::sve_ld1h_reg, 0xA4A04000, 1, t.index, g.index, mem);
}
void Assembler::ld1w(ZS t, PZeroing g, MemVl mem) { sve_contiguous(Form::sve_ld1w_imm, 0xA540A000, t.index, g.index, mem); }
void Assembler::ld1w(ZS t, PZeroing g, MemReg mem) {
  sve_contiguous(Form::sve_ld1w_reg, 0xA5404000, 2, t.index, g.index, mem);
}
void Assembler::ld1d(ZD t, PZeroing g, MemVl mem) { sve_contiguous(Form::sve_ld1d_imm, 0xA5E0A000, t.index, g.index, mem); }
void Assembler::ld1d(ZD t, PZeroing g, MemReg mem) {
  sve_contiguous(Form::sve_ld1d_reg, 0xA5E04000, 3, t.index, g.index, mem);
}
void Assembler::st1h(ZH t, PReg g, MemVl mem) { sve_contiguous(Form::sve_st1h_imm, 0xE4A0E000, t.index, g.index, mem); }
void Assembler::st1h(ZH t, PReg g, MemReg mem) {
  sve_contiguous(Form::sve_st1h_reg, 0xE4A04000, 1, t.index, g.index, mem);
}
void Assembler::st1w(ZS t, PReg g, MemVl mem) { sve_contiguous(Form::sve_st1w_imm, 0xE540E000, t.index, g.index, mem); }
void Assembler::st1w(ZS t, PReg g, MemReg mem) {
  sve_contiguous(Form::sve_st1w_reg, 0xE5404000, 2, t.index, g.index, mem);
}
void Assembler::st1d(ZD t, PReg g, MemVl mem) { sve_contiguous(Form::sve_st1d_imm, 0xE5E0E000, t.index, g.index, mem); }
void Assembler::st1d(ZD t, PReg g, MemReg mem) {
  sve_contiguous(Form::sve_st1d_reg, 0xE5E04000, 3, t.index, g.index, mem);
}

void Assembler::sve_replicate(Form form, std::uint32_t base, unsigned bytes, unsigned t, unsigned g,
                              const MemImm& mem) {
  sve_low_predicate(form, g);
  if (mem.mode != AddrMode::offset) fail(form, "there is no pre- or post-index form (ptr(base, offset))");
  if (mem.offset % bytes != 0) {
    fail(form, "offset " + std::to_string(mem.offset) + " is not a multiple of " + std::to_string(bytes));
  }
  if (mem.offset < 0 || mem.offset > 63 * std::int64_t{bytes}) {
    fail(form, "offset " + std::to_string(mem.offset) + " is out of range 0.." + std::to_string(63 * bytes));
  }
  emit(form, base | u32(mem.offset / bytes) << 16 | g << 10 | mem.base.index << 5 | t);
}
void Assembler::ld1rh(ZH t, PZeroing g, MemImm mem) {
  sve_replicate(Form::sve_ld1rh, 0x84C0A000, 2, t.index, g.index, mem);
}
void Assembler::ld1rw(ZS t, PZeroing g, MemImm mem) {
  sve_replicate(Form::sve_ld1rw, 0x8540C000, 4, t.index, g.index, mem);
}
void Assembler::ld1rd(ZD t, PZeroing g, MemImm mem) {
  sve_replicate(Form::sve_ld1rd, 0x85C0E000, 8, t.index, g.index, mem);
}

// LD1RQW / LD1RQD (scalar plus immediate): imm4 = offset / 16, signed.
void Assembler::sve_replicate_quad(Form form, std::uint32_t base, unsigned t, unsigned g, const MemImm& mem) {
  sve_low_predicate(form, g);
  if (mem.mode != AddrMode::offset) fail(form, "there is no pre- or post-index form (ptr(base, offset))");
  if (mem.offset % 16 != 0 || mem.offset < -128 || mem.offset > 112) {
    fail(form, "offset " + std::to_string(mem.offset) + " is not a multiple of 16 in -128..112");
  }
  emit(form, base | (u32(mem.offset / 16) & 0xFu) << 16 | g << 10 | mem.base.index << 5 | t);
}
void Assembler::ld1rqw(ZS t, PZeroing g, MemImm mem) {
  sve_replicate_quad(Form::sve_ld1rqw, 0xA5002000, t.index, g.index, mem);
}
void Assembler::ld1rqd(ZD t, PZeroing g, MemImm mem) {
  sve_replicate_quad(Form::sve_ld1rqd, 0xA5802000, t.index, g.index, mem);
}

void Assembler::sve_fill_spill(Form form, std::uint32_t base, unsigned t, const MemVl& mem) {
  if (mem.index < -256 || mem.index > 255) {
    fail(form, "offset " + std::to_string(mem.index) + " is out of range -256..255 (times the vector length)");
  }
  const std::uint32_t imm9 = u32(mem.index) & 0x1FFu;
  emit(form, base | (imm9 >> 3) << 16 | (imm9 & 7u) << 10 | mem.base.index << 5 | t);
}
void Assembler::ldr(ZReg t, MemVl mem) { sve_fill_spill(Form::sve_ldr_z, 0x85804000, t.index, mem); }
void Assembler::str(ZReg t, MemVl mem) { sve_fill_spill(Form::sve_str_z, 0xE5804000, t.index, mem); }

// ---- SVE arithmetic ------------------------------------------------------------------------------

void Assembler::sve_dgnm(Form first, std::uint32_t base, Lane lane, unsigned d, unsigned g, unsigned n, unsigned m,
                         bool wide_predicate) {
  const Form form = sve_form(first, lane);
  if (!wide_predicate) sve_low_predicate(form, g);
  emit(form, base | sve_size(lane) | m << 16 | g << 10 | n << 5 | d);
}

void Assembler::sve_destructive(Form first, std::uint32_t base, Lane lane, unsigned d, unsigned g, unsigned n,
                                unsigned m) {
  const Form form = sve_form(first, lane);
  if (n != d) fail(form, "the first source " + zreg(n) + " is not the destination " + zreg(d) + " (d = d op m)");
  sve_low_predicate(form, g);
  emit(form, base | sve_size(lane) | g << 10 | m << 5 | d);
}

void Assembler::sve_unary(Form first, std::uint32_t base, Lane lane, unsigned d, unsigned g, unsigned n) {
  const Form form = sve_form(first, lane);
  sve_low_predicate(form, g);
  emit(form, base | sve_size(lane) | g << 10 | n << 5 | d);
}

void Assembler::sve_three(Form first, std::uint32_t base, Lane lane, unsigned d, unsigned n, unsigned m) {
  emit(sve_form(first, lane), base | sve_size(lane) | m << 16 | n << 5 | d);
}

void Assembler::sve_compare_zero(Form first, std::uint32_t base, Lane lane, unsigned d, unsigned g, unsigned n,
                                 double zero) {
  if (zero != 0.0) fail(sve_form(first, lane), "compares with 0.0 only, not " + decimal(zero));
  sve_unary(first, base, lane, d, g, n);
}

void Assembler::sve_fmla_indexed(Lane lane, unsigned d, unsigned n, unsigned m, unsigned element) {
  const Form form = sve_fp_member(Form::sve_fmla_elem_h, lane);
  // The indexed register takes 3 bits (h, s) or 4 (d); the index the bits above it.
  const unsigned last_register = lane == Lane::d ? 15 : 7;
  const unsigned last_element = lane == Lane::h ? 7 : lane == Lane::s ? 3 : 1;
  if (m > last_register) fail(form, "indexed register " + zreg(m) + " is not one of z0..z" + std::to_string(last_register));
  if (element > last_element) {
    fail(form, "index " + std::to_string(element) + " is out of range 0.." + std::to_string(last_element));
  }
  std::uint32_t word = 0;
  switch (lane) {
    case Lane::h: word = 0x64200000 | (element >> 2) << 22 | (element & 3u) << 19; break;
    case Lane::s: word = 0x64A00000 | element << 19; break;
    default: word = 0x64E00000 | element << 20; break;
  }
  emit(form, word | m << 16 | n << 5 | d);
}

void Assembler::fcvtzs(ZS d, PMerging g, ZS n) {
  sve_low_predicate(Form::sve_fcvtzs_s, g.index);
  emit(Form::sve_fcvtzs_s, 0x659CA000 | g.index << 10 | n.index << 5 | d.index);
}
void Assembler::scvtf(ZS d, PMerging g, ZS n) {
  sve_low_predicate(Form::sve_scvtf_s, g.index);
  emit(Form::sve_scvtf_s, 0x6594A000 | g.index << 10 | n.index << 5 | d.index);
}

void Assembler::mov(ZD d, ZD n) { emit(Form::sve_mov, 0x04603000 | n.index << 16 | n.index << 5 | d.index); }

void Assembler::sve_dup_general(Lane lane, unsigned d, unsigned n) {
  emit(sve_member(Form::sve_dup_gen_b, lane), 0x05203800 | sve_size(lane) | n << 5 | d);
}

void Assembler::sve_dup_immediate(Lane lane, unsigned d, std::int32_t imm) {
  const Form form = sve_member(Form::sve_dup_imm_b, lane);
  std::uint32_t shifted = 0;
  std::int32_t imm8 = imm;
  if ((imm < -128 || imm > 127) && lane != Lane::b && imm % 256 == 0 && imm >= -32768 && imm <= 32512) {
    shifted = 1;
    imm8 = imm / 256;
  }
  if (imm8 < -128 || imm8 > 127) {
    fail(form, "immediate " + std::to_string(imm) + " is not -128..127" +
                   (lane == Lane::b ? std::string() : " or a multiple of 256 in -32768..32512"));
  }
  emit(form, 0x2538C000 | sve_size(lane) | shifted << 13 | (u32(imm8) & 0xFFu) << 5 | d);
}

void Assembler::sve_fdup(Lane lane, unsigned d, double value) {
  const Form form = sve_fp_member(Form::sve_fdup_h, lane);
  const std::optional<std::uint32_t> imm8 = encode_fp_imm8(value);
  if (!imm8) fail(form, "value " + decimal(value) + " is not +-(16..31)/16 * 2^(-3..4)");
  emit(form, 0x2539C000 | sve_size(lane) | *imm8 << 5 | d);
}

void Assembler::and_(ZD d, ZD n, ZD m) { emit(Form::sve_and, 0x04203000 | m.index << 16 | n.index << 5 | d.index); }
void Assembler::orr(ZD d, ZD n, ZD m) { emit(Form::sve_orr, 0x04603000 | m.index << 16 | n.index << 5 | d.index); }
void Assembler::eor(ZD d, ZD n, ZD m) { emit(Form::sve_eor, 0x04A03000 | m.index << 16 | n.index << 5 | d.index); }
void Assembler::bic(ZD d, ZD n, ZD m) { emit(Form::sve_bic, 0x04E03000 | m.index << 16 | n.index << 5 | d.index); }

void Assembler::sve_shift(Form first, Lane lane, unsigned d, unsigned n, unsigned shift) {
  const Form form = sve_member(first, lane);
  const unsigned esize = 8u << lane_size(lane);
  // tsz:imm3 (7 bits, tsz's highest set bit gives the element size) is esize + shift for lsl and
  // 2 * esize - shift for the right shifts.
  std::uint32_t tsz_imm3 = 0, opc = 0;
  if (first == Form::sve_lsl_b) {
    if (shift >= esize) fail(form, "shift " + std::to_string(shift) + " is out of range 0.." + std::to_string(esize - 1));
    tsz_imm3 = esize + shift, opc = 3;
  } else {
    if (shift < 1 || shift > esize) {
      fail(form, "shift " + std::to_string(shift) + " is out of range 1.." + std::to_string(esize));
    }
    tsz_imm3 = 2 * esize - shift, opc = first == Form::sve_lsr_b ? 1 : 0;
  }
  emit(form, 0x04209000 | (tsz_imm3 >> 5) << 22 | (tsz_imm3 & 0x1Fu) << 16 | opc << 10 | n << 5 | d);
}

// ---- SVE bf16 ------------------------------------------------------------------------------------

void Assembler::bfdot(ZS d, ZH n, ZH m) { emit(Form::sve_bfdot, 0x64608000 | m.index << 16 | n.index << 5 | d.index); }
void Assembler::bfdot(ZS d, ZH n, ZElem<Lane::h> m) {
  if (m.index > 7) fail(Form::sve_bfdot_elem, "indexed register " + zreg(m.index) + " is not one of z0..z7");
  if (m.element > 3) fail(Form::sve_bfdot_elem, "index " + std::to_string(m.element) + " is out of range 0..3");
  emit(Form::sve_bfdot_elem, 0x64604000 | m.element << 19 | m.index << 16 | n.index << 5 | d.index);
}
void Assembler::bfmmla(ZS d, ZH n, ZH m) {
  emit(Form::sve_bfmmla, 0x6460E400 | m.index << 16 | n.index << 5 | d.index);
}
void Assembler::bfcvt(ZH d, PMerging g, ZS n) {
  sve_low_predicate(Form::sve_bfcvt, g.index);
  emit(Form::sve_bfcvt, 0x658AA000 | g.index << 10 | n.index << 5 | d.index);
}
void Assembler::bfcvtnt(ZH d, PMerging g, ZS n) {
  sve_low_predicate(Form::sve_bfcvtnt, g.index);
  emit(Form::sve_bfcvtnt, 0x648AA000 | g.index << 10 | n.index << 5 | d.index);
}

}  // namespace weft::jit::a64
