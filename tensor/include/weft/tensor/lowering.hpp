// Lowering a validated Contraction onto weft's layers: the seq/shared dimensions become the loops
// of a DynamicThreadedLoop (one letter per dimension in the given order, upper case = shared), the
// prim dimensions become one TPP call per innermost iteration (BRGEMM for gemm/brgemm, the unary or
// binary element-wise TPPs otherwise), first/last touches become beta = 0 / a fused ReLU epilogue or
// separate TPP calls on the output block.
//
//   LoopNestPlan plan = plan_loops(op);             // what would run: inspect or print it
//   LoweringOverride tuned{.loop_string = "bA"};    // a tuner's choice of order/blocking
//   LoweredOperation lowered(op, &tuned);
//   lowered.execute(in0, in1, out);
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "weft/parlooper/loop_specs.hpp"
#include "weft/tensor/contraction.hpp"

namespace weft::tensor {

// A loop_string and its loops; loop letter 'a' + i iterates dimension loop_dims[i].
struct LoopNestPlan {
  std::vector<std::size_t> loop_dims;
  std::vector<parlooper::LoopSpecs> specs;
  std::string loop_string;
  std::string describe(const Contraction& op) const;
};

// A tuner's (or a user's) choice for the loops of an operation: any loop_string over the loop
// letters (e.g. blocking "bcaBCb" with block sizes), checked against the operation: every letter of
// a k dimension stays lower case, and a dynamic/guided schedule may not sit inside a k loop (it
// would let two threads update one output block).
struct LoweringOverride {
  std::string loop_string;                     // empty: the generated one
  std::vector<std::vector<long>> block_sizes;  // per loop letter, outermost first; may be shorter
};

// The loop nest lowering generates (or the override, checked). Throws ConfigError.
LoopNestPlan plan_loops(const Contraction& op, const LoweringOverride* override = nullptr);

class LoweredOperation {
 public:
  // Validates (throws ConfigError), generates the primitives and the loop nest.
  explicit LoweredOperation(const Contraction& op, const LoweringOverride* override = nullptr,
                            const ValidationOptions& options = {});
  ~LoweredOperation();
  LoweredOperation(LoweredOperation&&) noexcept;
  LoweredOperation& operator=(LoweredOperation&&) noexcept;

  // The tensors hold elements of the operation's dtype (float for fp32, double for fp64). in1 may
  // be nullptr for unary operations; in0 may be nullptr when main is zero.
  void execute(const void* in0, const void* in1, void* out) const;

  const Contraction& operation() const;
  const LoopNestPlan& plan() const;
  // The contraction, the loop nest (rendered by parlooper) and the primitives.
  std::string describe() const;

  struct State;  // opaque: the kernels, the nest and the per-loop strides

 private:
  std::unique_ptr<State> state_;
};

}  // namespace weft::tensor
