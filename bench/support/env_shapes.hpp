// BRGEMM shapes from the environment: WEFT_BENCH_SHAPES="m,n,k,br;m,n,k,br..." replaces a benchmark's
// own list (the GEMM passes' kernels, say: weft.ops' descriptions name their tiles).
//
//   void shapes(benchmark::internal::Benchmark* b) {
//     b->ArgNames({"m", "n", "k", "br"});
//     if (weft::bench::env_shapes(b)) return;
//     ... the benchmark's own shapes ...
//   }
#pragma once

#include <cstdio>
#include <cstdlib>

#include <benchmark/benchmark.h>

namespace weft::bench {

// Adds the shapes WEFT_BENCH_SHAPES lists (up to the first malformed one) and says whether it was set.
inline bool env_shapes(benchmark::internal::Benchmark* b) {
  const char* env = std::getenv("WEFT_BENCH_SHAPES");
  if (env == nullptr) return false;
  for (const char* p = env; *p != '\0';) {
    long m = 0, n = 0, k = 0, br = 0;
    int used = 0;
    if (std::sscanf(p, "%ld,%ld,%ld,%ld%n", &m, &n, &k, &br, &used) != 4 || m < 1 || n < 1 || k < 1 || br < 1) break;
    b->Args({m, n, k, br});
    p += used;
    while (*p == ';' || *p == ' ') ++p;
  }
  return true;
}

}  // namespace weft::bench
