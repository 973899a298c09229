// The FMA peak of one core: generated loops of independent FMAs (12 ymm or 24 zmm accumulators, more
// than latency x pipes on every x86 core we know), in GFLOPS. The reference for "share of peak" in
// docs/tpp_brgemm.md, and the measured side of the llvm-mca calibration (scripts/mca_kernels.py).
//
//   taskset -c 1 weft-bench-fma-peak --benchmark_filter=avx2
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>

#include "weft/jit/cpu.hpp"
#include "weft/jit/x64/code_buffer.hpp"

namespace {

using weft::jit::Isa;

constexpr int kUnroll = 8;  // FMA blocks per loop iteration

// void loop(std::int64_t iterations): each iteration runs kUnroll blocks of `accumulators` FMAs.
template <class Vmm>
struct FmaLoop : weft::jit::x64::CodeBuffer {
  explicit FmaLoop(int accumulators) {
    for (int i = 0; i < accumulators; ++i) vxorps(Vmm(i), Vmm(i), Vmm(i));
    const Vmm a(accumulators), b(accumulators + 1);
    vxorps(a, a, a);
    vxorps(b, b, b);
    Xbyak::Label loop;
    L(loop);
    for (int u = 0; u < kUnroll; ++u)
      for (int i = 0; i < accumulators; ++i) vfmadd231ps(Vmm(i), a, b);
    dec(rdi);
    jnz(loop);
    vzeroupper();
    ret();
  }
};

void BM_fma_peak(benchmark::State& state, Isa isa) {
  if (!weft::jit::can_run(isa, weft::jit::cpu_features())) {
    state.SkipWithError("this CPU cannot run the ISA");
    return;
  }
  const bool zmm = isa != Isa::avx2;
  const int accumulators = zmm ? 24 : 12;
  std::unique_ptr<weft::jit::x64::CodeBuffer> code;
  if (zmm)
    code = std::make_unique<FmaLoop<Xbyak::Zmm>>(accumulators);
  else
    code = std::make_unique<FmaLoop<Xbyak::Ymm>>(accumulators);
  auto loop = code->finalize<void (*)(std::int64_t)>("fma_peak");
  constexpr std::int64_t kIterations = 1 << 16;
  for (auto _ : state) loop(kIterations);
  const double flops = 2.0 * (zmm ? 16 : 8) * accumulators * kUnroll * static_cast<double>(kIterations);
  state.counters["GFLOPS"] = benchmark::Counter(flops * static_cast<double>(state.iterations()) / 1e9,
                                                benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(BM_fma_peak, avx2, Isa::avx2);
BENCHMARK_CAPTURE(BM_fma_peak, avx512, Isa::avx512);

}  // namespace

BENCHMARK_MAIN();
