#include "sve_eltwise_emit.hpp"

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "op_properties.hpp"
#include "sve_activation_emit.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/jit/error.hpp"
#include "weft/jit/isa_traits.hpp"

namespace weft::tpp::sve {
namespace {

using namespace jit::a64;
using jit::DataType;

// The operations of both families, as the kernel computes them.
enum class Op {
  add, sub, mul, div, min, max, zero, copy, relu, square, reciprocal, sqrt, increment, decrement, scale,
  exp, sigmoid, tanh, gelu  // the transcendentals: sve_activation_emit.hpp's sequences
};

// Where an input comes from: absent; a matrix (streams down each column, the next column ld
// elements on); a column (streams, the same for every column); a row (one element per column,
// broadcast); a scalar (one element, broadcast).
enum class Source { none, matrix, column, row, scalar };

struct Operand {
  Source source = Source::none;
  std::size_t pointer_field = 0;  // offset of its pointer in the argument struct
  std::int64_t ld = 0;            // matrix: elements between columns; 0: read at call time
  std::size_t ld_field = 0;       // ... from this argument field
};

struct Spec {
  Op op = Op::copy;
  bool f64 = false;
  double alpha = 0;  // increment, decrement, scale (f32: the float's value)
  std::array<Operand, 2> in;
  Operand out;  // a matrix
  int in_bytes = 4, out_bytes = 4;  // of an element in memory: 2 (bf16), 4 or 8
  bool keep_bits = false;           // bf16 in and out, an op that selects an input: no rounding
  int vector_bytes = 0;
  std::int64_t rows = 0, cols = 0, full_vectors = 0;
  int tail = 0;
};

// General registers (x0-x17 only: the kernel is a leaf and saves nothing):
//   x0 args; x1, x2 the inputs' bases (the current column; a row broadcast: the column's element),
//   x3 the output's; x4, x5, x6 their leading dimensions in bytes; x7 columns left; x8 steps left;
//   x9, x10, x11 cursors of the step loop; x16 scratch.
// Vector registers: z0-z3 the first input and results, z4-z7 the second (reciprocal's results),
// z16 / z17 the broadcast inputs, z18 the op's constant (all ones, zero, one or alpha); bf16: z19
// zero (widening), z20-z23 and z28 the rounding's constants, z24-z26 its results and scratch. None of
// z8-z15 (their low halves are callee-saved). Predicates: p0 all (f32 / f64) lanes, p1 the tail's
// (bf16 data: of the chunk's first f32 vector), p2 compares; bf16: p3 exponent 0, p4 not NaN, p5 the
// tail of the chunk's second f32 vector, p6 the tail in 16-bit lanes, p7 all 16-bit lanes.
constexpr XReg kArgs = x0, kColumnsLeft = x7, kStepsLeft = x8, kT = x16;
constexpr std::array<XReg, 3> kBases{x1, x2, x3}, kLds{x4, x5, x6}, kCursors{x9, x10, x11};
constexpr std::size_t kOut = 2;  // index of the output in the arrays above
constexpr ZReg kConstant = z18;
constexpr PReg kAll = p0, kTail = p1, kCompare = p2, kExpZero = p3, kOrdered = p4, kTail2 = p5, kTailH = p6,
               kAllH = p7;
constexpr ZReg kZero = z19, kExpMask = z20, kOne = z21, kRoundBias = z22, kQuiet = z23, kSign = z28;
constexpr std::array<ZReg, 3> kRounded{z24, z25, z26};
constexpr int kUnroll = 4;  // vectors per step
// The transcendentals: x12 the word pool's base; scratch registers (none of z0-z3, the values; none
// of z8-z15) for a group of four f32 vectors, or (bf16 data: the rounding's registers kept) for one
// chunk of two; p8-p11 the per-vector predicates.
constexpr XReg kPoolBase = x12;
constexpr std::array<ZReg, 16> kActScratch{z4, z5, z6, z7, z16, z17, z18, z19, z20, z21, z22, z23, z24, z25, z26, z27};
constexpr std::array<ZReg, 8> kActChunkScratch{z4, z5, z6, z7, z16, z17, z18, z27};
constexpr std::array<PReg, 4> kActPreds{p8, p9, p10, p11};

ZReg a_reg(int u) { return ZReg(static_cast<unsigned>(u)); }
ZReg b_reg(int u) { return ZReg(static_cast<unsigned>(4 + u)); }
ZReg broadcast_reg(std::size_t input) { return ZReg(static_cast<unsigned>(16 + input)); }

template <Lane L>
class EltwiseKernel : public CodeBuffer {
 public:
  explicit EltwiseKernel(const Spec& s)
      : s_(s), bytes_(L == Lane::d ? 8 : 4), chunks_(L == Lane::s && (s.in_bytes == 2 || s.out_bytes == 2)) {
    kernel();
    if (transcendental()) pool_.emit(*this);
  }

 private:
  static ZVec<L> z(ZReg r) { return {r.index}; }
  bool transcendental() const {
    return s_.op == Op::exp || s_.op == Op::sigmoid || s_.op == Op::tanh || s_.op == Op::gelu;
  }
  UnaryOp unary_of() const {
    return s_.op == Op::exp ? UnaryOp::exp : s_.op == Op::sigmoid ? UnaryOp::sigmoid
                                                 : s_.op == Op::tanh ? UnaryOp::tanh : UnaryOp::gelu;
  }
  // xs = op(xs) in place (the transcendentals), scratch: kActScratch or kActChunkScratch.
  void activation(std::span<const ZReg> xs, std::span<const ZReg> scratch) {
    ActivationEmitter(*this, pool_, kPoolBase, kAll).emit(unary_of(), xs, scratch, kActPreds);
  }
  static PVec<L> pv(PReg p) { return {p.index}; }
  bool streams(std::size_t i) const {
    return s_.in[i].source == Source::matrix || s_.in[i].source == Source::column;
  }
  bool is_broadcast(std::size_t i) const {
    return s_.in[i].source == Source::row || s_.in[i].source == Source::scalar;
  }

  void load(ZReg t, PReg g, XReg base, std::int64_t index) {
    if constexpr (L == Lane::d) {
      ld1d(t.d(), g.z(), ptr_vl(base, index));
    } else {
      ld1w(t.s(), g.z(), ptr_vl(base, index));
    }
  }
  void store(ZReg t, PReg g, XReg base, std::int64_t index) {
    if constexpr (L == Lane::d) {
      st1d(t.d(), g, ptr_vl(base, index));
    } else {
      st1w(t.s(), g, ptr_vl(base, index));
    }
  }
  void broadcast(std::size_t input) {
    if (s_.in_bytes == 2) {  // the halfword into every 16-bit lane, then up into the f32 lanes' top
      ld1rh(broadcast_reg(input).h(), kAll.z(), ptr(kBases[input], 0));
      lsl(broadcast_reg(input).s(), broadcast_reg(input).s(), 16);
      return;
    }
    if constexpr (L == Lane::d) {
      ld1rd(broadcast_reg(input).d(), kAll.z(), ptr(kBases[input], 0));
    } else {
      ld1rw(broadcast_reg(input).s(), kAll.z(), ptr(kBases[input], 0));
    }
  }
  // r = the operand's leading dimension in bytes (elements of `element_bytes`).
  void load_ld(XReg r, const Operand& o, int element_bytes) {
    if (o.ld != 0) {
      mov_imm(r, static_cast<std::uint64_t>(o.ld * element_bytes));
    } else {
      ldr(r, ptr(kArgs, static_cast<std::int64_t>(o.ld_field)));
      lsl(r, r, static_cast<unsigned>(std::countr_zero(static_cast<unsigned>(element_bytes))));
    }
  }

  void constants() {
    switch (s_.op) {
      case Op::min:
      case Op::max: dup(z(kConstant), -1); return;  // the all-ones NaN
      case Op::relu: dup(z(kConstant), 0); return;
      case Op::reciprocal: fdup(z(kConstant), 1.0); return;
      case Op::increment:
      case Op::decrement:
      case Op::scale:
        if constexpr (L == Lane::d) {
          mov_imm(kT, std::bit_cast<std::uint64_t>(s_.alpha));
          dup(kConstant.d(), kT);
        } else {
          const WReg w(kT.index);
          mov_imm(w, std::bit_cast<std::uint32_t>(static_cast<float>(s_.alpha)));
          dup(kConstant.s(), w);
        }
        return;
      default: return;
    }
  }

  void kernel() {
    for (std::size_t i = 0; i < 2; ++i)
      if (s_.in[i].source != Source::none)
        ldr(kBases[i], ptr(kArgs, static_cast<std::int64_t>(s_.in[i].pointer_field)));
    ldr(kBases[kOut], ptr(kArgs, static_cast<std::int64_t>(s_.out.pointer_field)));
    ptrue(pv(kAll));
    if (transcendental()) pool_.load_base(*this, kPoolBase);
    if (chunks_) {
      chunk_setup();
    } else if (s_.tail > 0) {
      mov_imm(kT, static_cast<std::uint64_t>(s_.tail));
      whilelt(pv(kTail), xzr, kT);
    }
    constants();
    for (std::size_t i = 0; i < 2; ++i)
      if (s_.in[i].source == Source::scalar) broadcast(i);
    if (s_.cols == 1) {
      chunks_ ? chunk_column() : column();
      ret();
      return;
    }
    for (std::size_t i = 0; i < 2; ++i)
      if (s_.in[i].source == Source::matrix) load_ld(kLds[i], s_.in[i], s_.in_bytes);
    load_ld(kLds[kOut], s_.out, s_.out_bytes);
    mov_imm(kColumnsLeft, static_cast<std::uint64_t>(s_.cols));
    Label columns;
    bind(columns);
    chunks_ ? chunk_column() : column();
    for (std::size_t i = 0; i < 2; ++i) {
      if (s_.in[i].source == Source::matrix) add(kBases[i], kBases[i], kLds[i]);
      if (s_.in[i].source == Source::row) add(kBases[i], kBases[i], static_cast<std::uint64_t>(s_.in_bytes));
    }
    add(kBases[kOut], kBases[kOut], kLds[kOut]);
    subs(kColumnsLeft, kColumnsLeft, 1);
    b(Cond::ne, columns);
    ret();
  }

  // One column of s_.rows elements: steps of kUnroll full vectors (a loop when there are two or
  // more), the remaining full vectors, then the tail under p1.
  void column() {
    for (std::size_t i = 0; i < 2; ++i)
      if (s_.in[i].source == Source::row) broadcast(i);
    const std::int64_t steps = s_.full_vectors / kUnroll;
    const int rest = static_cast<int>(s_.full_vectors % kUnroll);
    std::int64_t first = 0;  // vector index of the next group from the cursors (ptr_vl: -8..7)
    if (steps >= 2) {
      cursors_ = kCursors;
      for (std::size_t i = 0; i < 3; ++i)
        if (i == kOut || streams(i)) mov(kCursors[i], kBases[i]);
      mov_imm(kStepsLeft, static_cast<std::uint64_t>(steps));
      Label loop;
      bind(loop);
      group(0, kUnroll, kAll);
      for (std::size_t i = 0; i < 3; ++i)
        if (i == kOut || streams(i)) add(kCursors[i], kCursors[i], static_cast<std::uint64_t>(kUnroll * s_.vector_bytes));
      subs(kStepsLeft, kStepsLeft, 1);
      b(Cond::ne, loop);
    } else {
      cursors_ = kBases;
      for (std::int64_t step = 0; step < steps; ++step, first += kUnroll) group(first, kUnroll, kAll);
    }
    if (rest > 0) group(first, rest, kAll);
    if (s_.tail > 0) group(first + rest, 1, kTail);
  }

  // `vectors` vectors from vector index `first` on under predicate g: every load and op, then the
  // stores (the output may alias an input: each element is read before it is written).
  void group(std::int64_t first, int vectors, PReg g) {
    std::array<ZReg, kUnroll> results{z0, z1, z2, z3};
    if (transcendental()) {  // the loads, then the sequence on all of them, interleaved
      for (int u = 0; u < vectors; ++u) results[static_cast<std::size_t>(u)] = operand(0, first + u, a_reg(u), g);
      activation(std::span<const ZReg>(results.data(), static_cast<std::size_t>(vectors)), kActScratch);
      for (int u = 0; u < vectors; ++u) store(results[static_cast<std::size_t>(u)], g, cursors_[kOut], first + u);
      return;
    }
    for (int u = 0; u < vectors; ++u) {
      const ZReg x = operand(0, first + u, a_reg(u), g);
      const ZReg y = operand(1, first + u, b_reg(u), g);
      results[static_cast<std::size_t>(u)] = op(u, x, y);
    }
    for (int u = 0; u < vectors; ++u) store(results[static_cast<std::size_t>(u)], g, cursors_[kOut], first + u);
  }

  // ---- bf16 data (f32 arithmetic): chunks of two f32 vectors, one vector of bf16 -----------------
  //
  // A vector of bf16 (ld1h / st1h in 16-bit lanes) holds two f32 vectors' elements: widened with
  // zip1 / zip2 below zeros (bf16 is the top half of a binary32), narrowed with uzp2 (the top
  // halves) after rounding as jit::to_bfloat16 (or, keep_bits, as they are). f32 operands move as
  // two f32 vectors. A column is chunks of 2 * lanes elements: steps of two chunks (a loop when
  // there are two or more), the remaining chunk, then the partial one under p1 / p5 (f32) or p6
  // (bf16).

  // A bf16 copy moves the 16-bit lanes as they are (no widening, no narrowing).
  bool bit_copy() const { return s_.op == Op::copy && s_.keep_bits; }
  std::int64_t chunk_elements() const { return 2 * static_cast<std::int64_t>(s_.vector_bytes / 4); }
  int chunk_tail() const { return static_cast<int>(s_.rows % chunk_elements()); }

  void chunk_setup() {
    ptrue(kAllH.h());
    const int tail = chunk_tail();
    const auto lanes = static_cast<std::uint64_t>(s_.vector_bytes / 4);
    if (tail > 0) {
      mov_imm(kT, static_cast<std::uint64_t>(tail));
      whilelt(kTail.s(), xzr, kT);
      whilelt(kTailH.h(), xzr, kT);
      mov_imm(x17, lanes);
      whilelt(kTail2.s(), x17, kT);  // lanes + i < tail
    }
    dup(kZero.s(), 0);
    if (s_.out_bytes == 2 && !s_.keep_bits) {
      const WReg w(kT.index);
      mov_imm(w, 0x7f800000u);
      dup(kExpMask.s(), w);
      dup(kOne.s(), 1);
      mov_imm(w, 0x7fffu);
      dup(kRoundBias.s(), w);
      mov_imm(w, 0x00400000u);
      dup(kQuiet.s(), w);
      mov_imm(w, 0x80000000u);
      dup(kSign.s(), w);
    }
  }

  void chunk_column() {
    for (std::size_t i = 0; i < 2; ++i)
      if (s_.in[i].source == Source::row) broadcast(i);
    const std::int64_t chunks = s_.rows / chunk_elements();
    const std::int64_t steps = chunks / 2;
    const int rest = static_cast<int>(chunks % 2);
    std::int64_t first = 0;  // chunk index of the next group from the cursors
    if (steps >= 2) {
      cursors_ = kCursors;
      for (std::size_t i = 0; i < 3; ++i)
        if (i == kOut || streams(i)) mov(kCursors[i], kBases[i]);
      mov_imm(kStepsLeft, static_cast<std::uint64_t>(steps));
      Label loop;
      bind(loop);
      chunk_group(0, 2, false);
      for (std::size_t i = 0; i < 3; ++i) {
        const int element_bytes = i == kOut ? s_.out_bytes : s_.in_bytes;
        if (i == kOut || streams(i))
          add(kCursors[i], kCursors[i], static_cast<std::uint64_t>(2 * chunk_elements() * element_bytes));
      }
      subs(kStepsLeft, kStepsLeft, 1);
      b(Cond::ne, loop);
    } else {
      cursors_ = kBases;
      for (std::int64_t step = 0; step < steps; ++step, first += 2) chunk_group(first, 2, false);
    }
    if (rest > 0) chunk_group(first, 1, false);
    if (chunk_tail() > 0) chunk_group(first + rest, 1, true);
  }

  // `count` chunks from chunk index `first` on (the partial chunk when `tail`): loads and ops, then
  // the stores.
  void chunk_group(std::int64_t first, int count, bool tail) {
    std::array<ZReg, kUnroll> results{z0, z1, z2, z3};
    for (int c = 0; c < count; ++c) {
      const int u = 2 * c;
      const auto [x0, x1] = chunk_operand(0, first + c, a_reg(u), a_reg(u + 1), tail);
      const auto [y0, y1] = chunk_operand(1, first + c, b_reg(u), b_reg(u + 1), tail);
      if (transcendental()) {  // a chunk's two vectors at once (the rounding's registers stay free)
        results[static_cast<std::size_t>(u)] = x0;
        results[static_cast<std::size_t>(u + 1)] = x1;
        activation(std::span<const ZReg>(results.data() + u, 2), kActChunkScratch);
        continue;
      }
      results[static_cast<std::size_t>(u)] = op(u, x0, y0);
      results[static_cast<std::size_t>(u + 1)] = op(u + 1, x1, y1);
    }
    for (int c = 0; c < count; ++c) {
      const auto u = static_cast<std::size_t>(2 * c);
      chunk_store(first + c, results[u], results[u + 1], tail);
    }
  }

  std::pair<ZReg, ZReg> chunk_operand(std::size_t input, std::int64_t chunk, ZReg r0, ZReg r1, bool tail) {
    if (is_broadcast(input)) return {broadcast_reg(input), broadcast_reg(input)};
    if (!streams(input)) return {r0, r1};
    const XReg base = cursors_[input];
    if (s_.in_bytes == 2) {
      ld1h(r0.h(), (tail ? kTailH : kAllH).z(), ptr_vl(base, chunk));
      if (bit_copy()) return {r0, r1};  // stored as loaded
      zip2(r1.h(), kZero.h(), r0.h());
      zip1(r0.h(), kZero.h(), r0.h());
    } else {
      ld1w(r0.s(), (tail ? kTail : kAll).z(), ptr_vl(base, 2 * chunk));
      ld1w(r1.s(), (tail ? kTail2 : kAll).z(), ptr_vl(base, 2 * chunk + 1));
    }
    return {r0, r1};
  }

  void chunk_store(std::int64_t chunk, ZReg v0, ZReg v1, bool tail) {
    const XReg base = cursors_[kOut];
    if (s_.out_bytes == 4) {
      st1w(v0.s(), tail ? kTail : kAll, ptr_vl(base, 2 * chunk));
      st1w(v1.s(), tail ? kTail2 : kAll, ptr_vl(base, 2 * chunk + 1));
      return;
    }
    // The chunks' stores are emitted one after the other: each may use the same registers.
    const ZReg out = kRounded[0], other = kRounded[1];
    if (bit_copy()) {
      st1h(v0.h(), tail ? kTailH : kAllH, ptr_vl(base, chunk));
      return;
    }
    if (s_.keep_bits) {
      uzp2(out.h(), v0.h(), v1.h());
    } else {
      round_to_bf16(out, v0, other);
      round_to_bf16(other, v1, kRounded[2]);
      uzp2(out.h(), out.h(), other.h());
    }
    st1h(out.h(), tail ? kTailH : kAllH, ptr_vl(base, chunk));
  }

  // The top halves of r's f32 lanes = v's lanes rounded as jit::to_bfloat16 (t: scratch):
  //   NaN: u | 0x00400000 (quiet, sign and payload kept); exponent 0: the sign alone (zeros and
  //   denormals); otherwise u + 0x7fff + ((u >> 16) & 1) (to nearest even; carries up to inf).
  void round_to_bf16(ZReg r, ZReg v, ZReg t) {
    and_(r.d(), v.d(), kExpMask.d());
    fcmeq(kExpZero.s(), kAll.z(), r.s(), 0.0);  // the exponent field alone is never NaN
    fcmeq(kOrdered.s(), kAll.z(), v.s(), v.s());
    lsr(r.s(), v.s(), 16);
    and_(r.d(), r.d(), kOne.d());
    add(r.s(), r.s(), kRoundBias.s());
    add(r.s(), r.s(), v.s());
    orr(t.d(), v.d(), kQuiet.d());
    sel(r.s(), kOrdered, r.s(), t.s());
    and_(t.d(), v.d(), kSign.d());
    sel(r.s(), kExpZero, t.s(), r.s());
  }

  ZReg operand(std::size_t input, std::int64_t index, ZReg reg, PReg g) {
    if (is_broadcast(input)) return broadcast_reg(input);
    if (streams(input)) load(reg, g, cursors_[input], index);
    return reg;
  }

  // The result of vector u from x (the first input) and y (the second), in a_reg(u) (reciprocal:
  // b_reg(u)). Lanes past a tail compute anything: they are not stored.
  ZReg op(int u, ZReg x, ZReg y) {
    const ZReg d = a_reg(u);
    auto into_d = [&] {
      if (x.index != d.index) mov(d.d(), x.d());
    };
    switch (s_.op) {
      case Op::add: fadd(z(d), z(x), z(y)); return d;
      case Op::sub: fsub(z(d), z(x), z(y)); return d;
      case Op::mul: fmul(z(d), z(x), z(y)); return d;
      case Op::div: into_d(); fdiv(z(d), kAll.m(), z(d), z(y)); return d;
      // fmin / fmax are IEEE 754-2019 minimum / maximum (a NaN operand gives NaN, -0 < +0), except
      // that their NaN is the operand's, quieted: the rule's NaN is all ones.
      case Op::min:
      case Op::max:
        into_d();
        s_.op == Op::min ? fmin(z(d), kAll.m(), z(d), z(y)) : fmax(z(d), kAll.m(), z(d), z(y));
        fcmeq(pv(kCompare), kAll.z(), z(d), z(d));  // not NaN
        sel(z(d), kCompare, z(d), z(kConstant));
        return d;
      case Op::zero: dup(z(d), 0); return d;
      case Op::copy: return x;
      case Op::relu:  // +0 where x <= 0 (-0 and -inf too); x where it passes (x > 0 or NaN)
        fcmle(pv(kCompare), kAll.z(), z(x), 0.0);
        mov(z(x), kCompare.m(), z(kConstant));
        return x;
      case Op::square: fmul(z(d), z(x), z(x)); return d;
      case Op::reciprocal: {
        const ZReg r = b_reg(u);
        mov(r.d(), kConstant.d());
        fdiv(z(r), kAll.m(), z(r), z(x));
        return r;
      }
      case Op::sqrt: fsqrt(z(d), kAll.m(), z(x)); return d;
      case Op::increment: fadd(z(d), z(x), z(kConstant)); return d;
      case Op::decrement: fsub(z(d), z(x), z(kConstant)); return d;
      case Op::scale: fmul(z(d), z(x), z(kConstant)); return d;
      case Op::exp:
      case Op::sigmoid:
      case Op::tanh:
      case Op::gelu: break;  // group() / chunk_group() run their sequences
    }
    return d;
  }

  Spec s_;
  int bytes_;
  bool chunks_;  // bf16 data: the chunk path
  std::array<XReg, 3> cursors_ = kBases;
  WordPool pool_;
};

// f32 arithmetic on f32 or bf16 data (each of in, out), or f64 throughout.
bool covered_types(const DataTypes& t) {
  auto f32_or_bf16 = [](DataType x) { return x == DataType::f32 || x == DataType::bf16; };
  if (t.compute == DataType::f32) return f32_or_bf16(t.in) && f32_or_bf16(t.out);
  return t.compute == DataType::f64 && t.in == DataType::f64 && t.out == DataType::f64;
}

Op unary_op(UnaryOp op) {
  switch (op) {
    case UnaryOp::zero: return Op::zero;
    case UnaryOp::copy: return Op::copy;
    case UnaryOp::relu: return Op::relu;
    case UnaryOp::square: return Op::square;
    case UnaryOp::reciprocal: return Op::reciprocal;
    case UnaryOp::sqrt: return Op::sqrt;
    case UnaryOp::increment: return Op::increment;
    case UnaryOp::decrement: return Op::decrement;
    case UnaryOp::scale: return Op::scale;
    case UnaryOp::exp: return Op::exp;
    case UnaryOp::sigmoid: return Op::sigmoid;
    case UnaryOp::tanh: return Op::tanh;
    case UnaryOp::gelu: return Op::gelu;
    default: throw Error("sve unary: no SVE kernel for " + to_string(op));
  }
}

Op binary_op(BinaryOp op) {
  switch (op) {
    case BinaryOp::add: return Op::add;
    case BinaryOp::sub: return Op::sub;
    case BinaryOp::mul: return Op::mul;
    case BinaryOp::div: return Op::div;
    case BinaryOp::min: return Op::min;
    case BinaryOp::max: return Op::max;
  }
  throw Error("sve binary: no such op");
}

// The vector length of an SVE plan's ISA; checks the plan's lanes against it.
int vector_bytes_of(jit::Isa isa, int lanes, bool f64, const std::string& what) {
  const jit::IsaTraits& traits = jit::isa_traits(isa);
  const int vector_bytes = traits.vector_bytes;
  if (traits.tail != jit::TailPolicy::predicate || lanes * (f64 ? 8 : 4) != vector_bytes) {
    throw Error("sve " + what + ": a plan for " + std::string(jit::to_string(isa)) + " with " + std::to_string(lanes) +
                " lanes (not an SVE ISA's plan)");
  }
  return vector_bytes;
}

std::unique_ptr<CodeBuffer> make(const Spec& s) {
  if (s.f64) return std::make_unique<EltwiseKernel<Lane::d>>(s);
  return std::make_unique<EltwiseKernel<Lane::s>>(s);
}

// What a unary and a binary kernel's spec take alike from the descriptor (types) and the plan
// (vector length, layout), then the kernel. family: "unary" or "binary", for errors.
template <class Desc, class Plan>
std::unique_ptr<CodeBuffer> make(Spec& s, const Desc& d, const Plan& p, const char* family) {
  s.in_bytes = static_cast<int>(jit::size_of(d.types.in));
  s.out_bytes = static_cast<int>(jit::size_of(d.types.out));
  s.keep_bits = detail::keeps_bf16_bits(d);
  s.vector_bytes = vector_bytes_of(p.isa, p.lanes, s.f64, std::string(family) + " " + to_string(d));
  s.rows = p.rows;
  s.cols = p.cols;
  s.full_vectors = p.full_vectors;
  s.tail = p.tail;
  return make(s);
}

}  // namespace

bool supports(const UnaryDesc& d) {
  if (!covered_types(d.types) || d.mask != ReluMask::none || d.transpose_out) return false;
  switch (d.op) {
    case UnaryOp::zero:
    case UnaryOp::copy:
    case UnaryOp::relu:
    case UnaryOp::square:
    case UnaryOp::reciprocal:
    case UnaryOp::sqrt:
    case UnaryOp::increment:
    case UnaryOp::decrement:
    case UnaryOp::scale: return true;
    case UnaryOp::exp:  // f32 arithmetic only (no f64 kernels)
    case UnaryOp::sigmoid:
    case UnaryOp::tanh:
    case UnaryOp::gelu: return d.types.compute == DataType::f32;
    default: return false;
  }
}

bool supports(const BinaryDesc& d) { return covered_types(d.types); }

std::unique_ptr<CodeBuffer> emit_unary(const UnaryDesc& d, const UnaryPlan& p) {
  validate(d);
  if (!supports(d)) throw Error("sve unary " + to_string(d) + ": no SVE kernel (the Neon emitter runs it)");
  Spec s;
  s.op = unary_op(d.op);
  s.f64 = d.types.compute == DataType::f64;
  s.alpha = static_cast<double>(d.alpha);  // the reference's x + alpha in f64 widens the float
  if (d.op != UnaryOp::zero) {
    s.in[0] = {.source = Source::matrix, .pointer_field = offsetof(UnaryArgs, in), .ld = d.ld_in,
               .ld_field = offsetof(UnaryArgs, ld_in)};
  }
  s.out = {.source = Source::matrix, .pointer_field = offsetof(UnaryArgs, out), .ld = d.ld_out,
           .ld_field = offsetof(UnaryArgs, ld_out)};
  return make(s, d, p, "unary");
}

std::unique_ptr<CodeBuffer> emit_binary(const BinaryDesc& d, const BinaryPlan& p) {
  validate(d);
  if (!supports(d)) throw Error("sve binary " + to_string(d) + ": no SVE kernel (the Neon emitter runs it)");
  Spec s;
  s.op = binary_op(d.op);
  s.f64 = d.types.compute == DataType::f64;
  const std::array<std::size_t, 2> fields{offsetof(BinaryArgs, in0), offsetof(BinaryArgs, in1)};
  const std::array<Broadcast, 2> kinds{d.bcast0, d.bcast1};
  const std::array<std::int64_t, 2> lds{d.ld_in0, d.ld_in1};
  for (std::size_t i = 0; i < 2; ++i) {
    Source source = Source::matrix;
    switch (kinds[i]) {
      case Broadcast::none: source = Source::matrix; break;
      case Broadcast::col: source = Source::column; break;
      case Broadcast::row: source = Source::row; break;
      case Broadcast::scalar: source = Source::scalar; break;
    }
    s.in[i] = {.source = source, .pointer_field = fields[i], .ld = lds[i], .ld_field = 0};
  }
  s.out = {.source = Source::matrix, .pointer_field = offsetof(BinaryArgs, out), .ld = d.ld_out, .ld_field = 0};
  return make(s, d, p, "binary");
}

}  // namespace weft::tpp::sve
