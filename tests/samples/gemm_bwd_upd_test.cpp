// The backward GEMM passes against the plain reference, through the pass driver the samples use.
#include <cctype>
#include <omp.h>

#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gemm_bwd.hpp"
#include "gemm_pass.hpp"
#include "gemm_upd.hpp"

namespace {

using namespace weft::samples;

enum class Pass { bwd, upd };

struct Shape {
  Pass pass;
  std::string loop_string;
  std::int64_t M, N, K, bm, bn, bk, chunks;
  bool private_trans;
  std::int64_t partial_filters;  // upd only
  int threads;
};

// How ctest and failure messages show a case (the default dumps the struct's bytes).
void PrintTo(const Shape& s, std::ostream* os) {
  *os << (s.pass == Pass::bwd ? "bwd " : "upd ") << s.loop_string << " M " << s.M << " N " << s.N << " K " << s.K
      << " tiles " << s.bm << "x" << s.bn << "x" << s.bk << " chunks " << s.chunks << " threads " << s.threads;
}

template <class Config>
Config config_of(const Shape& s) {
  Config c;
  c.loop_string = s.loop_string;
  c.M = s.M, c.N = s.N, c.K = s.K, c.bm = s.bm, c.bn = s.bn, c.bk = s.bk;
  c.private_trans = s.private_trans;
  return c;
}

// The pass run twice (the second run must not see the first one's state) on an output that starts
// as garbage, compared with the plain reference.
template <class Pass>
Verdict pass_error(const Pass& pass, int threads) {
  omp_set_num_threads(threads);
  GemmPassData data(pass.layout(), 21, 22, 555.0f);
  pass.run(data.left(), data.right(), data.out());
  pass.run(data.left(), data.right(), data.out());
  return data.check();
}

// dX = W^T dY through the sample.
Verdict bwd_error(const Shape& s) {
  GemmBwdConfig c = config_of<GemmBwdConfig>(s);
  c.mbf = s.chunks;
  return pass_error(GemmBwd(c), s.threads);
}

// dW = dY X^T through the sample.
Verdict upd_error(const Shape& s) {
  GemmUpdConfig c = config_of<GemmUpdConfig>(s);
  c.nbf = s.chunks;
  c.n_partial_filters = s.partial_filters;
  return pass_error(GemmUpd(c), s.threads);
}

class GemmBackwardCases : public ::testing::TestWithParam<Shape> {};
TEST_P(GemmBackwardCases, MatchesReference) {
  const Shape& s = GetParam();
  const Verdict v = s.pass == Pass::bwd ? bwd_error(s) : upd_error(s);
  EXPECT_EQ(v.tolerance, sum_tolerance(s.pass == Pass::bwd ? s.M : s.N));  // the reduction's length
  EXPECT_TRUE(v.norms.passed(v.tolerance)) << v.norms.to_string();
}
INSTANTIATE_TEST_SUITE_P(
    Shapes, GemmBackwardCases,
    ::testing::Values(Shape{Pass::bwd, "aBC", 64, 64, 64, 32, 32, 32, 1, false, 0, 2},
                      Shape{Pass::bwd, "ACb", 70, 45, 50, 16, 16, 16, 2, false, 0, 2},   // remainders, 2 chunks
                      Shape{Pass::bwd, "ACb", 70, 45, 50, 16, 16, 16, 3, true, 0, 3},    // private transposes
                      Shape{Pass::bwd, "A{R:2}C{C:1}b", 33, 40, 65, 8, 16, 16, 2, true, 0, 2},  // grid
                      Shape{Pass::bwd, "bcaBCb", 48, 48, 48, 8, 8, 8, 1, false, 0, 1},
                      Shape{Pass::upd, "ABc", 64, 64, 64, 32, 32, 32, 2, false, 0, 2},
                      Shape{Pass::upd, "ABc", 70, 45, 50, 16, 16, 16, 3, true, 0, 2},
                      // Partial filters: work-shared c (copy = thread id) ...
                      Shape{Pass::upd, "abC", 70, 95, 50, 16, 16, 16, 3, false, 2, 2},
                      Shape{Pass::upd, "aBC", 40, 64, 40, 8, 8, 8, 4, true, 4, 4},
                      // ... and c split over grid columns (copy = column coordinate).
                      Shape{Pass::upd, "aB{R:2}C{C:2}", 40, 70, 33, 8, 8, 8, 9, false, 2, 4},
                      // P > 0 but c sequential: no copies, plain beta = 0 first touch.
                      Shape{Pass::upd, "ABc", 33, 33, 33, 8, 8, 8, 2, false, 3, 2}),
    // "<index>_<pass>_<loop string's letters>": stable names (the default printed the struct's bytes,
    // a pointer among them, so ctest's names changed from build to build).
    [](const ::testing::TestParamInfo<Shape>& param_info) {
      std::string letters;
      for (char ch : param_info.param.loop_string)
        if (std::isalnum(static_cast<unsigned char>(ch))) letters += ch;
      return std::to_string(param_info.index) + (param_info.param.pass == Pass::bwd ? "_bwd_" : "_upd_") + letters;
    });

TEST(GemmBackward, ParallelReductionWithSeveralChunksIsAnError) {
  GemmBwdConfig b;
  b.loop_string = "aBC";
  b.M = b.N = b.K = 64;
  b.mbf = 2;
  EXPECT_THROW(GemmBwd{b}, weft::Error);
  b.mbf = 1;  // one chunk: the reduction loop has one iteration, nothing to race on
  EXPECT_NO_THROW(GemmBwd{b});

  GemmUpdConfig u;
  u.loop_string = "abC";
  u.M = u.N = u.K = 64;
  u.nbf = 2;
  EXPECT_THROW(GemmUpd{u}, weft::Error);
  u.n_partial_filters = 2;  // partial filters make a parallel reduction legal
  EXPECT_NO_THROW(GemmUpd{u});
}

TEST(GemmUpd, TooFewPartialFiltersIsAnError) {
  omp_set_num_threads(2);
  GemmUpdConfig c;
  c.loop_string = "abC";
  c.M = c.N = c.K = 64;
  c.bm = c.bn = c.bk = 16;
  c.nbf = 4;
  c.n_partial_filters = 1;
  const GemmUpd upd(c);
  std::vector<float> dy(64 * 64, 1.0f), x(64 * 64, 1.0f), dw(64 * 64);
  EXPECT_THROW(upd.run(dy.data(), x.data(), dw.data()), weft::Error);
}

}  // namespace
