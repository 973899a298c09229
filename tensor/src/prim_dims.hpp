// Where the prim dimensions of a validated Contraction are, by role (private to tensor/src).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "weft/tensor/contraction.hpp"

namespace weft::tensor::detail {

inline constexpr std::size_t kNoDim = static_cast<std::size_t>(-1);

// GEMM roles: C(M x N) += sum over BR of A(M x K) * B(K x N). `br` is kNoDim for gemm.
struct GemmDims {
  std::size_t m = kNoDim, n = kNoDim, k = kNoDim, br = kNoDim;
  // true when the BRGEMM TPP can take the layout: M unit-stride in in0 and out, K in in1.
  bool fits_tpp = false;
};

// Throws ConfigError (err_invalid_primitive_configuration) unless the prim dims are one m, one n,
// one k (and one more k for brgemm), none of type c.
GemmDims find_gemm_dims(const Contraction& op);

// Element-wise roles: `rows` is the prim dim unit-stride in the output (or kNoDim), `cols` the other
// prim dim (or kNoDim). Throws ConfigError when there are more than two prim dims.
struct ElementwiseDims {
  std::vector<std::size_t> prims;
};
ElementwiseDims find_elementwise_dims(const Contraction& op);

std::vector<std::size_t> loop_dims(const Contraction& op);

// The partner of dimension `outer` (Dim::last_block): the other dim of its type whose strides times
// its size are outer's strides; kNoDim when there is none, or more than one.
std::size_t ragged_partner(const Contraction& op, std::size_t outer);
// Whether dimension i is the partner of a ragged dimension.
bool is_ragged_partner(const Contraction& op, std::size_t i);

}  // namespace weft::tensor::detail
