// fp64 contractions through TensorOperation, against the long double reference: GEMM and BRGEMM
// over several shapes, strides and dimension types, sequential and shared on 1-3 threads, the fused
// touches, the optimizer's passes, the portable kernels and the einsum executor; and the errors.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "tensor_test_support.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/isa_traits.hpp"
#include "weft/tensor/einsum_tree.hpp"
#include "weft/tensor/passes.hpp"
#include "weft/tensor/tensor_operation.hpp"

namespace weft::tensor::test {
namespace {

using einsum::backend::TensorOperation;

Contraction fp64(Contraction op) {
  op.dtype = dtype_t::fp64;
  return op;
}

// Sets up, runs on fp64 data and compares with the reference; returns the operation's describe().
std::string run_and_check_fp64(const Contraction& op, std::uint32_t seed, TensorOperation::Options options = {}) {
  TensorOperation top;
  EXPECT_EQ(top.setup(op, options), error_t::success) << top.error_message();
  if (top.error() != error_t::success) return {};
  const Tensors64 t = make_tensors_fp64(op, seed);
  std::vector<double> out = t.out;
  top.execute(t.in0.data(), t.in1.empty() ? nullptr : t.in1.data(), out.data());
  expect_matches_reference_fp64(op, t, out);
  return top.describe();
}

constexpr const char* kF64Kernel = "in_f64_out_f64_compute_f64";

// ---- GEMM and BRGEMM ---------------------------------------------------------------------------

struct SeedCase {
  prim_t first, main, last;
  bool brgemm;
};

class Fp64SeedConfigs : public ::testing::TestWithParam<SeedCase> {};

TEST_P(Fp64SeedConfigs, MatchTheLongDoubleReferenceSeqAndShared) {
  const SeedCase c = GetParam();
  const Contraction op = fp64(seed_config(c.first, c.main, c.last, c.brgemm, 4, 3));
  const std::string described = run_and_check_fp64(op, 1);
  EXPECT_NE(described.find(kF64Kernel), std::string::npos) << described;
  for (int threads = 1; threads <= 3; ++threads) {
    omp_set_num_threads(threads);
    Contraction shared = op;
    shared.dims[0].exec = exec_t::shared;
    run_and_check_fp64(shared, 2);
    shared.dims[0].exec = exec_t::seq;
    shared.dims[1].exec = exec_t::shared;
    run_and_check_fp64(shared, 3);
  }
  omp_set_num_threads(2);
}

INSTANTIATE_TEST_SUITE_P(Seed, Fp64SeedConfigs,
                         ::testing::Values(SeedCase{prim_t::none, prim_t::gemm, prim_t::none, false},
                                           SeedCase{prim_t::none, prim_t::brgemm, prim_t::none, true},
                                           SeedCase{prim_t::zero, prim_t::brgemm, prim_t::relu, true},
                                           SeedCase{prim_t::zero, prim_t::gemm, prim_t::relu, false}));

// Shapes with partial vectors (m = 13: one AVX-512 vector of 8 doubles and a tail of 5), padded
// leading dimensions, c dims, two m and two n dims, a size-1 k.
TEST(Fp64Gemm, ShapesStridesAndDimensionTypes) {
  const exec_t s = exec_t::seq, p = exec_t::prim;
  std::vector<Contraction> cases;
  {
    // C(39 x 14, ldc 41) += A(39 x 5, lda 75) B(5 x 14, ldb 9) in blocks of 13 x 7 (m and n loops
    // of 3 and 2): padded leading dimensions everywhere.
    Contraction op;
    op.main = prim_t::gemm;
    op.dims = {Dim{dim_t::m, s, 3, 13, 0, 13}, Dim{dim_t::n, s, 2, 0, 7 * 9, 7 * 41},
               Dim{dim_t::m, p, 13, 1, 0, 1},  Dim{dim_t::n, p, 7, 0, 9, 41},
               Dim{dim_t::k, p, 5, 75, 1, 0}};
    cases.push_back(op);
  }
  {
    // A batch dim c in front, brgemm with a batch of 3, zero first touch and ReLU last.
    Contraction op;
    op.first_touch = prim_t::zero;
    op.main = prim_t::brgemm;
    op.last_touch = prim_t::relu;
    op.dims = {Dim{dim_t::c, s, 2, 3 * 20 * 17, 3 * 17 * 9, 20 * 9}, Dim{dim_t::k, p, 3, 20 * 17, 17 * 9, 0},
               Dim{dim_t::m, p, 20, 1, 0, 1}, Dim{dim_t::n, p, 9, 0, 17, 20}, Dim{dim_t::k, p, 17, 20, 1, 0}};
    cases.push_back(op);
  }
  {
    // Outer product: k of size 1; n of size 1 (a GEMV-like block).
    Contraction op;
    op.main = prim_t::gemm;
    op.dims = {Dim{dim_t::n, s, 5, 0, 1, 24}, Dim{dim_t::m, p, 24, 1, 0, 1}, Dim{dim_t::n, p, 1, 0, 1, 24},
               Dim{dim_t::k, p, 1, 24, 1, 0}};
    cases.push_back(op);
  }
  {
    // A reduction split over a seq k loop (batch folding makes it the BRGEMM batch) and an n loop
    // outermost.
    Contraction op;
    op.first_touch = prim_t::zero;
    op.main = prim_t::gemm;
    op.dims = {Dim{dim_t::n, s, 4, 0, 64 * 6, 40 * 6}, Dim{dim_t::k, s, 4, 16 * 40, 16, 0},
               Dim{dim_t::m, p, 40, 1, 0, 1}, Dim{dim_t::n, p, 6, 0, 64, 40}, Dim{dim_t::k, p, 16, 40, 1, 0}};
    cases.push_back(op);
  }
  std::uint32_t seed = 100;
  for (const Contraction& op : cases) {
    SCOPED_TRACE(op.describe());
    run_and_check_fp64(fp64(op), seed++);
  }
}

// The batch folding of a seq k loop into the BRGEMM batch keeps the fp64 sums bit-identical to the
// unfolded lowering (a loop_string override keeps the loop), as in fp32.
TEST(Fp64Gemm, BatchFoldingIsBitIdentical) {
  const Contraction op = fp64(seed_config(prim_t::zero, prim_t::gemm, prim_t::relu, false, 3, 2));
  const Tensors64 t = make_tensors_fp64(op, 7);
  TensorOperation folded, looped;
  ASSERT_EQ(folded.setup(op, {}), error_t::success) << folded.error_message();
  TensorOperation::Options keep_loop;
  keep_loop.loops.loop_string = "abc";
  ASSERT_EQ(looped.setup(op, keep_loop), error_t::success) << looped.error_message();
  EXPECT_NE(folded.describe().find("batch folding"), std::string::npos);
  std::vector<double> a = t.out, b = t.out;
  folded.execute(t.in0.data(), t.in1.data(), a.data());
  looped.execute(t.in0.data(), t.in1.data(), b.data());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(double)));
  expect_matches_reference_fp64(op, t, a);
}

// Layouts no BRGEMM takes run the portable strided kernel in double.
TEST(Fp64Gemm, GenericPrimitivesComputeInDouble) {
  const exec_t s = exec_t::seq, p = exec_t::prim;
  Contraction op;
  op.dtype = dtype_t::fp64;
  op.first_touch = prim_t::zero;
  op.main = prim_t::gemm;
  op.last_touch = prim_t::relu;
  op.dims = {Dim{dim_t::c, s, 2, 60, 60, 80}, Dim{dim_t::m, p, 4, 6, 0, 5}, Dim{dim_t::n, p, 5, 0, 1, 1},
             Dim{dim_t::k, p, 6, 1, 5, 0}};
  TensorOperation strict;
  EXPECT_EQ(strict.setup(op, {}), error_t::err_invalid_strides);
  const std::string described = run_and_check_fp64(op, 41, {.allow_generic_primitives = true});
  EXPECT_NE(described.find("portable strided gemm m4 n5 k6 batch 1 (fp64)"), std::string::npos) << described;
}

// ---- touches ----------------------------------------------------------------------------------

// Touches other than a fused zero first / ReLU last are f64 unary TPP calls on the output block
// (zero, copy, relu, square), sequential and shared; on a block whose output is not contiguous they
// run the portable loop in double (allow_generic_primitives).
TEST(Fp64Touches, UnaryTouchesOnTheOutputBlock) {
  struct Case {
    prim_t first, main, last;
    bool brgemm;
  };
  const Case cases[] = {
      {prim_t::relu, prim_t::gemm, prim_t::square, false}, {prim_t::copy, prim_t::brgemm, prim_t::copy, true},
      {prim_t::square, prim_t::brgemm, prim_t::zero, true}, {prim_t::zero, prim_t::gemm, prim_t::square, false},
      {prim_t::relu, prim_t::brgemm, prim_t::relu, true},
  };
  for (const Case& c : cases) {
    const Contraction op = fp64(seed_config(c.first, c.main, c.last, c.brgemm, 3, 2));
    SCOPED_TRACE(op.describe());
    const std::string described = run_and_check_fp64(op, 21);
    if (c.first != prim_t::zero) {
      EXPECT_NE(described.find("first touch: " + to_string(c.first)), std::string::npos) << described;
    }
    for (int threads : {1, 2, 3}) {
      omp_set_num_threads(threads);
      Contraction shared = op;
      shared.dims[1].exec = exec_t::shared;
      run_and_check_fp64(shared, 22);
    }
  }
  omp_set_num_threads(2);
  // The output block transposed (m strided, n unit-stride in out): no TPP layout for the touches.
  const exec_t p = exec_t::prim;
  Contraction strided;
  strided.dtype = dtype_t::fp64;
  strided.first_touch = prim_t::relu;
  strided.main = prim_t::gemm;
  strided.last_touch = prim_t::square;
  strided.dims = {Dim{dim_t::m, p, 6, 1, 0, 5}, Dim{dim_t::n, p, 5, 0, 7, 1}, Dim{dim_t::k, p, 7, 6, 1, 0}};
  const std::string described = run_and_check_fp64(strided, 23, {.allow_generic_primitives = true});
  EXPECT_NE(described.find("portable relu in place"), std::string::npos) << described;
}

// ---- element-wise mains ------------------------------------------------------------------------

TEST(Fp64Elementwise, UnaryAndBinaryMainsBitForBit) {
  const exec_t s = exec_t::seq, p = exec_t::prim;
  // A 13 x 4 block (a partial vector per column) in a loop of 3, padded leading dimensions.
  const std::vector<Dim> dims = {Dim{dim_t::c, s, 3, 80, 70, 60}, Dim{dim_t::c, p, 13, 1, 1, 1},
                                 Dim{dim_t::c, p, 4, 20, 17, 15}};
  for (prim_t main : {prim_t::zero, prim_t::copy, prim_t::relu, prim_t::square, prim_t::reciprocal, prim_t::sqrt}) {
    for (prim_t last : {prim_t::none, prim_t::relu, prim_t::square}) {
      Contraction op;
      op.dtype = dtype_t::fp64;
      op.main = main;
      op.last_touch = last;
      op.dims = dims;
      for (Dim& d : op.dims) d.stride_in1 = 0;
      SCOPED_TRACE(op.describe());
      TensorOperation top;
      ASSERT_EQ(top.setup(op, {}), error_t::success) << top.error_message();
      Tensors64 t = make_tensors_fp64(op, 31);
      if (main == prim_t::sqrt || main == prim_t::reciprocal)
        for (double& x : t.in0) x = std::fabs(x) + 0.25;
      std::vector<double> out = t.out;
      top.execute(t.in0.data(), nullptr, out.data());
      expect_matches_reference_fp64(op, t, out);
      EXPECT_NE(top.describe().find(kF64Kernel), std::string::npos) << top.describe();
    }
  }
  for (prim_t main : {prim_t::add, prim_t::sub, prim_t::mul, prim_t::div, prim_t::min, prim_t::max}) {
    // in1 as given, then broadcast along the rows (a per-column vector) and along everything.
    for (int broadcast = 0; broadcast < 3; ++broadcast) {
      Contraction op;
      op.dtype = dtype_t::fp64;
      op.main = main;
      op.dims = dims;
      if (broadcast == 1) {  // in1(i, j, l) = v[l * 4 + j]
        op.dims[0].stride_in1 = 4;
        op.dims[1].stride_in1 = 0;
        op.dims[2].stride_in1 = 1;
      }
      if (broadcast == 2) op.dims[0].stride_in1 = op.dims[1].stride_in1 = op.dims[2].stride_in1 = 0;
      SCOPED_TRACE(op.describe());
      for (int threads : {1, 2}) {
        omp_set_num_threads(threads);
        Contraction shared = op;
        shared.dims[0].exec = threads > 1 ? exec_t::shared : exec_t::seq;
        run_and_check_fp64(shared, 32);
      }
    }
  }
  omp_set_num_threads(2);
}

// A copy whose input is contiguous along the other prim dim is a transpose: the f64 transpose TPP
// (it ran the portable loop, or was refused without allow_generic_primitives, while the TPP had no
// f64 kernel).
TEST(Fp64Elementwise, TransposingCopies) {
  const exec_t s = exec_t::seq, p = exec_t::prim;
  Contraction op;
  op.dtype = dtype_t::fp64;
  op.main = prim_t::copy;
  op.dims = {Dim{dim_t::c, s, 6, 35, 0, 35}, Dim{dim_t::c, p, 5, 7, 0, 1}, Dim{dim_t::c, p, 7, 1, 0, 5}};
  const std::string described = run_and_check_fp64(op, 41);
  EXPECT_NE(described.find("transpose"), std::string::npos) << described;
  EXPECT_NE(described.find("f64"), std::string::npos) << described;
  EXPECT_EQ(described.find("portable"), std::string::npos) << described;
}

// ---- the optimizer on fp64 ---------------------------------------------------------------------

Contraction column_major_gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  const exec_t s = exec_t::seq;
  Contraction op;
  op.dtype = dtype_t::fp64;
  op.main = prim_t::gemm;
  op.dims = {Dim{dim_t::m, s, m, 1, 0, 1}, Dim{dim_t::n, s, n, 0, k, m}, Dim{dim_t::k, s, k, m, 1, 0}};
  return op;
}

// Packing sizes its blocks for the bytes of B and A: an fp64 m block has twice the rows of an fp32
// one (four f64 register panels: 128 rows on AVX-512, 64 on AVX2), so that every byte of B it
// streams serves as many flops, and the lowering packs and multiplies it panel by panel, so its K
// chunk is sized by one register panel's bytes: the same K chunk as fp32's. (Before fp64 was
// lowered, pack_operands declined every fp64 GEMM.)
TEST(Fp64Optimizer, PackingSizesBlocksForDoubles) {
  const jit::IsaTraits& traits = jit::isa_traits(jit::selected_isa());
  const std::int64_t fp32_rows = traits.brgemm.panel_vectors * traits.lanes(4);
  const std::int64_t fp64_panel = traits.brgemm.panel_vectors * traits.lanes(8);
  const auto prim = [](const Contraction& c, dim_t type) {
    for (const Dim& d : c.dims)
      if (d.type == type && d.exec == exec_t::prim) return d.size;
    return std::int64_t{0};
  };
  const auto as_fp32 = [](Contraction c) {
    c.dtype = dtype_t::fp32;
    return c;
  };
  Contraction op = column_major_gemm(1024, 200, 160), op32 = as_fp32(op);
  ASSERT_TRUE(pack_operands(op, {.threads = 1}));
  ASSERT_TRUE(pack_operands(op32, {.threads = 1}));
  EXPECT_EQ(prim(op32, dim_t::m), fp32_rows) << op32.describe();
  EXPECT_EQ(prim(op, dim_t::m), 2 * fp32_rows) << op.describe();
  // K chunks: 2048 doubles per column are 512 KiB per 32-row register panel (AVX-512), over the
  // 256 KiB budget: chunks of 1024, as for floats in 64-row panels (AVX2: 16 and 32 rows, all of K).
  Contraction deep = column_major_gemm(1024, 200, 2048), deep32 = as_fp32(deep);
  ASSERT_TRUE(pack_operands(deep, {.threads = 1}));
  ASSERT_TRUE(pack_operands(deep32, {.threads = 1}));
  EXPECT_EQ(prim(deep, dim_t::k), prim(deep32, dim_t::k)) << deep.describe() << deep32.describe();
  EXPECT_LE(prim(deep, dim_t::k) * fp64_panel * 8, PackOptions{}.max_panel_bytes) << deep.describe();
  // An explicit panel_rows is taken as given, in any dtype.
  Contraction given = column_major_gemm(1024, 200, 160);
  ASSERT_TRUE(pack_operands(given, {.panel_rows = 32, .threads = 1}));
  EXPECT_EQ(prim(given, dim_t::m), 32) << given.describe();
}

// The batch-reduce span limit counts bytes of doubles: a k dim sweeping 768 KiB of floats sweeps
// 1.5 MiB of doubles and stays a loop in fp64.
TEST(Fp64Optimizer, BatchSpanCountsDoubles) {
  const exec_t s = exec_t::seq;
  Contraction op;
  op.main = prim_t::gemm;
  // k outer of 12 with stride 16384 elements: 12 * 16384 * 4 = 768 KiB in fp32, 1.5 MiB in fp64.
  op.dims = {Dim{dim_t::k, s, 12, 16384, 16384, 0}, Dim{dim_t::m, s, 64, 1, 0, 1}, Dim{dim_t::n, s, 8, 0, 64, 64},
             Dim{dim_t::k, s, 64, 64, 1, 0}};
  EXPECT_EQ(batch_span_bytes(op.dims[0]), 12 * 16384 * 4);
  EXPECT_EQ(batch_span_bytes(op.dims[0], dtype_t::fp64), 12 * 16384 * 8);
  Contraction op32 = op, op64 = fp64(op);
  identify_primitives(op32);
  identify_primitives(op64);
  EXPECT_EQ(op32.main, prim_t::brgemm) << op32.describe();
  EXPECT_EQ(op64.main, prim_t::gemm) << op64.describe();
  EXPECT_EQ(op64.dims[0].exec, exec_t::seq);
}

// setup_optimized on fp64: fusion, splitting, identification, reordering and parallelization (the
// 25 x 8 layout fuses to 200).
TEST(Fp64Optimizer, OptimizedSetupsMatchTheReference) {
  const exec_t s = exec_t::seq;
  Contraction fused;
  fused.dtype = dtype_t::fp64;
  fused.first_touch = prim_t::zero;
  fused.main = prim_t::gemm;
  fused.last_touch = prim_t::relu;
  // A(200 x 40, lda 200), B(40 x 200, ldb 40), C(200 x 200, ldc 200), each dim in two pieces.
  fused.dims = {Dim{dim_t::m, s, 8, 25, 0, 25},     Dim{dim_t::m, s, 25, 1, 0, 1},
                Dim{dim_t::n, s, 8, 0, 1000, 5000}, Dim{dim_t::n, s, 25, 0, 40, 200},
                Dim{dim_t::k, s, 8, 1000, 5, 0},    Dim{dim_t::k, s, 5, 200, 1, 0}};
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    TensorOperation::Options options;
    options.optimize = true;
    options.optimizer.threads = threads;
    options.optimizer.pack = false;
    run_and_check_fp64(fused, 11, options);
  }
  omp_set_num_threads(2);
  // The seed interface's entry, all dims seq.
  const std::vector<dim_t> dims{dim_t::m, dim_t::n, dim_t::k};
  const std::vector<exec_t> exec(3, exec_t::seq);
  const std::vector<std::int64_t> sizes{96, 40, 70}, s0{1, 0, 96}, s1{0, 70, 1}, so{1, 96, 0};
  TensorOperation top;
  ASSERT_EQ(top.setup_optimized(dtype_t::fp64, prim_t::none, prim_t::gemm, prim_t::none, dims, exec, sizes, s0, s1, so),
            error_t::success)
      << top.error_message();
  const Contraction ir = top.operation();
  EXPECT_EQ(ir.dtype, dtype_t::fp64);
  const Contraction given = Contraction::from_config(dtype_t::fp64, prim_t::none, prim_t::gemm, prim_t::none, dims, exec,
                                                     sizes, s0, s1, so);
  const Tensors64 t = make_tensors_fp64(given, 13);
  std::vector<double> out = t.out;
  top.execute(t.in0.data(), t.in1.data(), out.data());
  expect_matches_reference_fp64(given, t, out);
}

// Packing through the lowering: the packed copy of A is an f64 copy TPP; remainders (211 rows: no
// divisor fills a panel) run f64 tail kernels.
TEST(Fp64Optimizer, PackedLoweringWithRemainders) {
  const Contraction packed = column_major_gemm(211, 150, 90);
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    TensorOperation::Options options;
    options.optimize = true;
    options.optimizer.threads = threads;
    const std::string described = run_and_check_fp64(packed, 12, options);
    EXPECT_NE(described.find("doubles per block"), std::string::npos) << described;
    EXPECT_NE(described.find("tail blocks"), std::string::npos) << described;
  }
  omp_set_num_threads(2);
}

// A packed block taller than one register panel is copied and multiplied panel by panel (each
// panel contiguous; 80 rows: 32 + 32 + 16 doubles on AVX-512, 5 x 16 on AVX2), batch entries and
// all, with the touches around the panel calls: bit for bit the unpacked lowering's result.
TEST(Fp64Packing, PanelsWithABatchAndTouchesBitForBit) {
  const exec_t s = exec_t::seq, p = exec_t::prim;
  for (prim_t first : {prim_t::zero, prim_t::relu}) {
    Contraction op;
    op.dtype = dtype_t::fp64;
    op.first_touch = first;
    op.main = prim_t::brgemm;
    op.last_touch = first == prim_t::zero ? prim_t::relu : prim_t::square;
    // A_i(80 x 20, lda 100), B_i(20 x 12, ldb 20), C(80 x 12, ldc 100), batch of 3, n blocks of 6.
    op.dims = {Dim{dim_t::n, s, 2, 0, 120, 600}, Dim{dim_t::m, p, 80, 1, 0, 1}, Dim{dim_t::n, p, 6, 0, 20, 100},
               Dim{dim_t::k, p, 3, 2000, 240, 0}, Dim{dim_t::k, p, 20, 100, 1, 0}};
    Contraction packed = op;
    packed.pack_in0 = true;
    SCOPED_TRACE(packed.describe());
    const Tensors64 t = make_tensors_fp64(op, 61);
    TensorOperation plain, with_packing;
    ASSERT_EQ(plain.setup(op, {}), error_t::success) << plain.error_message();
    ASSERT_EQ(with_packing.setup(packed, {}), error_t::success) << with_packing.error_message();
    const jit::IsaTraits& traits = jit::isa_traits(jit::selected_isa());
    const std::int64_t panel = traits.brgemm.panel_vectors * traits.lanes(8);
    if (panel < 80) {
      EXPECT_NE(with_packing.describe().find("panels of " + std::to_string(panel) + " rows"), std::string::npos)
          << with_packing.describe();
    }
    std::vector<double> a = t.out, b = t.out;
    plain.execute(t.in0.data(), t.in1.data(), a.data());
    with_packing.execute(t.in0.data(), t.in1.data(), b.data());
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(double)));
    expect_matches_reference_fp64(op, t, b);
  }
}

// ---- einsum trees ------------------------------------------------------------------------------

// The seed's first optimization example through the tree pass (operand swaps, id orders) and the
// optimizer, in fp64, against the long double sum of every node: contractions on the f64 BRGEMM.
TEST(Fp64Einsum, OptimizedSeedTreeMatchesTheReference) {
  EinsumTree tree = parse_einsum_tree("[[8,4],[7,3,8]->[7,3,4]],[[[2,6,7],[1,5,6]->[1,2,5,7]],[0,5]->[0,1,2,7]]->[0,1,2,3,4]",
                                      {3, 4, 5, 6, 3, 7, 5, 4, 3});
  optimize_einsum_tree(tree);
  EinsumOptions options;
  options.dtype = dtype_t::fp64;
  const EinsumTreeOperation op(tree, options);
  std::vector<std::vector<double>> inputs;
  std::vector<const double*> pointers;
  for (int leaf = 0; leaf < tree.num_inputs(); ++leaf) {
    for (std::size_t i = 0; i < tree.nodes.size(); ++i)
      if (tree.nodes[i].kind == EinsumNode::Kind::leaf && tree.nodes[i].input == leaf)
        inputs.push_back(random_doubles(static_cast<std::size_t>(tree.elements(static_cast<int>(i))), 50u + static_cast<std::uint32_t>(leaf)));
  }
  for (const auto& in : inputs) pointers.push_back(in.data());
  std::vector<double> out(static_cast<std::size_t>(tree.elements(tree.root)), 0.0);
  op.execute(pointers, out.data());
  // Every node by plain loops over the union of its ids in long double (and |terms| for the bound).
  struct Value {
    std::vector<long double> v, magnitude;
  };
  const auto eval = [&](auto&& self, int index) -> Value {
    const EinsumNode& n = tree.nodes[static_cast<std::size_t>(index)];
    if (n.kind == EinsumNode::Kind::leaf) {
      const auto& in = inputs[static_cast<std::size_t>(n.input)];
      Value r;
      for (double x : in) {
        r.v.push_back(x);
        r.magnitude.push_back(std::fabs(x));
      }
      return r;
    }
    const Value a = self(self, n.left);
    const Value b = n.kind == EinsumNode::Kind::contraction ? self(self, n.right) : Value{};
    std::vector<int> ids = n.ids;
    const auto add = [&](const std::vector<int>& more) {
      for (int id : more)
        if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    };
    add(tree.nodes[static_cast<std::size_t>(n.left)].ids);
    if (n.kind == EinsumNode::Kind::contraction) add(tree.nodes[static_cast<std::size_t>(n.right)].ids);
    const auto offset = [&](const std::vector<int>& of, const std::vector<std::int64_t>& index_of_id) {
      std::int64_t o = 0;
      for (int id : of) o = o * tree.dim_sizes[static_cast<std::size_t>(id)] + index_of_id[static_cast<std::size_t>(id)];
      return static_cast<std::size_t>(o);
    };
    Value r;
    r.v.assign(static_cast<std::size_t>(tree.elements(index)), 0.0L);
    r.magnitude.assign(r.v.size(), 0.0L);
    std::vector<std::int64_t> at(tree.dim_sizes.size(), 0);
    for (;;) {
      const std::size_t o = offset(n.ids, at), ia = offset(tree.nodes[static_cast<std::size_t>(n.left)].ids, at);
      if (n.kind == EinsumNode::Kind::contraction) {
        const std::size_t ib = offset(tree.nodes[static_cast<std::size_t>(n.right)].ids, at);
        r.v[o] += a.v[ia] * b.v[ib];
        r.magnitude[o] += a.magnitude[ia] * b.magnitude[ib];
      } else {
        r.v[o] = a.v[ia];
        r.magnitude[o] = a.magnitude[ia];
      }
      std::size_t d = ids.size();
      while (d > 0) {
        const auto id = static_cast<std::size_t>(ids[d - 1]);
        if (++at[id] < tree.dim_sizes[id]) break;
        at[id] = 0;
        --d;
      }
      if (d == 0) break;
    }
    return r;
  };
  const Value want = eval(eval, tree.root);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < out.size() && bad < 5; ++i) {
    // Three levels of sums, each of at most 8 * 7 terms: a loose (3 * 64) u of the magnitude.
    const double tol = 192 * 0x1p-53 * static_cast<double>(want.magnitude[i]);
    if (!(std::fabs(out[i] - static_cast<double>(want.v[i])) <= tol)) {
      ADD_FAILURE() << "element " << i << ": got " << out[i] << ", want " << static_cast<double>(want.v[i]);
      ++bad;
    }
  }
}

TEST(Fp64Einsum, ContractionTreeMatchesTheReference) {
  // [0,1] x [1,2] -> [0,2], then x [2,3] -> [0,3]; row-major, the last id unit-stride.
  const EinsumTree tree = parse_einsum_tree("[[0,1],[1,2]->[0,2]],[2,3]->[0,3]", {7, 11, 9, 5});
  EinsumOptions options;
  options.dtype = dtype_t::fp64;
  options.threads = 2;
  const EinsumTreeOperation op(tree, options);
  const std::vector<double> a = random_doubles(7 * 11, 1), b = random_doubles(11 * 9, 2), c = random_doubles(9 * 5, 3);
  std::vector<double> out(7 * 5, -7.0);
  const std::vector<const double*> inputs{a.data(), b.data(), c.data()};
  op.execute(inputs, out.data());
  for (int i = 0; i < 7; ++i)
    for (int l = 0; l < 5; ++l) {
      long double want = 0, magnitude = 0;
      for (int k = 0; k < 9; ++k) {
        long double ab = 0, ab_abs = 0;
        for (int j = 0; j < 11; ++j) {
          ab += static_cast<long double>(a[static_cast<std::size_t>(i * 11 + j)]) * b[static_cast<std::size_t>(j * 9 + k)];
          ab_abs += std::fabs(static_cast<long double>(a[static_cast<std::size_t>(i * 11 + j)]) *
                              b[static_cast<std::size_t>(j * 9 + k)]);
        }
        want += ab * c[static_cast<std::size_t>(k * 5 + l)];
        magnitude += ab_abs * std::fabs(c[static_cast<std::size_t>(k * 5 + l)]);
      }
      // Two levels of sums in double: (11 + 9 + 4) u of the magnitude.
      EXPECT_NEAR(out[static_cast<std::size_t>(i * 5 + l)], static_cast<double>(want),
                  24 * 0x1p-53 * static_cast<double>(magnitude))
          << i << ", " << l;
    }
  // The float overload refuses an fp64 operation (and the other way round).
  std::vector<float> f(64);
  const std::vector<const float*> float_inputs{f.data(), f.data(), f.data()};
  try {
    op.execute(float_inputs, f.data());
    FAIL();
  } catch (const weft::Error& e) {
    EXPECT_NE(std::string(e.what()).find("built for fp64"), std::string::npos) << e.what();
  }
  const EinsumTreeOperation op32(tree);
  EXPECT_THROW(op32.execute(inputs, out.data()), weft::Error);
  EinsumOptions bad;
  bad.dtype = static_cast<dtype_t>(5);
  try {
    const EinsumTreeOperation refused(tree, bad);
    FAIL();
  } catch (const weft::Error& e) {
    EXPECT_NE(std::string(e.what()).find("dtype_t(5)"), std::string::npos) << e.what();
  }
}

// ---- errors ------------------------------------------------------------------------------------

// Transcendental primitives have no fp64 TPP: each slot reports its own error code, naming the
// primitive and the dtype, before anything is generated.
TEST(Fp64Errors, TranscendentalPrimitivesAreRefused) {
  struct Case {
    prim_t first, main, last;
    error_t code;
    const char* says;
  };
  const Contraction gemm = fp64(seed_config(prim_t::none, prim_t::gemm, prim_t::none, false, 2, 2));
  Contraction elementwise;
  elementwise.dtype = dtype_t::fp64;
  elementwise.dims = {Dim{dim_t::c, exec_t::prim, 8, 1, 0, 1}};
  const Case cases[] = {
      {prim_t::sigmoid, prim_t::gemm, prim_t::none, error_t::err_wrong_first_touch_primitive, "prim_first_touch is sigmoid"},
      {prim_t::zero, prim_t::gemm, prim_t::exp, error_t::err_wrong_last_touch_primitive, "prim_last_touch is exp"},
      {prim_t::none, prim_t::tanh, prim_t::none, error_t::err_wrong_main_primitive, "prim_main is tanh"},
      {prim_t::none, prim_t::copy, prim_t::gelu, error_t::err_wrong_last_touch_primitive, "prim_last_touch is gelu"},
  };
  for (const Case& c : cases) {
    Contraction op = is_gemm_like(c.main) ? gemm : elementwise;
    op.first_touch = c.first;
    op.main = c.main;
    op.last_touch = c.last;
    for (bool optimized : {false, true}) {
      TensorOperation top;
      TensorOperation::Options options;
      options.optimize = optimized;
      EXPECT_EQ(top.setup(op, options), c.code) << top.error_message();
      EXPECT_NE(top.error_message().find(c.says), std::string::npos) << top.error_message();
      EXPECT_NE(top.error_message().find("fp64"), std::string::npos) << top.error_message();
    }
    // In fp32 the same operation sets up.
    op.dtype = dtype_t::fp32;
    TensorOperation top32;
    EXPECT_EQ(top32.setup(op, {}), error_t::success) << top32.error_message();
  }
}

TEST(Fp64Errors, DtypeValuesOutsideTheEnum) {
  Contraction op = seed_config(prim_t::none, prim_t::gemm, prim_t::none, false, 2, 2);
  op.dtype = static_cast<dtype_t>(2);
  TensorOperation top;
  EXPECT_EQ(top.setup(op, {}), error_t::err_wrong_dtype);
  EXPECT_NE(top.error_message().find("dtype_t(2)"), std::string::npos) << top.error_message();
  EXPECT_EQ(top.setup_optimized(static_cast<dtype_t>(7), prim_t::none, prim_t::gemm, prim_t::none,
                                std::vector<dim_t>{dim_t::m}, std::vector<exec_t>{exec_t::seq},
                                std::vector<std::int64_t>{4}, std::vector<std::int64_t>{1}, {},
                                std::vector<std::int64_t>{1}),
            error_t::err_wrong_dtype);
  EXPECT_NE(top.error_message().find("dtype_t(7)"), std::string::npos) << top.error_message();
  EXPECT_THROW(top.execute(nullptr, nullptr, nullptr), weft::Error);
}

TEST(Fp64Errors, TheReferenceChecksTheElementType) {
  const Contraction op = fp64(seed_config(prim_t::none, prim_t::gemm, prim_t::none, false, 1, 1));
  std::vector<float> f(extent(op, &Dim::stride_out) + extent(op, &Dim::stride_in0) + extent(op, &Dim::stride_in1));
  try {
    reference_contraction(op, f.data(), f.data(), f.data());
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.code(), error_t::err_wrong_dtype);
    EXPECT_NE(std::string(e.what()).find("fp64"), std::string::npos) << e.what();
  }
  std::vector<double> d(4);
  Contraction op32 = op;
  op32.dtype = dtype_t::fp32;
  EXPECT_THROW(reference_contraction(op32, d.data(), d.data(), d.data()), ConfigError);
}

}  // namespace
}  // namespace weft::tensor::test
