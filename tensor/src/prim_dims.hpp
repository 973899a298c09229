// Where the prim dimensions of a Contraction are, by role (private to tensor/src). The lowering
// derives the roles once (validated_roles) and hands them to every kernel it builds: roles are
// data, not derived again per kernel or per tail block.
#pragma once

#include <cstddef>
#include <vector>

#include "weft/tensor/contraction.hpp"

namespace weft::tensor::detail {

inline constexpr std::size_t kNoDim = static_cast<std::size_t>(-1);

// GEMM roles: C(M x N) += sum over BR of A(M x K) * B(K x N). `br` is kNoDim for gemm.
struct GemmRoles {
  std::size_t m = kNoDim, n = kNoDim, k = kNoDim, br = kNoDim;
};

// Throws ConfigError (err_invalid_primitive_configuration) unless the prim dims are one m, one n,
// one k (and one more k for brgemm), none of type c.
GemmRoles find_gemm_roles(const Contraction& op);

// Whether the BRGEMM TPP can take the block: M unit-stride in in0 and out, K in in1. Asked per
// block, not part of the roles: a size-1 dim is contiguous whatever its stride, so a tail block
// may fit where the full block does not.
bool fits_brgemm(const Contraction& op, const GemmRoles& g);

// The prim dims of an element-wise operation, the one unit-stride in the output first. Throws
// ConfigError when there are more than two.
std::vector<std::size_t> find_elementwise_block(const Contraction& op);

std::vector<std::size_t> loop_dims(const Contraction& op);

// Rows of one register panel of the BRGEMM TPP (its default panel_vectors vectors) for elements of
// `element_bytes` on the selected ISA: fp32 32 (AVX2) / 64 (AVX-512), fp64 16 / 32. Operand packing
// sizes its blocks in these; the lowering packs and multiplies taller blocks panel by panel.
std::int64_t brgemm_panel_rows(std::size_t element_bytes);

// Whether dimension `dim` is a k dim of a GEMM: its iterations accumulate into one output block.
inline bool is_k_loop(const Contraction& op, std::size_t dim) {
  return is_gemm_like(op.main) && op.dims[dim].type == dim_t::k;
}

// The partner of dimension `outer` (Dim::last_block): the other dim of its type whose strides times
// its size are outer's strides; kNoDim when there is none, or more than one.
std::size_t ragged_partner(const Contraction& op, std::size_t outer);
// Per dimension: its ragged_partner when it has a remainder, else kNoDim.
std::vector<std::size_t> ragged_partners(const Contraction& op);
// Whether dimension i is the partner of a ragged dimension.
bool is_ragged_partner(const Contraction& op, std::size_t i);

// What the dims of a validated Contraction are to its primitives.
struct OperandRoles {
  GemmRoles gemm;                     // gemm/brgemm
  std::vector<std::size_t> block;     // unary/binary element-wise: find_elementwise_block
  std::vector<std::size_t> partner;   // per dim: the inner block of its remainder (kNoDim: none)
};

// validate() that hands back the roles it derived. The prim dims are checked whatever
// options.check_primitives says: lowering runs them. Throws ConfigError.
OperandRoles validated_roles(const Contraction& op, const ValidationOptions& options);

}  // namespace weft::tensor::detail
