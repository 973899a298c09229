// The command line of weft-mlp-mpi: the MLP (layers, width), the global batch, the training
// (steps, learning rate, seed, the passes' data type), the team per rank, and the switches of the run (--no-overlap,
// --check). Parsed the same way on every rank, so a bad line fails on all of them alike.
//
//   const MlpMpiOptions options = parse_mlp_mpi_options(argc, argv);   // throws weft::cli::UsageError
#pragma once

#include <cstdint>

#include <weft/jit/data_type.hpp>

namespace weft::samples {

struct MlpMpiOptions {
  int layers = 4;
  std::int64_t width = 256;          // every layer is width x width (the MLP's M == K)
  std::int64_t global_batch = 128;   // columns of the input, split over the ranks
  std::int64_t steps = 10;
  double learning_rate = 0.5;
  std::uint64_t seed = 1;
  jit::DataType dtype = jit::DataType::f32;  // of the passes; the parameters and sums stay f32
  int threads = 0;                   // per rank; 0: OpenMP's default
  bool overlap = true;               // --no-overlap: reduce after the backward pass, blocking
  bool check = false;                // compare with a one-rank run of the whole batch on rank 0
};

// The usage text (--help and after a usage error).
extern const char* const kMlpMpiUsage;

// Throws weft::cli::UsageError naming the option, or CLI::CallForHelp for --help.
MlpMpiOptions parse_mlp_mpi_options(int argc, char** argv);

}  // namespace weft::samples
