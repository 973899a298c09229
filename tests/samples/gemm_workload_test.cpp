// The GEMM workload refuses shapes this machine cannot hold, saying how much memory they need,
// before allocating anything (it used to end in std::bad_alloc).
#include <string>

#include <gtest/gtest.h>

#include <weft/jit/error.hpp>

#if defined(WEFT_HAVE_GEMM_TUNING)  // the GEMM workload is built with the tuner
#include "gemm_workload.hpp"
#endif

namespace weft::tuner {
namespace {

#ifdef WEFT_HAVE_GEMM_TUNING
TEST(GemmWorkload, ShapesBeyondThisMachineSayHowMuchMemoryTheyNeed) {
  try {
    GemmWorkload huge({.M = 1000000, .N = 1000000, .K = 1000000});
    FAIL() << "constructed a workload of 21.8 TiB";
  } catch (const MemoryError& e) {
    EXPECT_EQ(e.reason(), MemoryError::Reason::beyond_machine);
    EXPECT_EQ(e.bytes(), std::uint64_t{24000000000000});  // 2 x (MK + KN + MN) floats
    const std::string what = e.what();
    EXPECT_NE(what.find("GEMM M=1000000 N=1000000 K=1000000"), std::string::npos) << what;
    EXPECT_NE(what.find("needs 21.8 TiB of memory, more than this machine's"), std::string::npos) << what;
  }
}

TEST(GemmWorkload, SmallShapesStillWork) {
  const GemmWorkload small({.M = 40, .N = 24, .K = 16}, {.bm = {32}, .bn = {32}, .bk = {16}, .kbf = {1}, .specs = {}});
  auto runner = small.prepare(small.default_config(1));
  EXPECT_TRUE(runner->check().passed);
}
#endif

}  // namespace
}  // namespace weft::tuner
