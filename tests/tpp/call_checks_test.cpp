// Call-time arguments of the TPP functors (and their references): null pointers where data is
// required and leading dimensions passed at call time throw weft::Error naming the argument and the
// kernel, instead of faulting or reading outside the matrix. Enum fields outside their enum are
// rejected by the descriptors' validation.
#include <gtest/gtest.h>

#include <cstdint>
#include <algorithm>
#include <string>
#include <vector>

#include "weft/jit/error.hpp"
#include "weft/tpp/binary.hpp"
#include "weft/tpp/brgemm.hpp"
#include "weft/tpp/mini_jit_unary.hpp"
#include "weft/tpp/unary.hpp"

namespace {

using namespace weft::tpp;

template <class Call>
void expect_error(Call&& call, const std::string& says, const std::string& kernel) {
  try {
    call();
    ADD_FAILURE() << "no error; expected: " << says;
  } catch (const weft::Error& e) {
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(kernel), std::string::npos) << e.what();
  }
}

TEST(UnaryCallChecks, NullPointersAndCallTimeLeadingDimensions) {
  std::vector<float> a(256, 1.0f), b(256, 0.0f), x(256, 1.0f);
  std::vector<std::uint8_t> mask(64);
  const Unary relu(UnaryDesc{.op = UnaryOp::relu, .m = 8, .n = 4});  // leading dimensions at call time
  const std::string name = "unary TPP relu_m8_n4_lda0_ldb0";
  struct Case {
    UnaryArgs args;
    const char* says;
  };
  const Case cases[] = {
      {{.in = a.data(), .out = b.data(), .ld_in = 7, .ld_out = 8},
       "UnaryArgs::ld_in is 7, must be 0 (every column reads A's first) or in [m = 8, 2^28]"},
      {{.in = a.data(), .out = b.data(), .ld_in = -8, .ld_out = 8}, "UnaryArgs::ld_in is -8"},
      {{.in = a.data(), .out = b.data(), .ld_in = (std::int64_t{1} << 28) + 1, .ld_out = 8}, "UnaryArgs::ld_in is 268435457"},
      {{.in = a.data(), .out = b.data(), .ld_in = 8, .ld_out = 0}, "UnaryArgs::ld_out is 0, must be in [m = 8"},
      {{.in = a.data(), .out = b.data(), .ld_in = 8, .ld_out = 3}, "UnaryArgs::ld_out is 3"},
      {{.in = nullptr, .out = b.data(), .ld_in = 8, .ld_out = 8}, "UnaryArgs::in is null"},
      {{.in = a.data(), .out = nullptr, .ld_in = 8, .ld_out = 8}, "UnaryArgs::out is null"},
  };
  for (const Case& c : cases) {
    expect_error([&] { relu(c.args); }, c.says, name);
    expect_error([&] { unary_reference(relu.desc(), c.args); }, c.says, name);
  }
  // The two-pointer call has no leading dimensions to give (ld_in 0 would broadcast A's first
  // column, but ld_out 0 is no output layout).
  expect_error([&] { relu(a.data(), b.data()); }, "UnaryArgs::ld_out is 0", name);
  relu(UnaryArgs{.in = a.data(), .out = b.data(), .ld_in = 8, .ld_out = 8});
  EXPECT_EQ(b[31], 1.0f);
  // ld_in 0: every column of B is relu of A's first column (it was refused before it was part of
  // the contract).
  std::vector<float> column{-1.0f, 2.0f, -3.0f, 4.0f, 5.0f, -6.0f, 7.0f, 8.0f};
  relu(UnaryArgs{.in = column.data(), .out = b.data(), .ld_in = 0, .ld_out = 8});
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 8; ++i) EXPECT_EQ(b[static_cast<std::size_t>(i + 8 * j)], std::max(column[static_cast<std::size_t>(i)], 0.0f));

  const Unary transpose(UnaryDesc{.op = UnaryOp::transpose, .m = 8, .n = 4, .ld_in = 8});
  expect_error([&] { transpose(UnaryArgs{.in = a.data(), .out = b.data(), .ld_out = 3}); },
               "UnaryArgs::ld_out is 3, must be in [n = 4", "unary TPP transpose");
  transpose(UnaryArgs{.in = a.data(), .out = b.data(), .ld_out = 4});

  const Unary bwd(UnaryDesc{.op = UnaryOp::relu_bwd, .m = 8, .n = 4, .ld_in = 8, .ld_out = 8});
  expect_error([&] { bwd(a.data(), b.data()); }, "UnaryArgs::aux is null (relu_bwd reads the forward input", "relu_bwd");
  const Unary with_mask(UnaryDesc{.op = UnaryOp::relu, .m = 8, .n = 4, .ld_in = 8, .ld_out = 8, .mask = ReluMask::bitmask});
  expect_error([&] { with_mask(a.data(), b.data()); }, "UnaryArgs::mask is null", "relu_m8_n4_lda8_ldb8_bitmask");
  with_mask(UnaryArgs{.in = a.data(), .out = b.data(), .mask = mask.data()});

  // zero reads no A (and no ld_in); a reduction writes no columns (no ld_out).
  const Unary zero(UnaryDesc{.op = UnaryOp::zero, .m = 8, .n = 4, .ld_out = 8});
  zero(UnaryArgs{.in = nullptr, .out = b.data(), .ld_in = 0});
  EXPECT_EQ(b[31], 0.0f);
  const Unary sums(UnaryDesc{.op = UnaryOp::reduce_cols_sum, .m = 8, .n = 4, .ld_in = 8});
  sums(UnaryArgs{.in = x.data(), .out = b.data(), .ld_out = 0});
  EXPECT_EQ(b[3], 8.0f);
}

TEST(MiniJitUnaryCallChecks, KernelTCallsThrowNamingTheArgument) {
  using mini_jit::Unary;
  std::vector<float> a(256, -1.0f), b(256, 5.0f);
  Unary relu;
  ASSERT_EQ(relu.generate(8, 4, 0, Unary::dtype_t::fp32, Unary::ptype_t::relu), Unary::error_t::success);
  const Unary::kernel_t k = relu.get_kernel();
  const std::string name = "mini_jit::Unary kernel_t (relu_m8_n4";
  expect_error([&] { k(a.data(), b.data(), 0, 8); }, "ld_a is 0, must be in [m = 8, 2^28]", name);
  expect_error([&] { k(a.data(), b.data(), 7, 8); }, "ld_a is 7", name);
  expect_error([&] { k(a.data(), b.data(), 8, 2); }, "ld_b is 2, must be in [m = 8", name);
  expect_error([&] { k(nullptr, b.data(), 8, 8); }, "a is null", name);
  expect_error([&] { k(a.data(), nullptr, 8, 8); }, "b is null", name);
  k(a.data(), b.data(), 8, 8);  // still usable
  EXPECT_EQ(b[0], 0.0f);

  Unary transposed;
  ASSERT_EQ(transposed.generate(8, 4, 1, Unary::dtype_t::fp32, Unary::ptype_t::identity), Unary::error_t::success);
  expect_error([&] { transposed.get_kernel()(a.data(), b.data(), 8, 3); }, "ld_b is 3, must be in [n = 4", "transpose");
  Unary zero;
  ASSERT_EQ(zero.generate(8, 4, 0, Unary::dtype_t::fp32, Unary::ptype_t::zero), Unary::error_t::success);
  zero.get_kernel()(nullptr, b.data(), 0, 8);
  EXPECT_EQ(b[31], 0.0f);
  expect_error([&] { zero.get_kernel()(nullptr, b.data(), 0, 7); }, "ld_b is 7", "zero");
}

TEST(BinaryCallChecks, NullPointers) {
  std::vector<float> x(16, 1.0f), y(16);
  const Binary add(BinaryDesc{.op = BinaryOp::add, .m = 8, .n = 2, .ld_in0 = 8, .ld_in1 = 8, .ld_out = 8});
  const std::string name = "binary TPP add_m8_n2";
  expect_error([&] { add(nullptr, x.data(), y.data()); }, "BinaryArgs::in0 is null", name);
  expect_error([&] { add(x.data(), nullptr, y.data()); }, "BinaryArgs::in1 is null", name);
  expect_error([&] { add(x.data(), x.data(), nullptr); }, "BinaryArgs::out is null", name);
  expect_error([&] { binary_reference(add.desc(), BinaryArgs{x.data(), nullptr, y.data()}); }, "in1 is null", name);
  add(x.data(), x.data(), y.data());
  EXPECT_EQ(y[15], 2.0f);
}

TEST(BrgemmCallChecks, NullPointersAndNegativeCounts) {
  std::vector<float> x(64, 1.0f), c(16);
  const std::int64_t offsets[] = {0, 0};
  const void* addresses[] = {x.data(), x.data()};
  const BrgemmDesc strided{.m = 4, .n = 4, .k = 4, .lda = 4, .ldb = 4, .ldc = 4, .beta = 0};
  const Brgemm gemm(strided);
  const std::string name = "brgemm brgemm_m4_n4_k4";
  expect_error([&] { gemm(x.data(), x.data(), nullptr); }, "BrgemmArgs::c is null", name);
  expect_error([&] { gemm(nullptr, x.data(), c.data()); }, "BrgemmArgs::a is null", name);
  expect_error([&] { gemm(x.data(), nullptr, c.data(), 2); }, "BrgemmArgs::b is null (count 2)", name);
  expect_error([&] { gemm(x.data(), x.data(), c.data(), -1); }, "BrgemmArgs::count is negative", name);
  expect_error([&] { brgemm_reference(strided, BrgemmArgs{.a = x.data(), .b = x.data(), .c = nullptr}); },
               "BrgemmArgs::c is null", name);
  gemm(nullptr, nullptr, c.data(), 0);  // an empty sum reads neither A nor B
  EXPECT_EQ(c[15], 0.0f);
  gemm(x.data(), x.data(), c.data());
  EXPECT_EQ(c[15], 4.0f);

  BrgemmDesc d = strided;
  d.batch = BrgemmBatch::offsets;
  const Brgemm by_offsets(d);
  expect_error([&] { by_offsets(BrgemmArgs{.a = x.data(), .b = x.data(), .c = c.data(), .count = 2, .offsets_b = offsets}); },
               "BrgemmArgs::offsets_a is null", "offsets");
  by_offsets(BrgemmArgs{.a = x.data(), .b = x.data(), .c = c.data(), .count = 2, .offsets_a = offsets, .offsets_b = offsets});
  EXPECT_EQ(c[15], 8.0f);
  d.batch = BrgemmBatch::addresses;
  const Brgemm by_addresses(d);
  expect_error([&] { by_addresses(BrgemmArgs{.c = c.data(), .count = 2, .addresses_a = addresses}); },
               "BrgemmArgs::addresses_b is null", "addresses");
  d.batch = BrgemmBatch::strided;
  d.bias = BrgemmBias::per_row;
  const Brgemm with_bias(d);
  expect_error([&] { with_bias(BrgemmArgs{.a = x.data(), .b = x.data(), .c = c.data()}); }, "BrgemmArgs::bias is null",
               "bias_row");
}

TEST(DescriptorEnums, ValuesOutsideTheirEnumAreRejected) {
  auto rejects = [](auto make, const std::string& says) {
    try {
      make();
      ADD_FAILURE() << "accepted; expected: " << says;
    } catch (const weft::Error& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  const UnaryDesc u{.op = UnaryOp::relu, .m = 8, .n = 4, .ld_in = 8, .ld_out = 8};
  rejects([&] { UnaryDesc d = u; d.mask = static_cast<ReluMask>(5); Unary k(d); }, "mask 5 is no ReluMask");
  rejects([&] { UnaryDesc d = u; d.op = static_cast<UnaryOp>(21); Unary k(d); }, "op 21 is no UnaryOp (0..20)");  // past vnni2_unpack
  rejects([&] { UnaryDesc d = u; d.mask = static_cast<ReluMask>(2); plan_unary(d, weft::jit::Isa::avx2); }, "mask 2");

  const BinaryDesc b{.op = BinaryOp::add, .m = 8, .n = 2, .ld_in0 = 8, .ld_in1 = 8, .ld_out = 8};
  rejects([&] { BinaryDesc d = b; d.op = static_cast<BinaryOp>(6); Binary k(d); }, "op 6 is no BinaryOp");
  rejects([&] { BinaryDesc d = b; d.bcast0 = static_cast<Broadcast>(4); Binary k(d); }, "bcast0 4 is no Broadcast");
  rejects([&] { BinaryDesc d = b; d.bcast1 = static_cast<Broadcast>(9); Binary k(d); }, "bcast1 9 is no Broadcast");

  const BrgemmDesc g{.m = 4, .n = 4, .k = 4, .lda = 4, .ldb = 4, .ldc = 4, .beta = 1};
  rejects([&] { BrgemmDesc d = g; d.batch = static_cast<BrgemmBatch>(3); Brgemm k(d); }, "batch 3 is none of");
  rejects([&] { BrgemmDesc d = g; d.bias = static_cast<BrgemmBias>(3); Brgemm k(d); }, "bias 3 is none of");
  rejects([&] { BrgemmDesc d = g; d.activation = static_cast<BrgemmActivation>(3); Brgemm k(d); }, "activation 3");
  rejects([&] { BrgemmDesc d = g; d.prefetch = static_cast<BrgemmPrefetch>(2); Brgemm k(d); }, "prefetch 2");
  // Unused without a unary epilogue, but part of the descriptor (and of the cache key).
  rejects([&] { BrgemmDesc d = g; d.unary = static_cast<UnaryOp>(50); Brgemm k(d); }, "unary 50 is none of");
  rejects([&] { BrgemmDesc d = g; d.unary = static_cast<UnaryOp>(50); validate(d); }, "unary 50");
}

}  // namespace
