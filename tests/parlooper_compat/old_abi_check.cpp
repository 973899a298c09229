// PARLOOPER's Makefiles build with -std=c++14 -D_GLIBCXX_USE_CXX11_ABI=0: std::string then has
// another layout than in weft's library, so nothing the compatibility header passes to the
// library may be a std::string. This program is built that way (without GoogleTest, which is built
// with the default ABI) and exits with 0 when a PARLOOPER-style loop, its helpers, an error and
// loop_generator all work.
#include <weft/parlooper/threaded_loops.h>

#include <omp.h>

#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <string>

#if !defined(_GLIBCXX_USE_CXX11_ABI) || _GLIBCXX_USE_CXX11_ABI != 0
#error "build this check with -D_GLIBCXX_USE_CXX11_ABI=0, as PARLOOPER does"
#endif

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "old_abi_check: FAILED: %s\n", what);
    ++failures;
  }
}

}  // namespace

int main() {
  omp_set_num_threads(2);
  char loop_specs_str[256] = "bcaBCb";
  long Kb = 4, Mb = 6, Nb = 4;
  auto gemm_loop = ThreadedLoop<3>({LoopSpecs{0, Kb, 1, {2, 1}},
                                    LoopSpecs{0, Mb, 1, {3, 1}},
                                    LoopSpecs{0, Nb, 1, {2, 1}}},
                                   loop_specs_str);
  std::atomic<int> calls(0), bad(0), inits(0);
  gemm_loop(
      [&](int* ind) {
        calls++;
        if (gemm_loop.get_loop_par_type('b', ind) != THREADED_LOOP_PARALLEL_COLLAPSE) bad++;
        if (gemm_loop.get_tid(ind) != omp_get_thread_num()) bad++;
      },
      [&]() { inits++; }, NULL);
  expect(calls.load() == 4 * 6 * 4, "every iteration once");
  expect(bad.load() == 0, "helpers");
  expect(inits.load() == 2, "init once per thread");

  const std::string code = loop_generator("bcaBCb");
  expect(code.find("collapse(2)") != std::string::npos, "loop_generator");

  auto never_called = ThreadedLoop<1>({LoopSpecs{0, 8, 0}}, "A");  // checked on the first call only
  try {
    never_called([](int*) {});
    expect(false, "a step of 0 is an error");
  } catch (const std::runtime_error& e) {
    expect(std::string(e.what()).find("step 0") != std::string::npos, "the error names the step");
  }
  auto defaulted = ThreadedLoop<2>({LoopSpecs{0, 3, 1, true}, LoopSpecs{0, 2, 1, false}});
  expect(defaulted.getDefaultScheme() == "Ab", "default scheme");
  calls = 0;
  defaulted([&](int*) { calls++; });
  expect(calls.load() == 6, "default scheme runs");
  if (failures == 0) std::puts("old_abi_check: all passed");
  return failures == 0 ? 0 : 1;
}
