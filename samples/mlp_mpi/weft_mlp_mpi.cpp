// weft-mlp-mpi: data-parallel training of an MLP over MPI ranks, the global batch split into
// columns, the weights broadcast from rank 0, the weight gradients all-reduced behind the backward
// pass (or after it, --no-overlap). Prints per step the compute, exposed communication and
// optimizer times and the bytes reduced; --check compares with a one-rank run. docs/scale_out.md.
//
// Failures are handled so that no rank is left waiting in a collective: the command line and the
// batch split are the same on every rank (each fails alike; rank 0 says why), preparing may fail
// on one rank only (all agree before the first collective; the failing rank says why), and a
// failure during training, which the others cannot learn of, aborts the job.
#include <omp.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <weft/cli/run_tool.hpp>
#include <weft/jit/error.hpp>

#include "batch_split.hpp"
#include "mlp_mpi_args.hpp"
#include "mlp_trainer.hpp"
#include "mpi_gradient_exchange.hpp"
#include "mpi_session.hpp"
#include "step_report.hpp"
#include "mpi_training_check.hpp"
#include "training_loop.hpp"

namespace {

using namespace weft::samples;

struct Setup {
  MlpMpiOptions options;
  BatchShare share;
};

// The command line and this rank's share: rank 0 reports a problem (the others fail silently with
// the same status, since they read the same line).
int parse(const MpiSession& mpi, int argc, char** argv, std::optional<Setup>& setup) {
  const auto read = [&] {
    const MlpMpiOptions options = parse_mlp_mpi_options(argc, argv);
    setup = Setup{options, batch_share(options.global_batch, mpi.size(), mpi.rank())};
    return 0;
  };
  if (mpi.rank() == 0) return weft::cli::run_tool({"weft-mlp-mpi", kMlpMpiUsage}, read);
  try {
    return read();
  } catch (const CLI::CallForHelp&) {
    return 0;
  } catch (const std::exception&) {
    return 2;
  }
}

weft::cli::Tool rank_tool(const MpiSession& mpi) {
  return {mpi.rank() == 0 ? "weft-mlp-mpi" : "weft-mlp-mpi (rank " + std::to_string(mpi.rank()) + ")", kMlpMpiUsage};
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string header(const MpiSession& mpi, const Setup& s, int threads, const MlpTrainer& trainer) {
  const MlpMpiOptions& o = s.options;
  const std::int64_t base = o.global_batch / mpi.size(), extra = o.global_batch % mpi.size();
  std::string columns = std::to_string(base) + " columns per rank";
  if (extra > 0) columns += ", " + std::to_string(base + 1) + " on the first " + std::to_string(extra);
  return std::string("weft-mlp-mpi: ") + (trainer.bf16() ? "BF16 (f32 weights, sums and updates), " : "FP32, ") + std::to_string(o.layers) + " layers of " + std::to_string(o.width) + " x " +
         std::to_string(o.width) + ", global batch " + std::to_string(o.global_batch) + " over " +
         std::to_string(mpi.size()) + (mpi.size() == 1 ? " rank (" : " ranks (") + columns + "), " +
         std::to_string(threads) + (threads == 1 ? " thread" : " threads") + " per rank, " +
         std::to_string(o.steps) + " steps of SGD at lr " + number(o.learning_rate) + ", " +
         (o.overlap ? "overlap: MPI_Iallreduce behind the backward pass"
                    : "no overlap: MPI_Allreduce after the backward pass") +
         "\nweft-mlp-mpi: rank 0's passes: " + trainer.describe() + "\n";
}

// Trains, reports and checks; collective. Returns the check's verdict (0 or 1), the same on every rank.
int train_and_report(const MpiSession& mpi, const Setup& s, int threads, MlpTrainer& trainer) {
  const MlpMpiOptions& o = s.options;
  for (int l = 0; l < o.layers; ++l) mpi.broadcast(trainer.parameters(l), 0);
  trainer.refresh();
  if (mpi.rank() == 0) {
    std::fputs(header(mpi, s, threads, trainer).c_str(), stdout);
    std::fflush(stdout);
  }
  OverlappedAllreduce overlapped(mpi.comm());
  BlockingAllreduce blocking(mpi.comm());
  GradientExchange& exchange = o.overlap ? static_cast<GradientExchange&>(overlapped) : blocking;
  const float step = static_cast<float>(o.learning_rate / static_cast<double>(o.global_batch));
  StepTimes times = train(trainer, exchange, o.steps, step);

  mpi.max_to_root(times.compute);
  mpi.max_to_root(times.communication);
  mpi.max_to_root(times.optimizer);
  mpi.sum_to_root(times.loss);
  std::vector<double> flops{trainer.flops()};
  mpi.sum_to_root(flops);
  if (mpi.rank() == 0) {
    for (double& loss : times.loss) loss /= static_cast<double>(o.global_batch);
    const std::string tag = "mlp_mpi_" + std::to_string(o.layers) + "_" + std::to_string(o.width) + "_" +
                            std::to_string(o.global_batch) + "_ranks" + std::to_string(mpi.size()) + "_threads" +
                            std::to_string(threads) + "_overlap" + (o.overlap ? "1" : "0") +
                            (trainer.bf16() ? "_bf16" : "");
    print_step_report(stdout, times,
                      {.allreduces = o.layers, .reduced_floats = trainer.reduced_floats(), .flops = flops[0],
                       .measure_tag = tag});
    std::fflush(stdout);
  }
  if (!o.check) return 0;
  const MlpShape whole{.layers = o.layers, .width = o.width, .first_column = 0, .columns = o.global_batch,
                       .dtype = o.dtype};
  return check_training(mpi, trainer, whole, o, threads, stdout) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MpiSession mpi(argc, argv);
  std::optional<Setup> setup;
  const int parsed = parse(mpi, argc, argv, setup);
  if (!setup) return parsed;  // --help, or a bad line

  std::optional<MlpTrainer> trainer;
  int threads = 1;
  const int prepared = weft::cli::run_tool(rank_tool(mpi), [&] {
    if (setup->options.threads > 0) omp_set_num_threads(setup->options.threads);
    threads = omp_get_max_threads();
    trainer.emplace(MlpShape{.layers = setup->options.layers, .width = setup->options.width,
                             .first_column = setup->share.first, .columns = setup->share.count,
                             .dtype = setup->options.dtype},
                    setup->options.seed, threads);
    return 0;
  });
  if (!mpi.all(prepared == 0)) {
    if (mpi.rank() == 0 && prepared == 0) std::fputs("weft-mlp-mpi: another rank failed to prepare (its message above)\n", stderr);
    return prepared != 0 ? prepared : 1;
  }

  bool finished = false;
  const int status = weft::cli::run_tool(rank_tool(mpi), [&] {
    const int verdict = train_and_report(mpi, *setup, threads, *trainer);
    finished = true;
    return verdict;
  });
  if (!finished) mpi.abort(status);
  return status;
}
