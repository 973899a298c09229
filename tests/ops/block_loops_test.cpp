// The loops of the blocked passes (ops/include/weft/ops/block_loops.hpp): PARLOOPER's default blocks,
// the output prefetch hint, the sequential-reduction check, loops of any count.
#include <weft/ops/block_loops.hpp>

#include <atomic>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <weft/jit/error.hpp>

namespace {

using namespace weft::ops;

const std::vector<long> kDefault;  // PARLOOPER's default blocks

TEST(BlockLoops, DefaultBlocksFollowPrimeFactors) {
  EXPECT_EQ(default_loop_blocks(12, 1), (std::vector<long>{4, 2}));
  EXPECT_EQ(default_loop_blocks(7, 2), (std::vector<long>{14, 14}));
  EXPECT_EQ(default_loop_blocks(1, 3), (std::vector<long>{3, 3}));
}

TEST(BlockLoops, ChunksCoverTheBlocks) {
  EXPECT_EQ(chunk_step(10, 3), 4);
  EXPECT_EQ(chunk_step(10, 1), 10);
  EXPECT_EQ(chunk_step(3, 8), 1);  // more chunks than blocks: one block each
}

// The beta = 1 kernels prefetch the next output block when the innermost level moves it (not the
// reduction loop), whatever grids, barriers or clauses the string carries.
TEST(BlockLoops, OutputPrefetchFollowsTheInnermostLevel) {
  using weft::tpp::BrgemmPrefetch;
  EXPECT_EQ(output_prefetch("aBcb", 3, 0), BrgemmPrefetch::next_c);
  EXPECT_EQ(output_prefetch("aBC", 3, 0), BrgemmPrefetch::next_c);
  EXPECT_EQ(output_prefetch("BCa", 3, 0), BrgemmPrefetch::none);
  EXPECT_EQ(output_prefetch("aB{R:2}C{C:1}", 3, 0), BrgemmPrefetch::next_c);  // the C of {C:1} is no loop
  EXPECT_EQ(output_prefetch("bC{C:2}a", 3, 0), BrgemmPrefetch::none);
  EXPECT_EQ(output_prefetch("abc@schedule(dynamic,1)", 3, 2), BrgemmPrefetch::none);
  EXPECT_EQ(output_prefetch("ab?", 3, 0), BrgemmPrefetch::none);  // make_block_loop reports the error
  EXPECT_EQ(output_prefetch("abcD", 4, 0), BrgemmPrefetch::next_c);  // a convolution's four loops
}

// A sample with more loops than the GEMM's three (the convolutions) declares them the same way.
TEST(BlockLoops, AnyNumberOfLoopsWithStepsAndBlocks) {
  auto loop = make_block_loop<4>("abCdc", {2, 3, 8, 5}, {1, 1, 2, 1}, {kDefault, kDefault, std::vector<long>{4}, kDefault});
  std::atomic<int> calls{0};
  loop([&](int*) { ++calls; });
  EXPECT_EQ(calls.load(), 2 * 3 * 4 * 5);  // c steps by 2 over 8
  EXPECT_THROW(make_block_loop<2>("abc", {2, 2}, {1, 1}, {kDefault, kDefault}), weft::Error);
}

TEST(BlockLoops, AParallelReductionOfSeveralChunksIsAnErrorThatSaysWhy) {
  const auto nest = make_block_loop<3>("aBC", {4, 4, 4}, {1, 1, 1}, {kDefault, kDefault, kDefault}).dynamic().nest();
  EXPECT_NO_THROW(require_sequential_reduction(nest, 0, 4));  // a is sequential
  EXPECT_NO_THROW(require_sequential_reduction(nest, 1, 1));  // one chunk: nothing to race on
  EXPECT_THAT([&] { require_sequential_reduction(nest, 2, 3, ", or partial filters"); },
              testing::ThrowsMessage<weft::Error>(testing::AllOf(
                  testing::HasSubstr("loop 'c' is the reduction"),
                  testing::HasSubstr("or use a single chunk, or partial filters."))));
}

TEST(BlockLoops, MeasureTagsArePARLOOPERs) {
  EXPECT_EQ(measure_tag("aBC", {64, 32, 16, 8, 8, 8}, 2, 4), "aBC_64_32_16_8_8_8_bf2_threads4");
  EXPECT_THROW(require_positive({{"M", 1}, {"bm", 0}}), weft::Error);
}

}  // namespace
