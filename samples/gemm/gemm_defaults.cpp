#include "gemm_defaults.hpp"

#include <algorithm>
#include <utility>

namespace weft::samples {

GemmFwdConfig recommended_gemm_config(const GemmFwdConfig& problem, int threads) {
  GemmFwdConfig c = problem;
  const bool mlp = problem.n_layers > 1;
  c.bm = mlp || problem.bf16() ? 64 : 32;
  c.bn = problem.bf16() ? 128 : 48;
  c.bk = 64;
  const std::int64_t mb = (problem.M + c.bm - 1) / c.bm;
  const std::int64_t kb = (problem.K + c.bk - 1) / c.bk;
  c.kbf = std::max<std::int64_t>(1, (kb + 3) / 4);
  // Groups of up to 8 M blocks, but at least one group per thread.
  const long group = static_cast<long>(std::clamp<std::int64_t>(mb / std::max(1, threads), 1, 8));
  c.loop_string = threads > 1 ? "aBcb" : "abcb";
  c.k_blocks.clear();
  c.m_blocks = {group};
  c.n_blocks.clear();
  return c;
}

void GemmConfigOverride::apply(GemmFwdConfig& c) const {
  if (!loop_string.empty()) {
    c.loop_string = loop_string;
    c.k_blocks = k_blocks;
    c.m_blocks = m_blocks;
    c.n_blocks = n_blocks;
  }
  for (auto [given, field] : {std::pair{bm, &c.bm}, {bn, &c.bn}, {bk, &c.bk}, {kbf, &c.kbf}})
    if (given != 0) *field = given;
}

}  // namespace weft::samples
