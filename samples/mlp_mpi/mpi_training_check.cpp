#include "mpi_training_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "gradient_exchange.hpp"
#include "training_loop.hpp"

namespace weft::samples {

double max_relative_difference(std::span<const float> a, std::span<const float> b) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (std::isnan(d)) return std::numeric_limits<double>::quiet_NaN();
    diff = std::max(diff, d);
    scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
  }
  if (a.size() != b.size()) return std::numeric_limits<double>::quiet_NaN();
  return diff == 0 ? 0 : diff / scale;
}

namespace {

bool within(double difference, double tolerance) { return !std::isnan(difference) && difference <= tolerance; }

const char* verdict(double difference, double tolerance) { return within(difference, tolerance) ? "PASSED" : "FAILED"; }

}  // namespace

bool check_training(const MpiSession& mpi, MlpTrainer& trained, const MlpShape& whole, const MlpMpiOptions& options,
                    int threads, std::FILE* out) {
  const double tolerance = trained.bf16() ? kBf16WeightTolerance : kWeightTolerance;
  double across = 0;
  for (int l = 0; l < trained.layers(); ++l) {
    std::span<float> mine = trained.parameters(l);
    std::vector<float> root(mine.begin(), mine.end());
    mpi.broadcast(root, 0);
    const double d = max_relative_difference(mine, root);
    across = std::isnan(d) || std::isnan(across) ? std::numeric_limits<double>::quiet_NaN() : std::max(across, d);
  }
  // NaN compares false in MPI_MAX as in std::max: carry it as infinity.
  across = mpi.max(std::isnan(across) ? std::numeric_limits<double>::infinity() : across);

  bool passed = within(across, tolerance);
  if (mpi.rank() == 0) {
    std::fprintf(out, "check: the weights on all %d ranks against rank 0's: max relative difference %.3e "
                      "(tolerance %.0e): %s\n",
                 mpi.size(), across, tolerance, verdict(across, tolerance));
    std::fflush(out);
    MlpTrainer alone(whole, options.seed, threads);
    LocalExchange local;
    train(alone, local, options.steps, static_cast<float>(options.learning_rate / static_cast<double>(whole.columns)));
    double versus = 0;
    for (int l = 0; l < trained.layers(); ++l) {
      const double d = max_relative_difference(trained.plain_parameters(l), alone.plain_parameters(l));
      versus = std::isnan(d) || std::isnan(versus) ? std::numeric_limits<double>::quiet_NaN() : std::max(versus, d);
    }
    std::fprintf(out, "check: the final weights against one rank's training on the whole batch of %lld: max "
                      "relative difference %.3e (tolerance %.0e): %s\n",
                 static_cast<long long>(whole.columns), versus, tolerance, verdict(versus, tolerance));
    passed = passed && within(versus, tolerance);
  }
  return mpi.all(passed);
}

}  // namespace weft::samples
