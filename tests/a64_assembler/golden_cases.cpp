// Each group loops over registers at both ends of the range (0, a middle one, 30/31 with sp or
// zr where the slot takes it), the lowest and highest legal immediates and offsets (negative ones
// included) and every arrangement. The expected text is written out in GNU syntax, independently of
// the encoder's tables.
#include "golden_cases.hpp"

#include <array>
#include <cstdint>
#include <sstream>
#include <utility>

namespace weft::test::a64 {

namespace {

using namespace weft::jit::a64;

template <class... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

std::string hx(std::uint64_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << value;
  return out.str();
}

// Register 31 is the zero register or the stack pointer, depending on the slot.
XOrZr xz(unsigned n) { return n == 31 ? XOrZr(xzr) : XOrZr(XReg(n)); }
WOrZr wz(unsigned n) { return n == 31 ? WOrZr(wzr) : WOrZr(WReg(n)); }
XOrSp xs(unsigned n) { return n == 31 ? XOrSp(sp) : XOrSp(XReg(n)); }
WOrSp ws(unsigned n) { return n == 31 ? WOrSp(wsp) : WOrSp(WReg(n)); }
std::string xzn(unsigned n) { return n == 31 ? "xzr" : cat("x", n); }
std::string wzn(unsigned n) { return n == 31 ? "wzr" : cat("w", n); }
std::string xsn(unsigned n) { return n == 31 ? "sp" : cat("x", n); }
std::string wsn(unsigned n) { return n == 31 ? "wsp" : cat("w", n); }

const char* arr_name(Arr a) {
  switch (a) {
    case Arr::b8: return "8b";
    case Arr::b16: return "16b";
    case Arr::h4: return "4h";
    case Arr::h8: return "8h";
    case Arr::s2: return "2s";
    case Arr::s4: return "4s";
    case Arr::d2: break;
  }
  return "2d";
}
const char* lane_name(Lane l) { return l == Lane::b ? "b" : l == Lane::h ? "h" : l == Lane::s ? "s" : "d"; }
unsigned arr_elements(Arr a) {
  switch (a) {
    case Arr::b16: return 16;
    case Arr::b8:
    case Arr::h8: return 8;
    case Arr::h4:
    case Arr::s4: return 4;
    default: return 2;
  }
}
unsigned elem_bits(Arr a) {
  return 128 / (a == Arr::b8 || a == Arr::h4 || a == Arr::s2 ? 2 * arr_elements(a) : arr_elements(a));
}
template <Arr A>
std::string vn(unsigned n) {
  return cat("v", n, ".", arr_name(A));
}

template <Arr... As, class F>
void for_each_arr(F&& f) {
  (f.template operator()<As>(), ...);
}

const char* const kCond[] = {"eq", "ne", "hs", "lo", "mi", "pl", "vs", "vc",
                             "hi", "ls", "ge", "lt", "gt", "le", "al", "nv"};
const char* const kShift[] = {"lsl", "lsr", "asr", "ror"};
const char* const kExtend[] = {"uxtb", "uxth", "uxtw", "uxtx", "sxtb", "sxth", "sxtw", "sxtx"};
Shift shift_of(unsigned kind, unsigned amount) { return {static_cast<ShiftKind>(kind), amount}; }
Extend extend_of(unsigned kind, int amount) { return {static_cast<ExtendKind>(kind), amount}; }

#define CALL(method) [](Assembler& a, auto... args) { a.method(args...); }

class Cases {
 public:
  void add(std::string text, std::function<void(Assembler&)> emit) {
    list.push_back({std::move(text), std::move(emit)});
  }
  std::vector<GoldenCase> list;
};

// ---- integer arithmetic and logic -----------------------------------------------------------------

// add/adds/sub/subs/cmp/cmn with an immediate; DSp: the destination slot takes sp (else zr).
template <bool DSp, class Call>
void add_sub_immediate(Cases& c, const std::string& op, Call call) {
  const std::pair<int, unsigned> imms[] = {{0, 0}, {1, 0}, {4095, 0}, {1, 12}, {4095, 12}, {2048, 0}};
  for (const auto& d_n : {std::pair{0u, 1u}, {15u, 16u}, {30u, 30u}, {31u, 31u}, {31u, 7u}}) {
    const auto d = d_n.first;
    const auto n = d_n.second;
    for (const auto& imm_sh : imms) {
      const auto imm = imm_sh.first;
      const auto sh = imm_sh.second;
      const std::string tail = cat("#", imm, sh ? ", lsl #12" : "");
      c.add(cat(op, " ", DSp ? xsn(d) : xzn(d), ", ", xsn(n), ", ", tail), [=](Assembler& a) {
        if constexpr (DSp)
          call(a, xs(d), xs(n), imm, lsl(sh));
        else
          call(a, xz(d), xs(n), imm, lsl(sh));
      });
      c.add(cat(op, " ", DSp ? wsn(d) : wzn(d), ", ", wsn(n), ", ", tail), [=](Assembler& a) {
        if constexpr (DSp)
          call(a, ws(d), ws(n), imm, lsl(sh));
        else
          call(a, wz(d), ws(n), imm, lsl(sh));
      });
    }
  }
}

template <class Call>
void compare_immediate(Cases& c, const std::string& op, Call call) {
  for (unsigned n : {0u, 17u, 30u, 31u}) {
    for (const auto& imm_sh : {std::pair{0, 0u}, {4095, 0u}, {1, 12u}, {4095, 12u}}) {
      const auto imm = imm_sh.first;
      const auto sh = imm_sh.second;
      const std::string tail = cat("#", imm, sh ? ", lsl #12" : "");
      c.add(cat(op, " ", xsn(n), ", ", tail), [=](Assembler& a) { call(a, xs(n), imm, lsl(sh)); });
      c.add(cat(op, " ", wsn(n), ", ", tail), [=](Assembler& a) { call(a, ws(n), imm, lsl(sh)); });
    }
  }
}

// Shifted register; Operands: 3 (d, n, m) or 2 (n, m: cmp, cmn, tst). Ror only for logical ops.
template <int Operands, class Call>
void shifted_register(Cases& c, const std::string& op, Call call, bool allow_ror) {
  struct Regs {
    unsigned d, n, m;
  };
  struct Sh {
    int kind;  // -1: none written
    unsigned x_amount, w_amount;
  };
  std::vector<Sh> shifts = {{-1, 0, 0}, {0, 0, 0}, {0, 63, 31}, {1, 1, 1}, {2, 17, 17}, {1, 63, 31}, {2, 63, 31}};
  if (allow_ror) shifts.push_back({3, 63, 31}), shifts.push_back({3, 5, 5});
  for (Regs r : {Regs{0, 1, 2}, Regs{15, 16, 17}, Regs{30, 29, 28}, Regs{31, 31, 31}}) {
    for (Sh s : shifts) {
      for (bool x : {true, false}) {
        const unsigned amount = x ? s.x_amount : s.w_amount;
        auto name = [&](unsigned i) { return x ? xzn(i) : wzn(i); };
        std::string text = op + " " + (Operands == 3 ? name(r.d) + ", " : "") + name(r.n) + ", " + name(r.m);
        if (s.kind >= 0) text += cat(", ", kShift[s.kind], " #", amount);
        const Shift shift = s.kind >= 0 ? shift_of(static_cast<unsigned>(s.kind), amount) : Shift{};
        c.add(text, [=](Assembler& a) {
          if constexpr (Operands == 3) {
            x ? call(a, xz(r.d), xz(r.n), xz(r.m), shift) : call(a, wz(r.d), wz(r.n), wz(r.m), shift);
          } else {
            x ? call(a, xz(r.n), xz(r.m), shift) : call(a, wz(r.n), wz(r.m), shift);
          }
        });
      }
    }
  }
}

// Extended register; DSp: the destination slot takes sp (add, sub), else zr (adds, subs).
template <bool DSp, class Call>
void extended_register(Cases& c, const std::string& op, Call call) {
  struct Regs {
    unsigned d, n, m;
  };
  for (Regs r : {Regs{0, 1, 2}, Regs{31, 31, 30}, Regs{15, 31, 7}, Regs{30, 29, 31}}) {
    for (unsigned kind = 0; kind < 8; ++kind) {
      for (int amount : {-1, 0, 1, 4}) {
        const std::string ext = amount < 0 ? cat(", ", kExtend[kind]) : cat(", ", kExtend[kind], " #", amount);
        const bool x_index = kind == 3 || kind == 7;
        const std::string dx = DSp ? xsn(r.d) : xzn(r.d);
        c.add(cat(op, " ", dx, ", ", xsn(r.n), ", ", x_index ? xzn(r.m) : wzn(r.m), ext), [=](Assembler& a) {
          const Extend e = extend_of(kind, amount);
          if constexpr (DSp) {
            x_index ? call(a, xs(r.d), xs(r.n), xz(r.m), e) : call(a, xs(r.d), xs(r.n), wz(r.m), e);
          } else {
            x_index ? call(a, xz(r.d), xs(r.n), xz(r.m), e) : call(a, xz(r.d), xs(r.n), wz(r.m), e);
          }
        });
        if (x_index) continue;
        const std::string dw = DSp ? wsn(r.d) : wzn(r.d);
        c.add(cat(op, " ", dw, ", ", wsn(r.n), ", ", wzn(r.m), ext), [=](Assembler& a) {
          if constexpr (DSp)
            call(a, ws(r.d), ws(r.n), wz(r.m), extend_of(kind, amount));
          else
            call(a, wz(r.d), ws(r.n), wz(r.m), extend_of(kind, amount));
        });
      }
    }
  }
}

const std::uint64_t kBitmasks64[] = {0x1,
                                     0xff,
                                     0xff00ff00ff00ff00,
                                     0x5555555555555555,
                                     0x7ffffffffffffffe,
                                     0x8000000000000001,
                                     0xfffffffffffffffe,
                                     0x00000000ffffffff,
                                     0x0f0f0f0f0f0f0f0f,
                                     0x3333333333333333,
                                     0x0001000100010001,
                                     0x8000000000000000};
const std::uint64_t kBitmasks32[] = {0x1, 0xff, 0x80000001, 0xfffffffe, 0x55555555, 0x0f0f0f0f, 0x7fffffff, 0xffff0000};

// Bitmask immediates; DSp: the destination slot takes sp (and, orr, eor), else zr (ands); Tst: no destination.
template <bool DSp, bool Tst, class Call>
void logical_immediate(Cases& c, const std::string& op, Call call) {
  for (const auto& d_n : {std::pair{0u, 1u}, {31u, 30u}, {15u, 31u}}) {
    const auto d = d_n.first;
    const auto n = d_n.second;
    for (std::uint64_t imm : kBitmasks64) {
      const std::string dx = Tst ? "" : (DSp ? xsn(d) : xzn(d)) + ", ";
      c.add(cat(op, " ", dx, xzn(n), ", #", hx(imm)), [=](Assembler& a) {
        if constexpr (Tst)
          call(a, xz(n), imm);
        else if constexpr (DSp)
          call(a, xs(d), xz(n), imm);
        else
          call(a, xz(d), xz(n), imm);
      });
    }
    for (std::uint64_t imm : kBitmasks32) {
      const std::string dw = Tst ? "" : (DSp ? wsn(d) : wzn(d)) + ", ";
      c.add(cat(op, " ", dw, wzn(n), ", #", hx(imm)), [=](Assembler& a) {
        if constexpr (Tst)
          call(a, wz(n), imm);
        else if constexpr (DSp)
          call(a, ws(d), wz(n), imm);
        else
          call(a, wz(d), wz(n), imm);
      });
    }
  }
}

void integer_arithmetic(Cases& c) {
  add_sub_immediate<true>(c, "add", CALL(add));
  add_sub_immediate<false>(c, "adds", CALL(adds));
  add_sub_immediate<true>(c, "sub", CALL(sub));
  add_sub_immediate<false>(c, "subs", CALL(subs));
  compare_immediate(c, "cmp", CALL(cmp));
  compare_immediate(c, "cmn", CALL(cmn));
  shifted_register<3>(c, "add", CALL(add), false);
  shifted_register<3>(c, "adds", CALL(adds), false);
  shifted_register<3>(c, "sub", CALL(sub), false);
  shifted_register<3>(c, "subs", CALL(subs), false);
  shifted_register<2>(c, "cmp", CALL(cmp), false);
  shifted_register<2>(c, "cmn", CALL(cmn), false);
  extended_register<true>(c, "add", CALL(add));
  extended_register<false>(c, "adds", CALL(adds));
  extended_register<true>(c, "sub", CALL(sub));
  extended_register<false>(c, "subs", CALL(subs));
  shifted_register<3>(c, "and", CALL(and_), true);
  shifted_register<3>(c, "ands", CALL(ands), true);
  shifted_register<3>(c, "orr", CALL(orr), true);
  shifted_register<3>(c, "eor", CALL(eor), true);
  shifted_register<3>(c, "bic", CALL(bic), true);
  shifted_register<3>(c, "orn", CALL(orn), true);
  shifted_register<2>(c, "tst", CALL(tst), true);
  logical_immediate<true, false>(c, "and", CALL(and_));
  logical_immediate<false, false>(c, "ands", CALL(ands));
  logical_immediate<true, false>(c, "orr", CALL(orr));
  logical_immediate<true, false>(c, "eor", CALL(eor));
  logical_immediate<false, true>(c, "tst", CALL(tst));
}

void moves(Cases& c) {
  for (const auto& d_m : {std::pair{0u, 1u}, {30u, 31u}, {31u, 15u}}) {
    const auto d = d_m.first;
    const auto m = d_m.second;
    c.add(cat("mov ", xzn(d), ", ", xzn(m)), [=](Assembler& a) { a.mov(xz(d), xz(m)); });
    c.add(cat("mov ", wzn(d), ", ", wzn(m)), [=](Assembler& a) { a.mov(wz(d), wz(m)); });
  }
  for (unsigned r : {0u, 17u, 30u}) {
    c.add(cat("mov sp, x", r), [=](Assembler& a) { a.mov(sp, XReg(r)); });
    c.add(cat("mov x", r, ", sp"), [=](Assembler& a) { a.mov(XReg(r), sp); });
    c.add(cat("mov wsp, w", r), [=](Assembler& a) { a.mov(wsp, WReg(r)); });
    c.add(cat("mov w", r, ", wsp"), [=](Assembler& a) { a.mov(WReg(r), wsp); });
  }
  for (unsigned d : {0u, 15u, 30u}) {
    for (std::uint32_t imm : {0u, 0x1234u, 0xffffu}) {
      for (unsigned shift : {0u, 16u, 32u, 48u}) {
        const std::string tail = cat(", #", hx(imm), shift ? cat(", lsl #", shift) : "");
        c.add(cat("movz x", d, tail), [=](Assembler& a) { a.movz(XReg(d), imm, shift); });
        c.add(cat("movn x", d, tail), [=](Assembler& a) { a.movn(XReg(d), imm, shift); });
        c.add(cat("movk x", d, tail), [=](Assembler& a) { a.movk(XReg(d), imm, shift); });
        if (shift > 16) continue;
        c.add(cat("movz w", d, tail), [=](Assembler& a) { a.movz(WReg(d), imm, shift); });
        c.add(cat("movn w", d, tail), [=](Assembler& a) { a.movn(WReg(d), imm, shift); });
        c.add(cat("movk w", d, tail), [=](Assembler& a) { a.movk(WReg(d), imm, shift); });
      }
    }
  }
  // mov_imm: the expected sequences are the shortest ones, written out.
  const std::pair<std::uint64_t, const char*> x_values[] = {
      {0, "movz x0, #0"},
      {1, "movz x0, #0x1"},
      {0xffff, "movz x0, #0xffff"},
      {0x10000, "movz x0, #0x1, lsl #16"},
      {0x100000000, "movz x0, #0x1, lsl #32"},
      {0x8000000000000000, "movz x0, #0x8000, lsl #48"},
      {0x12345678, "movz x0, #0x5678\nmovk x0, #0x1234, lsl #16"},
      {0x1234000000005678, "movz x0, #0x5678\nmovk x0, #0x1234, lsl #48"},
      {0x123456789abcdef0,
       "movz x0, #0xdef0\nmovk x0, #0x9abc, lsl #16\nmovk x0, #0x5678, lsl #32\nmovk x0, #0x1234, lsl #48"},
      {0xffffffffffffffff, "movn x0, #0"},
      {0xfffffffffffffffe, "movn x0, #0x1"},
      {0xffff1234ffffffff, "movn x0, #0xedcb, lsl #32"},
      {0xffffffff12345678, "movn x0, #0xa987\nmovk x0, #0x1234, lsl #16"},
      {0x5555555555555555, "orr x0, xzr, #0x5555555555555555"},
      {0x00ff00ff00ff00ff, "orr x0, xzr, #0xff00ff00ff00ff"},
      {0xffff0000ffff0000, "orr x0, xzr, #0xffff0000ffff0000"},
      {0x00000000ffffffff, "orr x0, xzr, #0xffffffff"},
      {0x0000ffff0000ffff, "orr x0, xzr, #0xffff0000ffff"},
      {0x1234567800000000, "movz x0, #0x5678, lsl #32\nmovk x0, #0x1234, lsl #48"},
  };
  for (const auto& [value, text] : x_values) {
    const std::uint64_t v = value;
    c.add(text, [v](Assembler& a) { a.mov_imm(x0, v); });
  }
  c.add("movz x30, #0x5678\nmovk x30, #0x1234, lsl #16", [](Assembler& a) { a.mov_imm(x30, 0x12345678); });
  const std::pair<std::int64_t, const char*> w_values[] = {
      {0, "movz w0, #0"},
      {0xffff, "movz w0, #0xffff"},
      {0x10000, "movz w0, #0x1, lsl #16"},
      {0x12345678, "movz w0, #0x5678\nmovk w0, #0x1234, lsl #16"},
      {0xffffffff, "movn w0, #0"},
      {-1, "movn w0, #0"},
      {-2, "movn w0, #0x1"},
      {0xffff1234, "movn w0, #0xedcb"},
      {0x1234ffff, "movn w0, #0xedcb, lsl #16"},
      {0x0f0f0f0f, "orr w0, wzr, #0xf0f0f0f"},
      {static_cast<std::int64_t>(0x80000001), "orr w0, wzr, #0x80000001"},
      {-2147483648, "movz w0, #0x8000, lsl #16"},
  };
  for (const auto& [value, text] : w_values) {
    const std::int64_t v = value;
    c.add(text, [v](Assembler& a) { a.mov_imm(w0, v); });
  }
  c.add("movn w30, #0x1", [](Assembler& a) { a.mov_imm(w30, -2); });
}

template <class CallImm>
void shift_immediate_cases(Cases& c, const std::string& op, CallImm call) {
  for (const auto& d_n : {std::pair{0u, 1u}, {30u, 31u}, {31u, 15u}}) {
    const auto d = d_n.first;
    const auto n = d_n.second;
    for (unsigned amount : {0u, 1u, 13u, 31u, 63u}) {
      c.add(cat(op, " ", xzn(d), ", ", xzn(n), ", #", amount), [=](Assembler& a) { call(a, xz(d), xz(n), amount); });
      if (amount > 31) continue;
      c.add(cat(op, " ", wzn(d), ", ", wzn(n), ", #", amount), [=](Assembler& a) { call(a, wz(d), wz(n), amount); });
    }
  }
}

template <int Operands, class Call>
void plain_registers(Cases& c, const std::string& op, Call call) {
  struct Regs {
    unsigned d, n, m, a;
  };
  for (Regs r : {Regs{0, 1, 2, 3}, Regs{30, 29, 28, 27}, Regs{31, 31, 31, 31}, Regs{7, 31, 19, 30}}) {
    auto text = [&](auto name) {
      std::string t = op + " " + name(r.d) + ", " + name(r.n) + ", " + name(r.m);
      return Operands == 4 ? t + ", " + name(r.a) : t;
    };
    c.add(text(xzn), [=](Assembler& a) {
      if constexpr (Operands == 4)
        call(a, xz(r.d), xz(r.n), xz(r.m), xz(r.a));
      else
        call(a, xz(r.d), xz(r.n), xz(r.m));
    });
    c.add(text(wzn), [=](Assembler& a) {
      if constexpr (Operands == 4)
        call(a, wz(r.d), wz(r.n), wz(r.m), wz(r.a));
      else
        call(a, wz(r.d), wz(r.n), wz(r.m));
    });
  }
}

void shifts_multiply_select(Cases& c) {
  shift_immediate_cases(c, "lsl", CALL(lsl));
  shift_immediate_cases(c, "lsr", CALL(lsr));
  shift_immediate_cases(c, "asr", CALL(asr));
  plain_registers<3>(c, "lsl", CALL(lsl));
  plain_registers<3>(c, "lsr", CALL(lsr));
  plain_registers<3>(c, "asr", CALL(asr));
  plain_registers<3>(c, "mul", CALL(mul));
  plain_registers<4>(c, "madd", CALL(madd));
  plain_registers<4>(c, "msub", CALL(msub));
  plain_registers<3>(c, "udiv", CALL(udiv));
  plain_registers<3>(c, "sdiv", CALL(sdiv));
  for (unsigned cond = 0; cond < 16; ++cond) {
    const Cond k = static_cast<Cond>(cond);
    c.add(cat("csel x0, x1, x2, ", kCond[cond]), [=](Assembler& a) { a.csel(x0, x1, x2, k); });
    c.add(cat("csel w30, wzr, w15, ", kCond[cond]), [=](Assembler& a) { a.csel(w30, wzr, w15, k); });
    c.add(cat("csinc x30, xzr, x15, ", kCond[cond]), [=](Assembler& a) { a.csinc(x30, xzr, x15, k); });
    c.add(cat("csinc w0, w1, w2, ", kCond[cond]), [=](Assembler& a) { a.csinc(w0, w1, w2, k); });
    if (cond >= 14) continue;
    c.add(cat("cset x0, ", kCond[cond]), [=](Assembler& a) { a.cset(x0, k); });
    c.add(cat("cset w30, ", kCond[cond]), [=](Assembler& a) { a.cset(w30, k); });
  }
  c.add("csel xzr, x3, x4, ne", [](Assembler& a) { a.csel(xzr, x3, x4, Cond::ne); });
}

// ---- branches and system --------------------------------------------------------------------------

// A branch forward over one nop, backward over one nop, and to itself.
template <class Branch>
void branch_cases(Cases& c, const std::string& prefix, Branch branch) {
  c.add(prefix + "1f\nnop\n1: nop", [=](Assembler& a) {
    Label l;
    branch(a, l);
    a.nop();
    a.bind(l);
    a.nop();
  });
  c.add("1: nop\nnop\n" + prefix + "1b", [=](Assembler& a) {
    Label l;
    a.bind(l);
    a.nop();
    a.nop();
    branch(a, l);
  });
  c.add("1: " + prefix + "1b", [=](Assembler& a) {
    Label l;
    a.bind(l);
    branch(a, l);
  });
}

void branches_and_system(Cases& c) {
  branch_cases(c, "b ", [](Assembler& a, Label& l) { a.b(l); });
  branch_cases(c, "bl ", [](Assembler& a, Label& l) { a.bl(l); });
  for (unsigned cond = 0; cond < 16; ++cond) {
    const Cond k = static_cast<Cond>(cond);
    branch_cases(c, cat("b.", kCond[cond], " "), [=](Assembler& a, Label& l) { a.b(k, l); });
  }
  for (unsigned t : {0u, 17u, 30u, 31u}) {
    branch_cases(c, cat("cbz ", xzn(t), ", "), [=](Assembler& a, Label& l) { a.cbz(xz(t), l); });
    branch_cases(c, cat("cbz ", wzn(t), ", "), [=](Assembler& a, Label& l) { a.cbz(wz(t), l); });
    branch_cases(c, cat("cbnz ", xzn(t), ", "), [=](Assembler& a, Label& l) { a.cbnz(xz(t), l); });
    branch_cases(c, cat("cbnz ", wzn(t), ", "), [=](Assembler& a, Label& l) { a.cbnz(wz(t), l); });
    if (t != 31) branch_cases(c, cat("adr x", t, ", "), [=](Assembler& a, Label& l) { a.adr(XReg(t), l); });
  }
  for (unsigned t : {0u, 30u, 31u}) {
    for (unsigned bit : {0u, 1u, 31u, 32u, 63u}) {
      branch_cases(c, cat("tbz ", xzn(t), ", #", bit, ", "), [=](Assembler& a, Label& l) { a.tbz(xz(t), bit, l); });
      branch_cases(c, cat("tbnz ", xzn(t), ", #", bit, ", "), [=](Assembler& a, Label& l) { a.tbnz(xz(t), bit, l); });
      if (bit > 31) continue;
      branch_cases(c, cat("tbz ", wzn(t), ", #", bit, ", "), [=](Assembler& a, Label& l) { a.tbz(wz(t), bit, l); });
      branch_cases(c, cat("tbnz ", wzn(t), ", #", bit, ", "), [=](Assembler& a, Label& l) { a.tbnz(wz(t), bit, l); });
    }
  }
  // Several branches to one label, bound between them.
  c.add("b 1f\ncbz x3, 1f\n1: tbnz w4, #7, 1b\nb.ne 1b\nadr x5, 1b", [](Assembler& a) {
    Label l;
    a.b(l);
    a.cbz(x3, l);
    a.bind(l);
    a.tbnz(w4, 7, l);
    a.b(Cond::ne, l);
    a.adr(x5, l);
  });
  for (unsigned n : {0u, 15u, 30u}) {
    c.add(cat("br x", n), [=](Assembler& a) { a.br(XReg(n)); });
    c.add(cat("blr x", n), [=](Assembler& a) { a.blr(XReg(n)); });
    c.add(cat("ret x", n), [=](Assembler& a) { a.ret(XReg(n)); });
  }
  c.add("ret", [](Assembler& a) { a.ret(); });
  c.add("nop", [](Assembler& a) { a.nop(); });
  for (std::uint32_t imm : {0u, 1u, 0x1234u, 0xffffu}) c.add(cat("udf #", imm), [=](Assembler& a) { a.udf(imm); });
  const std::pair<Barrier, const char*> barriers[] = {
      {Barrier::oshld, "oshld"}, {Barrier::oshst, "oshst"}, {Barrier::osh, "osh"},     {Barrier::nshld, "nshld"},
      {Barrier::nshst, "nshst"}, {Barrier::nsh, "nsh"},     {Barrier::ishld, "ishld"}, {Barrier::ishst, "ishst"},
      {Barrier::ish, "ish"},     {Barrier::ld, "ld"},       {Barrier::st, "st"},       {Barrier::sy, "sy"}};
  for (const auto& option_name : barriers) {
    const auto option = option_name.first;
    const auto name = option_name.second;
    c.add(cat("dmb ", name), [=](Assembler& a) { a.dmb(option); });
    c.add(cat("dsb ", name), [=](Assembler& a) { a.dsb(option); });
  }
  c.add("isb", [](Assembler& a) { a.isb(); });
  // align pads with nop.
  c.add("nop\nnop\nnop\nnop\nnop", [](Assembler& a) {
    a.nop();
    a.align(16);
    a.nop();
    a.align(4);
  });
}

// ---- loads and stores -----------------------------------------------------------------------------

// Register-offset variants of an access of `bytes`: [base, index{, extend #amount}].
struct IndexCase {
  std::string text;  // after "[base, "
  std::function<MemReg(XOrSp)> mem;
};
std::vector<IndexCase> index_cases(unsigned bytes) {
  const int scale = bytes == 1 ? 0 : bytes == 2 ? 1 : bytes == 4 ? 2 : bytes == 8 ? 3 : 4;
  std::vector<IndexCase> out = {
      {"x2]", [](XOrSp b) { return ptr(b, x2); }},
      {cat("x30, lsl #", scale, "]"), [=](XOrSp b) { return ptr(b, x30, lsl(static_cast<unsigned>(scale))); }},
      {"w3, uxtw]", [](XOrSp b) { return ptr(b, w3, uxtw()); }},
      {cat("w3, uxtw #", scale, "]"), [=](XOrSp b) { return ptr(b, w3, uxtw(scale)); }},
      {"w30, sxtw]", [](XOrSp b) { return ptr(b, w30, sxtw()); }},
      {cat("w4, sxtw #", scale, "]"), [=](XOrSp b) { return ptr(b, w4, sxtw(scale)); }},
      {"x5, sxtx]", [](XOrSp b) { return ptr(b, x5, sxtx()); }},
      {cat("x5, sxtx #", scale, "]"), [=](XOrSp b) { return ptr(b, x5, sxtx(scale)); }},
  };
  // An amount of 0 written out: S=1 for bytes (where no amount is S=0), S=0 otherwise.
  out.push_back({"x6, lsl #0]", [](XOrSp b) { return ptr(b, x6, lsl(0)); }});
  out.push_back({"w7, sxtw #0]", [](XOrSp b) { return ptr(b, w7, sxtw(0)); }});
  return out;
}

// ldr/str and their unscaled, pre-, post-index and register-offset forms for one register kind.
// Reg(n) makes the transferred register, name(n) its text; regs lists the registers tried.
template <class Call, class CallUnscaled, class Reg>
void load_store_cases(Cases& c, const std::string& op, const std::string& uop, unsigned bytes, Call call,
                      CallUnscaled call_unscaled, Reg reg, std::string (*name)(unsigned), bool general) {
  const std::int64_t top = 4095 * std::int64_t{bytes};
  for (const auto& t_n : {std::pair{0u, 1u}, {30u, 31u}, {31u, 15u}, {9u, 30u}}) {
    const auto t = t_n.first;
    const auto n = t_n.second;
    const std::string base = xsn(n);
    for (std::int64_t off : {std::int64_t{0}, std::int64_t{bytes}, std::int64_t{bytes} * 1000, top}) {
      c.add(cat(op, " ", name(t), ", [", base, off ? cat(", #", off) : "", "]"),
            [=](Assembler& a) { call(a, reg(t), ptr(xs(n), off)); });
    }
    for (std::int64_t off : {-256, -1, 0, 1, 255}) {
      c.add(cat(uop, " ", name(t), ", [", base, ", #", off, "]"),
            [=](Assembler& a) { call_unscaled(a, reg(t), ptr(xs(n), off)); });
      if (general && t == n) continue;  // writeback of the transferred register is unpredictable
      c.add(cat(op, " ", name(t), ", [", base, ", #", off, "]!"),
            [=](Assembler& a) { call(a, reg(t), pre_ptr(xs(n), off)); });
      c.add(cat(op, " ", name(t), ", [", base, "], #", off),
            [=](Assembler& a) { call(a, reg(t), post_ptr(xs(n), off)); });
    }
    for (const IndexCase& index : index_cases(bytes)) {
      c.add(cat(op, " ", name(t), ", [", base, ", ", index.text),
            [=, mem = index.mem](Assembler& a) { call(a, reg(t), mem(xs(n))); });
    }
  }
}

template <class Call, class Reg>
void pair_cases(Cases& c, const std::string& op, unsigned bytes, Call call, Reg reg, std::string (*name)(unsigned),
                bool general, bool load) {
  const std::int64_t b = bytes;
  struct Regs {
    unsigned t1, t2, n;
  };
  for (Regs r : {Regs{0, 1, 2}, Regs{30, 29, 31}, Regs{31, 0, 15}, Regs{7, 31, 30}}) {
    if (!general && r.t1 == r.t2) continue;
    if (load && r.t1 == r.t2) continue;
    const std::string head = cat(op, " ", name(r.t1), ", ", name(r.t2), ", [", xsn(r.n));
    for (std::int64_t off : {-64 * b, -b, std::int64_t{0}, b, 63 * b}) {
      c.add(cat(head, off ? cat(", #", off) : "", "]"),
            [=](Assembler& a) { call(a, reg(r.t1), reg(r.t2), ptr(xs(r.n), off)); });
      const bool overlap = general && r.n != 31 && (r.n == r.t1 || r.n == r.t2);
      if (overlap) continue;
      c.add(cat(head, ", #", off, "]!"), [=](Assembler& a) { call(a, reg(r.t1), reg(r.t2), pre_ptr(xs(r.n), off)); });
      c.add(cat(head, "], #", off), [=](Assembler& a) { call(a, reg(r.t1), reg(r.t2), post_ptr(xs(r.n), off)); });
    }
  }
}

std::string qn(unsigned n) { return cat("q", n); }
std::string dn(unsigned n) { return cat("d", n); }
std::string sn(unsigned n) { return cat("s", n); }
std::string hn(unsigned n) { return cat("h", n); }

void loads_and_stores(Cases& c) {
  load_store_cases(c, "ldr", "ldur", 8, CALL(ldr), CALL(ldur), xz, xzn, true);
  load_store_cases(c, "ldr", "ldur", 4, CALL(ldr), CALL(ldur), wz, wzn, true);
  load_store_cases(c, "ldrb", "ldurb", 1, CALL(ldrb), CALL(ldurb), wz, wzn, true);
  load_store_cases(c, "ldrh", "ldurh", 2, CALL(ldrh), CALL(ldurh), wz, wzn, true);
  load_store_cases(c, "ldrsw", "ldursw", 4, CALL(ldrsw), CALL(ldursw), xz, xzn, true);
  load_store_cases(c, "str", "stur", 8, CALL(str), CALL(stur), xz, xzn, true);
  load_store_cases(c, "str", "stur", 4, CALL(str), CALL(stur), wz, wzn, true);
  load_store_cases(c, "strb", "sturb", 1, CALL(strb), CALL(sturb), wz, wzn, true);
  load_store_cases(c, "strh", "sturh", 2, CALL(strh), CALL(sturh), wz, wzn, true);
  auto q = [](unsigned n) { return QReg(n); };
  auto d = [](unsigned n) { return DReg(n); };
  auto s = [](unsigned n) { return SReg(n); };
  auto h = [](unsigned n) { return HReg(n); };
  load_store_cases(c, "ldr", "ldur", 16, CALL(ldr), CALL(ldur), q, qn, false);
  load_store_cases(c, "ldr", "ldur", 8, CALL(ldr), CALL(ldur), d, dn, false);
  load_store_cases(c, "ldr", "ldur", 4, CALL(ldr), CALL(ldur), s, sn, false);
  load_store_cases(c, "ldr", "ldur", 2, CALL(ldr), CALL(ldur), h, hn, false);
  load_store_cases(c, "str", "stur", 16, CALL(str), CALL(stur), q, qn, false);
  load_store_cases(c, "str", "stur", 8, CALL(str), CALL(stur), d, dn, false);
  load_store_cases(c, "str", "stur", 4, CALL(str), CALL(stur), s, sn, false);
  load_store_cases(c, "str", "stur", 2, CALL(str), CALL(stur), h, hn, false);
  pair_cases(c, "ldp", 8, CALL(ldp), xz, xzn, true, true);
  pair_cases(c, "ldp", 4, CALL(ldp), wz, wzn, true, true);
  pair_cases(c, "stp", 8, CALL(stp), xz, xzn, true, false);
  pair_cases(c, "stp", 4, CALL(stp), wz, wzn, true, false);
  pair_cases(c, "ldp", 16, CALL(ldp), q, qn, false, true);
  pair_cases(c, "ldp", 8, CALL(ldp), d, dn, false, true);
  pair_cases(c, "ldp", 4, CALL(ldp), s, sn, false, true);
  pair_cases(c, "stp", 16, CALL(stp), q, qn, false, false);
  pair_cases(c, "stp", 8, CALL(stp), d, dn, false, false);
  pair_cases(c, "stp", 4, CALL(stp), s, sn, false, false);

  // Acquire/release, exclusives, atomics.
  for (const auto& t_n : {std::pair{0u, 1u}, {30u, 31u}, {31u, 15u}}) {
    const auto t = t_n.first;
    const auto n = t_n.second;
    const std::string mem = cat(", [", xsn(n), "]");
    c.add(cat("ldar ", xzn(t), mem), [=](Assembler& a) { a.ldar(xz(t), ptr(xs(n))); });
    c.add(cat("ldar ", wzn(t), mem), [=](Assembler& a) { a.ldar(wz(t), ptr(xs(n))); });
    c.add(cat("stlr ", xzn(t), mem), [=](Assembler& a) { a.stlr(xz(t), ptr(xs(n))); });
    c.add(cat("stlr ", wzn(t), mem), [=](Assembler& a) { a.stlr(wz(t), ptr(xs(n))); });
    c.add(cat("ldxr ", xzn(t), mem), [=](Assembler& a) { a.ldxr(xz(t), ptr(xs(n))); });
    c.add(cat("ldxr ", wzn(t), mem), [=](Assembler& a) { a.ldxr(wz(t), ptr(xs(n))); });
    c.add(cat("ldaxr ", xzn(t), mem), [=](Assembler& a) { a.ldaxr(xz(t), ptr(xs(n))); });
    c.add(cat("ldaxr ", wzn(t), mem), [=](Assembler& a) { a.ldaxr(wz(t), ptr(xs(n))); });
  }
  struct Three {
    unsigned s, t, n;
  };
  for (Three r : {Three{0, 1, 2}, Three{30, 29, 31}, Three{15, 31, 3}, Three{31, 7, 8}}) {
    const std::string mem = cat(", [", xsn(r.n), "]");
    c.add(cat("stxr ", wzn(r.s), ", ", xzn(r.t), mem), [=](Assembler& a) { a.stxr(wz(r.s), xz(r.t), ptr(xs(r.n))); });
    c.add(cat("stxr ", wzn(r.s), ", ", wzn(r.t), mem), [=](Assembler& a) { a.stxr(wz(r.s), wz(r.t), ptr(xs(r.n))); });
    c.add(cat("stlxr ", wzn(r.s), ", ", xzn(r.t), mem), [=](Assembler& a) { a.stlxr(wz(r.s), xz(r.t), ptr(xs(r.n))); });
    c.add(cat("stlxr ", wzn(r.s), ", ", wzn(r.t), mem), [=](Assembler& a) { a.stlxr(wz(r.s), wz(r.t), ptr(xs(r.n))); });
    if (r.t == 31) continue;  // ldaddal with xzr is another instruction's alias
    c.add(cat("ldaddal ", xzn(r.s), ", ", xzn(r.t), mem),
          [=](Assembler& a) { a.ldaddal(xz(r.s), xz(r.t), ptr(xs(r.n))); });
    c.add(cat("ldaddal ", wzn(r.s), ", ", wzn(r.t), mem),
          [=](Assembler& a) { a.ldaddal(wz(r.s), wz(r.t), ptr(xs(r.n))); });
  }
}

// ---- vector structure loads and stores ------------------------------------------------------------

template <Arr A>
void vector_lists(Cases& c) {
  for (unsigned first : {0u, 13u, 30u, 31u}) {
    for (unsigned count = 1; count <= 4; ++count) {
      std::string list = "{";
      for (unsigned i = 0; i < count; ++i) list += cat(i ? ", " : "", vn<A>((first + i) % 32));
      list += "}";
      auto regs = [=] {
        std::vector<Vec<A>> v;
        for (unsigned i = 0; i < count; ++i) v.push_back(Vec<A>{(first + i) % 32});
        return v;
      };
      // The list goes through an initializer_list, as users write it: {v0.s4(), v1.s4()}.
      auto with_list = [=](Assembler& a, auto mem, bool load) {
        const auto v = regs();
        if (load) {
          switch (count) {
            case 1: a.ld1({v[0]}, mem); break;
            case 2: a.ld1({v[0], v[1]}, mem); break;
            case 3: a.ld1({v[0], v[1], v[2]}, mem); break;
            default: a.ld1({v[0], v[1], v[2], v[3]}, mem); break;
          }
        } else {
          switch (count) {
            case 1: a.st1({v[0]}, mem); break;
            case 2: a.st1({v[0], v[1]}, mem); break;
            case 3: a.st1({v[0], v[1], v[2]}, mem); break;
            default: a.st1({v[0], v[1], v[2], v[3]}, mem); break;
          }
        }
      };
      for (bool load : {true, false}) {
        const std::string op = load ? "ld1 " : "st1 ";
        for (unsigned n : {0u, 31u}) {
          c.add(cat(op, list, ", [", xsn(n), "]"), [=](Assembler& a) { with_list(a, ptr(xs(n)), load); });
          c.add(cat(op, list, ", [", xsn(n), "], #", 16 * count),
                [=](Assembler& a) { with_list(a, post_ptr(xs(n), 16 * count), load); });
          c.add(cat(op, list, ", [", xsn(n), "], x", n == 0 ? 30 : 3),
                [=](Assembler& a) { with_list(a, post_ptr(xs(n), XReg(n == 0 ? 30 : 3)), load); });
        }
      }
    }
  }
}

void vector_loads(Cases& c) {
  for_each_arr<Arr::b16, Arr::h8, Arr::s4, Arr::d2>([&]<Arr A>() { vector_lists<A>(c); });
  for (bool load : {true, false}) {
    const std::string op = load ? "ld1 " : "st1 ";
    for (unsigned t : {0u, 31u}) {
      for (unsigned lane = 0; lane < 4; ++lane) {
        const auto e = VReg(t).s(lane);
        const std::string list = cat("{v", t, ".s}[", lane, "], ");
        c.add(cat(op, list, "[x1]"), [=](Assembler& a) { load ? a.ld1(e, ptr(x1)) : a.st1(e, ptr(x1)); });
        c.add(cat(op, list, "[sp], #4"),
              [=](Assembler& a) { load ? a.ld1(e, post_ptr(sp, 4)) : a.st1(e, post_ptr(sp, 4)); });
        c.add(cat(op, list, "[x30], x2"),
              [=](Assembler& a) { load ? a.ld1(e, post_ptr(x30, x2)) : a.st1(e, post_ptr(x30, x2)); });
      }
      for (unsigned lane = 0; lane < 2; ++lane) {
        const auto e = VReg(t).d(lane);
        const std::string list = cat("{v", t, ".d}[", lane, "], ");
        c.add(cat(op, list, "[x1]"), [=](Assembler& a) { load ? a.ld1(e, ptr(x1)) : a.st1(e, ptr(x1)); });
        c.add(cat(op, list, "[sp], #8"),
              [=](Assembler& a) { load ? a.ld1(e, post_ptr(sp, 8)) : a.st1(e, post_ptr(sp, 8)); });
        c.add(cat(op, list, "[x30], x2"),
              [=](Assembler& a) { load ? a.ld1(e, post_ptr(x30, x2)) : a.st1(e, post_ptr(x30, x2)); });
      }
    }
  }
  for (unsigned t : {0u, 17u, 31u}) {
    const VReg v(t);
    c.add(cat("ld1r {v", t, ".4s}, [x1]"), [=](Assembler& a) { a.ld1r(v.s4(), ptr(x1)); });
    c.add(cat("ld1r {v", t, ".4s}, [sp], #4"), [=](Assembler& a) { a.ld1r(v.s4(), post_ptr(sp, 4)); });
    c.add(cat("ld1r {v", t, ".4s}, [x30], x29"), [=](Assembler& a) { a.ld1r(v.s4(), post_ptr(x30, x29)); });
    c.add(cat("ld1r {v", t, ".2d}, [x1]"), [=](Assembler& a) { a.ld1r(v.d2(), ptr(x1)); });
    c.add(cat("ld1r {v", t, ".2d}, [sp], #8"), [=](Assembler& a) { a.ld1r(v.d2(), post_ptr(sp, 8)); });
    c.add(cat("ld1r {v", t, ".2d}, [x0], x0"), [=](Assembler& a) { a.ld1r(v.d2(), post_ptr(x0, x0)); });
  }
}

// ---- vector arithmetic ----------------------------------------------------------------------------

struct Triple {
  unsigned d, n, m;
};
const Triple kTriples[] = {{0, 1, 2}, {31, 30, 29}, {15, 16, 31}, {7, 7, 7}};

template <Arr... As, class Call>
void vector3(Cases& c, const std::string& op, Call call) {
  for_each_arr<As...>([&]<Arr A>() {
    for (Triple r : kTriples) {
      c.add(cat(op, " ", vn<A>(r.d), ", ", vn<A>(r.n), ", ", vn<A>(r.m)),
            [=](Assembler& a) { call(a, Vec<A>{r.d}, Vec<A>{r.n}, Vec<A>{r.m}); });
    }
  });
}
// Two registers; Zero: a compare with #0.0.
template <bool Zero, Arr... As, class Call>
void vector2(Cases& c, const std::string& op, Call call) {
  for_each_arr<As...>([&]<Arr A>() {
    for (Triple r : kTriples) {
      c.add(cat(op, " ", vn<A>(r.d), ", ", vn<A>(r.n), Zero ? ", #0.0" : ""), [=](Assembler& a) {
        if constexpr (Zero)
          call(a, Vec<A>{r.d}, Vec<A>{r.n}, 0.0);
        else
          call(a, Vec<A>{r.d}, Vec<A>{r.n});
      });
    }
  });
}
#define FP3(name) vector3<Arr::s2, Arr::s4, Arr::d2>(c, #name, CALL(name))
#define FP2(name) vector2<false, Arr::s2, Arr::s4, Arr::d2>(c, #name, CALL(name))
#define FPZ(name) vector2<true, Arr::s2, Arr::s4, Arr::d2>(c, #name, CALL(name))
#define INT3(name) vector3<Arr::b16, Arr::h8, Arr::s4, Arr::d2>(c, #name, CALL(name))
#define BYTE3(op, name) vector3<Arr::b8, Arr::b16>(c, op, CALL(name))
#define BYTE2(op, name) vector2<false, Arr::b8, Arr::b16>(c, op, CALL(name))

template <class Call>
void by_element(Cases& c, const std::string& op, Call call) {
  for_each_arr<Arr::s2, Arr::s4, Arr::d2>([&]<Arr A>() {
    constexpr Lane L = A == Arr::d2 ? Lane::d : Lane::s;
    for (Triple r : kTriples) {
      for (unsigned lane = 0; lane < lane_count(L); ++lane) {
        c.add(cat(op, " ", vn<A>(r.d), ", ", vn<A>(r.n), ", v", r.m, ".", lane_name(L), "[", lane, "]"),
              [=](Assembler& a) {
                call(a, Vec<A>{r.d}, Vec<A>{r.n}, Elem<L>{r.m, lane});
              });
      }
    }
  });
}

void fp_vector(Cases& c) {
  FP3(fadd);
  FP3(fsub);
  FP3(fmul);
  FP3(fdiv);
  FP3(fmax);
  FP3(fmin);
  FP3(fmaxnm);
  FP3(fminnm);
  FP3(fabd);
  FP3(faddp);
  FP3(fmla);
  FP3(fmls);
  FP3(frecps);
  FP3(frsqrts);
  FP3(fcmeq);
  FP3(fcmge);
  FP3(fcmgt);
  FP2(fsqrt);
  FP2(fabs);
  FP2(fneg);
  FP2(frintn);
  FP2(frintm);
  FP2(frintp);
  FP2(frintz);
  FP2(frecpe);
  FP2(frsqrte);
  FP2(fcvtzs);
  FP2(fcvtns);
  FP2(scvtf);
  FP2(ucvtf);
  FPZ(fcmeq);
  FPZ(fcmge);
  FPZ(fcmgt);
  FPZ(fcmle);
  FPZ(fcmlt);
  by_element(c, "fmla", CALL(fmla));
  by_element(c, "fmls", CALL(fmls));
  by_element(c, "fmul", CALL(fmul));
  const std::pair<double, const char*> values[] = {{1.0, "1.0"},     {-0.125, "-0.125"}, {31.0, "31.0"},
                                                   {0.5, "0.5"},     {-2.0, "-2.0"},     {0.1328125, "0.1328125"},
                                                   {-31.0, "-31.0"}, {0.25, "0.25"}};
  for_each_arr<Arr::s2, Arr::s4, Arr::d2>([&]<Arr A>() {
    for (const auto& value_text : values) {
      const auto value = value_text.first;
      const auto text = value_text.second;
      for (unsigned d : {0u, 31u})
        c.add(cat("fmov ", vn<A>(d), ", #", text), [=](Assembler& a) { a.fmov(Vec<A>{d}, value); });
    }
  });
  for (const auto& value_text : values) {
    const auto value = value_text.first;
    const auto text = value_text.second;
    c.add(cat("fmov s0, #", text), [=](Assembler& a) { a.fmov(s0, value); });
    c.add(cat("fmov d31, #", text), [=](Assembler& a) { a.fmov(d31, value); });
  }
  for (const auto& d_n : {std::pair{0u, 1u}, {31u, 30u}, {5u, 5u}}) {
    const auto d = d_n.first;
    const auto n = d_n.second;
    const VReg vd(d), vn_(n);
    c.add(cat("fcvtn v", d, ".2s, v", n, ".2d"), [=](Assembler& a) { a.fcvtn(vd.s2(), vn_.d2()); });
    c.add(cat("fcvtn2 v", d, ".4s, v", n, ".2d"), [=](Assembler& a) { a.fcvtn2(vd.s4(), vn_.d2()); });
    c.add(cat("fcvtl v", d, ".2d, v", n, ".2s"), [=](Assembler& a) { a.fcvtl(vd.d2(), vn_.s2()); });
    c.add(cat("fcvtl2 v", d, ".2d, v", n, ".4s"), [=](Assembler& a) { a.fcvtl2(vd.d2(), vn_.s4()); });
    c.add(cat("faddp s", d, ", v", n, ".2s"), [=](Assembler& a) { a.faddp(SReg(d), vn_.s2()); });
    c.add(cat("faddp d", d, ", v", n, ".2d"), [=](Assembler& a) { a.faddp(DReg(d), vn_.d2()); });
    c.add(cat("fmaxv s", d, ", v", n, ".4s"), [=](Assembler& a) { a.fmaxv(SReg(d), vn_.s4()); });
    c.add(cat("fminv s", d, ", v", n, ".4s"), [=](Assembler& a) { a.fminv(SReg(d), vn_.s4()); });
    c.add(cat("fmaxnmv s", d, ", v", n, ".4s"), [=](Assembler& a) { a.fmaxnmv(SReg(d), vn_.s4()); });
    c.add(cat("fminnmv s", d, ", v", n, ".4s"), [=](Assembler& a) { a.fminnmv(SReg(d), vn_.s4()); });
  }
}

template <Arr A>
constexpr Arr narrow_low() {
  return weft::jit::a64::detail::narrow_low(A);
}
template <Arr A>
constexpr Arr narrow_full() {
  return weft::jit::a64::detail::narrow_full(A);
}

void int_vector(Cases& c) {
  INT3(add);
  INT3(sub);
  INT3(trn1);
  INT3(trn2);
  INT3(zip1);
  INT3(zip2);
  INT3(uzp1);
  INT3(uzp2);
  for_each_arr<Arr::b16, Arr::h8, Arr::s4, Arr::d2>([&]<Arr A>() {
    const unsigned esize = elem_bits(A);
    for (const auto& d_n : {std::pair{0u, 1u}, {31u, 30u}}) {
      const auto d = d_n.first;
      const auto n = d_n.second;
      for (unsigned shift : {0u, 1u, esize / 2, esize - 1}) {
        c.add(cat("shl ", vn<A>(d), ", ", vn<A>(n), ", #", shift),
              [=](Assembler& a) { a.shl(Vec<A>{d}, Vec<A>{n}, shift); });
      }
      for (unsigned shift : {1u, esize / 2, esize}) {
        c.add(cat("sshr ", vn<A>(d), ", ", vn<A>(n), ", #", shift),
              [=](Assembler& a) { a.sshr(Vec<A>{d}, Vec<A>{n}, shift); });
        c.add(cat("ushr ", vn<A>(d), ", ", vn<A>(n), ", #", shift),
              [=](Assembler& a) { a.ushr(Vec<A>{d}, Vec<A>{n}, shift); });
      }
    }
  });
  for_each_arr<Arr::h8, Arr::s4, Arr::d2>([&]<Arr W>() {
    constexpr Arr Lo = narrow_low<W>(), Full = narrow_full<W>();
    const unsigned narrow = elem_bits(W) / 2;
    for (const auto& d_n : {std::pair{0u, 1u}, {31u, 30u}, {9u, 9u}}) {
      const auto d = d_n.first;
      const auto n = d_n.second;
      for (unsigned shift : {0u, 1u, narrow - 1}) {
        c.add(cat("sshll ", vn<W>(d), ", ", vn<Lo>(n), ", #", shift),
              [=](Assembler& a) { a.sshll(Vec<W>{d}, Vec<Lo>{n}, shift); });
        c.add(cat("ushll ", vn<W>(d), ", ", vn<Lo>(n), ", #", shift),
              [=](Assembler& a) { a.ushll(Vec<W>{d}, Vec<Lo>{n}, shift); });
        c.add(cat("sshll2 ", vn<W>(d), ", ", vn<Full>(n), ", #", shift),
              [=](Assembler& a) { a.sshll2(Vec<W>{d}, Vec<Full>{n}, shift); });
        c.add(cat("ushll2 ", vn<W>(d), ", ", vn<Full>(n), ", #", shift),
              [=](Assembler& a) { a.ushll2(Vec<W>{d}, Vec<Full>{n}, shift); });
      }
      for (unsigned shift : {1u, narrow / 2, narrow}) {
        c.add(cat("shrn ", vn<Lo>(d), ", ", vn<W>(n), ", #", shift),
              [=](Assembler& a) { a.shrn(Vec<Lo>{d}, Vec<W>{n}, shift); });
        c.add(cat("shrn2 ", vn<Full>(d), ", ", vn<W>(n), ", #", shift),
              [=](Assembler& a) { a.shrn2(Vec<Full>{d}, Vec<W>{n}, shift); });
      }
      c.add(cat("xtn ", vn<Lo>(d), ", ", vn<W>(n)), [=](Assembler& a) { a.xtn(Vec<Lo>{d}, Vec<W>{n}); });
      c.add(cat("xtn2 ", vn<Full>(d), ", ", vn<W>(n)), [=](Assembler& a) { a.xtn2(Vec<Full>{d}, Vec<W>{n}); });
    }
  });
}

void bitwise_vector_and_moves(Cases& c) {
  BYTE3("and", and_);
  BYTE3("bic", bic);
  BYTE3("orr", orr);
  BYTE3("orn", orn);
  BYTE3("eor", eor);
  BYTE3("bsl", bsl);
  BYTE3("bit", bit);
  BYTE3("bif", bif);
  BYTE2("not", not_);
  BYTE2("mov", mov);
  for_each_arr<Arr::b8, Arr::b16>([&]<Arr A>() {
    for (Triple r : kTriples) {
      for (unsigned index : {0u, 1u, arr_elements(A) - 1}) {
        c.add(cat("ext ", vn<A>(r.d), ", ", vn<A>(r.n), ", ", vn<A>(r.m), ", #", index),
              [=](Assembler& a) { a.ext(Vec<A>{r.d}, Vec<A>{r.n}, Vec<A>{r.m}, index); });
      }
    }
  });
  for (unsigned d : {0u, 31u}) {
    const VReg v(d);
    for (std::uint32_t imm : {0u, 0x80u, 0xffu, 0x5au}) {
      c.add(cat("movi v", d, ".8b, #", hx(imm)), [=](Assembler& a) { a.movi(v.b8(), imm); });
      c.add(cat("movi v", d, ".16b, #", hx(imm)), [=](Assembler& a) { a.movi(v.b16(), imm); });
      for (unsigned shift : {0u, 8u}) {
        c.add(cat("movi v", d, ".4h, #", hx(imm), ", lsl #", shift),
              [=](Assembler& a) { a.movi(v.h4(), imm, lsl(shift)); });
        c.add(cat("movi v", d, ".8h, #", hx(imm), ", lsl #", shift),
              [=](Assembler& a) { a.movi(v.h8(), imm, lsl(shift)); });
        c.add(cat("mvni v", d, ".8h, #", hx(imm), ", lsl #", shift),
              [=](Assembler& a) { a.mvni(v.h8(), imm, lsl(shift)); });
      }
      for (unsigned shift : {0u, 8u, 16u, 24u}) {
        c.add(cat("movi v", d, ".2s, #", hx(imm), ", lsl #", shift),
              [=](Assembler& a) { a.movi(v.s2(), imm, lsl(shift)); });
        c.add(cat("movi v", d, ".4s, #", hx(imm), ", lsl #", shift),
              [=](Assembler& a) { a.movi(v.s4(), imm, lsl(shift)); });
        c.add(cat("mvni v", d, ".4s, #", hx(imm), ", lsl #", shift),
              [=](Assembler& a) { a.mvni(v.s4(), imm, lsl(shift)); });
      }
    }
    c.add(cat("movi v", d, ".4s, #0x7"), [=](Assembler& a) { a.movi(v.s4(), 7); });
    for (std::uint64_t mask : {std::uint64_t{0}, ~std::uint64_t{0}, std::uint64_t{0xff00ff00ff00ff00},
                               std::uint64_t{0x00000000ffffffff}, std::uint64_t{0xff000000000000ff}}) {
      c.add(cat("movi v", d, ".2d, #", hx(mask)), [=](Assembler& a) { a.movi(v.d2(), mask); });
      c.add(cat("movi d", d, ", #", hx(mask)), [=](Assembler& a) { a.movi(DReg(d), mask); });
    }
  }
  // dup from an element and from a general register.
  for_each_arr<Arr::b16, Arr::h8, Arr::s4, Arr::d2, Arr::s2>([&]<Arr A>() {
    constexpr Lane L = weft::jit::a64::detail::lane_of(A);
    for (const auto& d_n : {std::pair{0u, 1u}, {31u, 30u}}) {
      const auto d = d_n.first;
      const auto n = d_n.second;
      for (unsigned lane : {0u, 1u, lane_count(L) - 1}) {
        c.add(cat("dup ", vn<A>(d), ", v", n, ".", lane_name(L), "[", lane, "]"), [=](Assembler& a) {
          a.dup(Vec<A>{d}, Elem<L>{n, lane});
        });
      }
      for (unsigned g : {0u, 30u, 31u}) {
        if constexpr (A == Arr::d2) {
          c.add(cat("dup ", vn<A>(d), ", ", xzn(g)), [=](Assembler& a) { a.dup(Vec<A>{d}, xz(g)); });
        } else {
          c.add(cat("dup ", vn<A>(d), ", ", wzn(g)), [=](Assembler& a) { a.dup(Vec<A>{d}, wz(g)); });
        }
      }
    }
  });
  // ins/mov between lanes and from general registers; umov to general registers.
  auto lanes = [&]<Lane L>() {
    const unsigned last = lane_count(L) - 1;
    for (const auto& d_n : {std::pair{0u, 1u}, {31u, 30u}}) {
      const auto d = d_n.first;
      const auto n = d_n.second;
      for (const auto& dl_nl : {std::pair{0u, 0u}, {last, 0u}, {0u, last}, {1u, last}}) {
        const auto dl = dl_nl.first;
        const auto nl = dl_nl.second;
        const std::string text = cat("v", d, ".", lane_name(L), "[", dl, "], v", n, ".", lane_name(L), "[", nl, "]");
        c.add("ins " + text, [=](Assembler& a) { a.ins(Elem<L>{d, dl}, Elem<L>{n, nl}); });
        c.add("mov " + text, [=](Assembler& a) { a.mov(Elem<L>{d, dl}, Elem<L>{n, nl}); });
      }
      for (unsigned g : {0u, 30u, 31u}) {
        for (unsigned lane : {0u, last}) {
          const std::string elem = cat("v", d, ".", lane_name(L), "[", lane, "]");
          if constexpr (L == Lane::d) {
            c.add(cat("ins ", elem, ", ", xzn(g)), [=](Assembler& a) { a.ins(Elem<L>{d, lane}, xz(g)); });
            c.add(cat("mov ", elem, ", ", xzn(g)), [=](Assembler& a) { a.mov(Elem<L>{d, lane}, xz(g)); });
            c.add(cat("umov ", xzn(g), ", ", elem), [=](Assembler& a) { a.umov(xz(g), Elem<L>{d, lane}); });
          } else {
            c.add(cat("ins ", elem, ", ", wzn(g)), [=](Assembler& a) { a.ins(Elem<L>{d, lane}, wz(g)); });
            c.add(cat("mov ", elem, ", ", wzn(g)), [=](Assembler& a) { a.mov(Elem<L>{d, lane}, wz(g)); });
            c.add(cat("umov ", wzn(g), ", ", elem), [=](Assembler& a) { a.umov(wz(g), Elem<L>{d, lane}); });
          }
        }
      }
    }
  };
  lanes.template operator()<Lane::b>();
  lanes.template operator()<Lane::h>();
  lanes.template operator()<Lane::s>();
  lanes.template operator()<Lane::d>();
  for (const auto& f_g : {std::pair{0u, 1u}, {31u, 31u}, {17u, 30u}}) {
    const auto f = f_g.first;
    const auto g = f_g.second;
    c.add(cat("fmov s", f, ", ", wzn(g)), [=](Assembler& a) { a.fmov(SReg(f), wz(g)); });
    c.add(cat("fmov ", wzn(g), ", s", f), [=](Assembler& a) { a.fmov(wz(g), SReg(f)); });
    c.add(cat("fmov d", f, ", ", xzn(g)), [=](Assembler& a) { a.fmov(DReg(f), xz(g)); });
    c.add(cat("fmov ", xzn(g), ", d", f), [=](Assembler& a) { a.fmov(xz(g), DReg(f)); });
  }
}

// ---- scalar floating point ------------------------------------------------------------------------

template <int Operands, class Call>
void fp_scalar(Cases& c, const std::string& op, Call call) {
  struct Regs {
    unsigned d, n, m, a;
  };
  for (Regs r : {Regs{0, 1, 2, 3}, Regs{31, 30, 29, 28}, Regs{15, 31, 0, 31}}) {
    auto text = [&](char kind) {
      std::string t = cat(op, " ", kind, r.d, ", ", kind, r.n);
      if (Operands >= 3) t += cat(", ", kind, r.m);
      if (Operands == 4) t += cat(", ", kind, r.a);
      return t;
    };
    auto emit = [=]<unsigned B>(Assembler& a) {
      using R = ScalarReg<B>;
      if constexpr (Operands == 2)
        call(a, R(r.d), R(r.n));
      else if constexpr (Operands == 3)
        call(a, R(r.d), R(r.n), R(r.m));
      else
        call(a, R(r.d), R(r.n), R(r.m), R(r.a));
    };
    c.add(text('s'), [=](Assembler& a) { emit.template operator()<4>(a); });
    c.add(text('d'), [=](Assembler& a) { emit.template operator()<8>(a); });
  }
}

void scalar_fp(Cases& c) {
  fp_scalar<3>(c, "fadd", CALL(fadd));
  fp_scalar<3>(c, "fsub", CALL(fsub));
  fp_scalar<3>(c, "fmul", CALL(fmul));
  fp_scalar<3>(c, "fdiv", CALL(fdiv));
  fp_scalar<3>(c, "fmax", CALL(fmax));
  fp_scalar<3>(c, "fmin", CALL(fmin));
  fp_scalar<3>(c, "fmaxnm", CALL(fmaxnm));
  fp_scalar<3>(c, "fminnm", CALL(fminnm));
  fp_scalar<2>(c, "fmov", CALL(fmov));
  fp_scalar<2>(c, "fabs", CALL(fabs));
  fp_scalar<2>(c, "fneg", CALL(fneg));
  fp_scalar<2>(c, "fsqrt", CALL(fsqrt));
  fp_scalar<4>(c, "fmadd", CALL(fmadd));
  fp_scalar<4>(c, "fmsub", CALL(fmsub));
  for (const auto& d_n : {std::pair{0u, 1u}, {31u, 30u}, {3u, 3u}}) {
    const auto d = d_n.first;
    const auto n = d_n.second;
    c.add(cat("fcvt d", d, ", s", n), [=](Assembler& a) { a.fcvt(DReg(d), SReg(n)); });
    c.add(cat("fcvt s", d, ", d", n), [=](Assembler& a) { a.fcvt(SReg(d), DReg(n)); });
  }
}

// Prefetch hints (the Neon BRGEMM's next_c prefetch): every operation, base registers at both
// ends, the unsigned offsets' and prfum's extreme immediates, register offsets.
void brgemm_prefetch(Cases& c) {
  const std::pair<Prefetch, const char*> ops[] = {
      {Prefetch::pldl1keep, "pldl1keep"}, {Prefetch::pldl1strm, "pldl1strm"}, {Prefetch::pldl2keep, "pldl2keep"},
      {Prefetch::pldl2strm, "pldl2strm"}, {Prefetch::pldl3keep, "pldl3keep"}, {Prefetch::pldl3strm, "pldl3strm"},
      {Prefetch::pstl1keep, "pstl1keep"}, {Prefetch::pstl1strm, "pstl1strm"}, {Prefetch::pstl2keep, "pstl2keep"},
      {Prefetch::pstl2strm, "pstl2strm"}, {Prefetch::pstl3keep, "pstl3keep"}, {Prefetch::pstl3strm, "pstl3strm"}};
  for (const auto& op_name : ops) {
    const auto op = op_name.first;
    const std::string name = op_name.second;
    c.add(cat("prfm ", name, ", [x1]"), [=](Assembler& a) { a.prfm(op, ptr(x1)); });
    c.add(cat("prfum ", name, ", [x2, #-1]"), [=](Assembler& a) { a.prfum(op, ptr(x2, -1)); });
    c.add(cat("prfm ", name, ", [x3, x4]"), [=](Assembler& a) { a.prfm(op, ptr(x3, x4)); });
  }
  for (unsigned n : {0u, 17u, 30u, 31u}) {
    const std::string base = xsn(n);
    for (std::int64_t off : {std::int64_t{8}, std::int64_t{4096}, std::int64_t{32760}}) {
      c.add(cat("prfm pldl1keep, [", base, ", #", off, "]"),
            [=](Assembler& a) { a.prfm(Prefetch::pldl1keep, ptr(xs(n), off)); });
    }
    for (std::int64_t off : {-256, 0, 1, 255}) {
      c.add(cat("prfum pldl1keep, [", base, ", #", off, "]"),
            [=](Assembler& a) { a.prfum(Prefetch::pldl1keep, ptr(xs(n), off)); });
    }
    for (const IndexCase& index : index_cases(8)) {
      c.add(cat("prfm pldl2keep, [", base, ", ", index.text),
            [=, mem = index.mem](Assembler& a) { a.prfm(Prefetch::pldl2keep, mem(xs(n))); });
    }
  }
}

// The unary emitter's forms: cmtst (a bitmask's bits spread over lanes), addv (lanes packed into bits).
void unary_emitter_forms(Cases& c) {
  INT3(cmtst);
  for (const auto& d_n : {std::pair{0u, 1u}, {31u, 30u}, {5u, 5u}}) {
    const auto d = d_n.first;
    const auto n = d_n.second;
    const VReg vn_(n);
    c.add(cat("addv b", d, ", v", n, ".16b"), [=](Assembler& a) { a.addv(BReg(d), vn_.b16()); });
    c.add(cat("addv h", d, ", v", n, ".8h"), [=](Assembler& a) { a.addv(HReg(d), vn_.h8()); });
    c.add(cat("addv s", d, ", v", n, ".4s"), [=](Assembler& a) { a.addv(SReg(d), vn_.s4()); });
  }
}


// ---- SVE ------------------------------------------------------------------------------------------

template <Lane... Ls, class F>
void for_each_lane(F&& f) {
  (f.template operator()<Ls>(), ...);
}
std::string zn(unsigned n, Lane l) { return cat("z", n, ".", lane_name(l)); }
std::string pn(unsigned n, Lane l) { return cat("p", n, ".", lane_name(l)); }
unsigned lane_bytes(Lane l) { return 1u << static_cast<unsigned>(l); }

// Registers at both ends: d, governing predicate (p0..p7), n, m.
struct SveRegs {
  unsigned d, g, n, m;
};
const SveRegs kSveRegs[] = {{0, 0, 1, 2}, {31, 7, 30, 29}, {15, 3, 16, 31}, {7, 5, 7, 7}};

void sve_predicates_and_counts(Cases& c) {
  const std::pair<Pattern, const char*> patterns[] = {
      {Pattern::pow2, "pow2"},   {Pattern::vl1, "vl1"},     {Pattern::vl7, "vl7"},   {Pattern::vl8, "vl8"},
      {Pattern::vl16, "vl16"},   {Pattern::vl256, "vl256"}, {Pattern::mul4, "mul4"}, {Pattern::mul3, "mul3"},
      {Pattern::all, "all"}};
  for_each_lane<Lane::b, Lane::h, Lane::s, Lane::d>([&]<Lane L>() {
    for (unsigned p : {0u, 15u}) {
      c.add(cat("ptrue ", pn(p, L)), [=](Assembler& a) { a.ptrue(PVec<L>{p}); });
      for (const auto& pattern : patterns) {
        c.add(cat("ptrue ", pn(p, L), ", ", pattern.second), [=](Assembler& a) { a.ptrue(PVec<L>{p}, pattern.first); });
      }
      for (const auto& n_m : {std::pair{0u, 1u}, {30u, 29u}, {31u, 31u}}) {
        const auto n = n_m.first, m = n_m.second;
        c.add(cat("whilelt ", pn(p, L), ", ", wzn(n), ", ", wzn(m)),
              [=](Assembler& a) { a.whilelt(PVec<L>{p}, wz(n), wz(m)); });
        c.add(cat("whilelt ", pn(p, L), ", ", xzn(n), ", ", xzn(m)),
              [=](Assembler& a) { a.whilelt(PVec<L>{p}, xz(n), xz(m)); });
      }
    }
  });
  for (unsigned p : {0u, 7u, 15u}) {
    c.add(cat("pfalse p", p, ".b"), [=](Assembler& a) { a.pfalse(PReg(p).b()); });
    c.add(cat("ptest p", p, ", p", 15 - p, ".b"), [=](Assembler& a) { a.ptest(PReg(p), PReg(15 - p).b()); });
  }
  using Count = void (Assembler::*)(XOrZr, Pattern, unsigned);
  const std::pair<Count, const char*> counts[] = {
      {&Assembler::cntb, "cntb"}, {&Assembler::cnth, "cnth"}, {&Assembler::cntw, "cntw"}, {&Assembler::cntd, "cntd"},
      {&Assembler::incb, "incb"}, {&Assembler::inch, "inch"}, {&Assembler::incw, "incw"}, {&Assembler::incd, "incd"}};
  for (const auto& count : counts) {
    const Count method = count.first;
    const std::string op = count.second;
    for (unsigned d : {0u, 17u, 31u}) {
      c.add(cat(op, " ", xzn(d)), [=](Assembler& a) { (a.*method)(xz(d), Pattern::all, 1); });
      for (const auto& pattern : patterns) {
        for (unsigned mul : {1u, 2u, 16u}) {
          c.add(cat(op, " ", xzn(d), ", ", pattern.second, ", mul #", mul),
                [=](Assembler& a) { (a.*method)(xz(d), pattern.first, mul); });
        }
      }
    }
  }
  for (const auto& d_n : {std::pair{0u, 1u}, {31u, 31u}, {30u, 31u}, {31u, 2u}}) {
    const auto d = d_n.first, n = d_n.second;
    for (std::int64_t imm : {-32, -1, 0, 1, 31}) {
      c.add(cat("addvl ", xsn(d), ", ", xsn(n), ", #", imm), [=](Assembler& a) { a.addvl(xs(d), xs(n), imm); });
      c.add(cat("addpl ", xsn(d), ", ", xsn(n), ", #", imm), [=](Assembler& a) { a.addpl(xs(d), xs(n), imm); });
      c.add(cat("rdvl ", xzn(d), ", #", imm), [=](Assembler& a) { a.rdvl(xz(d), imm); });
    }
  }
  // SVE's condition names are the flags' usual ones.
  c.add("b.first 1f\nb.none 1f\nb.last 1f\nb.any 1f\n1:", [](Assembler& a) {
    Label l;
    a.b(Cond::first, l);
    a.b(Cond::none, l);
    a.b(Cond::last, l);
    a.b(Cond::any, l);
    a.bind(l);
  });
}

void sve_loads_and_stores(Cases& c) {
  for_each_lane<Lane::h, Lane::s, Lane::d>([&]<Lane L>() {
    const std::string size = L == Lane::h ? "h" : L == Lane::s ? "w" : "d";
    const unsigned shift = static_cast<unsigned>(L);
    const unsigned bytes = lane_bytes(L);
    for (const auto& t_g_n : {std::array{0u, 0u, 0u}, {31u, 7u, 31u}, {17u, 3u, 30u}}) {
      const auto t = t_g_n[0], g = t_g_n[1], n = t_g_n[2];
      const std::string z = cat("{", zn(t, L), "}");
      for (std::int64_t off : {-8, -1, 0, 1, 7}) {
        const std::string mem = off == 0 ? cat("[", xsn(n), "]") : cat("[", xsn(n), ", #", off, ", mul vl]");
        c.add(cat("ld1", size, " ", z, ", p", g, "/z, ", mem), [=](Assembler& a) {
          if constexpr (L == Lane::h) a.ld1h(ZH{t}, PReg(g).z(), ptr_vl(xs(n), off));
          if constexpr (L == Lane::s) a.ld1w(ZS{t}, PReg(g).z(), ptr_vl(xs(n), off));
          if constexpr (L == Lane::d) a.ld1d(ZD{t}, PReg(g).z(), ptr_vl(xs(n), off));
        });
        c.add(cat("st1", size, " ", z, ", p", g, ", ", mem), [=](Assembler& a) {
          if constexpr (L == Lane::h) a.st1h(ZH{t}, PReg(g), ptr_vl(xs(n), off));
          if constexpr (L == Lane::s) a.st1w(ZS{t}, PReg(g), ptr_vl(xs(n), off));
          if constexpr (L == Lane::d) a.st1d(ZD{t}, PReg(g), ptr_vl(xs(n), off));
        });
      }
      for (unsigned m : {0u, 30u}) {
        const std::string mem = cat("[", xsn(n), ", x", m, ", lsl #", shift, "]");
        c.add(cat("ld1", size, " ", z, ", p", g, "/z, ", mem), [=](Assembler& a) {
          if constexpr (L == Lane::h) a.ld1h(ZH{t}, PReg(g).z(), ptr(xs(n), XReg(m), lsl(shift)));
          if constexpr (L == Lane::s) a.ld1w(ZS{t}, PReg(g).z(), ptr(xs(n), XReg(m), lsl(shift)));
          if constexpr (L == Lane::d) a.ld1d(ZD{t}, PReg(g).z(), ptr(xs(n), XReg(m), lsl(shift)));
        });
        c.add(cat("st1", size, " ", z, ", p", g, ", ", mem), [=](Assembler& a) {
          if constexpr (L == Lane::h) a.st1h(ZH{t}, PReg(g), ptr(xs(n), XReg(m), lsl(shift)));
          if constexpr (L == Lane::s) a.st1w(ZS{t}, PReg(g), ptr(xs(n), XReg(m), lsl(shift)));
          if constexpr (L == Lane::d) a.st1d(ZD{t}, PReg(g), ptr(xs(n), XReg(m), lsl(shift)));
        });
      }
      for (std::int64_t off : {std::int64_t{0}, std::int64_t{bytes}, std::int64_t{63} * bytes}) {
        c.add(cat("ld1r", size, " ", z, ", p", g, "/z, [", xsn(n), ", #", off, "]"), [=](Assembler& a) {
          if constexpr (L == Lane::h) a.ld1rh(ZH{t}, PReg(g).z(), ptr(xs(n), off));
          if constexpr (L == Lane::s) a.ld1rw(ZS{t}, PReg(g).z(), ptr(xs(n), off));
          if constexpr (L == Lane::d) a.ld1rd(ZD{t}, PReg(g).z(), ptr(xs(n), off));
        });
      }
    }
  });
  for (const auto& t_n : {std::pair{0u, 0u}, {31u, 31u}, {16u, 30u}}) {
    const auto t = t_n.first, n = t_n.second;
    for (std::int64_t off : {-256, -255, -9, -8, -1, 0, 1, 7, 8, 255}) {
      const std::string mem = cat("[", xsn(n), ", #", off, ", mul vl]");
      c.add(cat("ldr z", t, ", ", mem), [=](Assembler& a) { a.ldr(ZReg(t), ptr_vl(xs(n), off)); });
      c.add(cat("str z", t, ", ", mem), [=](Assembler& a) { a.str(ZReg(t), ptr_vl(xs(n), off)); });
    }
  }
}

#define SVE_HSD for_each_lane<Lane::h, Lane::s, Lane::d>
#define SVE_BHSD for_each_lane<Lane::b, Lane::h, Lane::s, Lane::d>

void sve_floating_point(Cases& c) {
  // Fused (d, g/m, n, m) and unpredicated three-register forms.
#define SVE_FUSED(name)                                                                                                \
  SVE_HSD([&]<Lane L>() {                                                                                              \
    for (SveRegs r : kSveRegs) {                                                                                       \
      c.add(cat(#name " ", zn(r.d, L), ", p", r.g, "/m, ", zn(r.n, L), ", ", zn(r.m, L)),                               \
            [=](Assembler& a) { a.name(ZVec<L>{r.d}, PReg(r.g).m(), ZVec<L>{r.n}, ZVec<L>{r.m}); });                  \
    }                                                                                                                  \
  })
  SVE_FUSED(fmla);
  SVE_FUSED(fmls);
  SVE_FUSED(fmad);
#define SVE_THREE(name, lanes)                                                                                         \
  lanes([&]<Lane L>() {                                                                                                \
    for (SveRegs r : kSveRegs) {                                                                                       \
      c.add(cat(#name " ", zn(r.d, L), ", ", zn(r.n, L), ", ", zn(r.m, L)),                                             \
            [=](Assembler& a) { a.name(ZVec<L>{r.d}, ZVec<L>{r.n}, ZVec<L>{r.m}); });                                 \
    }                                                                                                                  \
  })
  SVE_THREE(fadd, SVE_HSD);
  SVE_THREE(fsub, SVE_HSD);
  SVE_THREE(fmul, SVE_HSD);
  // By element: the indexed register's range and every index.
  SVE_HSD([&]<Lane L>() {
    const unsigned last_register = L == Lane::d ? 15 : 7;
    const unsigned elements = L == Lane::h ? 8 : L == Lane::s ? 4 : 2;
    for (const auto& d_n : {std::pair{0u, 1u}, {31u, 30u}}) {
      for (unsigned m : {0u, last_register}) {
        for (unsigned e = 0; e < elements; ++e) {
          c.add(cat("fmla ", zn(d_n.first, L), ", ", zn(d_n.second, L), ", ", zn(m, L), "[", e, "]"),
                [=](Assembler& a) { a.fmla(ZVec<L>{d_n.first}, ZVec<L>{d_n.second}, ZElem<L>{m, e}); });
        }
      }
    }
  });
  // Predicated, destructive (d, g/m, d, m) and unary (d, g/m, n).
#define SVE_DESTRUCTIVE(name)                                                                                          \
  SVE_HSD([&]<Lane L>() {                                                                                              \
    for (SveRegs r : kSveRegs) {                                                                                       \
      c.add(cat(#name " ", zn(r.d, L), ", p", r.g, "/m, ", zn(r.d, L), ", ", zn(r.m, L)),                               \
            [=](Assembler& a) { a.name(ZVec<L>{r.d}, PReg(r.g).m(), ZVec<L>{r.d}, ZVec<L>{r.m}); });                  \
    }                                                                                                                  \
  })
  SVE_DESTRUCTIVE(fadd);
  SVE_DESTRUCTIVE(fsub);
  SVE_DESTRUCTIVE(fmul);
  SVE_DESTRUCTIVE(fmax);
  SVE_DESTRUCTIVE(fmin);
  SVE_DESTRUCTIVE(fmaxnm);
  SVE_DESTRUCTIVE(fminnm);
  SVE_DESTRUCTIVE(fdiv);
#define SVE_UNARY(name)                                                                                                \
  SVE_HSD([&]<Lane L>() {                                                                                              \
    for (SveRegs r : kSveRegs) {                                                                                       \
      c.add(cat(#name " ", zn(r.d, L), ", p", r.g, "/m, ", zn(r.n, L)),                                                \
            [=](Assembler& a) { a.name(ZVec<L>{r.d}, PReg(r.g).m(), ZVec<L>{r.n}); });                                \
    }                                                                                                                  \
  })
  SVE_UNARY(fsqrt);
  SVE_UNARY(fneg);
  SVE_UNARY(fabs);
  SVE_UNARY(frintn);
  for (SveRegs r : kSveRegs) {
    c.add(cat("fcvtzs ", zn(r.d, Lane::s), ", p", r.g, "/m, ", zn(r.n, Lane::s)),
          [=](Assembler& a) { a.fcvtzs(ZS{r.d}, PReg(r.g).m(), ZS{r.n}); });
    c.add(cat("scvtf ", zn(r.d, Lane::s), ", p", r.g, "/m, ", zn(r.n, Lane::s)),
          [=](Assembler& a) { a.scvtf(ZS{r.d}, PReg(r.g).m(), ZS{r.n}); });
  }
  // Compares into predicates (p0..p15), with vectors and with #0.0.
#define SVE_COMPARE(name)                                                                                              \
  SVE_HSD([&]<Lane L>() {                                                                                              \
    for (SveRegs r : kSveRegs) {                                                                                       \
      const unsigned d = r.d % 16;                                                                                     \
      c.add(cat(#name " ", pn(d, L), ", p", r.g, "/z, ", zn(r.n, L), ", ", zn(r.m, L)),                                \
            [=](Assembler& a) { a.name(PVec<L>{d}, PReg(r.g).z(), ZVec<L>{r.n}, ZVec<L>{r.m}); });                    \
      c.add(cat(#name " ", pn(d, L), ", p", r.g, "/z, ", zn(r.n, L), ", #0.0"),                                        \
            [=](Assembler& a) { a.name(PVec<L>{d}, PReg(r.g).z(), ZVec<L>{r.n}, 0.0); });                             \
    }                                                                                                                  \
  })
  SVE_COMPARE(fcmge);
  SVE_COMPARE(fcmgt);
  SVE_COMPARE(fcmeq);
  SVE_COMPARE(fcmle);
  SVE_COMPARE(fcmlt);
  // Reductions into a scalar of the element size.
  SVE_HSD([&]<Lane L>() {
    for (SveRegs r : kSveRegs) {
      constexpr unsigned B = 1u << static_cast<unsigned>(L);
      c.add(cat("faddv ", lane_name(L), r.d, ", p", r.g, ", ", zn(r.n, L)),
            [=](Assembler& a) { a.faddv(ScalarReg<B>(r.d), PReg(r.g), ZVec<L>{r.n}); });
      c.add(cat("fmaxv ", lane_name(L), r.d, ", p", r.g, ", ", zn(r.n, L)),
            [=](Assembler& a) { a.fmaxv(ScalarReg<B>(r.d), PReg(r.g), ZVec<L>{r.n}); });
    }
  });
}

void sve_moves_and_integer(Cases& c) {
  SVE_BHSD([&]<Lane L>() {
    for (SveRegs r : kSveRegs) {
      const unsigned g = r.g == 7 ? 15 : r.g;  // sel and mov /m take p0..p15
      c.add(cat("sel ", zn(r.d, L), ", p", g, ", ", zn(r.n, L), ", ", zn(r.m, L)),
            [=](Assembler& a) { a.sel(ZVec<L>{r.d}, PReg(g), ZVec<L>{r.n}, ZVec<L>{r.m}); });
      c.add(cat("mov ", zn(r.d, L), ", p", g, "/m, ", zn(r.n, L)),
            [=](Assembler& a) { a.mov(ZVec<L>{r.d}, PReg(g).m(), ZVec<L>{r.n}); });
    }
    for (unsigned d : {0u, 31u}) {
      for (unsigned n : {0u, 30u, 31u}) {
        if constexpr (L == Lane::d) {
          c.add(cat("dup ", zn(d, L), ", ", xsn(n)), [=](Assembler& a) { a.dup(ZD{d}, xs(n)); });
        } else {
          c.add(cat("dup ", zn(d, L), ", ", wsn(n)), [=](Assembler& a) { a.dup(ZVec<L>{d}, ws(n)); });
        }
      }
      std::vector<std::int32_t> imms = {-128, -1, 0, 1, 127};
      if constexpr (L != Lane::b) imms.insert(imms.end(), {-32768, -256, 256, 32512});
      for (std::int32_t imm : imms) {
        c.add(cat("dup ", zn(d, L), ", #", imm), [=](Assembler& a) { a.dup(ZVec<L>{d}, imm); });
      }
      if constexpr (L != Lane::b) {
        for (double v : {1.0, -2.0, 0.125, 31.0, -0.15625}) {
          c.add(cat("fdup ", zn(d, L), ", #", v), [=](Assembler& a) { a.fdup(ZVec<L>{d}, v); });
        }
      }
    }
    const unsigned esize = 8u << static_cast<unsigned>(L);
    for (const auto& d_n : {std::pair{0u, 1u}, {31u, 30u}, {5u, 5u}}) {
      const auto d = d_n.first, n = d_n.second;
      for (unsigned s : {0u, 1u, esize - 1}) {
        c.add(cat("lsl ", zn(d, L), ", ", zn(n, L), ", #", s), [=](Assembler& a) { a.lsl(ZVec<L>{d}, ZVec<L>{n}, s); });
      }
      for (unsigned s : {1u, esize / 2, esize}) {
        c.add(cat("lsr ", zn(d, L), ", ", zn(n, L), ", #", s), [=](Assembler& a) { a.lsr(ZVec<L>{d}, ZVec<L>{n}, s); });
        c.add(cat("asr ", zn(d, L), ", ", zn(n, L), ", #", s), [=](Assembler& a) { a.asr(ZVec<L>{d}, ZVec<L>{n}, s); });
      }
    }
  });
  SVE_THREE(add, SVE_BHSD);
  SVE_THREE(sub, SVE_BHSD);
  SVE_THREE(zip1, SVE_BHSD);
  SVE_THREE(zip2, SVE_BHSD);
  SVE_THREE(uzp1, SVE_BHSD);
  SVE_THREE(uzp2, SVE_BHSD);
  SVE_THREE(trn1, SVE_BHSD);
  SVE_THREE(trn2, SVE_BHSD);
  for (SveRegs r : kSveRegs) {
    c.add(cat("and ", zn(r.d, Lane::d), ", ", zn(r.n, Lane::d), ", ", zn(r.m, Lane::d)),
          [=](Assembler& a) { a.and_(ZD{r.d}, ZD{r.n}, ZD{r.m}); });
    c.add(cat("orr ", zn(r.d, Lane::d), ", ", zn(r.n, Lane::d), ", ", zn(r.m, Lane::d)),
          [=](Assembler& a) { a.orr(ZD{r.d}, ZD{r.n}, ZD{r.m}); });
    c.add(cat("eor ", zn(r.d, Lane::d), ", ", zn(r.n, Lane::d), ", ", zn(r.m, Lane::d)),
          [=](Assembler& a) { a.eor(ZD{r.d}, ZD{r.n}, ZD{r.m}); });
    c.add(cat("bic ", zn(r.d, Lane::d), ", ", zn(r.n, Lane::d), ", ", zn(r.m, Lane::d)),
          [=](Assembler& a) { a.bic(ZD{r.d}, ZD{r.n}, ZD{r.m}); });
    c.add(cat("mov ", zn(r.d, Lane::d), ", ", zn(r.n, Lane::d)), [=](Assembler& a) { a.mov(ZD{r.d}, ZD{r.n}); });
  }
}

void sve_bf16(Cases& c) {
  for (SveRegs r : kSveRegs) {
    const std::string dns = cat(zn(r.d, Lane::s), ", ", zn(r.n, Lane::h));
    c.add(cat("bfdot ", dns, ", ", zn(r.m, Lane::h)), [=](Assembler& a) { a.bfdot(ZS{r.d}, ZH{r.n}, ZH{r.m}); });
    c.add(cat("bfmmla ", dns, ", ", zn(r.m, Lane::h)), [=](Assembler& a) { a.bfmmla(ZS{r.d}, ZH{r.n}, ZH{r.m}); });
    c.add(cat("bfcvt ", zn(r.d, Lane::h), ", p", r.g, "/m, ", zn(r.n, Lane::s)),
          [=](Assembler& a) { a.bfcvt(ZH{r.d}, PReg(r.g).m(), ZS{r.n}); });
    c.add(cat("bfcvtnt ", zn(r.d, Lane::h), ", p", r.g, "/m, ", zn(r.n, Lane::s)),
          [=](Assembler& a) { a.bfcvtnt(ZH{r.d}, PReg(r.g).m(), ZS{r.n}); });
    for (unsigned m : {0u, 7u}) {
      for (unsigned e = 0; e < 4; ++e) {
        c.add(cat("bfdot ", dns, ", ", zn(m, Lane::h), "[", e, "]"),
              [=](Assembler& a) { a.bfdot(ZS{r.d}, ZH{r.n}, ZElem<Lane::h>{m, e}); });
      }
    }
  }
}
#undef SVE_FUSED
#undef SVE_THREE
#undef SVE_DESTRUCTIVE
#undef SVE_UNARY
#undef SVE_COMPARE
#undef SVE_HSD
#undef SVE_BHSD

// FEAT_BF16 (Neon): bfdot, bfmmla, bfmlalb/t, bfcvtn/2, bfcvt; every pair index and lane, registers
// at both ends (the by-element bfmlal's register ends at v15).
void bf16_neon(Cases& c) {
  for (Triple r : kTriples) {
    const VReg d(r.d), n(r.n), m(r.m);
    c.add(cat("bfdot v", r.d, ".2s, v", r.n, ".4h, v", r.m, ".4h"),
          [=](Assembler& a) { a.bfdot(d.s2(), n.h4(), m.h4()); });
    c.add(cat("bfdot v", r.d, ".4s, v", r.n, ".8h, v", r.m, ".8h"),
          [=](Assembler& a) { a.bfdot(d.s4(), n.h8(), m.h8()); });
    for (unsigned pair = 0; pair < 4; ++pair) {
      c.add(cat("bfdot v", r.d, ".2s, v", r.n, ".4h, v", r.m, ".2h[", pair, "]"),
            [=](Assembler& a) { a.bfdot(d.s2(), n.h4(), m.h2(pair)); });
      c.add(cat("bfdot v", r.d, ".4s, v", r.n, ".8h, v", r.m, ".2h[", pair, "]"),
            [=](Assembler& a) { a.bfdot(d.s4(), n.h8(), m.h2(pair)); });
    }
    c.add(cat("bfmmla v", r.d, ".4s, v", r.n, ".8h, v", r.m, ".8h"),
          [=](Assembler& a) { a.bfmmla(d.s4(), n.h8(), m.h8()); });
    c.add(cat("bfmlalb v", r.d, ".4s, v", r.n, ".8h, v", r.m, ".8h"),
          [=](Assembler& a) { a.bfmlalb(d.s4(), n.h8(), m.h8()); });
    c.add(cat("bfmlalt v", r.d, ".4s, v", r.n, ".8h, v", r.m, ".8h"),
          [=](Assembler& a) { a.bfmlalt(d.s4(), n.h8(), m.h8()); });
    const VReg low_m(r.m % 16);  // 31 -> 15, 29 -> 13, 2 -> 2, 7 -> 7
    for (unsigned lane = 0; lane < 8; ++lane) {
      c.add(cat("bfmlalb v", r.d, ".4s, v", r.n, ".8h, v", low_m.index, ".h[", lane, "]"),
            [=](Assembler& a) { a.bfmlalb(d.s4(), n.h8(), low_m.h(lane)); });
      c.add(cat("bfmlalt v", r.d, ".4s, v", r.n, ".8h, v", low_m.index, ".h[", lane, "]"),
            [=](Assembler& a) { a.bfmlalt(d.s4(), n.h8(), low_m.h(lane)); });
    }
    c.add(cat("bfcvtn v", r.d, ".4h, v", r.n, ".4s"), [=](Assembler& a) { a.bfcvtn(d.h4(), n.s4()); });
    c.add(cat("bfcvtn2 v", r.d, ".8h, v", r.n, ".4s"), [=](Assembler& a) { a.bfcvtn2(d.h8(), n.s4()); });
    c.add(cat("bfcvt h", r.d, ", s", r.n), [=](Assembler& a) { a.bfcvt(d.hreg(), n.sreg()); });
  }
  // v15, the last register of the by-element bfmlal.
  c.add("bfmlalb v0.4s, v31.8h, v15.h[7]", [](Assembler& a) { a.bfmlalb(v0.s4(), v31.h8(), v15.h(7)); });
  c.add("bfmlalt v31.4s, v0.8h, v15.h[0]", [](Assembler& a) { a.bfmlalt(v31.s4(), v0.h8(), v15.h(0)); });
}

}  // namespace

// The SVE BRGEMM's forms (issue 28, sve-brgemm): ld1rqw / ld1rqd.
void sve_brgemm_forms(Cases& c) {
  for (const auto& t_g_n : {std::array{0u, 0u, 0u}, {31u, 7u, 31u}, {17u, 3u, 30u}}) {
    const auto t = t_g_n[0], g = t_g_n[1], n = t_g_n[2];
    for (std::int64_t off : {-128, -16, 0, 16, 112}) {
      const std::string mem = off == 0 ? cat("[", xsn(n), "]") : cat("[", xsn(n), ", #", off, "]");
      c.add(cat("ld1rqw {", zn(t, Lane::s), "}, p", g, "/z, ", mem),
            [=](Assembler& a) { a.ld1rqw(ZS{t}, PReg(g).z(), ptr(xs(n), off)); });
      c.add(cat("ld1rqd {", zn(t, Lane::d), "}, p", g, "/z, ", mem),
            [=](Assembler& a) { a.ld1rqd(ZD{t}, PReg(g).z(), ptr(xs(n), off)); });
    }
  }
}

// The SVE activation emitter's forms (issue 28, sve-activation): fscale.
void sve_activation_forms(Cases& c) {
  for_each_lane<Lane::h, Lane::s, Lane::d>([&]<Lane L>() {
    for (SveRegs r : kSveRegs) {
      c.add(cat("fscale ", zn(r.d, L), ", p", r.g, "/m, ", zn(r.d, L), ", ", zn(r.m, L)),
            [=](Assembler& a) { a.fscale(ZVec<L>{r.d}, PReg(r.g).m(), ZVec<L>{r.d}, ZVec<L>{r.m}); });
    }
  });
}

std::vector<GoldenCase> golden_cases() {
  Cases c;
  integer_arithmetic(c);
  moves(c);
  shifts_multiply_select(c);
  branches_and_system(c);
  loads_and_stores(c);
  vector_loads(c);
  fp_vector(c);
  int_vector(c);
  bitwise_vector_and_moves(c);
  scalar_fp(c);
  brgemm_prefetch(c);
  unary_emitter_forms(c);
  sve_predicates_and_counts(c);
  sve_loads_and_stores(c);
  sve_floating_point(c);
  sve_moves_and_integer(c);
  sve_bf16(c);
  bf16_neon(c);
  sve_brgemm_forms(c);
  sve_activation_forms(c);
  return std::move(c.list);
}

}  // namespace weft::test::a64
