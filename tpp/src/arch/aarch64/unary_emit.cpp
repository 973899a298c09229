#include "unary_emit.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "activation_emit.hpp"
#include "constant_pool.hpp"
#include "element_io.hpp"
#include "op_properties.hpp"
#include "unary_transpose_emit.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/jit/error.hpp"

namespace weft::tpp::neon {
namespace {

using namespace jit::a64;
using jit::DataType;

// General registers (AAPCS64: x0-x17 are the kernel's to use; it needs no callee-saved one):
//   x0 args
//   x1 A, x2 B: the current column (element-wise), row chunk (reduce_rows) or column group
//      (reduce_cols); x3 aux (relu_bwd's forward input or bitmask), x4 the bitmask relu writes
//   x5, x6 ld_in, ld_out in bytes; x7, x8 the outer and inner loop counters
//   x9 ElementIo's address scratch, x10 the constant pool
//   x11-x14 running pointers into A, B, aux and the mask within a column; reduce_cols: the
//      group's column pointers
//   x15 mask_ld(m) (bytes from one column's mask to the next), x16 scratch, w17 mask bits
constexpr XReg kArgs = x0, kA = x1, kB = x2, kAux = x3, kMask = x4, kLdIn = x5, kLdOut = x6, kOuter = x7, kInner = x8,
               kIoAddress = x9, kPool = x10, kPa = x11, kPb = x12, kPaux = x13, kPmask = x14, kMaskLd = x15, kT = x16;
constexpr WReg kBits = w17;
constexpr std::array<XReg, 4> kColumnPointers{x11, x12, x13, x14};

// Vectors per step of a column (and per row chunk of reduce_rows): 64 bytes of f32 in flight per
// stream, 16 rows, two bytes of a ReLU bitmask.
constexpr int kStepVectors = 4;

int log2_bytes(DataType t) { return t == DataType::f64 ? 3 : t == DataType::bf16 ? 1 : 2; }

// Vector registers: v0-v3 the step's data vectors, v4-v7 relu_bwd's aux vectors (the element-wise
// ops' scratch when no aux is read); VectorRegisters hands out the rest: v16-v31 first, then
// v8-v15, whose low halves the prologue saves when handed out.
class VectorRegisters {
 public:
  int left() const { return static_cast<int>(kOrder.size() - next_); }
  VReg take() {
    if (next_ >= kOrder.size()) throw Error("neon unary: more than 24 vector registers needed");
    return VReg(kOrder[next_++]);
  }
  std::vector<VReg> take(int count) {
    std::vector<VReg> out;
    for (int i = 0; i < count; ++i) out.push_back(take());
    return out;
  }
  // Pairs (8, 9), (10, 11), ... of which a register was handed out.
  std::vector<unsigned> callee_saved_pairs() const {
    std::vector<unsigned> pairs;
    for (unsigned first = 8; first < 16; first += 2) {
      for (std::size_t i = 16; i < next_; ++i) {
        if (kOrder[i] == first || kOrder[i] == first + 1) {
          pairs.push_back(first);
          break;
        }
      }
    }
    return pairs;
  }

 private:
  static constexpr std::array<unsigned, 24> kOrder{16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
                                                   28, 29, 30, 31, 8,  9,  10, 11, 12, 13, 14, 15};
  std::size_t next_ = 0;
};

class UnaryKernel : public CodeBuffer {
 public:
  UnaryKernel(const UnaryDesc& d, const UnaryPlan& p);

 private:
  bool f64() const { return compute_ == DataType::f64; }
  bool is_max() const { return d_.op == UnaryOp::reduce_rows_max || d_.op == UnaryOp::reduce_cols_max; }
  bool is_reduction() const { return detail::unary_op_properties(d_.op).reduction; }
  bool reads_aux() const { return d_.op == UnaryOp::relu_bwd; }
  bool aux_is_mask() const { return reads_aux() && d_.mask == ReluMask::bitmask; }
  bool writes_mask() const { return d_.op == UnaryOp::relu && d_.mask == ReluMask::bitmask; }
  ElementIo::Bf16Store store_mode() const {
    return keep_bits_ ? ElementIo::Bf16Store::keep_bits : ElementIo::Bf16Store::round;
  }

  static VReg data(int u) { return VReg(static_cast<unsigned>(u)); }
  static VReg aux(int u) { return VReg(4 + static_cast<unsigned>(u)); }

  // The compute type's arrangement of vector ops.
  void fcmle_zero(VReg d, VReg n) { f64() ? fcmle(d.d2(), n.d2(), 0.0) : fcmle(d.s4(), n.s4(), 0.0); }
  void fmax_v(VReg d, VReg n, VReg m) { f64() ? fmax(d.d2(), n.d2(), m.d2()) : fmax(d.s4(), n.s4(), m.s4()); }

  void allocate();
  void prologue();
  void epilogue();
  void load_ld(XReg r, std::int64_t ld, std::size_t field, int shift);

  // Element-wise ops and zero.
  void elementwise();
  void elementwise_block(int rows);
  void pack_mask(int vectors, int rows);
  void advance_step();
  void next_column();

  // Reductions.
  void reduce_rows();
  void rows_chunk(int rows);
  void reduce_cols();
  void cols_group(int cols);
  void cols_rows_block(int cols, int rows);
  void start_accumulators(int vectors);
  void fold(int k, VReg v);
  void finish_accumulator(int k, VReg out);

  UnaryDesc d_;
  UnaryPlan p_;
  DataType compute_;
  int lanes_;
  int in_bytes_, out_bytes_;
  bool keep_bits_;  // detail::keeps_bf16_bits: bf16 results keep the input's bits

  VectorRegisters regs_;
  std::vector<VReg> in_constants_, in_scratch_, out_constants_, out_scratch_;
  std::vector<VReg> op_scratch_;  // ActivationEmitter's
  int op_group_ = 1;              // vectors ActivationEmitter transforms at once (interleaved)
  std::vector<VReg> lane_bits_;   // bitmask ops: lane i of vector u holds bit 4u + i
  std::vector<VReg> acc_;         // reductions: accumulators (f32 sums: two of doubles per vector)
  std::vector<VReg> temp_;        // spreads of mask bits, widened doubles, NaN lanes
  std::optional<VReg> minus_inf_;
  std::optional<ElementIo> in_io_, out_io_;
  ConstantPool pool_;
  std::optional<ActivationEmitter> act_;
};

UnaryKernel::UnaryKernel(const UnaryDesc& d, const UnaryPlan& p)
    : d_(d),
      p_(p),
      compute_(d.types.compute),
      lanes_(lanes_of(d.types.compute)),
      in_bytes_(static_cast<int>(jit::size_of(d.types.in))),
      out_bytes_(static_cast<int>(jit::size_of(d.types.out))),
      keep_bits_(detail::keeps_bf16_bits(d)) {
  if (p.lanes != lanes_) {
    throw Error("neon unary " + to_string(d) + ": the plan has " + std::to_string(p.lanes) + " lanes, Neon " +
                std::to_string(lanes_) + " (a plan for another ISA?)");
  }
  allocate();
  prologue();
  switch (d_.op) {
    case UnaryOp::reduce_rows_sum:
    case UnaryOp::reduce_rows_max: reduce_rows(); break;
    case UnaryOp::reduce_cols_sum:
    case UnaryOp::reduce_cols_max: reduce_cols(); break;
    default: elementwise(); break;
  }
  epilogue();
  pool_.emit(*this);  // binds the label load_base refers to, even when empty
}

void UnaryKernel::allocate() {
  in_constants_ = regs_.take(ElementIo::constant_vectors(d_.types.in));
  in_scratch_ = regs_.take(ElementIo::scratch_vectors(d_.types.in));
  out_constants_ = regs_.take(ElementIo::constant_vectors(d_.types.out));
  out_scratch_ = regs_.take(ElementIo::scratch_vectors(d_.types.out));
  in_io_.emplace(*this, d_.types.in, compute_, kIoAddress, in_constants_, in_scratch_);
  out_io_.emplace(*this, d_.types.out, compute_, kIoAddress, out_constants_, out_scratch_);
  if (is_reduction()) {
    // f32 sums add in double: two accumulators per vector of floats.
    const int per_vector = !is_max() && !f64() ? 2 : 1;
    acc_ = regs_.take(kStepVectors * per_vector);
    temp_ = regs_.take(2);
    if (is_max()) minus_inf_ = regs_.take();
    return;
  }
  if (writes_mask() || aux_is_mask()) {
    lane_bits_ = regs_.take(kStepVectors);
    temp_ = regs_.take(1);
  }
  if (is_elementwise(d_.op) && !writes_mask()) {
    // The whole step at once if the registers allow (the aux vectors v4-v7 first: element-wise ops
    // read no aux), else the largest group that fits.
    const std::vector<VReg> aux_vectors = {aux(0), aux(1), aux(2), aux(3)};
    const int available = static_cast<int>(aux_vectors.size()) + regs_.left();
    op_group_ = kStepVectors;
    while (op_group_ > 1 && ActivationEmitter::scratch_vectors(d_.op, compute_, op_group_) > available) --op_group_;
    const int need = ActivationEmitter::scratch_vectors(d_.op, compute_, op_group_);
    op_scratch_.assign(aux_vectors.begin(), aux_vectors.begin() + std::min<int>(need, 4));
    for (const VReg r : regs_.take(need - static_cast<int>(op_scratch_.size()))) op_scratch_.push_back(r);
    act_.emplace(*this, pool_, kPool);
  }
}

// ---- prologue and epilogue ------------------------------------------------------------------------

void UnaryKernel::load_ld(XReg r, std::int64_t ld, std::size_t field, int shift) {
  if (ld != 0) {
    mov_imm(r, static_cast<std::uint64_t>(ld) << shift);
  } else {
    ldr(r, ptr(kArgs, static_cast<std::int64_t>(field)));
    if (shift > 0) lsl(r, r, static_cast<unsigned>(shift));
  }
}

void UnaryKernel::prologue() {
  for (unsigned first : regs_.callee_saved_pairs()) stp(DReg(first), DReg(first + 1), pre_ptr(sp, -16));
  const bool reads_a = d_.op != UnaryOp::zero;
  if (reads_a) ldr(kA, ptr(kArgs, offsetof(UnaryArgs, in)));
  ldr(kB, ptr(kArgs, offsetof(UnaryArgs, out)));
  if (reads_aux()) ldr(kAux, ptr(kArgs, offsetof(UnaryArgs, aux)));
  if (writes_mask()) ldr(kMask, ptr(kArgs, offsetof(UnaryArgs, mask)));
  // Leading dimensions matter between columns only (a flat layout or n = 1 has one column).
  const bool columns = p_.cols > 1;
  if (reads_a && (is_reduction() || columns)) load_ld(kLdIn, d_.ld_in, offsetof(UnaryArgs, ld_in), log2_bytes(d_.types.in));
  if (!is_reduction() && columns) load_ld(kLdOut, d_.ld_out, offsetof(UnaryArgs, ld_out), log2_bytes(d_.types.out));
  if ((writes_mask() || aux_is_mask()) && columns) mov_imm(kMaskLd, static_cast<std::uint64_t>(mask_ld(d_.m)));
  in_io_->setup();
  out_io_->setup();
  if (!lane_bits_.empty()) {
    // {1, 2, 4, 8} in the first, each next one shifted left by 4.
    mov_imm(kT, 0x0000000200000001u);
    fmov(lane_bits_[0].dreg(), kT);
    mov_imm(kT, 0x0000000800000004u);
    ins(lane_bits_[0].d(1), kT);
    for (int u = 1; u < kStepVectors; ++u)
      shl(lane_bits_[static_cast<std::size_t>(u)].s4(), lane_bits_[0].s4(), static_cast<unsigned>(4 * u));
  }
  if (minus_inf_) {
    if (f64()) {
      mov_imm(kT, 0xfff0000000000000u);
      dup(minus_inf_->d2(), kT);
    } else {
      mov_imm(w16, 0xff800000);  // w16: kT's low half
      dup(minus_inf_->s4(), w16);
    }
  }
  if (act_) pool_.load_base(*this, kPool);
}

void UnaryKernel::epilogue() {
  const std::vector<unsigned> pairs = regs_.callee_saved_pairs();
  for (auto it = pairs.rbegin(); it != pairs.rend(); ++it) ldp(DReg(*it), DReg(*it + 1), post_ptr(sp, 16));
  ret();
}

// ---- element-wise ops -----------------------------------------------------------------------------

// Columns of p_.rows elements (one flat column when the plan says so): steps of kStepVectors
// vectors, then the rest of the column in one block of whole and partial vectors.
void UnaryKernel::elementwise() {
  const std::int64_t step_rows = kStepVectors * lanes_;
  const std::int64_t steps = p_.rows / step_rows;
  const int rest = static_cast<int>(p_.rows % step_rows);
  Label column;
  if (p_.cols > 1) {
    mov_imm(kOuter, static_cast<std::uint64_t>(p_.cols));
    bind(column);
  }
  if (d_.op != UnaryOp::zero) mov(kPa, kA);
  mov(kPb, kB);
  if (reads_aux()) mov(kPaux, kAux);
  if (writes_mask()) mov(kPmask, kMask);
  if (steps == 1) {
    elementwise_block(static_cast<int>(step_rows));
    if (rest > 0) advance_step();
  } else if (steps > 1) {
    Label step;
    mov_imm(kInner, static_cast<std::uint64_t>(steps));
    bind(step);
    elementwise_block(static_cast<int>(step_rows));
    advance_step();
    subs(kInner, kInner, 1);
    b(Cond::ne, step);
  }
  if (rest > 0) elementwise_block(rest);
  if (p_.cols > 1) {
    next_column();
    subs(kOuter, kOuter, 1);
    b(Cond::ne, column);
  }
}

// `rows` (1 .. kStepVectors * lanes) elements at the running pointers: whole vectors, the last one
// partial when rows is not a multiple of the lanes (ElementIo moves only its elements).
void UnaryKernel::elementwise_block(int rows) {
  const int vectors = (rows + lanes_ - 1) / lanes_;
  auto count = [&](int u) { return std::min(lanes_, rows - u * lanes_); };
  auto in_offset = [&](int u) { return static_cast<std::int64_t>(u) * lanes_ * in_bytes_; };
  auto out_offset = [&](int u) { return static_cast<std::int64_t>(u) * lanes_ * out_bytes_; };
  if (d_.op == UnaryOp::zero) {
    for (int u = 0; u < vectors; ++u) {
      movi(data(u).d2(), 0);
      out_io_->store(kPb, out_offset(u), data(u), count(u), store_mode());
    }
    return;
  }
  for (int u = 0; u < vectors; ++u) in_io_->load(data(u), kPa, in_offset(u), count(u));
  if (reads_aux() && !aux_is_mask()) {
    for (int u = 0; u < vectors; ++u) in_io_->load(aux(u), kPaux, in_offset(u), count(u));
  }
  if (writes_mask()) {
    // relu: +0 where x <= 0 (so -0 and -inf too), x where it passes (x > 0 or NaN, bits kept).
    for (int u = 0; u < vectors; ++u) {
      fcmle_zero(aux(u), data(u));
      bic(data(u).b16(), data(u).b16(), aux(u).b16());
    }
    pack_mask(vectors, rows);
  } else if (aux_is_mask()) {
    // The rows' bits (one byte per 8 rows, never a byte past the column's mask), spread over the
    // lanes: lane i of vector u tests bit 4u + i.
    if (rows > 8) {
      ldrh(kBits, ptr(kPaux));
    } else {
      ldrb(kBits, ptr(kPaux));
    }
    const VReg spread = temp_[0];
    dup(spread.s4(), kBits);
    for (int u = 0; u < vectors; ++u) {
      cmtst(aux(u).s4(), spread.s4(), lane_bits_[static_cast<std::size_t>(u)].s4());
      and_(data(u).b16(), data(u).b16(), aux(u).b16());
    }
  } else if (reads_aux()) {
    // The gradient where the forward input passed ReLU (x > 0 or NaN), else +0.
    for (int u = 0; u < vectors; ++u) {
      fcmle_zero(aux(u), aux(u));
      bic(data(u).b16(), data(u).b16(), aux(u).b16());
    }
  } else {
    // Groups of op_group_ vectors, each one interleaved sequence.
    const std::array<VReg, kStepVectors> xs{data(0), data(1), data(2), data(3)};
    for (int u = 0; u < vectors; u += op_group_) {
      const auto group = static_cast<std::size_t>(std::min(op_group_, vectors - u));
      act_->emit(d_.op, d_.alpha, std::span<const VReg>(xs).subspan(static_cast<std::size_t>(u), group), op_scratch_,
                 compute_);
    }
  }
  for (int u = 0; u < vectors; ++u) out_io_->store(kPb, out_offset(u), data(u), count(u), store_mode());
}

// The ReLU bitmask of `rows` rows from the compare masks in aux(u) (all ones where x <= 0): bit
// 4u + i where lane i of vector u passed, summed across lanes (the bits are disjoint), bits past
// `rows` cleared (a partial vector's spare lanes hold anything), stored as 1 or 2 bytes.
void UnaryKernel::pack_mask(int vectors, int rows) {
  for (int u = 0; u < vectors; ++u) {
    bic(aux(u).b16(), lane_bits_[static_cast<std::size_t>(u)].b16(), aux(u).b16());
    if (u > 0) orr(aux(0).b16(), aux(0).b16(), aux(u).b16());
  }
  addv(aux(0).sreg(), aux(0).s4());
  fmov(kBits, aux(0).sreg());
  if (rows < 16) and_(kBits, kBits, (std::uint64_t{1} << rows) - 1);
  if (rows > 8) {
    strh(kBits, ptr(kPmask));
  } else {
    strb(kBits, ptr(kPmask));
  }
}

void UnaryKernel::advance_step() {
  const int rows = kStepVectors * lanes_;
  if (d_.op != UnaryOp::zero) add(kPa, kPa, rows * in_bytes_);
  add(kPb, kPb, rows * out_bytes_);
  if (reads_aux()) add(kPaux, kPaux, aux_is_mask() ? rows / 8 : rows * in_bytes_);
  if (writes_mask()) add(kPmask, kPmask, rows / 8);
}

// The column starts move on by the leading dimensions (a bitmask: by mask_ld(m) bytes).
void UnaryKernel::next_column() {
  if (d_.op != UnaryOp::zero) add(kA, kA, kLdIn);
  add(kB, kB, kLdOut);
  if (reads_aux()) add(kAux, kAux, aux_is_mask() ? kMaskLd : kLdIn);
  if (writes_mask()) add(kMask, kMask, kMaskLd);
}

// ---- reductions -----------------------------------------------------------------------------------
//
// unary_reference sums in double, element after element, and rounds the sum once; a max folds
// maximum() from -inf. Each lane here holds one output and folds its elements in that order:
// reduce_rows has a row per lane (vectors along M, accumulated column by column), reduce_cols a
// column per lane (L x L blocks transposed, accumulated row by row). f32 sums widen each vector
// into two of doubles. fmax orders the zeros as maximum() does (+0 above -0) and returns a NaN
// where an operand is one; at the end NaN lanes become the all-ones NaN of min_max_relu.hpp.

void UnaryKernel::start_accumulators(int vectors) {
  for (int k = 0; k < vectors; ++k) {
    if (is_max()) {
      orr(acc_[static_cast<std::size_t>(k)].b16(), minus_inf_->b16(), minus_inf_->b16());
    } else if (f64()) {
      movi(acc_[static_cast<std::size_t>(k)].d2(), 0);
    } else {
      movi(acc_[static_cast<std::size_t>(2 * k)].d2(), 0);
      movi(acc_[static_cast<std::size_t>(2 * k + 1)].d2(), 0);
    }
  }
}

// Accumulator k folds v (compute-type lanes).
void UnaryKernel::fold(int k, VReg v) {
  const auto kk = static_cast<std::size_t>(k);
  if (is_max()) {
    fmax_v(acc_[kk], acc_[kk], v);
  } else if (f64()) {
    fadd(acc_[kk].d2(), acc_[kk].d2(), v.d2());
  } else {
    fcvtl(temp_[0].d2(), v.s2());
    fcvtl2(temp_[1].d2(), v.s4());
    fadd(acc_[2 * kk].d2(), acc_[2 * kk].d2(), temp_[0].d2());
    fadd(acc_[2 * kk + 1].d2(), acc_[2 * kk + 1].d2(), temp_[1].d2());
  }
}

// Accumulator k's results into `out` in the compute type.
void UnaryKernel::finish_accumulator(int k, VReg out) {
  const auto kk = static_cast<std::size_t>(k);
  if (is_max()) {
    // All ones where the lane is NaN (fcmeq: all ones where it is not).
    const VReg ordered = temp_[0];
    f64() ? fcmeq(ordered.d2(), acc_[kk].d2(), acc_[kk].d2()) : fcmeq(ordered.s4(), acc_[kk].s4(), acc_[kk].s4());
    orn(out.b16(), acc_[kk].b16(), ordered.b16());
  } else if (f64()) {
    orr(out.b16(), acc_[kk].b16(), acc_[kk].b16());
  } else {
    fcvtn(out.s2(), acc_[2 * kk].d2());
    fcvtn2(out.s4(), acc_[2 * kk + 1].d2());
  }
}

// B[i] over vectors of rows: chunks of kStepVectors vectors (a loop), then the rest.
void UnaryKernel::reduce_rows() {
  const int chunk_rows = kStepVectors * lanes_;
  const std::int64_t chunks = d_.m / chunk_rows;
  const int rest = static_cast<int>(d_.m % chunk_rows);
  auto advance = [&] {
    add(kA, kA, chunk_rows * in_bytes_);
    add(kB, kB, chunk_rows * out_bytes_);
  };
  if (chunks == 1) {
    rows_chunk(chunk_rows);
    if (rest > 0) advance();
  } else if (chunks > 1) {
    Label chunk;
    mov_imm(kOuter, static_cast<std::uint64_t>(chunks));
    bind(chunk);
    rows_chunk(chunk_rows);
    advance();
    subs(kOuter, kOuter, 1);
    b(Cond::ne, chunk);
  }
  if (rest > 0) rows_chunk(rest);
}

// `rows` rows from kA: every column folded in order (j = 0 .. n-1), then the results to kB.
void UnaryKernel::rows_chunk(int rows) {
  const int vectors = (rows + lanes_ - 1) / lanes_;
  auto count = [&](int u) { return std::min(lanes_, rows - u * lanes_); };
  start_accumulators(vectors);
  mov(kPa, kA);
  Label column;
  mov_imm(kInner, static_cast<std::uint64_t>(d_.n));
  bind(column);
  for (int u = 0; u < vectors; ++u) in_io_->load(data(u), kPa, static_cast<std::int64_t>(u) * lanes_ * in_bytes_, count(u));
  for (int u = 0; u < vectors; ++u) fold(u, data(u));
  add(kPa, kPa, kLdIn);
  subs(kInner, kInner, 1);
  b(Cond::ne, column);
  for (int u = 0; u < vectors; ++u) {
    finish_accumulator(u, data(u));
    out_io_->store(kB, static_cast<std::int64_t>(u) * lanes_ * out_bytes_, data(u), count(u), store_mode());
  }
}

// B[j] over groups of `lanes` columns (a loop), then the rest of the columns.
void UnaryKernel::reduce_cols() {
  const int group = lanes_;
  const std::int64_t groups = d_.n / group;
  const int rest = static_cast<int>(d_.n % group);
  auto advance = [&] {
    add(kA, kA, kLdIn, jit::a64::lsl(group == 4 ? 2u : 1u));
    add(kB, kB, group * out_bytes_);
  };
  if (groups == 1) {
    cols_group(group);
    if (rest > 0) advance();
  } else if (groups > 1) {
    Label next;
    mov_imm(kOuter, static_cast<std::uint64_t>(groups));
    bind(next);
    cols_group(group);
    advance();
    subs(kOuter, kOuter, 1);
    b(Cond::ne, next);
  }
  if (rest > 0) cols_group(rest);
}

// `cols` (1 .. lanes) columns from kA, lane j of the accumulators folding column j's rows in order.
void UnaryKernel::cols_group(int cols) {
  mov(kColumnPointers[0], kA);
  for (int k = 1; k < cols; ++k)
    add(kColumnPointers[static_cast<std::size_t>(k)], kColumnPointers[static_cast<std::size_t>(k - 1)], kLdIn);
  start_accumulators(1);
  const std::int64_t blocks = d_.m / lanes_;
  const int tail = static_cast<int>(d_.m % lanes_);
  if (blocks == 1) {
    cols_rows_block(cols, lanes_);
  } else if (blocks > 1) {
    Label block;
    mov_imm(kInner, static_cast<std::uint64_t>(blocks));
    bind(block);
    cols_rows_block(cols, lanes_);
    subs(kInner, kInner, 1);
    b(Cond::ne, block);
  }
  if (tail > 0) cols_rows_block(cols, tail);
  finish_accumulator(0, data(0));
  out_io_->store(kB, 0, data(0), cols, store_mode());
}

// `rows` (1 .. lanes) rows of the group's columns: loaded as columns (the column pointers move
// past them), transposed so that vector r holds row r of every column, folded row by row. Lanes
// of columns past `cols` and rows past `rows` hold anything: they are never folded into a stored
// lane, nor folded at all.
void UnaryKernel::cols_rows_block(int cols, int rows) {
  for (int k = 0; k < cols; ++k) {
    const XReg p = kColumnPointers[static_cast<std::size_t>(k)];
    in_io_->load(data(k), p, 0, rows);
    if (rows == lanes_) add(p, p, lanes_ * in_bytes_);
  }
  if (f64()) {
    trn1(aux(0).d2(), data(0).d2(), data(1).d2());
    if (rows > 1) trn2(aux(1).d2(), data(0).d2(), data(1).d2());
    for (int r = 0; r < rows; ++r) fold(0, aux(r));
    return;
  }
  // 4 x 4: pairs of rows interleaved (trn on 32-bit lanes), then the pairs (on 64-bit lanes).
  trn1(aux(0).s4(), data(0).s4(), data(1).s4());  // rows 0, 2 of columns 0, 1
  trn2(aux(1).s4(), data(0).s4(), data(1).s4());  // rows 1, 3
  trn1(aux(2).s4(), data(2).s4(), data(3).s4());
  trn2(aux(3).s4(), data(2).s4(), data(3).s4());
  const VReg row[4] = {data(0), data(1), data(2), data(3)};
  trn1(row[0].d2(), aux(0).d2(), aux(2).d2());
  if (rows > 1) trn1(row[1].d2(), aux(1).d2(), aux(3).d2());
  if (rows > 2) trn2(row[2].d2(), aux(0).d2(), aux(2).d2());
  if (rows > 3) trn2(row[3].d2(), aux(1).d2(), aux(3).d2());
  for (int r = 0; r < rows; ++r) fold(0, row[r]);
}

}  // namespace

std::unique_ptr<CodeBuffer> emit_unary(const UnaryDesc& desc, const UnaryPlan& plan) {
  validate(desc);
  if (desc.op == UnaryOp::transpose || desc.transpose_out) return emit_unary_transpose(desc, plan);
  if (detail::unary_op_properties(desc.op).vnni) return emit_unary_vnni2(desc, plan);
  return std::make_unique<UnaryKernel>(desc, plan);
}

}  // namespace weft::tpp::neon
