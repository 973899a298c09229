// Batch folding for the lowering, which holds the operation's roles already (private).
#pragma once

#include <cstdint>

#include "prim_dims.hpp"
#include "weft/tensor/passes.hpp"

namespace weft::tensor::detail {

// fold_reduction_into_batch on a validated operation with its roles; when it folds, it updates
// roles.gemm to those of the folded operation: the one place a lowering derives the roles again,
// because the pass changes the contraction. (It changes one execution type and the main
// primitive: the remainders' partners stay.)
bool fold_into_batch(Contraction& op, OperandRoles& roles,
                     std::int64_t max_batch_span_bytes = kMaxBatchSpanBytes);

}  // namespace weft::tensor::detail
