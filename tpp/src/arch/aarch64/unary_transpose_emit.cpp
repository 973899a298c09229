#include "unary_transpose_emit.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "activation_emit.hpp"
#include "constant_pool.hpp"
#include "element_io.hpp"
#include "op_properties.hpp"
#include "raw_moves.hpp"
#include "unary_frame_emit.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/jit/error.hpp"

namespace weft::tpp::neon {
namespace {

using namespace jit::a64;
using jit::DataType;

// General registers (the kernel is a leaf and uses none of x19-x28):
//   x0 args            x1 A's current column block, x2 B's (its row block of B rows)
//   x3 ld_in bytes     x4 ld_out bytes
//   x5 A at the current row block    x6 B at the current block's first row (stores advance it)
//   x7 the column being loaded       x8 row blocks left, x9 column blocks left
//   x10 ElementIo's address scratch  x11 the constant pool's base
// Vector registers: the block's columns from v0, the shuffles' results from v16, then v24 the spare of
// piecewise moves; the compute path's op and conversion registers from the ones left (v8-v15 are
// not used: their low halves are callee-saved). The op transforms as many of a block's columns at
// once as its scratch registers fit in those left (all 4 columns of f32 data, gelu included).
constexpr XReg kArgs = x0, kA = x1, kB = x2, kLda = x3, kLdb = x4, kARow = x5, kBRow = x6, kColumn = x7,
               kRowBlocks = x8, kColumnBlocks = x9, kIoAddress = x10, kPoolBase = x11;
constexpr VReg kSpare = v24;

// Hands out the vector registers a kernel has left, each once.
class FreeVectors {
 public:
  explicit FreeVectors(std::vector<VReg> free) : free_(std::move(free)) {}
  int left() const { return static_cast<int>(free_.size()); }
  std::vector<VReg> take(int count, const char* what) {
    if (count > static_cast<int>(free_.size()))
      throw Error(std::string("neon unary transpose: out of vector registers for ") + what);
    std::vector<VReg> out(free_.begin(), free_.begin() + count);
    free_.erase(free_.begin(), free_.begin() + count);
    return out;
  }

 private:
  std::vector<VReg> free_;
};

VReg column_reg(int c) { return VReg(static_cast<unsigned>(c)); }
VReg shuffle_reg(int c) { return VReg(16 + static_cast<unsigned>(c)); }

[[noreturn]] void fail(const UnaryDesc& d, const std::string& what) {
  throw Error("neon unary transpose " + to_string(d) + ": " + what);
}

// Whether the kernel only moves bits: one type in and out, and no arithmetic (transpose, or copy
// with transpose_out).
bool moves_bits(const UnaryDesc& d) {
  return d.types.in == d.types.out && (d.op == UnaryOp::transpose || d.op == UnaryOp::copy);
}

class TransposeKernel {
 public:
  TransposeKernel(CodeBuffer& a, const UnaryDesc& d) : a_(a), d_(d) {
    in_bytes_ = static_cast<int>(jit::size_of(d.types.in));
    out_bytes_ = static_cast<int>(jit::size_of(d.types.out));
    raw_ = moves_bits(d);
    computes_ = d.op != UnaryOp::transpose && d.op != UnaryOp::copy;
    // Bits move in lanes of their own size; anything else in lanes of the compute type.
    lane_bytes_ = raw_ ? in_bytes_ : static_cast<int>(jit::size_of(d.types.compute));
    lanes_ = 16 / lane_bytes_;
  }

  void emit() {
    a_.ldr(kA, ptr(kArgs, offsetof(UnaryArgs, in)));
    a_.ldr(kB, ptr(kArgs, offsetof(UnaryArgs, out)));
    load_leading_dimension(a_, kLda, kArgs, d_.ld_in, offsetof(UnaryArgs, ld_in), in_bytes_);
    load_leading_dimension(a_, kLdb, kArgs, d_.ld_out, offsetof(UnaryArgs, ld_out), out_bytes_);
    if (!raw_) setup_compute();
    const std::int64_t full_columns = d_.n / lanes_;
    const int column_tail = static_cast<int>(d_.n % lanes_);
    repeat(a_, full_columns, kColumnBlocks, [&] {
      row_blocks(lanes_);
      // The next column block: lanes columns of A to the right, lanes rows of B down.
      a_.add(kA, kA, kLda, lsl(static_cast<unsigned>(std::countr_zero(static_cast<unsigned>(lanes_)))));
      a_.add(kB, kB, lanes_ * out_bytes_);
    });
    if (column_tail > 0) row_blocks(column_tail);
    a_.ret();
    if (computes_) pool_.emit(a_);
  }

 private:
  // Every row block of the column block at x1 / x2 whose width is nj (1..lanes).
  void row_blocks(int nj) {
    a_.mov(kARow, kA);
    a_.mov(kBRow, kB);
    repeat(a_, d_.m / lanes_, kRowBlocks, [&] { block(lanes_, nj); });
    if (const int tail = static_cast<int>(d_.m % lanes_); tail > 0) block(tail, nj);
  }

  // The block at x5 (A) / x6 (B): mi rows of A (1..lanes) in nj columns, stored as mi rows of B of nj
  // elements. Leaves x5 at the next row block and x6 mi rows of B further.
  void block(int mi, int nj) {
    a_.mov(kColumn, kARow);
    for (int c = 0; c < nj; ++c) load_column(column_reg(c), mi);
    a_.add(kARow, kARow, mi * in_bytes_);
    std::vector<VReg> columns, shuffled;
    for (int c = 0; c < lanes_; ++c) {
      columns.push_back(column_reg(c));
      shuffled.push_back(shuffle_reg(c));
    }
    // The op commutes with the transpose: applied to the loaded columns, it is the same instruction
    // sequence on the same values as in the kernels that do not transpose.
    // Groups of act_group_ columns, each one interleaved sequence.
    if (computes_) {
      for (int c = 0; c < nj; c += act_group_) {
        const auto group = static_cast<std::size_t>(std::min(act_group_, nj - c));
        act_->emit(d_.op, d_.alpha, std::span<const VReg>(columns).subspan(static_cast<std::size_t>(c), group),
                   act_scratch_, d_.types.compute);
      }
    }
    const std::span<const VReg> rows = transpose(columns, shuffled);
    for (int k = 0; k < mi; ++k) store_row(rows[static_cast<std::size_t>(k)], nj);
  }

  // The element moves of the compute path, on the registers the block leaves free.
  void setup_compute() {
    std::vector<VReg> free;
    for (int r = lanes_; r < 8; ++r) free.push_back(column_reg(r));
    for (int r = lanes_; r < 16; ++r) free.push_back(shuffle_reg(r));
    FreeVectors vectors(std::move(free));
    const DataType compute = d_.types.compute;
    auto io = [&](DataType memory) {
      const std::vector<VReg> constants = vectors.take(ElementIo::constant_vectors(memory), "ElementIo's constants");
      const std::vector<VReg> scratch = vectors.take(ElementIo::scratch_vectors(memory), "ElementIo's scratch");
      return ElementIo(a_, memory, compute, kIoAddress, constants, scratch);
    };
    in_io_.emplace(io(d_.types.in));
    out_io_.emplace(io(d_.types.out));
    in_io_->setup();
    out_io_->setup();
    if (computes_) {
      // All of a block's columns at once where the registers left allow, else the largest group.
      act_group_ = std::min(lanes_, ActivationEmitter::kMaxVectors);
      while (act_group_ > 1 && ActivationEmitter::scratch_vectors(d_.op, compute, act_group_) > vectors.left()) --act_group_;
      act_scratch_ = vectors.take(ActivationEmitter::scratch_vectors(d_.op, compute, act_group_), "the op's scratch");
      pool_.load_base(a_, kPoolBase);
      act_.emplace(a_, pool_, kPoolBase);
    }
    store_mode_ = detail::keeps_bf16_bits(d_) ? ElementIo::Bf16Store::keep_bits : ElementIo::Bf16Store::round;
  }

  // `count` elements of the column at x7 into v; x7 moves to the next column.
  void load_column(VReg v, int count) {
    if (!raw_) {
      in_io_->load(v, kColumn, 0, count);
      a_.add(kColumn, kColumn, kLda);
      return;
    }
    if (count == lanes_) {
      a_.ld1({v.b16()}, post_ptr(kColumn, kLda));
      return;
    }
    raw_load(a_, v, kColumn, count * lane_bytes_, kSpare);
    a_.add(kColumn, kColumn, kLda);
  }

  // v's first `count` elements to the B row at x6; x6 moves to the next row.
  void store_row(VReg v, int count) {
    if (!raw_) {
      out_io_->store(kBRow, 0, v, count, store_mode_);
      a_.add(kBRow, kBRow, kLdb);
      return;
    }
    if (count == lanes_) {
      a_.st1({v.b16()}, post_ptr(kBRow, kLdb));
      return;
    }
    raw_store(a_, kBRow, v, count * lane_bytes_, kSpare);
    a_.add(kBRow, kBRow, kLdb);
  }

  // Transposes the lanes x lanes block whose columns are in `c` (lane_bytes_ elements), using `t` as
  // the other half of a ping-pong: round r swaps the elements of 2^r-lane groups between registers
  // 2^r apart (trn1 / trn2 on elements of lane_bytes * 2^r), so that after the last round (8-byte
  // elements) register k holds row k. Returns the registers holding rows 0..lanes-1.
  std::span<const VReg> transpose(std::span<const VReg> c, std::span<const VReg> t) {
    std::span<const VReg> from = c, to = t;
    for (int size = lane_bytes_, distance = 1; size <= 8; size *= 2, distance *= 2) {
      for (int i = 0; i < lanes_; ++i) {
        if ((i & distance) != 0) continue;
        const VReg x = from[static_cast<std::size_t>(i)], y = from[static_cast<std::size_t>(i + distance)];
        const VReg lo = to[static_cast<std::size_t>(i)], hi = to[static_cast<std::size_t>(i + distance)];
        switch (size) {
          case 2:
            a_.trn1(lo.h8(), x.h8(), y.h8());
            a_.trn2(hi.h8(), x.h8(), y.h8());
            break;
          case 4:
            a_.trn1(lo.s4(), x.s4(), y.s4());
            a_.trn2(hi.s4(), x.s4(), y.s4());
            break;
          default:
            a_.trn1(lo.d2(), x.d2(), y.d2());
            a_.trn2(hi.d2(), x.d2(), y.d2());
            break;
        }
      }
      std::swap(from, to);
    }
    return from;
  }

  CodeBuffer& a_;
  UnaryDesc d_;
  int in_bytes_ = 4, out_bytes_ = 4;
  int lane_bytes_ = 4;  // bytes of one element in the block's registers
  int lanes_ = 4;       // the block's edge: elements per register
  bool raw_ = true;     // moves bits (moves_bits); otherwise loads and stores convert (ElementIo)
  bool computes_ = false;  // applies the op (transpose_out of an op other than copy)
  std::optional<ElementIo> in_io_, out_io_;  // the compute path's moves of A and B
  ElementIo::Bf16Store store_mode_ = ElementIo::Bf16Store::round;
  ConstantPool pool_;                         // the op's constants, after the code
  std::optional<ActivationEmitter> act_;
  std::vector<VReg> act_scratch_;
  int act_group_ = 1;  // columns the op transforms at once (interleaved)
};

}  // namespace

std::unique_ptr<CodeBuffer> emit_unary_transpose(const UnaryDesc& desc, const UnaryPlan& plan) {
  validate(desc);
  if (plan.isa != jit::Isa::neon)
    fail(desc, "the plan is for ISA " + std::string(jit::to_string(plan.isa)) + ", not neon");
  if (desc.op != UnaryOp::transpose && !desc.transpose_out)
    fail(desc, "neither op transpose nor transpose_out (emit_unary has the other kernels)");
  auto code = std::make_unique<CodeBuffer>();
  TransposeKernel(*code, desc).emit();
  return code;
}

}  // namespace weft::tpp::neon
