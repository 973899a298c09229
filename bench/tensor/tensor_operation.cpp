// The seed documents' tensor-operation benchmarks through einsum::backend::TensorOperation, with
// peers in the same run: the (32,32,8,32,32,32) configurations (GEMM; BRGEMM; Zero+BRGEMM+ReLU) next
// to a plain loop around libxsmm's batch-reduce GEMM; the 1600^3 GEMM given all-seq through the
// optimizer next to OpenBLAS sgemm; the (64,25,64,25,64,25) contraction through the optimizer.
// BM_Optimized's args: threads, brgemm (OptimizeOptions::use_brgemm), pack (OptimizeOptions::pack:
// 1 = the default pipeline with operand packing, 0 = the pipeline without it, as before packing).
// BM_SeedConfigInterleaved alternates the seed configurations and the libxsmm loop call by call.
// BM_Gemm1600InterleavedVsOpenblas runs ours and OpenBLAS alternately in every iteration, on one
// thread, and reports their ratio: robust on a shared machine (two threads would have the two
// runtimes' idle threads spinning against each other); BM_Gemm1600PhasedVsOpenblas alternates
// phases of runs, on 1 and 2 threads. BM_Dgemm2048VsOpenblas: the fp64 2048^3 GEMM through the
// optimizer against OpenBLAS dgemm, call by call on one thread, each call after a pause on two
// (docs/tensor.md has the command lines).
// Data stays hot (the same buffers every iteration). Counter "GFLOPS" (rate). Pin threads:
//   OMP_PROC_BIND=close OMP_PLACES=cores weft-bench-tensor-operation --benchmark_repetitions=5
//     --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>
#include <optional>
#include <vector>

#include "all_cpus_scope.hpp"
#include "interleaved.hpp"
#include "weft/tensor/tensor_operation.hpp"
#include "weft/tpp/unary.hpp"

#if WEFT_HAVE_LIBXSMM
#include <libxsmm.h>
#endif
#if WEFT_HAVE_OPENBLAS
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
#endif

namespace {

using einsum::backend::TensorOperation;
using weft::tensor::Contraction;
using weft::tensor::Dim;
using weft::tensor::dim_t;
using weft::tensor::exec_t;
using weft::tensor::prim_t;

std::vector<float> filled(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

void report(benchmark::State& state, double flops) {
  state.counters["GFLOPS"] =
      benchmark::Counter(flops * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}

// ---- (32, 32, 8, 32, 32, 32) -------------------------------------------------------------------

enum Config { kGemm = 0, kBrgemm = 1, kZeroBrgemmRelu = 2 };

Contraction seed_config(Config c, int threads) {
  const exec_t s = exec_t::seq, p = exec_t::prim;
  Contraction op;
  op.first_touch = c == kZeroBrgemmRelu ? prim_t::zero : prim_t::none;
  op.main = c == kGemm ? prim_t::gemm : prim_t::brgemm;
  op.last_touch = c == kZeroBrgemmRelu ? prim_t::relu : prim_t::none;
  op.dims = {Dim{dim_t::m, threads > 1 ? exec_t::shared : s, 32, 8192, 0, 32768},
             Dim{dim_t::n, s, 32, 0, 8192, 1024}, Dim{dim_t::k, c == kGemm ? s : p, 8, 1024, 1024, 0},
             Dim{dim_t::m, p, 32, 1, 0, 1}, Dim{dim_t::n, p, 32, 0, 32, 32}, Dim{dim_t::k, p, 32, 32, 1, 0}};
  return op;
}

constexpr std::size_t kSeedElements = 32 * 8 * 32 * 32;  // per tensor
constexpr double kSeedFlops = 2.0 * 32 * 32 * 8 * 32 * 32 * 32;

// Sets the OpenMP team size and op up for the configuration; false (and the benchmark skipped)
// when setup fails.
bool setup_seed(benchmark::State& state, TensorOperation& op, Config config, int threads) {
  omp_set_num_threads(threads);
  if (op.setup(seed_config(config, threads), {}) == weft::tensor::error_t::success) return true;
  state.SkipWithError(op.error_message().c_str());
  return false;
}

void BM_SeedConfig(benchmark::State& state) {
  const auto config = static_cast<Config>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  TensorOperation op;
  if (!setup_seed(state, op, config, threads)) return;
  const auto a = filled(kSeedElements, 1), b = filled(kSeedElements, 2);
  auto c = filled(32 * 32 * 32 * 32, 3);
  for (auto _ : state) {
    op.execute(a.data(), b.data(), c.data());
    benchmark::ClobberMemory();
  }
  report(state, kSeedFlops);
}
BENCHMARK(BM_SeedConfig)
    ->ArgNames({"config", "threads"})
    ->ArgsProduct({{kGemm, kBrgemm, kZeroBrgemmRelu}, {1, 2}})
    ->UseRealTime();

#if WEFT_HAVE_LIBXSMM
// The peer: a plain loop over the 32 x 32 output blocks around libxsmm's strided BRGEMM (batch 8).
// For Zero+BRGEMM+ReLU it runs beta = 0 and then, with `relu`, a ReLU over the block while it is
// hot in L1. libxsmm 1.17 has no fused ReLU and dispatches no FP32 ReLU kernel
// (libxsmm_dispatch_meltw_relu returns NULL), so the ReLU is weft's JIT ReLU TPP, the fastest one
// at hand. Without `relu` the peer computes less than we do (favouring it).
struct LibxsmmSeedLoop {
  libxsmm_smmfunction_reducebatch_strd kernel = nullptr;
  std::optional<weft::tpp::Unary> relu;
  int threads = 1;
  LibxsmmSeedLoop(Config config, int thread_count, bool with_relu = false) : threads(thread_count) {
    if (config == kZeroBrgemmRelu && with_relu)
      relu.emplace(weft::tpp::UnaryDesc{.op = weft::tpp::UnaryOp::relu, .m = 32, .n = 32, .ld_in = 32, .ld_out = 32});
    const libxsmm_blasint m = 32, lda = 32, ldb = 32, ldc = 32;
    const float alpha = 1.0f, beta = config == kZeroBrgemmRelu ? 0.0f : 1.0f;
    const int flags = LIBXSMM_GEMM_FLAGS('N', 'N');
    const int prefetch = LIBXSMM_PREFETCH_NONE;
    kernel = libxsmm_smmdispatch_reducebatch_strd(m, m, m, 1024 * sizeof(float), 1024 * sizeof(float), &lda,
                                                  &ldb, &ldc, &alpha, &beta, &flags, &prefetch);
  }
  void operator()(const float* a, const float* b, float* c) const {
#pragma omp parallel for num_threads(threads)
    for (int im = 0; im < 32; ++im)
      for (int in = 0; in < 32; ++in) {
        unsigned long long count = 8;
        float* block = c + im * 32768 + in * 1024;
        kernel(a + im * 8192, b + in * 8192, block, &count);
        if (relu) (*relu)(block, block);
      }
  }
};

void BM_SeedConfigLibxsmmLoop(benchmark::State& state) {
  const auto config = static_cast<Config>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  omp_set_num_threads(threads);
  const LibxsmmSeedLoop peer(config, threads);
  const auto a = filled(kSeedElements, 1), b = filled(kSeedElements, 2);
  auto c = filled(32 * 32 * 32 * 32, 3);
  for (auto _ : state) {
    peer(a.data(), b.data(), c.data());
    benchmark::ClobberMemory();
  }
  report(state, kSeedFlops);
}
BENCHMARK(BM_SeedConfigLibxsmmLoop)
    ->ArgNames({"config", "threads"})
    ->ArgsProduct({{kGemm, kBrgemm, kZeroBrgemmRelu}, {1, 2}})
    ->UseRealTime();

// Ours and the libxsmm loop alternating call by call (the same OpenMP runtime and team size), 101
// rounds, the median time of each: the ratio (> 1: weft faster) is robust on a shared machine.
// peer_relu (Zero+BRGEMM+ReLU only): 1 = the peer applies the ReLU too, 0 = it does not.
void BM_SeedConfigInterleaved(benchmark::State& state) {
  const auto config = static_cast<Config>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  TensorOperation op;
  if (!setup_seed(state, op, config, threads)) return;
  const LibxsmmSeedLoop peer(config, threads, state.range(2) != 0);
  const auto a = filled(kSeedElements, 1), b = filled(kSeedElements, 2);
  // One output buffer for both: separate ones measured up to 10% apart on the same kernel
  // (their pages and huge pages differ), which swamped the ratio.
  auto c = filled(32 * 32 * 32 * 32, 3);
  using clock = std::chrono::steady_clock;
  std::vector<double> ours, theirs;
  for (auto _ : state) {
    for (int round = 0; round < 101; ++round) {
      const auto t0 = clock::now();
      op.execute(a.data(), b.data(), c.data());
      const auto t1 = clock::now();
      peer(a.data(), b.data(), c.data());
      const auto t2 = clock::now();
      ours.push_back(std::chrono::duration<double>(t1 - t0).count());
      theirs.push_back(std::chrono::duration<double>(t2 - t1).count());
    }
    benchmark::ClobberMemory();
  }
  const double t_ours = median(ours), t_theirs = median(theirs);
  state.counters["weft_gflops"] = kSeedFlops / t_ours * 1e-9;
  state.counters["xsmm_gflops"] = kSeedFlops / t_theirs * 1e-9;
  state.counters["ratio"] = t_theirs / t_ours;
}
void seed_interleaved_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"config", "threads", "peer_relu"});
  for (long threads : {1, 2}) {
    b->Args({kGemm, threads, 0})->Args({kBrgemm, threads, 0});
    b->Args({kZeroBrgemmRelu, threads, 1})->Args({kZeroBrgemmRelu, threads, 0});
  }
}
BENCHMARK(BM_SeedConfigInterleaved)->Apply(seed_interleaved_args)->Iterations(1)->UseRealTime();
#endif

// ---- optimizer inputs ----------------------------------------------------------------------------

Contraction gemm_1600() {
  const exec_t s = exec_t::seq;
  Contraction op;
  op.main = prim_t::gemm;
  op.dims = {Dim{dim_t::m, s, 1600, 1, 0, 1}, Dim{dim_t::n, s, 1600, 0, 1600, 1600},
             Dim{dim_t::k, s, 1600, 1600, 1, 0}};
  return op;
}

Contraction contraction_64_25() {
  const exec_t s = exec_t::seq;
  Contraction op;
  op.main = prim_t::gemm;
  op.dims = {Dim{dim_t::m, s, 64, 25, 0, 25},       Dim{dim_t::m, s, 25, 1, 0, 1},
             Dim{dim_t::n, s, 64, 0, 40000, 40000}, Dim{dim_t::n, s, 25, 0, 1600, 1600},
             Dim{dim_t::k, s, 64, 40000, 25, 0},    Dim{dim_t::k, s, 25, 1600, 1, 0}};
  return op;
}

void BM_Optimized(benchmark::State& state, Contraction (*make)()) {
  const int threads = static_cast<int>(state.range(0));
  omp_set_num_threads(threads);
  TensorOperation op;
  TensorOperation::Options options;
  options.optimize = true;
  options.optimizer.threads = threads;
  options.optimizer.use_brgemm = state.range(1) != 0;
  options.optimizer.pack = state.range(2) != 0;
  const Contraction config = make();
  if (op.setup(config, options) != weft::tensor::error_t::success) {
    state.SkipWithError(op.error_message().c_str());
    return;
  }
  const auto a = filled(1600 * 1600, 1), b = filled(1600 * 1600, 2);
  auto c = filled(1600 * 1600, 3);
  for (auto _ : state) {
    op.execute(a.data(), b.data(), c.data());
    benchmark::ClobberMemory();
  }
  report(state, config.flops());
}
void optimized_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"threads", "brgemm", "pack"});
  for (long threads : {1, 2}) b->Args({threads, 1, 1})->Args({threads, 1, 0})->Args({threads, 0, 0});
}
BENCHMARK_CAPTURE(BM_Optimized, gemm_1600, &gemm_1600)->Apply(optimized_args)->UseRealTime();
BENCHMARK_CAPTURE(BM_Optimized, contraction_64_25, &contraction_64_25)->Apply(optimized_args)->UseRealTime();

#if WEFT_HAVE_OPENBLAS
// The 1600^3 GEMM given all-seq through the optimizer's default pipeline for `threads`; false (and
// the benchmark skipped) when setup fails.
bool setup_optimized_1600(benchmark::State& state, TensorOperation& op, int threads) {
  TensorOperation::Options options;
  options.optimize = true;
  options.optimizer.threads = threads;
  if (op.setup(gemm_1600(), options) == weft::tensor::error_t::success) return true;
  state.SkipWithError(op.error_message().c_str());
  return false;
}

void BM_OpenblasSgemm1600(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const AllCpusScope unpinned;
  openblas_set_num_threads(threads);
  const auto a = filled(1600 * 1600, 1), b = filled(1600 * 1600, 2);
  auto c = filled(1600 * 1600, 3);
  for (auto _ : state) {
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 1600, 1600, 1600, 1.0f, a.data(), 1600,
                b.data(), 1600, 1.0f, c.data(), 1600);
    benchmark::ClobberMemory();
  }
  report(state, 2.0 * 1600.0 * 1600.0 * 1600.0);
}
BENCHMARK(BM_OpenblasSgemm1600)->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime();

// Ours (the optimizer's default pipeline) and OpenBLAS alternately, one thread; the iteration time
// is ours, "ratio" = OpenBLAS time / our time over the run (> 1: we are faster).
void BM_Gemm1600InterleavedVsOpenblas(benchmark::State& state) {
  omp_set_num_threads(1);
  openblas_set_num_threads(1);
  TensorOperation op;
  if (!setup_optimized_1600(state, op, 1)) return;
  const auto a = filled(1600 * 1600, 1), b = filled(1600 * 1600, 2);
  auto c = filled(1600 * 1600, 3), c_blas = c;
  using clock = std::chrono::steady_clock;
  double ours = 0.0, theirs = 0.0;
  for (auto _ : state) {
    const auto t0 = clock::now();
    op.execute(a.data(), b.data(), c.data());
    benchmark::ClobberMemory();
    const auto t1 = clock::now();
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 1600, 1600, 1600, 1.0f, a.data(), 1600,
                b.data(), 1600, 1.0f, c_blas.data(), 1600);
    benchmark::ClobberMemory();
    const auto t2 = clock::now();
    const double mine = std::chrono::duration<double>(t1 - t0).count();
    ours += mine;
    theirs += std::chrono::duration<double>(t2 - t1).count();
    state.SetIterationTime(mine);
  }
  report(state, 2.0 * 1600.0 * 1600.0 * 1600.0);
  state.counters["ratio"] = ours > 0.0 ? theirs / ours : 0.0;
}
BENCHMARK(BM_Gemm1600InterleavedVsOpenblas)->UseManualTime()->Iterations(10);

// Ours and OpenBLAS in phases of 5 runs each, 300 ms apart, 6 rounds; "ratio" = median OpenBLAS
// time / our median time (> 1: we are faster). For 2 threads call by call interleaving is unfair:
// each runtime's idle threads spin for a while after a call and took a core from the other
// (OpenBLAS measured 171-177 GFLOPS interleaved, 211 alone). OpenBLAS's threads run unpinned
// (AllCpusScope), ours as OMP_PROC_BIND says.
void BM_Gemm1600PhasedVsOpenblas(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  omp_set_num_threads(threads);
  TensorOperation op;
  if (!setup_optimized_1600(state, op, threads)) return;
  const auto a = filled(1600 * 1600, 1), b = filled(1600 * 1600, 2);
  auto c = filled(1600 * 1600, 3), c_blas = c;
  using clock = std::chrono::steady_clock;
  const auto seconds = [](clock::time_point since) { return std::chrono::duration<double>(clock::now() - since).count(); };
  const auto pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(300)); };
  std::vector<double> ours, theirs;
  for (auto _ : state) {
    for (int round = 0; round < 6; ++round) {
      for (int i = 0; i < 5; ++i) {
        const auto t0 = clock::now();
        op.execute(a.data(), b.data(), c.data());
        ours.push_back(seconds(t0));
      }
      pause();
      {
        const AllCpusScope unpinned;
        openblas_set_num_threads(threads);
        for (int i = 0; i < 5; ++i) {
          const auto t0 = clock::now();
          cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 1600, 1600, 1600, 1.0f, a.data(), 1600,
                      b.data(), 1600, 1.0f, c_blas.data(), 1600);
          theirs.push_back(seconds(t0));
        }
      }
      pause();
    }
    benchmark::ClobberMemory();
  }
  const double flops = 2.0 * 1600.0 * 1600.0 * 1600.0;
  state.counters["weft_gflops"] = flops / median(ours) * 1e-9;
  state.counters["openblas_gflops"] = flops / median(theirs) * 1e-9;
  state.counters["ratio"] = median(theirs) / median(ours);
}
BENCHMARK(BM_Gemm1600PhasedVsOpenblas)->ArgName("threads")->Arg(1)->Arg(2)->Iterations(1)->UseRealTime();

// ---- fp64: 2048^3 through the optimizer against OpenBLAS dgemm ---------------------------------

// The column-major 2048^3 fp64 GEMM given all-seq, as TensorOperation::setup_optimized takes it.
Contraction dgemm_2048() {
  Contraction op = gemm_1600();
  op.dtype = weft::tensor::dtype_t::fp64;
  op.dims = {Dim{dim_t::m, exec_t::seq, 2048, 1, 0, 1}, Dim{dim_t::n, exec_t::seq, 2048, 0, 2048, 2048},
             Dim{dim_t::k, exec_t::seq, 2048, 2048, 1, 0}};
  return op;
}

std::vector<double> filled_doubles(std::size_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = d(gen);
  return v;
}

// Ours (setup_optimized's pipeline for `threads`, pack: OptimizeOptions::pack) and cblas_dgemm in
// alternating rounds of one call each, `rounds` rounds, the median call of each side; "ratio" =
// OpenBLAS time / ours (> 1: we are faster). On one thread the calls alternate back to back
// (weft::bench::interleave). On two, each call is preceded by a pause of `pause_ms` (a flag of the
// benchmark arguments, 300 by default), long enough for the other runtime's idle threads to stop
// spinning (libgomp: ~3 ms by default; OMP_WAIT_POLICY=active makes ours spin for minutes, through
// OpenBLAS's calls, which would favour us: do not combine it with two threads here). OpenBLAS's
// threads run unpinned (AllCpusScope), ours as OMP_PROC_BIND says.
void BM_Dgemm2048VsOpenblas(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const bool pack = state.range(1) != 0;
  const int pause_ms = static_cast<int>(state.range(2));
  constexpr int n = 2048;
  omp_set_num_threads(threads);
  TensorOperation op;
  TensorOperation::Options options;
  options.optimize = true;
  options.optimizer.threads = threads;
  options.optimizer.pack = pack;
  if (op.setup(dgemm_2048(), options) != weft::tensor::error_t::success) {
    state.SkipWithError(op.error_message().c_str());
    return;
  }
  const auto a = filled_doubles(std::size_t{n} * n, 1), b = filled_doubles(std::size_t{n} * n, 2);
  auto c = filled_doubles(std::size_t{n} * n, 3), c_blas = c;
  // One thread: OpenBLAS runs on the caller's CPU (taskset's); two: unpinned, see above.
  const auto blas_threads = [&] {
    std::optional<AllCpusScope> unpinned;
    if (threads > 1) unpinned.emplace();
    openblas_set_num_threads(threads);
  };
  blas_threads();
  const auto call_ours = [&] { op.execute(a.data(), b.data(), c.data()); };
  const auto call_theirs = [&] {
    std::optional<AllCpusScope> unpinned;
    if (threads > 1) unpinned.emplace();
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data(), n, b.data(), n, 1.0,
                c_blas.data(), n);
  };
  using clock = std::chrono::steady_clock;
  const auto timed = [&](const auto& f, std::vector<double>& into) {
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
    const auto t0 = clock::now();
    f();
    into.push_back(std::chrono::duration<double>(clock::now() - t0).count());
  };
  const int rounds = static_cast<int>(state.range(3));
  std::vector<double> t_ours, t_theirs;
  for (auto _ : state) {
    call_ours();  // page faults of the packing buffers, kernel generation: untimed
    call_theirs();
    if (pause_ms == 0) {
      const weft::bench::Interleaved t = weft::bench::interleave(call_ours, call_theirs, /*calls=*/1, rounds);
      t_ours.push_back(t.first);
      t_theirs.push_back(t.second);
    } else {
      for (int round = 0; round < rounds; ++round) {
        timed(call_ours, t_ours);
        timed(call_theirs, t_theirs);
      }
    }
    benchmark::ClobberMemory();
  }
  const double flops = 2.0 * n * static_cast<double>(n) * n;
  state.counters["weft_gflops"] = flops / median(t_ours) * 1e-9;
  state.counters["openblas_gflops"] = flops / median(t_theirs) * 1e-9;
  state.counters["ratio"] = median(t_theirs) / median(t_ours);
}
// threads, pack, pause_ms (0: back to back through weft::bench::interleave), rounds
BENCHMARK(BM_Dgemm2048VsOpenblas)
    ->ArgNames({"threads", "pack", "pause_ms", "rounds"})
    ->Args({1, 1, 0, 9})
    ->Args({2, 1, 300, 9})
    ->Args({1, 0, 0, 5})
    ->Args({2, 0, 300, 5})
    ->Iterations(1)
    ->UseRealTime();
#endif

// ---- unary primitives with a transposed output (docs/tensor.md, "Transposed outputs") ----------

// 64 blocks (a seq loop) of 64 x 64: out(l, i, j) = main(in0(l, i, j)), in0 contiguous along i and
// out along j when transposed, both along i when plain; 1 MiB per tensor (L2).
constexpr std::int64_t kEdge = 64, kBlocks = 64;

Contraction unary_blocks(prim_t main, bool transposed) {
  const exec_t s = exec_t::seq, p = exec_t::prim;
  Contraction op;
  op.main = main;
  op.dims = {Dim{dim_t::c, s, kBlocks, kEdge * kEdge, 0, kEdge * kEdge},
             Dim{dim_t::c, p, kEdge, 1, 0, transposed ? kEdge : 1},
             Dim{dim_t::c, p, kEdge, kEdge, 0, transposed ? 1 : kEdge}};
  return op;
}

template <class Op>
void transposed_loop(const float* in, float* out, Op f) {
  for (std::int64_t l = 0; l < kBlocks; ++l, in += kEdge * kEdge, out += kEdge * kEdge)
    for (std::int64_t i = 0; i < kEdge; ++i)
      for (std::int64_t j = 0; j < kEdge; ++j) out[i * kEdge + j] = f(in[i + j * kEdge]);
}

// Args: main (prim_t value), layout (0 plain, 1 transposed, 2 transposed by a compiled C++ loop:
// the peer, what a loop over the strides does).
void BM_UnaryTransposed(benchmark::State& state) {
  const auto main = static_cast<prim_t>(state.range(0));
  const int layout = static_cast<int>(state.range(1));
  omp_set_num_threads(1);
  const std::size_t n = static_cast<std::size_t>(kBlocks * kEdge * kEdge);
  const auto in = filled(n, 1);
  auto out = filled(n, 2);
  TensorOperation op;
  if (layout < 2 && op.setup(unary_blocks(main, layout == 1), {}) != weft::tensor::error_t::success) {
    state.SkipWithError(op.error_message().c_str());
    return;
  }
  if (layout < 2) {
    const std::string described = op.describe();
    const std::size_t at = described.rfind("main: ");
    state.SetLabel(described.substr(at, described.find('\n', at) - at));
  } else {
    state.SetLabel("C++ loop");
  }
  for (auto _ : state) {
    if (layout < 2) {
      op.execute(in.data(), nullptr, out.data());
    } else if (main == prim_t::relu) {
      transposed_loop(in.data(), out.data(), [](float x) { return x > 0.0f ? x : 0.0f; });
    } else if (main == prim_t::exp) {
      transposed_loop(in.data(), out.data(), [](float x) { return std::exp(x); });
    } else {
      transposed_loop(in.data(), out.data(), [](float x) { return x; });
    }
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}
BENCHMARK(BM_UnaryTransposed)
    ->ArgNames({"main", "layout"})
    ->ArgsProduct({{static_cast<long>(prim_t::copy), static_cast<long>(prim_t::relu),
                    static_cast<long>(prim_t::exp)},
                   {0, 1, 2}});

}  // namespace

BENCHMARK_MAIN();
