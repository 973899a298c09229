#include "mlp_mpi_args.hpp"

#include <climits>
#include <string>

#include <CLI/CLI.hpp>
#include <weft/cli/command_line.hpp>

namespace weft::samples {

const char* const kMlpMpiUsage =
    "usage: mpirun -np P weft-mlp-mpi [--layers L] [--width W] [--batch B] [--steps S] [--lr X]\n"
    "                   [--seed N] [--dtype f32|bf16] [--threads T] [--no-overlap] [--check]\n"
    "  Data-parallel training of an MLP of L layers relu(W x + b), W x W each, on a global batch of B\n"
    "  columns split over the P ranks (mean squared error against a synthetic target, SGD).\n"
    "  --layers L     layers (default 4)\n"
    "  --width W      rows and columns of every weight (default 256)\n"
    "  --batch B      the global batch; rank r takes B / P columns, the first B % P ranks one more\n"
    "                 (default 128)\n"
    "  --steps S      training steps (default 10)\n"
    "  --lr X         SGD learning rate on the mean gradient (default 0.5)\n"
    "  --seed N       the weights', inputs' and targets' seed: the same on every rank (default 1)\n"
    "  --dtype D      the passes' data type: f32 (default) or bf16 (bf16 operands, fp32 accumulation;\n"
    "                 the weights kept, reduced and updated in f32, rounded to bf16 for the passes)\n"
    "  --threads T    OpenMP threads per rank (default: OpenMP's, OMP_NUM_THREADS)\n"
    "  --no-overlap   reduce the gradients with blocking MPI_Allreduce after the backward pass\n"
    "                 instead of MPI_Iallreduce behind the layers below\n"
    "  --check        after training, rank 0 trains the same MLP on the whole batch alone and\n"
    "                 compares the final weights; every rank compares its weights with rank 0's\n"
    "                 (exit status 1 when either differs beyond the tolerance)\n";

MlpMpiOptions parse_mlp_mpi_options(int argc, char** argv) {
  MlpMpiOptions o;
  std::int64_t layers = o.layers, seed = static_cast<std::int64_t>(o.seed);
  bool no_overlap = false;
  std::string dtype = "f32";
  CLI::App app;
  cli::add_integer(app, "--layers", layers, 1, 1000, "layers");
  // An all-reduce counts its elements in an int: one layer's W x W weights and W biases must fit.
  cli::add_integer(app, "--width", o.width, 1, 46340, "rows and columns of each weight");
  cli::add_integer(app, "--batch", o.global_batch, 1, INT32_MAX, "the global batch");
  cli::add_integer(app, "--steps", o.steps, 1, 1000000, "training steps");
  cli::add_number(app, "--lr", o.learning_rate, 0.0, 1000.0, "learning rate");
  cli::add_integer(app, "--seed", seed, 0, INT64_MAX, "seed");
  cli::add_text(app, "--dtype", dtype, "f32 or bf16");
  cli::add_threads(app, o.threads, 0);
  cli::add_flag(app, "--no-overlap", no_overlap, "blocking all-reduces after the backward pass");
  cli::add_flag(app, "--check", o.check, "compare with a one-rank run");
  cli::parse(app, argc, argv);
  o.layers = static_cast<int>(layers);
  o.seed = static_cast<std::uint64_t>(seed);
  o.overlap = !no_overlap;
  if (dtype == "bf16") {
    o.dtype = jit::DataType::bf16;
  } else if (dtype != "f32") {
    throw cli::UsageError("--dtype: '" + dtype + "' is not a data type of the passes: f32 or bf16");
  }
  return o;
}

}  // namespace weft::samples
