#include <weft/ops/brgemm_table.hpp>

#include <algorithm>

namespace weft::ops {

BrgemmTable::BrgemmTable(const Blocking& m, const Blocking& n, std::int64_t k, const LeadingDims& ld,
                         const Epilogue& epilogue, const tpp::DataTypes& types, PassCode code)
    : m_has_tail_(m.size % m.block != 0), n_has_tail_(n.size % n.block != 0) {
  std::vector<tpp::BrgemmDesc> descs;
  descs.reserve(16);
  // A size below its block has no full block: its one block is the remainder, and a full-size
  // kernel (never called) could not even be described on a plain operand whose ld is the size.
  const auto full = [](const Blocking& b) { return std::min(b.block, b.size); };
  for (int index = 0; index < 16; ++index) {
    const bool m_tail = index & 8, n_tail = index & 4, first = index & 2, last = index & 1;
    tpp::BrgemmDesc d;
    d.m = static_cast<std::int32_t>(m_tail ? m.extent(m.blocks() - 1) : full(m));
    d.n = static_cast<std::int32_t>(n_tail ? n.extent(n.blocks() - 1) : full(n));
    d.k = static_cast<std::int32_t>(k);
    d.lda = ld.lda;
    d.ldb = ld.ldb;
    d.ldc = ld.ldc;
    d.beta = first && !epilogue.accumulate ? 0 : 1;
    d.prefetch = d.beta == 1 ? epilogue.prefetch_c : tpp::BrgemmPrefetch::none;
    d.bias = last ? epilogue.bias : tpp::BrgemmBias::none;
    d.activation = last && epilogue.relu ? tpp::BrgemmActivation::relu : tpp::BrgemmActivation::none;
    d.types = types;
    descs.push_back(d);
  }
  kernels_ = make_kernels<tpp::Brgemm>(descs, code);
}

}  // namespace weft::ops
