// The MPI-free part of weft-mlp-mpi (samples/mlp_mpi/): the batch split, the synthetic data, its
// command line, and the property the data-parallel training rests on: two trainers on the two parts
// of a batch, their gradients summed before each update, end with the weights of one trainer on
// the whole batch; without the sum they do not.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <weft/cli/values.hpp>
#include <weft/jit/error.hpp>

#include "batch_split.hpp"
#include "gradient_exchange.hpp"
#include "mlp_mpi_args.hpp"
#include "mlp_trainer.hpp"
#include "synthetic_data.hpp"
#include "training_loop.hpp"

namespace {

using namespace weft::samples;

TEST(MlpBatchSplit, SharesCoverTheBatchInOrderAndDifferByAtMostOne) {
  for (const std::int64_t batch : {7, 8, 64, 65, 1000}) {
    for (const int ranks : {1, 2, 3, 7}) {
      std::int64_t next = 0, smallest = batch, largest = 0;
      for (int r = 0; r < ranks; ++r) {
        const BatchShare s = batch_share(batch, ranks, r);
        EXPECT_EQ(s.first, next) << batch << " over " << ranks << ", rank " << r;
        next += s.count;
        smallest = std::min(smallest, s.count);
        largest = std::max(largest, s.count);
      }
      EXPECT_EQ(next, batch);
      EXPECT_LE(largest - smallest, 1);
      EXPECT_GE(smallest, 1);
    }
  }
}

TEST(MlpBatchSplit, BatchSmallerThanTheRanksIsNamed) {
  try {
    batch_share(3, 4, 0);
    FAIL() << "no error";
  } catch (const weft::Error& e) {
    EXPECT_EQ(std::string(e.what()), "--batch 3 is smaller than the 4 ranks: every rank needs at least one column of the batch");
  }
  EXPECT_THROW(batch_share(8, 2, 2), weft::Error);
}

TEST(MlpSyntheticData, ColumnsOfAPartAreThoseOfTheWhole) {
  const std::vector<float> whole = synthetic_columns(5, DataStream::input, 9, 0, 10);
  const std::vector<float> part = synthetic_columns(5, DataStream::input, 9, 4, 3);
  EXPECT_TRUE(std::equal(part.begin(), part.end(), whole.begin() + 4 * 9));
  EXPECT_NE(synthetic_columns(6, DataStream::input, 9, 4, 3), part);  // the seed matters
  for (const float t : synthetic_columns(5, DataStream::target, 9, 0, 10)) {
    EXPECT_GE(t, 0.0f);
    EXPECT_LT(t, 1.0f);
  }
}

std::string usage_error(std::vector<std::string> words) {
  std::vector<char*> argv{const_cast<char*>("weft-mlp-mpi")};
  for (std::string& w : words) argv.push_back(w.data());
  try {
    parse_mlp_mpi_options(static_cast<int>(argv.size()), argv.data());
  } catch (const weft::cli::UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(MlpMpiArgs, ReadsEveryOptionAndNamesBadOnes) {
  std::vector<std::string> words{"--layers", "2", "--width=48", "--batch", "10", "--steps", "3", "--lr", "0.1",
                                 "--seed", "9", "--threads", "1", "--no-overlap", "--check", "--dtype", "bf16"};
  std::vector<char*> argv{const_cast<char*>("weft-mlp-mpi")};
  for (std::string& w : words) argv.push_back(w.data());
  const MlpMpiOptions o = parse_mlp_mpi_options(static_cast<int>(argv.size()), argv.data());
  EXPECT_EQ(o.layers, 2);
  EXPECT_EQ(o.width, 48);
  EXPECT_EQ(o.global_batch, 10);
  EXPECT_EQ(o.steps, 3);
  EXPECT_DOUBLE_EQ(o.learning_rate, 0.1);
  EXPECT_EQ(o.seed, 9u);
  EXPECT_EQ(o.threads, 1);
  EXPECT_FALSE(o.overlap);
  EXPECT_TRUE(o.check);
  EXPECT_EQ(o.dtype, weft::jit::DataType::bf16);
  EXPECT_EQ(usage_error({"--dtype", "f64"}), "--dtype: 'f64' is not a data type of the passes: f32 or bf16");
  EXPECT_EQ(usage_error({"--width", "0"}), "--width: 0 is outside [1, 46340]");
  EXPECT_EQ(usage_error({"--batch", "x"}), "--batch: 'x' is not an integer");
  EXPECT_NE(usage_error({"--lr", "-1"}).find("--lr"), std::string::npos);
  EXPECT_NE(usage_error({"--overlap"}).find("--overlap"), std::string::npos);
}

// Keeps each layer's gradient, to be summed with another trainer's by the test.
class KeptGradients final : public GradientExchange {
 public:
  void ready(int layer, std::span<float> gradient) override {
    if (static_cast<std::size_t>(layer) >= kept.size()) kept.resize(static_cast<std::size_t>(layer) + 1);
    kept[static_cast<std::size_t>(layer)] = gradient;
  }
  void progress() override {}
  void complete() override {}
  double take_seconds() override { return 0; }
  std::vector<std::span<float>> kept;
};

double max_relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
  }
  return diff / scale;
}

// Trains on columns [0, split) and [split, batch) separately for `steps` steps, the gradients summed
// over both (or each kept to itself), and returns the largest relative difference of the first
// part's final weights from those of a trainer on the whole batch.
double split_against_whole(int layers, std::int64_t width, std::int64_t batch, std::int64_t split, bool sum,
                           weft::jit::DataType dtype = weft::jit::DataType::f32) {
  const std::uint64_t seed = 3;
  const int steps = 4;
  const float step = 0.5f / static_cast<float>(batch);  // the sample's default learning rate
  MlpTrainer first({.layers = layers, .width = width, .first_column = 0, .columns = split, .dtype = dtype}, seed, 1);
  MlpTrainer second({.layers = layers, .width = width, .first_column = split, .columns = batch - split,
                     .dtype = dtype},
                    seed, 1);
  MlpTrainer whole({.layers = layers, .width = width, .first_column = 0, .columns = batch, .dtype = dtype}, seed, 1);
  LocalExchange local;
  train(whole, local, steps, step);
  for (int s = 0; s < steps; ++s) {
    KeptGradients a, b;
    first.forward();
    first.backward(a);
    second.forward();
    second.backward(b);
    if (sum) {
      for (int l = 0; l < layers; ++l) {
        std::span<float> ga = a.kept[static_cast<std::size_t>(l)], gb = b.kept[static_cast<std::size_t>(l)];
        for (std::size_t i = 0; i < ga.size(); ++i) ga[i] = gb[i] = ga[i] + gb[i];
      }
    }
    first.sgd(step);
    second.sgd(step);
  }
  double worst = 0;
  for (int l = 0; l < layers; ++l) {
    worst = std::max(worst, max_relative_difference(first.plain_parameters(l), whole.plain_parameters(l)));
    if (sum) {
      EXPECT_EQ(first.plain_parameters(l), second.plain_parameters(l)) << "layer " << l;
    }
  }
  return worst;
}

TEST(MlpTrainer, SummedGradientsOfTwoPartsTrainAsTheWholeBatch) {
  // Whole tiles, and sizes that leave partial tiles of the weights (width 40) and of the batch.
  EXPECT_LT(split_against_whole(3, 64, 96, 48, true), 1e-5);
  EXPECT_LT(split_against_whole(2, 40, 37, 19, true), 1e-5);
}

// In bf16 each part's dW is rounded to bf16 before the sum, and the master weights round to the
// passes' bf16 copy: the parts end within a few bf16 roundings of the whole (the sample's bf16
// tolerance, 1e-2), and far from it without the sum.
TEST(MlpTrainer, Bf16SummedGradientsOfTwoPartsTrainAsTheWholeBatch) {
  EXPECT_LT(split_against_whole(3, 64, 96, 48, true, weft::jit::DataType::bf16), 1e-2);
  EXPECT_GT(split_against_whole(3, 64, 96, 48, false, weft::jit::DataType::bf16), 2e-2);
}

TEST(MlpTrainer, WithoutTheSumThePartsTrainOtherwise) {
  EXPECT_GT(split_against_whole(3, 64, 96, 48, false), 1e-3);  // 5e-2 measured
}

}  // namespace
