// Each optimizer pass, alone and in the pipeline, keeps the result of randomized contractions
// identical to the reference (fixed seeds), on 1-4 threads; and the passes do what they promise on
// the seed documents' optimizer inputs.
#include <omp.h>

#include <numeric>

#include "tensor_test_support.hpp"
#include "weft/tensor/lowering.hpp"
#include "weft/tensor/passes.hpp"

namespace weft::tensor::test {
namespace {

// A random dense contraction, all dims seq, in a random order. Layouts are row-major in a random
// order of each tensor's dims, with one m last in in0 and out and one k last in in1 (the BRGEMM
// layout), sometimes with a dim split in two adjacent pieces (fusible).
Contraction random_contraction(std::mt19937& gen) {
  std::uniform_int_distribution<int> count(1, 2), size(1, 9), coin(0, 1);
  struct Logical {
    dim_t type;
    std::int64_t size;
  };
  std::vector<Logical> logical;
  for (dim_t t : {dim_t::m, dim_t::n, dim_t::k}) {
    const int c = count(gen);
    for (int i = 0; i < c; ++i) logical.push_back({t, size(gen) + (i == 0 ? 3 : 0)});
  }
  if (coin(gen)) logical.push_back({dim_t::c, static_cast<std::int64_t>(size(gen))});
  const std::size_t n = logical.size();
  Contraction op;
  op.first_touch = coin(gen) ? prim_t::zero : prim_t::none;
  op.main = prim_t::gemm;
  op.last_touch = coin(gen) ? prim_t::relu : prim_t::none;
  op.dims.resize(n);
  for (std::size_t i = 0; i < n; ++i) op.dims[i] = Dim{logical[i].type, exec_t::seq, logical[i].size, 0, 0, 0};
  const auto layout = [&](std::int64_t Dim::*stride, auto in_tensor, dim_t last_type) {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < n; ++i)
      if (in_tensor(op.dims[i].type)) order.push_back(i);
    std::shuffle(order.begin(), order.end(), gen);
    auto last = std::find_if(order.begin(), order.end(), [&](std::size_t i) { return op.dims[i].type == last_type; });
    std::iter_swap(last, order.end() - 1);
    std::int64_t s = 1;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      op.dims[*it].*stride = s;
      s *= op.dims[*it].size;
    }
  };
  layout(&Dim::stride_in0, [](dim_t t) { return t != dim_t::n; }, dim_t::m);
  layout(&Dim::stride_in1, [](dim_t t) { return t != dim_t::m; }, dim_t::k);
  // out: the same m last as in0 so the BRGEMM layout exists.
  std::size_t m_last = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (op.dims[i].type == dim_t::m && op.dims[i].stride_in0 == 1) m_last = i;
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < n; ++i)
    if (op.dims[i].type != dim_t::k && i != m_last) order.push_back(i);
  std::shuffle(order.begin(), order.end(), gen);
  order.push_back(m_last);
  std::int64_t s = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    op.dims[*it].stride_out = s;
    s *= op.dims[*it].size;
  }
  std::shuffle(op.dims.begin(), op.dims.end(), gen);
  return op;
}

// Splits a dim into two adjacent pieces, so fusion has something to do.
void presplit(Contraction& op, std::mt19937& gen) {
  for (std::size_t i = 0; i < op.dims.size(); ++i) {
    const Dim d = op.dims[i];
    if (d.size < 4 || d.size % 2 != 0 || gen() % 2) continue;
    Dim outer = d;
    outer.size = 2;
    outer.stride_in0 *= d.size / 2;
    outer.stride_in1 *= d.size / 2;
    outer.stride_out *= d.size / 2;
    op.dims[i].size = d.size / 2;
    op.dims.insert(op.dims.begin() + static_cast<std::ptrdiff_t>(i), outer);
    return;
  }
}

void run_and_check(const Contraction& original, const Contraction& transformed, std::uint32_t seed) {
  SCOPED_TRACE(transformed.describe());
  LoweredOperation lowered(transformed);
  const Tensors t = make_tensors(original, seed);
  std::vector<float> out = t.out;
  lowered.execute(t.in0.data(), t.in1.data(), out.data());
  expect_matches_reference(original, t, out);
}

// The parallelization pass on 1-4 threads (a loose balance, so small loops get shared too).
void check_parallelized_on_1_to_4_threads(const Contraction& original, const Contraction& p, std::uint32_t seed) {
  for (int threads = 1; threads <= 4; ++threads) {
    omp_set_num_threads(threads);
    Contraction q = p;
    parallelize(q, {.threads = threads, .imbalance = 0.3});
    run_and_check(original, q, seed);
  }
  omp_set_num_threads(2);
}

const SplitOptions kSmallSplit{.target = 4, .min_inner = 2, .max_size = 6, .max_size_c = 6};
// Operand packing at the random contractions' scale: panels of up to 4 rows, n blocks near 3, at
// most 32 floats per packed panel (so longer reductions get a k chunk loop), no size thresholds.
const PackOptions kSmallPack{.panel_rows = 4, .block_cols = 3, .max_panel_bytes = 4 * 8 * 4,
                             .min_columns = 1, .min_a_bytes = 0};

TEST(Passes, EachPassAloneKeepsTheResult) {
  std::mt19937 gen(1234);
  int packed = 0;
  for (int trial = 0; trial < 40; ++trial) {
    SCOPED_TRACE(trial);
    Contraction op = random_contraction(gen);
    presplit(op, gen);
    const auto seed = static_cast<std::uint32_t>(trial);
    {
      Contraction p = op;
      fuse_dimensions(p, {.small_size = 1000});
      identify_primitives(p);
      run_and_check(op, p, seed);
    }
    {
      Contraction p = op;
      split_dimensions(p, kSmallSplit);
      identify_primitives(p);
      run_and_check(op, p, seed);
    }
    {
      Contraction p = op;
      identify_primitives(p, {.use_brgemm = trial % 2 == 0});
      run_and_check(op, p, seed);
      reorder_dimensions(p);
      run_and_check(op, p, seed);
      check_parallelized_on_1_to_4_threads(op, p, seed);
    }
    {
      // Packing alone (when it applies) and then shared among 1-4 threads.
      Contraction p = op;
      fuse_dimensions(p, {.small_size = 1000});
      const Contraction fused = p;
      if (pack_operands(p, kSmallPack)) {
        ++packed;
        EXPECT_TRUE(p.pack_in0);
        run_and_check(op, p, seed);
        check_parallelized_on_1_to_4_threads(op, p, seed);
      } else {
        EXPECT_EQ(p, fused);  // declined: unchanged
      }
    }
    {
      Contraction p = op;
      optimize(p, {.threads = 2, .split = kSmallSplit});
      run_and_check(op, p, seed);
      Contraction q = op;
      optimize(q, {.threads = 3, .split = kSmallSplit, .packing = kSmallPack});
      run_and_check(op, q, seed);
    }
  }
  EXPECT_GT(packed, 10);  // the pass applies to most of the random GEMMs
}

TEST(Passes, FusionThenSplittingOfTheSeedOptimizerInput) {
  // (64, 25, 64, 25, 64, 25): the pairs fuse to 1600 and split to 25 x 64 each.
  const exec_t s = exec_t::seq;
  Contraction op;
  op.main = prim_t::gemm;
  op.dims = {Dim{dim_t::m, s, 64, 25, 0, 25},     Dim{dim_t::m, s, 25, 1, 0, 1},
             Dim{dim_t::n, s, 64, 0, 40000, 40000}, Dim{dim_t::n, s, 25, 0, 1600, 1600},
             Dim{dim_t::k, s, 64, 40000, 25, 0},  Dim{dim_t::k, s, 25, 1600, 1, 0}};
  Contraction fused = op;
  EXPECT_EQ(fuse_dimensions(fused), 3);
  ASSERT_EQ(fused.dims.size(), 3u);
  EXPECT_EQ(fused.dims[0], (Dim{dim_t::m, s, 1600, 1, 0, 1}));
  EXPECT_EQ(split_dimensions(fused), 3);
  EXPECT_EQ(fused.dims[1].size, 64);
  EXPECT_EQ(fused.dims[0].size, 25);
  Contraction full = op;
  optimize(full, {.threads = 2, .pack = false});  // packing (below) would re-block it
  // The batch-reduce over 25 k blocks would span 10 MB of A: it stays a loop (max_batch_span_bytes).
  EXPECT_EQ(full.main, prim_t::gemm);
  int prims = 0, shared = 0;
  for (const Dim& d : full.dims) {
    prims += d.exec == exec_t::prim;
    shared += d.exec == exec_t::shared;
  }
  EXPECT_EQ(prims, 3);
  EXPECT_GE(shared, 1);
}

TEST(Passes, SplittingUsesDivisorsOnly) {
  Contraction op;
  op.main = prim_t::gemm;
  op.dims = {Dim{dim_t::m, exec_t::seq, 1601, 1, 0, 1}};  // 1601 = 1601: prime
  EXPECT_EQ(split_dimensions(op), 0);
  op.dims[0].size = 1600;
  EXPECT_EQ(split_dimensions(op), 1);
  EXPECT_EQ(op.dims[0].size * op.dims[1].size, 1600);
}

TEST(Passes, ParallelizationBalancesAndSkipsK) {
  Contraction op;
  op.main = prim_t::gemm;
  const exec_t s = exec_t::seq, p = exec_t::prim;
  op.dims = {Dim{dim_t::k, s, 4, 8, 8, 0}, Dim{dim_t::n, s, 3, 0, 64, 64}, Dim{dim_t::m, s, 5, 8, 0, 8},
             Dim{dim_t::m, p, 8, 1, 0, 1}, Dim{dim_t::n, p, 8, 0, 8, 8}, Dim{dim_t::k, p, 8, 1, 1, 0}};
  parallelize(op, {.threads = 2});
  EXPECT_EQ(op.dims[0].exec, exec_t::seq);  // k stays sequential
  EXPECT_EQ(op.dims[1].exec, exec_t::shared);
  EXPECT_EQ(op.dims[2].exec, exec_t::shared);  // 3 alone is unbalanced on 2 threads; 15 is close
  parallelize(op, {.threads = 3});
  EXPECT_EQ(op.dims[2].exec, exec_t::seq);  // 3 splits evenly over 3 threads
  parallelize(op, {.threads = 1});
  for (const Dim& d : op.dims) EXPECT_NE(d.exec, exec_t::shared);
}

TEST(Passes, BatchFoldingTurnsTheInnermostKLoopIntoTheBatch) {
  // The GEMM configuration (m, n, k loops around a 32^3 gemm): the k loop becomes the batch.
  Contraction op = seed_config(prim_t::zero, prim_t::gemm, prim_t::relu, false, 3, 2);
  Contraction folded = op;
  ASSERT_TRUE(fold_reduction_into_batch(folded));
  EXPECT_EQ(folded.main, prim_t::brgemm);
  EXPECT_EQ(folded.dims[2].exec, exec_t::prim);
  EXPECT_FALSE(fold_reduction_into_batch(folded));  // nothing left to fold
  // Lowered as given with an override (no folding) and by default (folded): bit-identical.
  const Tensors t = make_tensors(op, 5);
  std::vector<float> looped = t.out, batched = t.out;
  const LoweringOverride keep_loops{.loop_string = "abc", .block_sizes = {}};
  LoweredOperation as_given(op, &keep_loops);
  LoweredOperation lowered(op);
  EXPECT_EQ(as_given.operation().main, prim_t::gemm);
  EXPECT_EQ(lowered.operation().main, prim_t::brgemm);
  EXPECT_NE(lowered.describe().find("batch folding"), std::string::npos);
  as_given.execute(t.in0.data(), t.in1.data(), looped.data());
  lowered.execute(t.in0.data(), t.in1.data(), batched.data());
  EXPECT_EQ(looped, batched);
  expect_matches_reference(op, t, batched);
}

// The lowering asks the BRGEMM kernels to prefetch the next output block's C when consecutive calls
// write different blocks (the innermost loop moves the output), and not when a k loop is innermost
// (the same block again, still in L1) or beta = 0 (C is not read). Results stay bit-identical.
TEST(Passes, LoweringPrefetchesTheNextOutputBlockWhenTheInnermostLoopMovesIt) {
  const Contraction op = seed_config(prim_t::none, prim_t::gemm, prim_t::none, false, 3, 2);
  const LoweringOverride k_innermost{.loop_string = "abc", .block_sizes = {}};
  const LoweringOverride n_innermost{.loop_string = "acb", .block_sizes = {}};
  LoweredOperation same_block(op, &k_innermost);
  LoweredOperation moving_block(op, &n_innermost);
  LoweredOperation folded(op);  // the k loop becomes the batch: n is innermost
  // A grid's dimension letter is no loop: n (b) is innermost here, not k.
  const LoweringOverride grid{.loop_string = "acB{C:1}", .block_sizes = {}};
  LoweredOperation with_grid(op, &grid);
  EXPECT_NE(with_grid.describe().find("prefetch_next_c"), std::string::npos) << with_grid.describe();
  EXPECT_EQ(same_block.describe().find("prefetch_next_c"), std::string::npos) << same_block.describe();
  EXPECT_NE(moving_block.describe().find("prefetch_next_c"), std::string::npos) << moving_block.describe();
  EXPECT_NE(folded.describe().find("prefetch_next_c"), std::string::npos) << folded.describe();
  const Tensors t = make_tensors(op, 9);
  std::vector<float> a = t.out, b = t.out, c = t.out;
  same_block.execute(t.in0.data(), t.in1.data(), a.data());
  moving_block.execute(t.in0.data(), t.in1.data(), b.data());
  folded.execute(t.in0.data(), t.in1.data(), c.data());
  EXPECT_EQ(a, b);
  expect_matches_reference(op, t, c);
  // Zero first touch: the beta = 0 kernels of the first visit take no hint, the others do.
  const Contraction zeroed = seed_config(prim_t::zero, prim_t::brgemm, prim_t::none, true, 3, 2);
  const std::string text = LoweredOperation(zeroed).describe();
  EXPECT_EQ(text.find("beta0_strided_prefetch_next_c"), std::string::npos) << text;
  EXPECT_NE(text.find("beta1_strided_prefetch_next_c"), std::string::npos) << text;
}

TEST(Passes, BatchFoldingLeavesOtherLoopsAlone) {
  Contraction op = seed_config(prim_t::none, prim_t::gemm, prim_t::none, false, 3, 2);
  Contraction k_outside = op;
  std::rotate(k_outside.dims.begin(), k_outside.dims.begin() + 2, k_outside.dims.begin() + 3);  // k, m, n
  EXPECT_FALSE(fold_reduction_into_batch(k_outside));
  Contraction wide = op;  // a batch sweeping more bytes than allowed stays a loop
  EXPECT_FALSE(fold_reduction_into_batch(wide, batch_span_bytes(wide.dims[2]) - 1));
  EXPECT_TRUE(fold_reduction_into_batch(wide, batch_span_bytes(wide.dims[2])));
  Contraction brgemm = seed_config(prim_t::none, prim_t::brgemm, prim_t::none, true, 3, 2);
  EXPECT_FALSE(fold_reduction_into_batch(brgemm));
}

TEST(Passes, PrimitiveIdentificationPicksTheBrgemmLayout) {
  const exec_t s = exec_t::seq;
  Contraction op;
  op.main = prim_t::gemm;
  op.dims = {Dim{dim_t::m, s, 32, 8192, 0, 32768}, Dim{dim_t::n, s, 32, 0, 8192, 1024},
             Dim{dim_t::k, s, 8, 1024, 1024, 0},   Dim{dim_t::m, s, 32, 1, 0, 1},
             Dim{dim_t::n, s, 32, 0, 32, 32},      Dim{dim_t::k, s, 32, 32, 1, 0}};
  identify_primitives(op);
  EXPECT_EQ(op.main, prim_t::brgemm);
  const std::vector<exec_t> want{s, s, exec_t::prim, exec_t::prim, exec_t::prim, exec_t::prim};
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(op.dims[i].exec, want[i]) << i;
  identify_primitives(op, {.use_brgemm = false});
  EXPECT_EQ(op.main, prim_t::gemm);
  EXPECT_EQ(op.dims[2].exec, s);
}

}  // namespace
}  // namespace weft::tensor::test
