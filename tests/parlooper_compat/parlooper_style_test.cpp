// PARLOOPER-style user code, built the way PARLOOPER builds it (-std=c++14; once more as C++17)
// against weft's compatibility header: blocked GEMM loops with PARLOOPER's helpers, init/term
// hooks, thread grids, the default scheme, loop_generator, loops built but never called, OpenMP
// runtime schedules, inline loop specs, calls from inside a parallel region, and errors.
#include "common_utils.h"

#include <weft/parlooper/threaded_loops.h>  // again, after common_utils.h, as PARLOOPER's samples do

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr int kThreads = 2;

// C[Nb][Mb][bn][bm] = A[Mb][Kb][bk][bm] x B[Nb][Kb][bn][bk], PARLOOPER's blocked layouts.
struct BlockedGemm {
  long M, N, K, bm, bn, bk;
  long Mb() const { return M / bm; }
  long Nb() const { return N / bn; }
  long Kb() const { return K / bk; }
  std::vector<float> a, b, c;

  BlockedGemm(long m, long n, long k, long block)
      : M(m), N(n), K(k), bm(block), bn(block), bk(block),
        a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n)),
        c(static_cast<std::size_t>(m * n), 99.0f) {
    init_buf(a.data(), m * k, 1);
    init_buf(b.data(), k * n, 2);
  }

  float& a_at(long im, long ik, long k, long m) { return a[static_cast<std::size_t>(((im * Kb() + ik) * bk + k) * bm + m)]; }
  float& b_at(long in, long ik, long n, long k) { return b[static_cast<std::size_t>(((in * Kb() + ik) * bn + n) * bk + k)]; }
  float& c_at(long in, long im, long n, long m) { return c[static_cast<std::size_t>(((in * Mb() + im) * bn + n) * bm + m)]; }

  // The body of the sample: the first K block overwrites its C block, later ones accumulate.
  void block(long ik, long im, long in) {
    for (long n = 0; n < bn; ++n) {
      for (long m = 0; m < bm; ++m) {
        float acc = ik == 0 ? 0.0f : c_at(in, im, n, m);
        for (long k = 0; k < bk; ++k) acc += a_at(im, ik, k, m) * b_at(in, ik, n, k);
        c_at(in, im, n, m) = acc;
      }
    }
  }

  double max_error() {
    double worst = 0;
    for (long in = 0; in < Nb(); ++in)
      for (long im = 0; im < Mb(); ++im)
        for (long n = 0; n < bn; ++n)
          for (long m = 0; m < bm; ++m) {
            double ref = 0;
            for (long ik = 0; ik < Kb(); ++ik)
              for (long k = 0; k < bk; ++k) ref += double(a_at(im, ik, k, m)) * double(b_at(in, ik, n, k));
            worst = std::max(worst, std::abs(ref - double(c_at(in, im, n, m))));
          }
    return worst;
  }
};

// The block sizes PARLOOPER's samples derive from the first two prime factors of the trip count.
void sample_blocks(long trips, long step, long& l1, long& l0) {
  std::vector<long> factors;
  find_prime_factors(trips, factors);
  const long f0 = factors[0];
  const long f1 = factors.size() > 1 ? factors[1] : 1;
  l0 = f0 * step;
  l1 = f1 * l0;
}

class ParlooperStyle : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { omp_set_num_threads(kThreads); }
};

TEST_P(ParlooperStyle, BlockedGemmWithHelpersAndHooks) {
  BlockedGemm gemm(24, 24, 24, 4);  // 6 x 6 x 6 blocks
  const long Kb = gemm.Kb(), Mb = gemm.Mb(), Nb = gemm.Nb();
  const long k_step = 1, m_step = 1, n_step = 1;
  long l1_k_step, l0_k_step, l1_m_step, l0_m_step, l1_n_step, l0_n_step;
  sample_blocks(Kb / k_step, k_step, l1_k_step, l0_k_step);
  sample_blocks(Mb / m_step, m_step, l1_m_step, l0_m_step);
  sample_blocks(Nb / n_step, n_step, l1_n_step, l0_n_step);
  char loop_specs_str[256];
  snprintf(loop_specs_str, sizeof loop_specs_str, "%s", GetParam().c_str());

  ifreq = 1.0 / getFreq();
  const double t0 = getTime();
  auto gemm_loop = ThreadedLoop<3>({
      LoopSpecs{0, Kb, k_step, {l1_k_step, l0_k_step}},   // Logical K loop specs
      LoopSpecs{0, Mb, m_step, {l1_m_step, l0_m_step}},   // Logical M loop specs
      LoopSpecs{0, Nb, n_step, {l1_n_step, l0_n_step}}},  // Logical N loop specs
      loop_specs_str);
  std::atomic<int> inits(0), terms(0), calls(0), bad_helpers(0);
  for (int it = 0; it < 2; ++it) {
    gemm_loop(
        [&](int* ind) {
          int i_k = ind[0], i_m = ind[1], i_n = ind[2];
          gemm.block(i_k, i_m, i_n);
          calls++;
          const int tid = gemm_loop.get_tid(ind);
          if (tid != omp_get_thread_num()) bad_helpers++;
          if (gemm_loop.get_loop_par_type('a', ind) != THREADED_LOOP_NO_PARALLEL) bad_helpers++;
          if (gemm_loop.get_tid_in_parallel_dim('a', ind) != -1) bad_helpers++;
          if (gemm_loop.get_loop_parallel_degree('A', ind) != 1) bad_helpers++;
          const threaded_loop_par_type b_type = gemm_loop.get_loop_par_type('b', ind);
          if (b_type == THREADED_LOOP_PARALLEL_COLLAPSE) {
            if (gemm_loop.get_tid_in_parallel_dim('b', ind) != tid) bad_helpers++;
            if (gemm_loop.get_loop_parallel_degree('b', ind) != kThreads) bad_helpers++;
          } else if (b_type == THREADED_LOOP_PARALLEL_THREAD_ROWS) {
            if (gemm_loop.get_tid_in_parallel_dim('b', ind) != tid) bad_helpers++;  // C = 1: row = tid
            if (gemm_loop.get_loop_parallel_degree('b', ind) != kThreads) bad_helpers++;
          } else {
            bad_helpers++;
          }
        },
        [&]() { inits++; },
        [&]() { terms++; });
  }
  EXPECT_GE(getTime(), t0);
  EXPECT_EQ(calls.load(), 2 * Kb * Mb * Nb);
  EXPECT_EQ(inits.load(), 2 * kThreads);
  EXPECT_EQ(terms.load(), 2 * kThreads);
  EXPECT_EQ(bad_helpers.load(), 0);
  EXPECT_LT(gemm.max_error(), 1e-4);
}

// PARLOOPER's README strings, a string whose reduction loop is outermost, and a thread grid.
INSTANTIATE_TEST_SUITE_P(Strings, ParlooperStyle,
                         ::testing::Values("aBC", "bcaBCb", "aBCcb", "abcB{R:2}", "aB{R:2}C{C:1}",
                                           "aBC@schedule(static,1)"));

TEST(ParlooperCompat, ThreadGridHelpers) {
  omp_set_num_threads(kThreads);
  auto loop = ThreadedLoop<3>({LoopSpecs{0, 4, 1}, LoopSpecs{0, 6, 1}, LoopSpecs{0, 2, 1}}, "B{C:2}A{R:1}c");
  std::atomic<int> calls(0), bad(0);
  std::vector<std::set<int>> cols(kThreads);
  loop([&](int* ind) {
    calls++;
    const int tid = loop.get_tid(ind);
    if (loop.get_loop_par_type('a', ind) != THREADED_LOOP_PARALLEL_THREAD_ROWS) bad++;
    if (loop.get_loop_par_type('b', ind) != THREADED_LOOP_PARALLEL_THREAD_COLS) bad++;
    if (loop.get_loop_par_type('c', ind) != THREADED_LOOP_NO_PARALLEL) bad++;
    if (loop.get_tid_in_parallel_dim('b', ind) != tid) bad++;  // col = tid mod C
    if (loop.get_tid_in_parallel_dim('a', ind) != 0) bad++;
    if (loop.get_loop_parallel_degree('b', ind) != 2) bad++;
    if (loop.get_loop_parallel_degree('a', ind) != 1) bad++;
    if (ind[1] >= 3 * (tid + 1) || ind[1] < 3 * tid) bad++;  // b split in two contiguous halves
  });
  EXPECT_EQ(calls.load(), 4 * 6 * 2);
  EXPECT_EQ(bad.load(), 0);
}

TEST(ParlooperCompat, WithoutAStringTheLoopsRunAsTheirIsParallelFlagsSay) {
  omp_set_num_threads(kThreads);
  auto loop = ThreadedLoop<3>({LoopSpecs{0, 4, 1, true}, LoopSpecs{0, 3, true}, LoopSpecs{5, false}});
  EXPECT_EQ(loop.getDefaultScheme(), "ABc");
  std::map<std::pair<int, int>, int> visits;
  std::atomic<int> calls(0), bad(0);
  loop([&](int* ind) {
    calls++;
    if (loop.get_loop_par_type('a', ind) != THREADED_LOOP_PARALLEL_COLLAPSE) bad++;
    if (loop.get_loop_par_type('b', ind) != THREADED_LOOP_PARALLEL_COLLAPSE) bad++;
    if (loop.get_loop_par_type('c', ind) != THREADED_LOOP_NO_PARALLEL) bad++;
#pragma omp critical
    visits[std::make_pair(ind[0], ind[1])]++;
  });
  EXPECT_EQ(calls.load(), 4 * 3 * 5);
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(visits.size(), 12u);
  // LoopSpecs' plain forms are parallel: "AB".
  auto plain = ThreadedLoop<2>({LoopSpecs{4}, LoopSpecs{0, 6, 2}});
  EXPECT_EQ(plain.getDefaultScheme(), "AB");
}

TEST(ParlooperCompat, ADefaultSchemeWeftRejectsSaysWhereItCameFrom) {
  auto loop = ThreadedLoop<3>({LoopSpecs{0, 4, 1, true}, LoopSpecs{0, 3, 1, false}, LoopSpecs{0, 2, 1, true}});
  EXPECT_EQ(loop.getDefaultScheme(), "AbC");
  try {
    loop([](int*) {});
    FAIL() << "AbC ran";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("isParallel"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("second parallel run"), std::string::npos) << e.what();
  }
}

TEST(ParlooperCompat, LoopGeneratorRendersTheNest) {
  const std::string code = loop_generator("bcaBCb");
  EXPECT_NE(code.find("#pragma omp for collapse(2)"), std::string::npos) << code;
  EXPECT_NE(code.find("body(a0, b2, c1)"), std::string::npos) << code;
  const std::string grid = loop_generator("bC{R:5}B{C:4}cbA{L:3}");
  EXPECT_NE(grid.find("5 x 4 x 3"), std::string::npos) << grid;
  const std::string clauses = loop_generator("aB{R:2}[0,8,2]|c");
  EXPECT_NE(clauses.find("team_barrier"), std::string::npos) << clauses;
  EXPECT_THROW(loop_generator("ab-c"), std::runtime_error);
  EXPECT_THROW(loop_generator(NULL), std::runtime_error);
}

// conv_model_upd.cpp builds a loop with step 0 that it never calls: PARLOOPER checked nothing
// until a loop ran, so neither may weft.
TEST(ParlooperCompat, ALoopThatIsNeverCalledIsNeverChecked) {
  long n = 8;
  EXPECT_NO_THROW({
    auto unused = ThreadedLoop<2>({LoopSpecs{0, n, 0}, LoopSpecs{0, n, 1}}, "Ab");
    auto unused_string = ThreadedLoop<1>({LoopSpecs{0, n, 1}}, "a-");
    (void)unused;
    (void)unused_string;
  });
  auto loop = ThreadedLoop<2>({LoopSpecs{0, n, 0}, LoopSpecs{0, n, 1}}, "Ab");
  for (int attempt = 0; attempt < 2; ++attempt) {  // the same error every time
    int calls = 0;
    try {
      loop([&](int*) { ++calls; });
      FAIL() << "a step of 0 ran";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("step 0 must be positive"), std::string::npos) << e.what();
    }
    EXPECT_EQ(calls, 0);
  }
}

TEST(ParlooperCompat, MoreBlockSizesThanPARLOOPERHoldsIsAnErrorWhenTheLoopRuns) {
  auto loop = ThreadedLoop<1>({LoopSpecs{0, 64, 1, {32, 16, 8, 4, 2, 1}}}, "aaa");
  EXPECT_EQ(loop_rt_spec_t(0, 64, 1, {32, 16, 8, 4, 2, 1}).nBlockingLevels, 6);
  try {
    loop([](int*) {});
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("MAX_BLOCKING_LEVELS = 5"), std::string::npos) << e.what();
  }
}

// Block sizes set by assignment, as PARLOOPER's generated code read them whatever nBlockingLevels said.
TEST(ParlooperCompat, BlockSizesSetAfterConstruction) {
  loop_rt_spec_t spec(0, 12, 1);
  spec.block_size[0] = 4;
  omp_set_num_threads(kThreads);
  auto loop = ThreadedLoop<1>({spec}, "Aa");
  std::atomic<int> calls(0), bad(0);
  loop([&](int* ind) {
    calls++;
    // Blocks {0, 4, 8} split statically over two threads: the first two go to thread 0.
    if ((ind[0] < 8 ? 0 : 1) != loop.get_tid(ind)) bad++;
  });
  EXPECT_EQ(calls.load(), 12);
  EXPECT_EQ(bad.load(), 0);
}

TEST(ParlooperCompat, RuntimeScheduleIsReadAtEveryCall) {
  omp_set_num_threads(kThreads);
  auto loop = ThreadedLoop<2>({LoopSpecs{0, 2, 1}, LoopSpecs{0, 8, 1}}, "aB@schedule(runtime)");
  std::vector<int> owner(8, -1);
  std::atomic<int> calls(0);
  auto body = [&](int* ind) {
    calls++;
    owner[static_cast<std::size_t>(ind[1])] = loop.get_tid(ind);
  };
  omp_set_schedule(omp_sched_static, 1);  // round robin: iteration i on thread i mod 2
  loop(body);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(owner[static_cast<std::size_t>(i)], i % kThreads) << i;
  omp_set_schedule(omp_sched_static, 0);  // contiguous halves
  loop(body);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(owner[static_cast<std::size_t>(i)], i / 4) << i;
  omp_set_schedule(omp_sched_dynamic, 2);
  loop(body);
  EXPECT_EQ(calls.load(), 3 * 16);
  omp_set_schedule(omp_sched_static, 0);
}

TEST(ParlooperCompat, ScheduleModifiersAndAuto) {
  omp_set_num_threads(kThreads);
  for (const char* text : {"aB@schedule(nonmonotonic:dynamic,2)", "aB@schedule(monotonic:static)",
                           "aB@schedule(simd,monotonic:guided)", "aB@schedule(auto)"}) {
    auto loop = ThreadedLoop<2>({LoopSpecs{0, 3, 1}, LoopSpecs{0, 10, 1}}, text);
    std::map<std::pair<int, int>, int> visits;
    loop([&](int* ind) {
#pragma omp critical
      visits[std::make_pair(ind[0], ind[1])]++;
    });
    EXPECT_EQ(visits.size(), 30u) << text;
    for (const auto& v : visits) EXPECT_EQ(v.second, 1) << text;
  }
}

// PARLOOPER's "a[start,end,step,(blocks)]": bounds written in the string replace the LoopSpecs'.
TEST(ParlooperCompat, InlineSpecsOverrideTheLoopSpecs) {
  omp_set_num_threads(kThreads);
  auto loop = ThreadedLoop<2>({LoopSpecs{0, 100, 1}, LoopSpecs{0, 4, 1}}, "a[2,18,2,(8)]Ba");
  std::map<std::pair<int, int>, int> visits;
  loop([&](int* ind) {
#pragma omp critical
    visits[std::make_pair(ind[0], ind[1])]++;
  });
  std::map<std::pair<int, int>, int> expected;
  for (int a = 2; a < 18; a += 2)
    for (int b = 0; b < 4; ++b) expected[std::make_pair(a, b)] = 1;
  EXPECT_EQ(visits, expected);

  // Empty fields keep the LoopSpecs' values: only the end changes here.
  auto partial = ThreadedLoop<1>({LoopSpecs{3, 100, 3}}, "A[,12,]");
  std::vector<int> values;
  partial([&](int* ind) {
#pragma omp critical
    values.push_back(ind[0]);
  });
  std::sort(values.begin(), values.end());
  EXPECT_EQ(values, (std::vector<int>{3, 6, 9}));
}

// Called from inside a parallel region, PARLOOPER opened a nested region per calling thread:
// each calling thread runs the whole nest.
TEST(ParlooperCompat, EachThreadOfAnEnclosingRegionRunsTheWholeNest) {
  omp_set_num_threads(kThreads);
  auto loop = ThreadedLoop<2>({LoopSpecs{0, 5, 1}, LoopSpecs{0, 7, 1}}, "aB");
  std::vector<std::map<std::pair<int, int>, int>> visits(kThreads);
  std::vector<int> inits(kThreads, 0);
#pragma omp parallel num_threads(kThreads)
  {
    const int caller = omp_get_thread_num();
    std::map<std::pair<int, int>, int> mine;
    std::atomic<int> my_inits(0);
    loop(
        [&](int* ind) {
#pragma omp critical
          mine[std::make_pair(ind[0], ind[1])]++;
        },
        [&]() { my_inits++; }, NULL);
    visits[static_cast<std::size_t>(caller)] = mine;
    inits[static_cast<std::size_t>(caller)] = my_inits.load();
  }
  for (int caller = 0; caller < kThreads; ++caller) {
    const auto& mine = visits[static_cast<std::size_t>(caller)];
    EXPECT_EQ(mine.size(), 35u) << "caller " << caller;
    for (const auto& v : mine) EXPECT_EQ(v.second, 1) << "caller " << caller;
    EXPECT_GE(inits[static_cast<std::size_t>(caller)], 1) << "caller " << caller;
  }
}

// A string without an upper-case letter opens no region: one run, on the calling thread.
TEST(ParlooperCompat, ASequentialStringRunsOnceOnTheCallingThread) {
  omp_set_num_threads(kThreads);
  auto loop = ThreadedLoop<2>({LoopSpecs{0, 3, 1}, LoopSpecs{0, 4, 1}}, "ba");
  std::vector<std::pair<int, int>> order;
  int inits = 0, terms = 0, foreign = 0;
  // Guarded only so that a runtime breaking this contract fails the test instead of racing.
  loop(
      [&](int* ind) {
#pragma omp critical
        {
          if (omp_in_parallel()) foreign++;
          order.push_back(std::make_pair(ind[1], ind[0]));
        }
      },
      [&]() {
#pragma omp atomic
        inits++;
      },
      [&]() {
#pragma omp atomic
        terms++;
      });
  EXPECT_EQ(inits, 1);
  EXPECT_EQ(terms, 1);
  EXPECT_EQ(foreign, 0);
  ASSERT_EQ(order.size(), 12u);
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
}

TEST(ParlooperCompat, ExceptionsFromTheBodyAndHooksReachTheCaller) {
  omp_set_num_threads(kThreads);
  auto loop = ThreadedLoop<2>({LoopSpecs{0, 4, 1}, LoopSpecs{0, 4, 1}}, "aB");
  try {
    loop([](int* ind) {
      if (ind[0] == 2 && ind[1] == 3) throw std::invalid_argument("body failed at (2, 3)");
    });
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "body failed at (2, 3)");
  }
  init_func failing_init = []() { throw std::runtime_error("init failed"); };
  EXPECT_THROW(loop([](int*) {}, failing_init, NULL), std::runtime_error);
}

void count_call(int*);
std::atomic<int> g_free_calls(0);
void count_call(int*) { g_free_calls++; }
void free_init() { g_free_calls += 100; }

TEST(ParlooperCompat, StdFunctionsFunctionNamesAndNullHooks) {
  omp_set_num_threads(kThreads);
  auto loop = ThreadedLoop<2>({loop_rt_spec_t{0, 4, 1}, loop_rt_spec_t{0, 2, 1}}, "A{R:2}b");
  std::atomic<int> calls(0);
  loop_func body = [&](int* ind) {
    calls++;
    if (loop.get_loop_par_type('a', ind) != THREADED_LOOP_PARALLEL_THREAD_ROWS) calls += 1000;
  };
  init_func no_init;  // empty: skipped
  fini_func no_fini;
  loop(body, no_init, no_fini);
  loop(body, NULL, NULL);
  loop(body, nullptr, nullptr);
  EXPECT_EQ(calls.load(), 24);
  g_free_calls = 0;
  loop(count_call, free_init, NULL);
  EXPECT_EQ(g_free_calls.load(), 8 + 100 * kThreads);
  loop_func empty_body;
  EXPECT_THROW(loop(empty_body), std::runtime_error);
  EXPECT_EQ(MAX_LOOPS, MAX_LOGICAL_LOOPS * MAX_BLOCKING_LEVELS);
  EXPECT_EQ(THREADED_LOOP_PARALLEL_THREAD_LAYERS, 4);
}

TEST(ParlooperCompat, LoopsAreCopiedAndShareTheirNest) {
  omp_set_num_threads(kThreads);
  auto make = [](long n) { return ThreadedLoop<1>({LoopSpecs{0, n, 1}}, "A"); };
  ThreadedLoop<1> loop = make(6);
  ThreadedLoop<1> copy = loop;
  std::atomic<int> calls(0);
  loop([&](int*) { calls++; });
  copy([&](int*) { calls++; });
  ThreadedLoop<1> moved = std::move(loop);
  moved([&](int*) { calls++; });
  loop([&](int*) { calls++; });  // a moved-from loop still runs: moves copy
  EXPECT_EQ(calls.load(), 24);
}

}  // namespace
