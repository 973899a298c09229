// The SVE BRGEMM emitter: one kernel `void(const BrgemmArgs*)` per descriptor and vector length,
// following sve::plan_sve_brgemm. Sums in brgemm_reference's order (C or 0, then batch entry by
// batch entry, k ascending, one FMA per term), so results agree with it bit for bit.
//
// Scope (sve::supports): f32 or f64 everywhere; B column-major or b_transposed; strided, offsets,
// addresses; beta 0 or 1 (count <= 0 an empty sum); bias per_row / per_col; relu (fcmle #0 into a
// predicate, then sel of +0: x <= 0 -> +0, NaN kept with its bits, exactly the reference's select);
// the unary-op epilogue (f32: the Neon ActivationEmitter's sequence, the unary TPPs' bits, as one
// subroutine on v7 called per 4 rows of the tile's C once it is stored: ldr q / str q, the last
// rows of m under a predicate); prefetch next_c. bf16 inputs stay with the Neon emitter.
//
// The code is valid at the vector length it was generated for only (vector_bytes 16, 32 or 64): the
// A vectors, C and the bias move with ld1w / ld1d at `mul vl` offsets, the last vector of m under a
// whilelt predicate (p1, set once in the prologue; p0 all lanes), so nothing past m is read or
// written. B column-major: each column's next 128 bits of k replicated into every segment
// (ld1rqw / ld1rqd) and fmla by element, Neon's scheme (one B load per column per 4 f32 / 2 f64 k);
// B transposed: B(k, j) broadcast (ld1rw / ld1rd) from the row. docs/tpp_brgemm.md has llvm-mca's
// figures for both.
#pragma once

#include "activation_emit.hpp"
#include "brgemm_frame.hpp"
#include "constant_pool.hpp"
#include "sve_brgemm_plan.hpp"
#include "weft/jit/aarch64/code_buffer.hpp"
#include "weft/tpp/brgemm.hpp"

namespace weft::tpp::sve {

class BrgemmEmitter : public jit::a64::CodeBuffer {
 public:
  // Emits (does not finalize) the kernel; throws weft::Error as plan_sve_brgemm does.
  BrgemmEmitter(const BrgemmDesc& d, int vector_bytes);

  const SveBrgemmPlan& plan() const { return plan_; }

 private:
  void prologue();
  void tile(const SvePanel& panel, const SveColumnBlock& block);
  void k_loop(const SvePanel& panel, int cols);
  void k_steps_transposed(const SvePanel& panel, int cols, int steps);
  void k_steps_indexed(const SvePanel& panel, int cols, int steps, bool advance);
  void c_access(bool load, const SvePanel& panel, const SveColumnBlock& block);
  void prefetch_next_c(const SvePanel& panel, const SveColumnBlock& block);
  void tile_epilogue(const SvePanel& panel, const SveColumnBlock& block);
  void unary_pass(const SvePanel& panel, const SveColumnBlock& block);
  // SVE operations on f32 or f64 lanes (the descriptor's type).
  void load(jit::a64::ZReg t, jit::a64::PReg g, jit::a64::XReg base, int vl_index);
  void store(jit::a64::ZReg t, jit::a64::PReg g, jit::a64::XReg base, int vl_index);
  void broadcast(jit::a64::ZReg t, jit::a64::XReg base, int offset_bytes);
  void fma(jit::a64::ZReg acc, jit::a64::ZReg a, jit::a64::ZReg b);
  void add(jit::a64::ZReg d, jit::a64::ZReg n, jit::a64::ZReg m);
  jit::a64::PReg predicate(const SvePanel& panel, int v) const;
  using CodeBuffer::add;

  BrgemmDesc d_;
  SveBrgemmPlan plan_;
  bool f64_ = false;
  int bytes_ = 4;        // of an element
  unsigned next_b_ = 0;  // which of the four broadcast registers the next ld1r uses
  unsigned next_a_ = 0;  // indexed: which of the two A registers the next A load uses
  bool saves_link_ = false;  // the unary pass calls its subroutine: x29 and x30 saved
  neon::ConstantPool pool_;       // the unary epilogue's constants, after the code
  jit::a64::Label activation_;    // the unary epilogue's subroutine (after the kernel's ret)
};

}  // namespace weft::tpp::sve
