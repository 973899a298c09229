// Batch folding: a GEMM whose innermost loop is a sequential k loop runs that loop as the
// batch-reduce of one BRGEMM call. The sums come out bit-identical whenever the kernel's plan sums
// in reference order (tpp::BrgemmPlan::reference_order(): all but the narrow tiles that keep
// partial sums): per output element the BRGEMM performs the same fused multiply-adds in the same
// order (k loop outer, the GEMM's K inner), it only keeps the C block in registers across them
// instead of storing and reloading it per k step. Narrow tiles differ within rounding.
// Like primitive identification, it leaves a batch that would sweep megabytes per register tile a
// loop: then the GEMM's A block staying hot in L1 across calls is worth more than the C reloads.
#include <algorithm>
#include <utility>

#include "batch_folding.hpp"
#include "prim_dims.hpp"
#include "weft/tensor/passes.hpp"

namespace weft::tensor {

bool detail::fold_into_batch(Contraction& op, OperandRoles& roles, std::int64_t max_batch_span_bytes) {
  if (op.main != prim_t::gemm) return false;
  const std::vector<std::size_t> loops = loop_dims(op);
  if (loops.empty()) return false;
  const Dim& innermost = op.dims[loops.back()];
  const bool is_partner =
      std::find(roles.partner.begin(), roles.partner.end(), loops.back()) != roles.partner.end();
  if (innermost.type != dim_t::k || innermost.exec != exec_t::seq || innermost.size < 2 ||
      innermost.last_block != 0 || is_partner || batch_span_bytes(innermost, op.dtype) > max_batch_span_bytes)
    return false;
  Contraction folded = op;
  folded.dims[loops.back()].exec = exec_t::prim;
  folded.main = prim_t::brgemm;
  // The GEMM's own K must stay the GEMM's K (brgemm picks it by its stride in in1), else the
  // order of the sums, or the kernel that fits, would change. (M, N and K keeping their dims,
  // the block fits the BRGEMM TPP as before.)
  const GemmRoles after = find_gemm_roles(folded);
  if (after.k != roles.gemm.k) return false;
  op = std::move(folded);
  roles.gemm = after;
  return true;
}

bool fold_reduction_into_batch(Contraction& op, std::int64_t max_batch_span_bytes) {
  if (op.main != prim_t::gemm) return false;
  detail::OperandRoles roles;
  try {
    roles.gemm = detail::find_gemm_roles(op);
  } catch (const ConfigError&) {
    return false;  // not a valid gemm configuration: validation reports it, not this pass
  }
  roles.partner = detail::ragged_partners(op);
  return detail::fold_into_batch(op, roles, max_batch_span_bytes);
}

}  // namespace weft::tensor
