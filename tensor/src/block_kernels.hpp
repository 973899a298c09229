// The primitive calls of a lowered operation, one per innermost loop iteration (private).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "prim_dims.hpp"
#include "weft/tpp/brgemm.hpp"
#include "weft/tensor/contraction.hpp"

namespace weft::tensor::detail {

// The TPP data types of an operation's dtype: all f32 or all f64 (inputs, output and arithmetic
// in the one type; validate() has rejected other dtype values).
tpp::DataTypes tpp_types(dtype_t dtype);

// The main primitive on one block; `first`/`last` tell whether this is the first/last visit of the
// output block, for the touches fused into it. The pointers point to elements of the operation's
// dtype (the TPPs take untyped pointers; the portable kernels are instantiated per type).
class MainKernel {
 public:
  virtual ~MainKernel() = default;
  virtual void run(const void* in0, const void* in1, void* out, bool first,
                   bool last) const noexcept = 0;
  virtual std::string describe() const = 0;
};

// A unary primitive applied in place to the output block.
class TouchKernel {
 public:
  virtual ~TouchKernel() = default;
  virtual void run(void* out) const noexcept = 0;
  virtual std::string describe() const = 0;
};

// BRGEMM TPP (or, with allow_generic_primitives, a portable strided kernel) over the prim dims of
// `op` in roles `g`. fuse_zero: beta = 0 on the first visit; fuse_relu: ReLU epilogue on the last
// visit; prefetch: the hint the beta = 1 kernels get (tpp::BrgemmPrefetch). Throws ConfigError.
std::unique_ptr<MainKernel> make_gemm_kernel(const Contraction& op, const GemmRoles& g,
                                             const ValidationOptions& options, bool fuse_zero,
                                             bool fuse_relu,
                                             tpp::BrgemmPrefetch prefetch = tpp::BrgemmPrefetch::none);
// The leading dimension of in0 blocks as the BRGEMM TPP reads them: K's stride in in0, or, where
// one column is never stepped over, one the TPP accepts.
std::int64_t brgemm_lda(const Contraction& op, const GemmRoles& g);
// The element-wise main primitives over `block` (find_elementwise_block).
std::unique_ptr<MainKernel> make_unary_kernel(const Contraction& op, const std::vector<std::size_t>& block,
                                              const ValidationOptions& options);
std::unique_ptr<MainKernel> make_binary_kernel(const Contraction& op, const std::vector<std::size_t>& block,
                                               const ValidationOptions& options);

// `block` lists the prim dims spanning the output block, the one unit-stride in out first. `error`
// is the code to report when the block cannot take the primitive.
std::unique_ptr<TouchKernel> make_touch_kernel(prim_t touch, const Contraction& op,
                                               const std::vector<std::size_t>& block,
                                               const ValidationOptions& options, error_t error);

// A 2D block of up to two dims with a stride per tensor, for the portable loops.
struct Block2d {
  std::int64_t rows = 1, cols = 1;
  std::int64_t in0_row = 0, in0_col = 0, in1_row = 0, in1_col = 0, out_row = 0, out_col = 0;
};
Block2d make_block(const Contraction& op, const std::vector<std::size_t>& prims);

// Whether the block's columns are distinct places of the output. A TPP's leading dimension of 0
// means "given at call time", not "every column writes the first": a block whose output repeats
// one column (stride 0, several columns) goes to the portable loops, which write it in order.
inline bool distinct_output_columns(const Block2d& b) { return b.cols == 1 || b.out_col != 0; }
// What an error message adds when the block fails distinct_output_columns.
inline const char* repeated_output_columns_note(const Block2d& b) {
  return distinct_output_columns(b) ? "" : "; the second prim dimension has stride 0 in out (every column would write the first)";
}

}  // namespace weft::tensor::detail
