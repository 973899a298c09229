// Operand packing: the pass (pack_operands) re-blocks large GEMMs around per-thread packed A
// panels; the lowering (Contraction::pack_in0) packs in0 blocks for any gemm/brgemm on the BRGEMM
// TPP. Results against the reference on 1-4 threads, with touches, batches, k chunks, loop_string
// overrides and concurrent executions.
#include <omp.h>

#include <thread>

#include "tensor_test_support.hpp"
#include "weft/tensor/lowering.hpp"
#include "weft/tensor/passes.hpp"
#include "weft/tensor/tensor_operation.hpp"

namespace weft::tensor::test {
namespace {

using einsum::backend::TensorOperation;

// Column-major C(M x N) = A(M x K) * B(K x N), all dims seq (the seed's 1600^3 GEMM, smaller).
Contraction column_major_gemm(std::int64_t m, std::int64_t n, std::int64_t k, prim_t first = prim_t::none,
                              prim_t last = prim_t::none) {
  const exec_t s = exec_t::seq;
  Contraction op;
  op.first_touch = first;
  op.main = prim_t::gemm;
  op.last_touch = last;
  op.dims = {Dim{dim_t::m, s, m, 1, 0, 1}, Dim{dim_t::n, s, n, 0, k, m}, Dim{dim_t::k, s, k, m, 1, 0}};
  return op;
}

// Every threshold off: the test sizes are small.
PackOptions small_pack(std::int64_t panel_rows, std::int64_t block_cols,
                       std::int64_t max_panel_bytes = std::int64_t{256} << 10) {
  return {.panel_rows = panel_rows, .block_cols = block_cols, .max_panel_bytes = max_panel_bytes,
          .min_columns = 1, .min_a_bytes = 0};
}

void run_and_check(const Contraction& original, const Contraction& lowered_op, std::uint32_t seed,
                   const LoweringOverride* override = nullptr) {
  SCOPED_TRACE(lowered_op.describe());
  LoweredOperation lowered(lowered_op, override);
  const Tensors t = make_tensors(original, seed);
  std::vector<float> out = t.out;
  lowered.execute(t.in0.data(), t.in1.data(), out.data());
  expect_matches_reference(original, t, out);
}

// Sets op up through the optimizer (with `packing`) on `threads` threads, runs it once on random
// tensors and checks the result; returns the operation for further checks.
TensorOperation optimize_run_and_check(const Contraction& op, int threads, const PackOptions& packing,
                                       std::uint32_t seed) {
  TensorOperation::Options options;
  options.optimize = true;
  options.optimizer.threads = threads;
  options.optimizer.packing = packing;
  TensorOperation top;
  EXPECT_EQ(top.setup(op, options), error_t::success) << top.error_message();
  if (top.error() != error_t::success) return top;
  const Tensors t = make_tensors(op, seed);
  std::vector<float> out = t.out;
  top.execute(t.in0.data(), t.in1.data(), out.data());
  expect_matches_reference(op, t, out);
  return top;
}

TEST(OperandPacking, ReblocksALargeGemmAroundPackedPanels) {
  const Contraction op = column_major_gemm(96, 80, 72);
  Contraction p = op;
  ASSERT_TRUE(pack_operands(p, small_pack(32, 16)));
  EXPECT_TRUE(p.pack_in0);
  EXPECT_EQ(p.main, prim_t::gemm);
  // m blocks outermost, n blocks inside (each A panel serves the whole n sweep), K whole.
  const exec_t s = exec_t::seq, pr = exec_t::prim;
  const std::vector<Dim> want{Dim{dim_t::m, s, 3, 32, 0, 32},       Dim{dim_t::n, s, 5, 0, 16 * 72, 16 * 96},
                              Dim{dim_t::m, pr, 32, 1, 0, 1},       Dim{dim_t::n, pr, 16, 0, 72, 96},
                              Dim{dim_t::k, pr, 72, 96, 1, 0}};
  EXPECT_EQ(p.dims, want);
  for (int threads = 1; threads <= 4; ++threads) {
    omp_set_num_threads(threads);
    Contraction q = p;
    parallelize(q, {.threads = threads});
    run_and_check(op, q, 1);
  }
  omp_set_num_threads(2);
}

TEST(OperandPacking, ChunksTheReductionWhenThePanelOutgrowsItsBudget) {
  // 32 rows x 24 floats per panel at most: K = 72 runs as 3 chunks, a k loop between m and n.
  const Contraction op = column_major_gemm(64, 48, 72, prim_t::zero, prim_t::relu);
  Contraction p = op;
  ASSERT_TRUE(pack_operands(p, small_pack(32, 16, 32 * 24 * 4)));
  ASSERT_EQ(p.dims.size(), 6u);
  EXPECT_EQ(p.dims[1].type, dim_t::k);
  EXPECT_EQ(p.dims[1].size, 3);
  EXPECT_EQ(p.dims[5].size, 24);
  for (int threads = 1; threads <= 4; ++threads) {
    omp_set_num_threads(threads);
    Contraction q = p;
    parallelize(q, {.threads = threads});
    run_and_check(op, q, 2);
  }
  omp_set_num_threads(2);
}

TEST(OperandPacking, TouchesThroughTheOptimizer) {
  // zero / relu fuse into the kernel; relu / square and copy / sigmoid run as touch kernels.
  const std::pair<prim_t, prim_t> touches[] = {{prim_t::zero, prim_t::relu},
                                               {prim_t::relu, prim_t::square},
                                               {prim_t::copy, prim_t::sigmoid},
                                               {prim_t::none, prim_t::none}};
  for (auto [first, last] : touches) {
    const Contraction op = column_major_gemm(64, 40, 48, first, last);
    for (int threads = 1; threads <= 4; ++threads) {
      omp_set_num_threads(threads);
      const TensorOperation top = optimize_run_and_check(op, threads, small_pack(16, 8, 16 * 16 * 4), 3);
      EXPECT_TRUE(top.operation().pack_in0);
      EXPECT_NE(top.describe().find("in0 packed per thread"), std::string::npos);
    }
  }
  omp_set_num_threads(2);
}

TEST(OperandPacking, TheSeedsLargeGemmPacksWithTheDefaults) {
  // 1600^3 and (64,25,64,25,64,25) fuse to the same GEMM: 50 x 32-row panels (AVX2), 32 x 50
  // columns, the whole K per call. Only the plan is checked (the GEMM itself is for benchmarks).
  Contraction op = column_major_gemm(1600, 1600, 1600);
  ASSERT_TRUE(pack_operands(op, {.panel_rows = 32}));
  ASSERT_EQ(op.dims.size(), 5u);
  EXPECT_EQ(op.dims[0].size, 50);
  EXPECT_EQ(op.dims[1].size, 32);
  EXPECT_EQ(op.dims[4].size, 1600);
  Contraction seed;
  seed.main = prim_t::gemm;
  const exec_t s = exec_t::seq;
  seed.dims = {Dim{dim_t::m, s, 64, 25, 0, 25},       Dim{dim_t::m, s, 25, 1, 0, 1},
               Dim{dim_t::n, s, 64, 0, 40000, 40000}, Dim{dim_t::n, s, 25, 0, 1600, 1600},
               Dim{dim_t::k, s, 64, 40000, 25, 0},    Dim{dim_t::k, s, 25, 1600, 1, 0}};
  optimize(seed, {.threads = 2, .packing = {.panel_rows = 32}});
  EXPECT_TRUE(seed.pack_in0);
  EXPECT_EQ(seed.dims[0].exec, exec_t::shared);  // 50 panels over 2 threads
  EXPECT_EQ(seed.dims[1].exec, exec_t::seq);
}

// The m blocks are what the threads share: with 64-row panels 1600 rows make 25 blocks, 13 + 12 on
// two threads (4 % of the time lost, measured 0.95x OpenBLAS on Zen 4); the pass picks a panel
// height in whole vectors whose block count splits evenly, and keeps full panels on one thread.
TEST(OperandPacking, MBlocksSplitEvenlyOverTheThreads) {
  for (int threads : {1, 2, 4}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    Contraction op = column_major_gemm(1600, 1600, 1600);
    ASSERT_TRUE(pack_operands(op, {.panel_rows = 64, .threads = threads}));
    const Dim& blocks = op.dims[0];
    ASSERT_EQ(blocks.type, dim_t::m);
    const std::int64_t rows = 1600 / blocks.size;
    EXPECT_EQ(rows * blocks.size, 1600);
    EXPECT_EQ(rows % 8, 0);
    if (threads == 1) {
      EXPECT_EQ(rows, 64);
    } else {
      EXPECT_EQ(blocks.size % threads, 0) << rows << "-row blocks";
      EXPECT_GE(rows, 32);
    }
  }
  // Through the optimizer, which passes its thread count on.
  Contraction op = column_major_gemm(1600, 1600, 1600);
  optimize(op, {.threads = 2, .packing = {.panel_rows = 64}});
  ASSERT_TRUE(op.pack_in0);
  EXPECT_EQ(op.dims[0].exec, exec_t::shared);
  EXPECT_EQ(op.dims[0].size % 2, 0);
}

TEST(OperandPacking, DeclinesWhatItDoesNotHelp) {
  const PackOptions any = small_pack(32, 16);
  // Small: the default thresholds keep it as it is.
  Contraction small = column_major_gemm(96, 80, 72);
  const Contraction before = small;
  EXPECT_FALSE(pack_operands(small));
  EXPECT_EQ(small, before);
  // A block contiguous already (M fits a panel and lda == M).
  Contraction narrow = column_major_gemm(24, 80, 72);
  EXPECT_FALSE(pack_operands(narrow, any));
  // No m dim unit-stride in in0 and out; element-wise operations.
  Contraction transposed = column_major_gemm(96, 80, 72);
  transposed.dims[0].stride_in0 = 72;
  transposed.dims[2].stride_in0 = 1;
  EXPECT_FALSE(pack_operands(transposed, any));
  Contraction relu;
  relu.main = prim_t::relu;
  relu.dims = {Dim{dim_t::c, exec_t::seq, 64, 1, 0, 1}};
  EXPECT_FALSE(pack_operands(relu, any));
  // Split with remainders already (the pass does not re-block those).
  Contraction ragged = column_major_gemm(97, 80, 72);
  ASSERT_TRUE(pack_operands(ragged, any));
  Contraction again = ragged;
  EXPECT_FALSE(pack_operands(again, any));
  EXPECT_EQ(again, ragged);
}

// ---- remainders (Dim::last_block) ----------------------------------------------------------------

// Splits dim i of op into (outer, inner = block) in place, outer first; a remainder when block
// does not divide the size.
void ragged_split(Contraction& op, std::size_t i, std::int64_t block) {
  Dim& inner = op.dims[i];
  Dim outer = inner;
  outer.exec = exec_t::seq;
  outer.size = (inner.size + block - 1) / block;
  outer.last_block = inner.size % block;
  outer.stride_in0 *= block;
  outer.stride_in1 *= block;
  outer.stride_out *= block;
  inner.size = block;
  inner.exec = exec_t::prim;
  op.dims.insert(op.dims.begin() + static_cast<std::ptrdiff_t>(i), outer);
}

TEST(Remainders, TheReferenceSkipsThePointsPastTheLastBlock) {
  const Contraction op = column_major_gemm(37, 29, 23, prim_t::zero, prim_t::relu);
  Contraction ragged = op;
  ragged_split(ragged, 2, 8);  // k: 3 x 8, last 7
  ragged_split(ragged, 1, 10);  // n: 3 x 10, last 9
  ragged_split(ragged, 0, 8);  // m: 5 x 8, last 5
  ASSERT_EQ(ragged.dims.size(), 6u);
  EXPECT_EQ(ragged.dims[0].last_block, 5);
  EXPECT_NE(ragged.describe().find("last block 5"), std::string::npos);
  const Tensors t = make_tensors(op, 12);
  std::vector<float> want = t.out, got = t.out;
  reference_contraction(op, t.in0.data(), t.in1.data(), want.data());
  reference_contraction(ragged, t.in0.data(), t.in1.data(), got.data());
  EXPECT_EQ(want, got);  // the same points in the same order
}

TEST(Remainders, TailKernelsForEveryCombinationOfLastBlocks) {
  // m, n and k each with a remainder: 8 combinations of full and tail blocks, each with its own
  // BRGEMM (and touch kernels), on 1-4 threads, packed and not, with touches fused and separate.
  const std::pair<prim_t, prim_t> touches[] = {{prim_t::zero, prim_t::relu},
                                               {prim_t::relu, prim_t::square},
                                               {prim_t::none, prim_t::none}};
  for (auto [first, last] : touches)
    for (const bool pack : {false, true}) {
      const Contraction op = column_major_gemm(37, 29, 23, first, last);
      Contraction ragged = op;
      ragged_split(ragged, 2, 8);
      ragged_split(ragged, 1, 10);
      ragged_split(ragged, 0, 8);
      ragged.pack_in0 = pack;
      {
        const LoweredOperation lowered(ragged);
        EXPECT_NE(lowered.describe().find("tail blocks ( m n k ), 5 x 9 x 7"), std::string::npos)
            << lowered.describe();
      }
      for (int threads = 1; threads <= 4; ++threads) {
        omp_set_num_threads(threads);
        Contraction q = ragged;
        parallelize(q, {.threads = threads, .imbalance = 0.5});
        run_and_check(op, q, 13);
        // k outermost, then the shared m loop (each thread owns its output blocks throughout).
        Contraction k_first = ragged;
        std::rotate(k_first.dims.begin(), k_first.dims.begin() + 4, k_first.dims.begin() + 5);
        k_first.dims[1].exec = exec_t::shared;
        run_and_check(op, k_first, 14);
      }
    }
  omp_set_num_threads(2);
}

TEST(Remainders, BatchReduceWithTailBlocks) {
  // A plain column-major batch: C(40 x 36) += sum_b A_b(40 x 16) B_b(16 x 36), m and n ragged.
  const exec_t s = exec_t::seq, pr = exec_t::prim;
  Contraction batch;
  batch.first_touch = prim_t::zero;
  batch.main = prim_t::brgemm;
  batch.dims = {Dim{dim_t::k, pr, 4, 40 * 16, 16 * 36, 0}, Dim{dim_t::m, s, 40, 1, 0, 1},
                Dim{dim_t::n, s, 36, 0, 16, 40}, Dim{dim_t::k, pr, 16, 40, 1, 0}};
  Contraction ragged = batch;
  ragged_split(ragged, 2, 16);  // n: 3 x 16, last 4
  ragged_split(ragged, 1, 16);  // m: 3 x 16, last 8
  for (int threads = 1; threads <= 3; ++threads) {
    omp_set_num_threads(threads);
    Contraction q = ragged;
    parallelize(q, {.threads = threads, .imbalance = 0.5});
    run_and_check(batch, q, 15);
    q.pack_in0 = true;
    run_and_check(batch, q, 16);
  }
  omp_set_num_threads(2);
}

TEST(Remainders, PackingSizesWithoutGoodDivisors) {
  // 97 rows (32-row panels: 3 + 1), 83 columns (blocks of 16: 5 + 3), K = 71 in chunks of 24
  // (2 + 23): remainders everywhere, on 1-4 threads, through the optimizer, with touches.
  const Contraction op = column_major_gemm(97, 83, 71, prim_t::zero, prim_t::relu);
  Contraction p = op;
  ASSERT_TRUE(pack_operands(p, small_pack(32, 16, 32 * 24 * 4)));
  ASSERT_EQ(p.dims.size(), 6u);
  EXPECT_EQ(p.dims[0].size, 4);
  EXPECT_EQ(p.dims[0].last_block, 1);
  EXPECT_EQ(p.dims[1].last_block, 23);
  EXPECT_EQ(p.dims[2].last_block, 3);
  for (int threads = 1; threads <= 4; ++threads) {
    omp_set_num_threads(threads);
    Contraction q = p;
    parallelize(q, {.threads = threads});
    run_and_check(op, q, 17);
    for (const auto& [first, last] : {std::pair{prim_t::copy, prim_t::sigmoid}, std::pair{prim_t::none, prim_t::none}}) {
      Contraction touched = column_major_gemm(97, 83, 71, first, last);
      optimize_run_and_check(touched, threads, small_pack(32, 16, 32 * 24 * 4), 18);
    }
  }
  omp_set_num_threads(2);
}

TEST(Remainders, ThePrime1601GemmIsSplitAndPacked) {
  Contraction op = column_major_gemm(1601, 1601, 1601);
  ASSERT_TRUE(pack_operands(op, {.panel_rows = 32}));
  ASSERT_EQ(op.dims.size(), 5u);
  EXPECT_EQ(op.dims[0].size, 51);  // 50 panels of 32 rows and one of 1
  EXPECT_EQ(op.dims[0].last_block, 1);
  EXPECT_EQ(op.dims[1].size, 33);  // 32 blocks of 50 columns and one of 1
  EXPECT_EQ(op.dims[1].last_block, 1);
  EXPECT_EQ(op.dims[4].size, 1601);  // the whole K
  validate(op);
}

TEST(Remainders, InvalidLastBlocksAreErrors) {
  const auto code_of = [](const Contraction& op) {
    try {
      validate(op);
    } catch (const ConfigError& e) {
      return e.code();
    }
    return error_t::success;
  };
  Contraction good = column_major_gemm(37, 29, 23);
  ragged_split(good, 0, 8);
  ragged_split(good, 2, 10);  // n
  ragged_split(good, 4, 8);   // k
  EXPECT_EQ(code_of(good), error_t::success);
  Contraction too_long = good;
  too_long.dims[0].last_block = 8;  // a full block is no remainder
  EXPECT_EQ(code_of(too_long), error_t::err_wrong_dimension);
  Contraction no_partner = good;
  no_partner.dims[0].stride_in0 = 7;
  EXPECT_EQ(code_of(no_partner), error_t::err_invalid_primitive_configuration);
  Contraction loop_partner = good;
  loop_partner.dims[1].exec = exec_t::seq;  // the m block as a loop: no tail kernel for it
  EXPECT_EQ(code_of(loop_partner), error_t::err_invalid_primitive_configuration);
  Contraction elementwise;
  elementwise.main = prim_t::relu;
  elementwise.dims = {Dim{dim_t::c, exec_t::seq, 3, 8, 0, 8, 5}, Dim{dim_t::c, exec_t::prim, 8, 1, 0, 1}};
  EXPECT_EQ(code_of(elementwise), error_t::err_invalid_primitive_configuration);
  TensorOperation top;
  EXPECT_EQ(top.setup(too_long, {}), error_t::err_wrong_dimension);
  EXPECT_NE(top.error_message().find("last block"), std::string::npos);
}

TEST(Remainders, LoweringChecksThePrimDimsWhateverTheOptionsSay) {
  // The batch-reduce dim as the inner block of a remainder: the lowering has no tail kernel for
  // it. With check_primitives = false it used to skip that check and run a k tail instead.
  const exec_t s = exec_t::seq, pr = exec_t::prim;
  Contraction batch;
  batch.main = prim_t::brgemm;
  batch.dims = {Dim{dim_t::n, s, 2, 0, 16 * 16, 16 * 16}, Dim{dim_t::k, pr, 5, 16 * 16, 2 * 16 * 16, 0},
                Dim{dim_t::m, pr, 16, 1, 0, 1}, Dim{dim_t::n, pr, 16, 0, 16, 16},
                Dim{dim_t::k, pr, 16, 16, 1, 0}};
  ragged_split(batch, 1, 3);  // the batch: 2 x 3, last 2
  for (const bool check_primitives : {true, false}) {
    try {
      const LoweredOperation lowered(batch, nullptr, {.check_primitives = check_primitives});
      ADD_FAILURE() << "lowered with check_primitives = " << check_primitives;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.code(), error_t::err_invalid_primitive_configuration);
      EXPECT_NE(std::string(e.what()).find("batch-reduce"), std::string::npos) << e.what();
    }
  }
}

TEST(Remainders, PassesKeepRemaindersIntact) {
  Contraction op = column_major_gemm(37, 29, 23);
  ragged_split(op, 0, 8);
  Contraction fused = op;
  EXPECT_EQ(fuse_dimensions(fused, {.small_size = 1000}), 0);  // (5 x 8 -> 40 would lose the last block)
  Contraction split = op;
  split.dims[0].size = 300;  // a long ragged outer loop is not split again
  split_dimensions(split, {.target = 4, .min_inner = 2, .max_size = 6});
  EXPECT_EQ(split.dims[0].size, 300);
  Contraction folded = column_major_gemm(37, 29, 23);
  ragged_split(folded, 2, 8);  // k loop innermost, with a remainder: not a batch
  folded.dims[0].exec = folded.dims[1].exec = exec_t::prim;
  std::rotate(folded.dims.begin(), folded.dims.begin() + 2, folded.dims.begin() + 3);
  EXPECT_FALSE(fold_reduction_into_batch(folded));
}

TEST(OperandPacking, LoweringPacksSeedConfigurationsBitForBit) {
  // pack_in0 on the seed's GEMM and BRGEMM configurations (batch 8 of 32 x 32 blocks): the kernel
  // reads a copy of the same blocks in the same order, so the results are identical.
  for (const prim_t main : {prim_t::gemm, prim_t::brgemm}) {
    const bool brgemm = main == prim_t::brgemm;
    for (int threads = 1; threads <= 4; ++threads) {
      omp_set_num_threads(threads);
      Contraction op = seed_config(prim_t::zero, main, prim_t::relu, brgemm, 5, 3);
      op.dims[0].exec = exec_t::shared;
      Contraction packed = op;
      packed.pack_in0 = true;
      Tensors t = make_tensors(op, 4);
      std::vector<float> plain_out = t.out, packed_out = t.out;
      LoweredOperation plain(op), with_packing(packed);
      EXPECT_NE(with_packing.describe().find("in0 packed per thread"), std::string::npos);
      plain.execute(t.in0.data(), t.in1.data(), plain_out.data());
      with_packing.execute(t.in0.data(), t.in1.data(), packed_out.data());
      EXPECT_EQ(plain_out, packed_out);
      expect_matches_reference(op, t, packed_out);
      // Again with new values at the same address: nothing stale survives an execution.
      const std::vector<float> fresh = random_vector(t.in0.size(), 5);
      std::copy(fresh.begin(), fresh.end(), t.in0.begin());
      std::vector<float> again = t.out;
      with_packing.execute(t.in0.data(), t.in1.data(), again.data());
      expect_matches_reference(op, t, again);
    }
  }
  omp_set_num_threads(2);
}

TEST(OperandPacking, AnyLoopOrderFromAnOverride) {
  // The tuner's loop_string may walk the blocks in any order; a thread repacks when its block
  // changes, so the results stay right (here n outside m: a new A panel on every call).
  Contraction op = column_major_gemm(64, 48, 40, prim_t::zero, prim_t::none);
  Contraction p = op;
  ASSERT_TRUE(pack_operands(p, small_pack(16, 8)));
  ASSERT_EQ(p.dims.size(), 5u);  // loops a = m blocks (4), b = n blocks (6)
  for (int threads = 1; threads <= 4; ++threads) {
    omp_set_num_threads(threads);
    const LoweringOverride n_outside{.loop_string = "Ba", .block_sizes = {}};
    run_and_check(op, p, 6, &n_outside);
    const LoweringOverride blocked{.loop_string = "aBb", .block_sizes = {{}, {2}}};
    run_and_check(op, p, 7, &blocked);
  }
  omp_set_num_threads(2);
}

TEST(OperandPacking, ConcurrentExecutionsOfOneOperation) {
  // Two threads execute the same lowered operation at once: the second gets its own buffers.
  const Contraction op = column_major_gemm(64, 48, 40);
  Contraction p = op;
  ASSERT_TRUE(pack_operands(p, small_pack(16, 8)));
  const LoweredOperation lowered(p);
  const Tensors t0 = make_tensors(op, 8), t1 = make_tensors(op, 9);
  std::vector<float> out0 = t0.out, out1 = t1.out;
  auto run = [&](const Tensors& t, std::vector<float>& out) {
    for (int i = 0; i < 20; ++i) {
      std::vector<float> o = t.out;
      lowered.execute(t.in0.data(), t.in1.data(), o.data());
      if (i == 19) out = o;
    }
  };
  std::thread a(run, std::cref(t0), std::ref(out0)), b(run, std::cref(t1), std::ref(out1));
  a.join();
  b.join();
  expect_matches_reference(op, t0, out0);
  expect_matches_reference(op, t1, out1);
}

TEST(OperandPacking, IgnoredWhereNoBrgemmRunsTheBlock) {
  // Element-wise operations and portable GEMM kernels read in place; the flag changes nothing.
  Contraction relu;
  relu.main = prim_t::relu;
  relu.pack_in0 = true;
  relu.dims = {Dim{dim_t::c, exec_t::seq, 6, 16, 0, 16}, Dim{dim_t::c, exec_t::prim, 16, 1, 0, 1}};
  Contraction plain_relu = relu;
  plain_relu.pack_in0 = false;
  run_and_check(plain_relu, relu, 10);
  EXPECT_EQ(LoweredOperation(relu).describe().find("packed"), std::string::npos);
  const exec_t s = exec_t::seq, pr = exec_t::prim;
  Contraction generic;
  generic.first_touch = prim_t::zero;
  generic.main = prim_t::gemm;
  generic.pack_in0 = true;
  generic.dims = {Dim{dim_t::c, s, 2, 60, 60, 80}, Dim{dim_t::m, pr, 4, 6, 0, 5},
                  Dim{dim_t::n, pr, 5, 0, 1, 1}, Dim{dim_t::k, pr, 6, 1, 5, 0}};
  const LoweredOperation lowered(generic, nullptr, {.allow_generic_primitives = true});
  EXPECT_EQ(lowered.describe().find("packed"), std::string::npos);
  const Tensors t = make_tensors(generic, 11);
  std::vector<float> out = t.out;
  lowered.execute(t.in0.data(), t.in1.data(), out.data());
  expect_matches_reference(generic, t, out);
}

// A nest without a parallel level runs on the calling thread, whose number in its team picks the
// packing slot: every thread of a team executing one packed sequential operation at once must
// get a slot of its own (a team of 3 indexed slot 2 of 1 before the slots followed the caller).
TEST(Packing, SequentialPackedOperationCalledByEveryThreadOfATeam) {
  const Contraction op = column_major_gemm(37, 29, 23, prim_t::zero, prim_t::relu);
  Contraction packed = op;
  ragged_split(packed, 2, 8);
  ragged_split(packed, 1, 10);
  ragged_split(packed, 0, 8);
  packed.pack_in0 = true;
  const LoweredOperation lowered(packed);
  ASSERT_NE(lowered.describe().find("in0 packed per thread"), std::string::npos) << lowered.describe();
  const Tensors t = make_tensors(op, 21);
  std::vector<float> want = t.out;
  reference_contraction(op, t.in0.data(), t.in1.data(), want.data());
  std::vector<std::vector<float>> got(3, t.out);
#pragma omp parallel num_threads(3)
  {
    auto& mine = got[static_cast<std::size_t>(omp_get_thread_num())];
    for (int repeat = 0; repeat < 4; ++repeat) {
      mine = t.out;
      lowered.execute(t.in0.data(), t.in1.data(), mine.data());
    }
  }
  for (const auto& g : got) expect_matches_reference(op, t, g);
}


}  // namespace
}  // namespace weft::tensor::test
