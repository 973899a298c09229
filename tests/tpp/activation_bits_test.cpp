// exp, sigmoid, tanh and gelu give the same bits on every ISA (tests/support/activation_bits.hpp):
// the unary kernels of each ISA the host runs against the hashes recorded there, which the Neon
// emitter's suite checks too (tests/tpp/arch/aarch64/neon_activation_test.cpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "activation_bits.hpp"
#include "host_isas.hpp"
#include "weft/tpp/unary.hpp"

namespace {

using weft::tpp::UnaryArgs;
using weft::tpp::UnaryDesc;
using weft::tpp::UnaryOp;

TEST(ActivationBits, EveryIsaGivesTheRecordedBits) {
  const std::vector<float> xs = weft::test::activation_bits_sample();
  const auto m = static_cast<std::int64_t>(xs.size());
  std::vector<float> out(xs.size());
  for (weft::jit::Isa isa : weft::test::runnable_elementwise_isas()) {
    for (UnaryOp op : {UnaryOp::exp, UnaryOp::sigmoid, UnaryOp::tanh, UnaryOp::gelu}) {
      const UnaryArgs args{xs.data(), out.data()};
      weft::tpp::unary_kernel(UnaryDesc{.op = op, .m = m, .n = 1, .ld_in = m, .ld_out = m}, isa)(&args);
      const std::uint64_t hash = weft::test::activation_bits_hash(out);
      std::printf("[ bits ] %-8s %-6s 0x%016llx\n", weft::tpp::to_string(op).c_str(),
                  std::string(weft::jit::to_string(isa)).c_str(), static_cast<unsigned long long>(hash));
      EXPECT_EQ(hash, weft::test::recorded_activation_hash(op))
          << weft::tpp::to_string(op) << " on " << weft::jit::to_string(isa);
    }
  }
}

}  // namespace
