// Generated code is emitted into a scratch buffer and copied into the code arena, so it must not
// depend on where it was emitted. Each emitter here runs twice, with its scratch buffer at two
// addresses (ScratchShift), and the two results must be the same bytes.
//
// One difference is allowed: an 8-byte immediate holding the address of data outside both buffers
// (a nest refers to its Schedule and run tables, a trampoline to its context: each emission has
// its own objects, each copy of the code keeps pointing at them). A call or jump to an absolute
// address (rel32 from the scratch buffer), an absolute address of the code itself or a different
// alignment padding differs otherwise and fails.
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "binary_emit.hpp"
#include "brgemm_emit.hpp"
#include "unary_emit.hpp"
#include "weft/jit/x64/code_buffer_testing.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/parlooper/engine.hpp"
#include "weft/parlooper/loop_string.hpp"
#include "weft/tpp/binary.hpp"
#include "weft/tpp/brgemm.hpp"
#include "weft/tpp/mini_jit_brgemm.hpp"
#include "weft/tpp/unary.hpp"

namespace {

using weft::jit::Isa;
using weft::jit::x64::testing::FinalizedCode;
using weft::jit::x64::testing::FinalizedCodeLog;
using weft::jit::x64::testing::ScratchShift;

// The last code finalized on this thread by emit(), emitted with the scratch buffer moved by
// `shift` bytes.
FinalizedCode emitted_at(std::size_t shift, const std::function<void()>& emit) {
  FinalizedCodeLog log;
  {
    ScratchShift moved(shift);
    emit();
  }
  if (log.entries().empty()) return {};
  return log.entries().back();
}

bool user_address(std::uint64_t v) { return v >= 0x10000 && v < (std::uint64_t{1} << 47); }

bool inside_code(std::uint64_t v, const FinalizedCode& c) {
  const auto code = reinterpret_cast<std::uintptr_t>(c.code);
  return (v >= c.scratch && v < c.scratch + c.scratch_bytes) || (v >= code && v < code + c.bytes.size());
}

::testing::AssertionResult same_code(const FinalizedCode& a, const FinalizedCode& b) {
  if (a.bytes.empty()) return ::testing::AssertionFailure() << "nothing was finalized";
  if (a.scratch == b.scratch) return ::testing::AssertionFailure() << "both emitted at one address";
  if (a.bytes.size() != b.bytes.size())
    return ::testing::AssertionFailure() << a.bytes.size() << " bytes against " << b.bytes.size();
  const std::size_t size = a.bytes.size();
  for (std::size_t i = 0; i < size;) {
    if (a.bytes[i] == b.bytes[i]) {
      ++i;
      continue;
    }
    bool data_address = false;
    for (std::size_t j = i >= 7 ? i - 7 : 0; j <= i && j + 8 <= size && !data_address; ++j) {
      std::uint64_t va = 0, vb = 0;
      std::memcpy(&va, &a.bytes[j], 8);
      std::memcpy(&vb, &b.bytes[j], 8);
      // Each against its own buffers only: the heap may reuse one emission's freed scratch buffer
      // for the other's data.
      if (user_address(va) && user_address(vb) && !inside_code(va, a) && !inside_code(vb, b)) {
        data_address = true;
        i = j + 8;
      }
    }
    if (!data_address) {
      return ::testing::AssertionFailure()
             << "byte " << i << " of " << size << " differs (" << int{a.bytes[i]} << " vs "
             << int{b.bytes[i]} << ") between scratch addresses " << std::hex << a.scratch << " and "
             << b.scratch;
    }
  }
  return ::testing::AssertionSuccess();
}

// Two shifts, both multiples of the arena's alignment, apart by more than a page.
constexpr std::size_t kShiftA = 0;
constexpr std::size_t kShiftB = 4096 + 5 * weft::jit::CodeArena::kAlignment;

void expect_position_independent(const std::string& what, const std::function<void()>& emit) {
  const FinalizedCode a = emitted_at(kShiftA, emit);
  const FinalizedCode b = emitted_at(kShiftB, emit);
  EXPECT_TRUE(same_code(a, b)) << what;
}

// The check itself: CodeBuffer makes these forms compile errors, so they are spelled through the
// base class here.
TEST(PositionIndependence, TheCheckCatchesPositionDependentCode) {
  struct CallsAnAbsoluteAddress : weft::jit::x64::CodeBuffer {
    // `target`: an address outside the buffer, the same for both emissions and within rel32 reach
    // of both scratch buffers (one heap holds them; compiled code may be too far from it).
    explicit CallsAnAbsoluteAddress(std::uintptr_t& target) : CodeBuffer(256) {
      if (target == 0) target = reinterpret_cast<std::uintptr_t>(getCode()) - (std::uintptr_t{1} << 20);
      Xbyak::CodeGenerator::call(reinterpret_cast<const void*>(target));
      ret();
    }
  };
  struct LoadsItsOwnAddress : weft::jit::x64::CodeBuffer {
    LoadsItsOwnAddress() : CodeBuffer(256) {
      Xbyak::Label self;
      L(self);
      Xbyak::CodeGenerator::mov(rax, self);
      ret();
    }
  };
  std::uintptr_t target = 0;
  const auto calls = [&] { CallsAnAbsoluteAddress code(target); code.finalize<void (*)()>("calls"); };
  try {
    EXPECT_FALSE(same_code(emitted_at(kShiftA, calls), emitted_at(kShiftB, calls)));
  } catch (const Xbyak::Error&) {
    // The two scratch buffers lie beyond rel32 reach of each other (ASan's allocator puts sizes
    // apart): the call cannot even be emitted at both.
  }
  const auto loads = [] { LoadsItsOwnAddress code; code.finalize<void (*)()>("loads"); };
  EXPECT_FALSE(same_code(emitted_at(kShiftA, loads), emitted_at(kShiftB, loads)));
}

TEST(PositionIndependence, LoopNests) {
  const std::vector<std::pair<std::string, int>> strings = {
      {"abc", 3},
      {"bcaBCb", 3},
      {"aBC", 3},
      {"aBCB", 3},
      {"aBC@schedule(static,4)", 3},
      {"aBC@schedule(dynamic,1)", 3},
      {"aBC@schedule(guided)", 3},
      {"B{R:2}C{C:4}ab", 3},
      {"bc|aBCb", 3},
      {"aB|C", 3},
      {"A{R:2}|bc", 3},
      {std::string(40, 'a') + "bcBC", 3},
  };
  for (const auto& [text, loops] : strings) {
    const auto nest = weft::parlooper::parse_loop_string(text, loops);
    expect_position_independent("nest " + text, [&] { auto engine = weft::parlooper::make_jit_engine(nest); });
  }
}

std::vector<weft::tpp::BrgemmDesc> brgemm_descs() {
  using namespace weft::tpp;
  std::vector<BrgemmDesc> descs;
  BrgemmDesc d;
  d.m = d.n = d.k = 32;
  d.lda = d.ldb = d.ldc = 32;
  d.beta = 0;
  descs.push_back(d);
  d = BrgemmDesc{};  // tails, bias, ReLU
  d.m = 17, d.n = 5, d.k = 9, d.lda = 17, d.ldb = 9, d.ldc = 20;
  d.bias = BrgemmBias::per_row;
  d.activation = BrgemmActivation::relu;
  descs.push_back(d);
  d = BrgemmDesc{};  // an epilogue with a constant table, offsets, prefetch
  d.m = 64, d.n = 6, d.k = 16, d.lda = 64, d.ldb = 16, d.ldc = 64;
  d.batch = BrgemmBatch::offsets;
  d.activation = BrgemmActivation::unary;
  d.unary = UnaryOp::gelu;
  d.prefetch = BrgemmPrefetch::next_c;
  descs.push_back(d);
  d = BrgemmDesc{};  // m = 1: dot tiles on AVX2
  d.m = 1, d.n = 8, d.k = 64, d.lda = 1, d.ldb = 64, d.ldc = 1;
  d.batch = BrgemmBatch::addresses;
  descs.push_back(d);
  return descs;
}

TEST(PositionIndependence, BrgemmKernels) {
  for (Isa isa : {Isa::avx2, Isa::avx512})
    for (const auto& d : brgemm_descs()) {
      expect_position_independent(weft::tpp::to_string(d) + " " + std::string(weft::jit::to_string(isa)), [&] {
        auto code = weft::tpp::emit_brgemm(d, weft::tpp::plan_brgemm(d, isa));
        code->finalize<weft::tpp::BrgemmKernelFn>("brgemm");
      });
    }
}

TEST(PositionIndependence, UnaryKernels) {
  using namespace weft::tpp;
  std::vector<UnaryDesc> descs;
  for (UnaryOp op : {UnaryOp::zero, UnaryOp::copy, UnaryOp::relu, UnaryOp::exp, UnaryOp::gelu,
                     UnaryOp::tanh, UnaryOp::reduce_rows_sum, UnaryOp::reduce_cols_max})
    descs.push_back(UnaryDesc{.op = op, .m = 37, .n = 3, .ld_in = 40, .ld_out = 37});
  descs.push_back(UnaryDesc{.op = UnaryOp::relu, .m = 37, .n = 3, .ld_in = 37, .ld_out = 37,
                            .mask = ReluMask::bitmask});
  descs.push_back(UnaryDesc{.op = UnaryOp::transpose, .m = 13, .n = 7, .ld_in = 13, .ld_out = 7});
  descs.push_back(UnaryDesc{.op = UnaryOp::scale, .m = 9, .n = 5, .ld_in = 0, .ld_out = 0, .alpha = 2.5f});
  // Flat and large: streaming stores behind an alignment prologue.
  descs.push_back(UnaryDesc{.op = UnaryOp::copy, .m = 2048, .n = 1024, .ld_in = 2048, .ld_out = 2048});
  // Other data types: bf16 (rounding constants, streaming half vectors, VNNI-2), f64 (64-bit constants).
  using weft::jit::DataType;
  const DataTypes bf16{.in = DataType::bf16, .out = DataType::bf16};
  const DataTypes f64{.in = DataType::f64, .out = DataType::f64, .compute = DataType::f64};
  descs.push_back(UnaryDesc{.op = UnaryOp::gelu, .m = 37, .n = 3, .ld_in = 40, .ld_out = 37,
                            .types = {.in = DataType::f32, .out = DataType::bf16}});
  descs.push_back(UnaryDesc{.op = UnaryOp::relu, .m = 4096, .n = 1024, .ld_in = 4096, .ld_out = 4096, .types = bf16});
  descs.push_back(UnaryDesc{.op = UnaryOp::vnni2_pack, .m = 37, .n = 4, .ld_in = 37, .ld_out = 40, .types = bf16});
  descs.push_back(UnaryDesc{.op = UnaryOp::vnni2_unpack, .m = 37, .n = 4, .ld_in = 40, .ld_out = 37, .types = bf16});
  descs.push_back(UnaryDesc{.op = UnaryOp::scale, .m = 9, .n = 5, .ld_in = 9, .ld_out = 9, .alpha = 2.5f, .types = f64});
  for (Isa isa : {Isa::avx2, Isa::avx512, Isa::avx512_bf16})
    for (const auto& d : descs) {
      expect_position_independent(to_string(d) + " " + std::string(weft::jit::to_string(isa)), [&] {
        auto code = detail::emit_unary(d, plan_unary(d, isa));
        code->finalize<UnaryKernelFn>("unary");
      });
    }
}

TEST(PositionIndependence, BinaryKernels) {
  using namespace weft::tpp;
  const std::vector<BinaryDesc> descs = {
      BinaryDesc{.op = BinaryOp::add, .m = 19, .n = 4, .ld_in0 = 19, .ld_in1 = 20, .ld_out = 19},
      BinaryDesc{.op = BinaryOp::mul, .m = 19, .n = 4, .ld_in0 = 19, .ld_in1 = 0, .ld_out = 19,
                 .bcast1 = Broadcast::row},
      BinaryDesc{.op = BinaryOp::sub, .m = 8, .n = 3, .ld_in0 = 0, .ld_in1 = 8, .ld_out = 8,
                 .bcast0 = Broadcast::scalar},
      BinaryDesc{.op = BinaryOp::add, .m = 2048, .n = 1024, .ld_in0 = 2048, .ld_in1 = 2048, .ld_out = 2048},
      BinaryDesc{.op = BinaryOp::max, .m = 19, .n = 4, .ld_in0 = 19, .ld_in1 = 0, .ld_out = 19, .bcast1 = Broadcast::row,
                 .types = {.in = weft::jit::DataType::bf16, .out = weft::jit::DataType::bf16}},
      BinaryDesc{.op = BinaryOp::mul, .m = 4096, .n = 1024, .ld_in0 = 4096, .ld_in1 = 4096, .ld_out = 4096,
                 .types = {.in = weft::jit::DataType::f32, .out = weft::jit::DataType::bf16}},
      BinaryDesc{.op = BinaryOp::div, .m = 19, .n = 4, .ld_in0 = 19, .ld_in1 = 0, .ld_out = 19, .bcast1 = Broadcast::scalar,
                 .types = {.in = weft::jit::DataType::f64, .out = weft::jit::DataType::f64, .compute = weft::jit::DataType::f64}},
  };
  for (Isa isa : {Isa::avx2, Isa::avx512, Isa::avx512_bf16})
    for (const auto& d : descs) {
      expect_position_independent(to_string(d) + " " + std::string(weft::jit::to_string(isa)), [&] {
        auto code = detail::emit_binary(d, plan_binary(d, isa));
        code->finalize<BinaryKernelFn>("binary");
      });
    }
}

TEST(PositionIndependence, MiniJitTrampolines) {
  if (!weft::jit::can_run(Isa::avx2, weft::jit::cpu_features())) GTEST_SKIP() << "no AVX2";
  // Each generate() emits a trampoline (and, the first time, the kernel it calls): the last code.
  expect_position_independent("mini_jit::Brgemm trampoline", [] {
    mini_jit::Brgemm gen;
    ASSERT_EQ(gen.generate(16, 8, 4, 2, 0, 0, 0, mini_jit::Brgemm::dtype_t::fp32),
              mini_jit::Brgemm::error_t::success)
        << gen.error_message();
  });
}

}  // namespace
