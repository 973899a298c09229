#include "binary_emit.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "element_io.hpp"
#include "op_properties.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/jit/error.hpp"

namespace weft::tpp::neon {
namespace {

using namespace jit::a64;
using jit::DataType;

// General registers (x0-x17 only: the kernel is a leaf and saves nothing):
//   x0 args           x1 A, x2 B, x3 C at the current column (a row broadcast: the column's element)
//   x4, x5, x6        ld_in0, ld_in1, ld_out in bytes (several columns only)
//   x7                columns left
//   x8                vector groups left in the column's loop
//   x9, x10, x11      A, B and C cursors of the column's loop
//   x16               ElementIo's address register; a bf16 broadcast's element
constexpr XReg kArgs = x0, kColumnsLeft = x7, kGroupsLeft = x8, kAddress = x16;
constexpr std::array<XReg, 3> kBases{x1, x2, x3}, kLds{x4, x5, x6}, kCursors{x9, x10, x11};
constexpr int kC = 2;  // index of C in the arrays above

// Vector registers: v0-v3 A and the results, v4-v7 B (afterwards min / max's scratch), v16 / v17
// the broadcast A / B, v18-v19 bf16 constants, v20-v22 bf16 store scratch. None of v8-v15 (their
// low halves are callee-saved).
constexpr int kUnroll = 4;  // vectors per step: 4 A and 4 B loads in flight
constexpr std::array<VReg, 2> kConstants{v18, v19};
constexpr std::array<VReg, 3> kScratch{v20, v21, v22};
VReg a_reg(int u) { return VReg(static_cast<unsigned>(u)); }
VReg b_reg(int u) { return VReg(static_cast<unsigned>(4 + u)); }
VReg broadcast_reg(int input) { return VReg(static_cast<unsigned>(16 + input)); }

class BinaryKernel : public CodeBuffer {
 public:
  BinaryKernel(const BinaryDesc& d, const BinaryPlan& p)
      : d_(d),
        p_(p),
        f64_(d.types.compute == DataType::f64),
        in_(*this, d.types.in, d.types.compute, kAddress, kConstants, kScratch),
        out_(*this, d.types.out, d.types.compute, kAddress, kConstants, kScratch),
        in_bytes_(in_.element_bytes()),
        out_bytes_(out_.element_bytes()),
        store_mode_(detail::keeps_bf16_bits(d) ? ElementIo::Bf16Store::keep_bits : ElementIo::Bf16Store::round) {
    if (p.isa != jit::Isa::neon || p.lanes != lanes_of(d.types.compute)) {
      throw Error("neon binary " + to_string(d) + ": a plan for " + std::string(jit::to_string(p.isa)) + " with " +
                  std::to_string(p.lanes) + " lanes (Neon has " + std::to_string(lanes_of(d.types.compute)) + ")");
    }
    kernel();
  }

 private:
  Broadcast kind(int input) const { return input == 0 ? d_.bcast0 : d_.bcast1; }
  // Inputs that advance along the rows: whole matrices and columns.
  bool streams(int input) const { return kind(input) == Broadcast::none || kind(input) == Broadcast::col; }
  std::int64_t ld_bytes(int index) const {
    const std::int64_t ld = index == 0 ? d_.ld_in0 : index == 1 ? d_.ld_in1 : d_.ld_out;
    return ld * (index == kC ? out_bytes_ : in_bytes_);
  }

  void kernel() {
    ldr(kBases[0], ptr(kArgs, offsetof(BinaryArgs, in0)));
    ldr(kBases[1], ptr(kArgs, offsetof(BinaryArgs, in1)));
    ldr(kBases[kC], ptr(kArgs, offsetof(BinaryArgs, out)));
    // in_ and out_ share their constant registers: equal memory types set equal constants once.
    in_.setup();
    if (d_.types.out != d_.types.in) out_.setup();
    for (int input = 0; input < 2; ++input)
      if (kind(input) == Broadcast::scalar) load_broadcast(input);
    if (p_.cols == 1) {
      column();
      ret();
      return;
    }
    for (int input = 0; input < 2; ++input)
      if (kind(input) == Broadcast::none) mov_imm(kLds[static_cast<std::size_t>(input)], static_cast<std::uint64_t>(ld_bytes(input)));
    mov_imm(kLds[kC], static_cast<std::uint64_t>(ld_bytes(kC)));
    mov_imm(kColumnsLeft, static_cast<std::uint64_t>(p_.cols));
    Label columns;
    bind(columns);
    column();
    for (int input = 0; input < 2; ++input) {
      const XReg base = kBases[static_cast<std::size_t>(input)];
      if (kind(input) == Broadcast::none) add(base, base, kLds[static_cast<std::size_t>(input)]);
      if (kind(input) == Broadcast::row) add(base, base, in_bytes_);
    }
    add(kBases[kC], kBases[kC], kLds[kC]);
    subs(kColumnsLeft, kColumnsLeft, 1);
    b(Cond::ne, columns);
    ret();
  }

  // Every lane of the input's broadcast register = the element at its base.
  void load_broadcast(int input) {
    const VReg v = broadcast_reg(input);
    const XReg at = kBases[static_cast<std::size_t>(input)];
    switch (d_.types.in) {
      case DataType::f32: ld1r(v.s4(), ptr(at)); return;
      case DataType::f64: ld1r(v.d2(), ptr(at)); return;
      case DataType::bf16: {
        const WReg w(kAddress.index);
        ldrh(w, ptr(at));
        lsl(w, w, 16);
        dup(v.s4(), w);
        return;
      }
    }
  }

  // One column of p_.rows elements (all of them when flat): steps of kUnroll vectors (a loop when
  // there are two or more), the remaining whole vectors, then the partial one, element by element.
  void column() {
    for (int input = 0; input < 2; ++input)
      if (kind(input) == Broadcast::row) load_broadcast(input);
    const std::int64_t steps = p_.full_vectors / kUnroll;
    const int rest = static_cast<int>(p_.full_vectors % kUnroll);
    std::int64_t first = 0;  // vector index of the next group, from the cursors
    if (steps >= 2) {
      cursors_ = kCursors;
      for (int i = 0; i < 3; ++i)
        if (i == kC || streams(i)) mov(kCursors[static_cast<std::size_t>(i)], kBases[static_cast<std::size_t>(i)]);
      mov_imm(kGroupsLeft, static_cast<std::uint64_t>(steps));
      Label loop;
      bind(loop);
      group(0, kUnroll, p_.lanes);
      for (int i = 0; i < 3; ++i) {
        const auto step = static_cast<std::int64_t>(kUnroll) * p_.lanes * (i == kC ? out_bytes_ : in_bytes_);
        if (i == kC || streams(i)) add(kCursors[static_cast<std::size_t>(i)], kCursors[static_cast<std::size_t>(i)], step);
      }
      subs(kGroupsLeft, kGroupsLeft, 1);
      b(Cond::ne, loop);
    } else {
      cursors_ = kBases;
      for (std::int64_t s = 0; s < steps; ++s, first += kUnroll) group(first, kUnroll, p_.lanes);
    }
    if (rest > 0) group(first, rest, p_.lanes);
    if (p_.tail > 0) group(first + rest, 1, p_.tail);
  }

  // `vectors` vectors of `count` elements each from vector index `first` on: every load and op
  // first, then the stores (C may alias A or B: each element is read before it is written).
  void group(std::int64_t first, int vectors, int count) {
    for (int u = 0; u < vectors; ++u) {
      const VReg x = operand(0, first + u, a_reg(u), count);
      const VReg y = operand(1, first + u, b_reg(u), count);
      op(a_reg(u), x, y, b_reg(u));
    }
    for (int u = 0; u < vectors; ++u)
      out_.store(cursors_[kC], (first + u) * p_.lanes * out_bytes_, a_reg(u), count, store_mode_);
  }

  // The input's vector `index` of the column in `reg`, or its broadcast register.
  VReg operand(int input, std::int64_t index, VReg reg, int count) {
    if (!streams(input)) return broadcast_reg(input);
    in_.load(reg, cursors_[static_cast<std::size_t>(input)], index * p_.lanes * in_bytes_, count);
    return reg;
  }

  // d = x op y; t is scratch (min / max).
  void op(VReg d, VReg x, VReg y, VReg t) {
    switch (d_.op) {
      case BinaryOp::add: f64_ ? fadd(d.d2(), x.d2(), y.d2()) : fadd(d.s4(), x.s4(), y.s4()); return;
      case BinaryOp::sub: f64_ ? fsub(d.d2(), x.d2(), y.d2()) : fsub(d.s4(), x.s4(), y.s4()); return;
      case BinaryOp::mul: f64_ ? fmul(d.d2(), x.d2(), y.d2()) : fmul(d.s4(), x.s4(), y.s4()); return;
      case BinaryOp::div: f64_ ? fdiv(d.d2(), x.d2(), y.d2()) : fdiv(d.s4(), x.s4(), y.s4()); return;
      // fmin / fmax are IEEE 754-2019 minimum / maximum (a NaN operand gives NaN, -0 < +0), except
      // that their NaN is the operand's, quieted: the rule's NaN is all ones.
      case BinaryOp::min: f64_ ? fmin(d.d2(), x.d2(), y.d2()) : fmin(d.s4(), x.s4(), y.s4()); break;
      case BinaryOp::max: f64_ ? fmax(d.d2(), x.d2(), y.d2()) : fmax(d.s4(), x.s4(), y.s4()); break;
    }
    f64_ ? fcmeq(t.d2(), d.d2(), d.d2()) : fcmeq(t.s4(), d.s4(), d.s4());  // all ones unless NaN
    orn(d.b16(), d.b16(), t.b16());
  }

  BinaryDesc d_;
  BinaryPlan p_;
  bool f64_;
  ElementIo in_, out_;
  int in_bytes_, out_bytes_;
  ElementIo::Bf16Store store_mode_;
  std::array<XReg, 3> cursors_ = kBases;  // where the group being emitted addresses A, B and C
};

}  // namespace

std::unique_ptr<CodeBuffer> emit_binary(const BinaryDesc& desc, const BinaryPlan& plan) {
  return std::make_unique<BinaryKernel>(desc, plan);
}

}  // namespace weft::tpp::neon
