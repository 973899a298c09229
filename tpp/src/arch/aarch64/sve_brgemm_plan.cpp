#include "sve_brgemm_plan.hpp"

#include <algorithm>
#include <string>

#include "weft/jit/data_type.hpp"
#include "weft/jit/error.hpp"

namespace weft::tpp::sve {

bool supports(const BrgemmDesc& d) {
  try {
    validate(d);
  } catch (const Error&) {
    return false;
  }
  const jit::DataType t = d.types.in;
  if (t != jit::DataType::f32 && t != jit::DataType::f64) return false;
  return d.types.out == t && d.types.compute == t;
}

SveBrgemmPlan plan_sve_brgemm(const BrgemmDesc& d, int vector_bytes) {
  validate(d);
  if (vector_bytes != 16 && vector_bytes != 32 && vector_bytes != 64) {
    throw Error("sve brgemm: vector length of " + std::to_string(vector_bytes) + " bytes (16, 32 or 64 expected)");
  }
  if (!supports(d)) {
    throw Error("sve brgemm: " + to_string(d) + " not supported yet (bf16 inputs: Neon)");
  }
  SveBrgemmPlan plan;
  plan.vector_bytes = vector_bytes;
  plan.lanes = vector_bytes / static_cast<int>(jit::size_of(d.types.compute));
  const int lanes = plan.lanes;
  plan.tail = d.m % lanes;
  const int vectors = (d.m + lanes - 1) / lanes;
  for (int v = 0; v < vectors; v += kPanelVectors) {
    SvePanel p{.row0 = v * lanes, .vectors = v + kPanelVectors <= vectors ? kPanelVectors : vectors - v, .tail = 0};
    if (v + p.vectors == vectors) p.tail = plan.tail;  // the last panel ends in the partial vector
    plan.panels.push_back(p);
  }
  // Near-equal blocks, as the Neon plan's (no block much narrower than the others).
  plan.indexed = !d.b_transposed;
  plan.k_group = plan.indexed ? 16 / static_cast<int>(jit::size_of(d.types.compute)) : kKUnroll;
  if (vectors < kPanelVectors) {
    plan.max_cols = plan.indexed ? std::min(kMaxIndexedCols, 22 / vectors) : std::min(kMaxCols, kMaxAccumulators / vectors);
  }
  const int blocks = (d.n + plan.max_cols - 1) / plan.max_cols;
  int col0 = 0;
  for (int b = 0; b < blocks; ++b) {
    const int cols = d.n / blocks + (b < d.n % blocks ? 1 : 0);
    plan.blocks.push_back({.col0 = col0, .cols = cols});
    col0 += cols;
  }
  return plan;
}

}  // namespace weft::tpp::sve
