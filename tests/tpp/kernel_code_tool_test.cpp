// weft-kernel-code writes exactly the code the TPP caches hold, and refuses bad usage with exit
// status 2 and a message naming the problem.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "run_program.hpp"
#include "weft/jit/architecture.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/tpp/binary.hpp"
#include "weft/tpp/brgemm.hpp"
#include "weft/tpp/unary.hpp"

#ifndef WEFT_KERNEL_CODE_PATH
#define WEFT_KERNEL_CODE_PATH ""
#endif

namespace {

weft::test::ProgramResult run_tool(const std::string& args) {
  return weft::test::run_program("'" WEFT_KERNEL_CODE_PATH "' " + args, "weft_kernel_code");
}

std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class KernelCodeTool : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(WEFT_KERNEL_CODE_PATH).empty()) GTEST_SKIP() << "weft-kernel-code was not built";
    if (weft::jit::target_architecture().isas.empty()) GTEST_SKIP() << "this build generates no code yet";
  }
  const std::string out_ = ::testing::TempDir() + "weft_kernel_code_test.bin";
};

TEST_F(KernelCodeTool, WritesTheCachedKernelsCode) {
  for (const weft::jit::Isa isa : weft::jit::target_architecture().isas) {
    const std::string name(weft::jit::to_string(isa));
    SCOPED_TRACE(name);
    const auto brgemm = run_tool("--isa " + name + " --out '" + out_ + "' brgemm 37 5 16 --beta 0");
    ASSERT_EQ(brgemm.status, 0) << brgemm.err;
    const weft::tpp::BrgemmDesc d{.m = 37, .n = 5, .k = 16, .lda = 37, .ldb = 16, .ldc = 37, .beta = 0};
    EXPECT_EQ(read_file(out_), weft::tpp::brgemm_kernel(d, isa).code());
    EXPECT_NE(brgemm.out.find(weft::tpp::to_string(d)), std::string::npos) << brgemm.out;

    const auto unary = run_tool("--isa " + name + " --types bf16 --out '" + out_ + "' unary gelu 20 3");
    ASSERT_EQ(unary.status, 0) << unary.err;
    weft::tpp::UnaryDesc u{.op = weft::tpp::UnaryOp::gelu, .m = 20, .n = 3, .ld_in = 20, .ld_out = 20};
    u.types = {.in = weft::jit::DataType::bf16, .out = weft::jit::DataType::bf16, .compute = weft::jit::DataType::f32};
    EXPECT_EQ(read_file(out_), weft::tpp::unary_kernel(u, isa).code());

    // --ld: every operand's leading dimension (scripts/mca_kernels.py, docs/tpp_eltwise.md).
    const auto binary = run_tool("--isa " + name + " --ld 24 --out '" + out_ + "' binary add 20 3");
    ASSERT_EQ(binary.status, 0) << binary.err;
    const weft::tpp::BinaryDesc b{.op = weft::tpp::BinaryOp::add, .m = 20, .n = 3, .ld_in0 = 24, .ld_in1 = 24, .ld_out = 24};
    EXPECT_EQ(read_file(out_), weft::tpp::binary_kernel(b, isa).code());
  }
}

TEST_F(KernelCodeTool, BadUsageIsExitStatusTwoNamingTheProblem) {
  const struct {
    const char* args;
    const char* message;
  } cases[] = {
      {"--out x.bin conv 1 2 3", "KIND 'conv' is none of brgemm, unary, binary"},
      {"--out x.bin unary softmax 8 8", "unary op 'softmax' is none of zero, copy, relu"},
      {"--out x.bin binary add 8", "missing N"},
      {"--out x.bin brgemm 0 8 8", "M: 0 is outside [1, 1073741824]"},
      {"--out x.bin --isa sse2 brgemm 8 8 8", "--isa: 'sse2' is no instruction set"},
      {"--out x.bin --types f16 brgemm 8 8 8", "--types: 'f16' is none of f32, f64, bf16, bf16:f32"},
      {"--out x.bin --batch random brgemm 8 8 8", "--batch: 'random' is none of strided, offsets, addresses"},
      {"--out x.bin --ld 10 unary relu 64 64", "--ld 10 is below M 64"},
      {"brgemm 8 8 8", "--out"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    const auto r = run_tool(c.args);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
}

}  // namespace
