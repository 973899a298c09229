// A sample in the shape of PARLOOPER's samples/gemm/gemm_model_fwd.cpp: common_utils.h first, then
// "threaded_loops.h" by its quoted name; neither line changed for weft. It runs a blocked GEMM
// loop over a work-shared run and checks that every (i_m, i_n) block was written once per K step.
#include "common_utils.h"
#include "threaded_loops.h"

#include <atomic>
#include <cstdio>
#include <vector>

int main() {
  ifreq = 1.0;
  const long Kb = 3, Mb = 5, Nb = 4;
  auto gemm_loop = ThreadedLoop<3>({LoopSpecs{0, Kb, 1}, LoopSpecs{0, Mb, 1, {2}}, LoopSpecs{0, Nb, 1}}, "aBCb");
  std::vector<std::atomic<int>> visits(static_cast<size_t>(Mb * Nb));
  for (auto& v : visits) v = 0;
  gemm_loop([&](int* ind) { visits[static_cast<size_t>(ind[1] * Nb + ind[2])] += 1 + ind[0]; });
  int bad = 0;
  for (const auto& v : visits) bad += v != 1 + 2 + 3;
  const std::string nest = loop_generator("aBCb");
  if (bad != 0 || nest.empty()) {
    std::fprintf(stderr, "parlooper_tree sample: %d blocks visited wrongly, rendering '%s'\n", bad, nest.c_str());
    return 1;
  }
  std::printf("parlooper_tree sample: ok (%.0f)\n", getTime() >= 0 ? 1.0 : 0.0);
  return 0;
}
