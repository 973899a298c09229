// The Neon fp32 BRGEMM emitter: one kernel `void(const BrgemmArgs*)` per descriptor, following
// neon::plan_neon_brgemm (not the shared plan's panels, which are shaped for x86; see
// neon_brgemm_plan.hpp). Sums in brgemm_reference's order (C or 0, then batch entry by batch
// entry, k ascending, one FMA per term), so results agree with it bit for bit.
//
// Scope of this first version: all types f32, beta 0 or 1, the three batch kinds, B not
// transposed, no bias, no activation, no prefetch; anything else throws weft::Error naming it.
#pragma once

#include "neon_brgemm_plan.hpp"
#include "weft/jit/aarch64/code_buffer.hpp"
#include "weft/tpp/brgemm.hpp"

namespace weft::tpp::neon {

// Throws weft::Error ("neon brgemm: ... not supported yet") for a descriptor outside the scope.
void check_neon_brgemm_scope(const BrgemmDesc& d);

class BrgemmEmitter : public jit::a64::CodeBuffer {
 public:
  // Emits (does not finalize) the kernel; works on any AArch64 host.
  explicit BrgemmEmitter(const BrgemmDesc& d);

  const NeonBrgemmPlan& plan() const { return plan_; }

 private:
  void prologue();
  void epilogue();
  void tile(const NeonPanel& panel, const NeonColumnBlock& block);
  void entry_pointers(const NeonColumnBlock& block);
  void k_steps(const NeonPanel& panel, int cols, int lanes);
  void load_a(unsigned reg, const NeonPanel& panel, int v);
  void c_access(bool load, const NeonPanel& panel, const NeonColumnBlock& block);
  void prefetch_next_c(const NeonPanel& panel, const NeonColumnBlock& block);

  BrgemmDesc d_;
  NeonBrgemmPlan plan_;
  unsigned next_a_ = 0;  // which of the two A registers the next A load uses
};

}  // namespace weft::tpp::neon
