// SVE code from our A64 assembler runs (under qemu-aarch64, whose "max" CPU has SVE): a
// vector-length-agnostic loop y[i] += a * x[i] over n floats (whilelt / ld1w / fmla / st1w, the
// last iteration a partial vector) gives exactly the scalar fused multiply-add, for every n around
// the vector's lane count, at vector lengths 128, 256 and 512 bits (set with prctl(PR_SVE_SET_VL)
// for this thread; a vector length the CPU lacks skips). The operands sit flush against guard pages: an inactive lane that touched
// memory would fault. Without SVE (getauxval(AT_HWCAP) lacks HWCAP_SVE) the tests skip, saying so.
#include <gtest/gtest.h>
#include <sys/auxv.h>
#include <sys/prctl.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "guarded_buffer.hpp"
#include "weft/jit/aarch64/code_buffer.hpp"

#ifndef HWCAP_SVE
#define HWCAP_SVE (1 << 22)
#endif
#ifndef PR_SVE_SET_VL
#define PR_SVE_SET_VL 50
#define PR_SVE_GET_VL 51
#endif
#ifndef PR_SVE_VL_LEN_MASK
#define PR_SVE_VL_LEN_MASK 0xffff
#endif

namespace {

using namespace weft::jit::a64;
namespace a64 = weft::jit::a64;
using weft::test::Flush;
using weft::test::GuardedBuffer;

bool has_sve() { return (getauxval(AT_HWCAP) & HWCAP_SVE) != 0; }

// Sets this thread's vector length; false if the system cannot give exactly `bytes`.
bool set_vector_length(int bytes) {
  const int result = prctl(PR_SVE_SET_VL, bytes, 0, 0, 0);
  return result >= 0 && (result & PR_SVE_VL_LEN_MASK) == bytes;
}

// void axpy(const float* x, float* y, std::int64_t n, float a): y[i] = fma(a, x[i], y[i]).
struct Axpy : CodeBuffer {
  Axpy() {
    Label loop, done;
    fmov(w4, s0);
    dup(z2.s(), w4);                    // a in every lane
    mov(x3, xzr);                       // i
    whilelt(p0.s(), x3, x2);            // lanes i.. below n
    b(Cond::none, done);
    bind(loop);
    ld1w(z0.s(), p0.z(), ptr(x0, x3, a64::lsl(2)));
    ld1w(z1.s(), p0.z(), ptr(x1, x3, a64::lsl(2)));
    fmla(z1.s(), p0.m(), z0.s(), z2.s());
    st1w(z1.s(), p0, ptr(x1, x3, a64::lsl(2)));
    incw(x3);
    whilelt(p0.s(), x3, x2);
    b(Cond::first, loop);               // while the first lane is active
    bind(done);
    ret();
  }
  using Fn = void (*)(const float*, float*, std::int64_t, float);
};

// std::int64_t lanes(): the fp32 lanes of a vector (cntw), to check the vector length took effect.
struct Lanes : CodeBuffer {
  Lanes() {
    cntw(x0);
    ret();
  }
  using Fn = std::int64_t (*)();
};

void check_axpy(int vector_bytes, Flush flush) {
  Lanes lanes_code;
  const auto lanes = lanes_code.finalize<Lanes::Fn>("sve_lanes")();
  ASSERT_EQ(lanes, vector_bytes / 4);
  Axpy code;
  const auto axpy = code.finalize<Axpy::Fn>("sve_axpy");
  std::mt19937 random(1234 + static_cast<unsigned>(vector_bytes));
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  std::vector<std::int64_t> counts = {0, 1, 2, 3 * lanes + 5, 1000};
  for (std::int64_t k = lanes - 1; k <= lanes + 1; ++k) counts.push_back(k);
  counts.push_back(2 * lanes);
  for (const std::int64_t n : counts) {
    SCOPED_TRACE("n = " + std::to_string(n) + ", VL = " + std::to_string(vector_bytes * 8) + " bits");
    GuardedBuffer<float> x(static_cast<std::size_t>(n), flush), y(static_cast<std::size_t>(n), flush);
    std::vector<float> expected(static_cast<std::size_t>(n));
    const float a = value(random);
    for (std::int64_t i = 0; i < n; ++i) {
      x[i] = value(random);
      y[i] = value(random);
      expected[i] = std::fma(a, x[i], y[i]);
    }
    // A few special values: fmla keeps their IEEE behaviour.
    if (n >= 3) {
      x[0] = -0.0f, y[0] = -0.0f, expected[0] = std::fma(a, x[0], y[0]);
      x[1] = INFINITY, expected[1] = std::fma(a, x[1], y[1]);
      x[2] = 1e-40f, expected[2] = std::fma(a, x[2], y[2]);  // a denormal
    }
    axpy(x.data(), y.data(), n, a);
    for (std::int64_t i = 0; i < n; ++i) {
      std::uint32_t got = 0, want = 0;
      std::memcpy(&got, &y[i], 4);
      std::memcpy(&want, &expected[i], 4);
      ASSERT_EQ(got, want) << "element " << i << ": " << y[i] << " instead of " << expected[i];
    }
  }
}

class SveLoop : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (!has_sve()) GTEST_SKIP() << "no SVE (HWCAP_SVE): run under qemu-aarch64 -cpu max";
  }
};

TEST_P(SveLoop, AxpyWithTailMatchesScalarFma) {
  // qemu's "max" CPU goes up to 2048 bits; -cpu max,sve256=on stops at 256.
  if (!set_vector_length(GetParam())) GTEST_SKIP() << "the CPU has no " << GetParam() * 8 << "-bit vector length";
  check_axpy(GetParam(), Flush::back);
  check_axpy(GetParam(), Flush::front);
}

INSTANTIATE_TEST_SUITE_P(VectorBits, SveLoop, ::testing::Values(16, 32, 64),
                         [](const ::testing::TestParamInfo<int>& vl) { return std::to_string(vl.param * 8); });

}  // namespace
