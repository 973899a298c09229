// The verbs of weft-tune (tune_command.hpp), one per file: each reads argv from argv[2] on
// (argv[1] is the verb), prints its results on `out` and its progress on `err`, returns the exit
// status and throws cli::UsageError for bad usage (weft::cli::run_tool reports it).
#pragma once

#include <cstdio>

namespace weft::samples {

// Tunes a GEMM sample's pass (gemm_verb.cpp).
int gemm_verb(int argc, char** argv, std::FILE* out, std::FILE* err);
// Tunes a convolution sample's pass (conv_verb.cpp).
int conv_verb(int argc, char** argv, std::FILE* out, std::FILE* err);
// Tunes a tensor contraction (contraction_verb.cpp).
int contraction_verb(int argc, char** argv, std::FILE* out, std::FILE* err);
// Lists the tuning database (show_verb.cpp).
int show_verb(int argc, char** argv, std::FILE* out);
// Prints the loop strings of loop specs (strings_verb.cpp).
int strings_verb(int argc, char** argv, std::FILE* out, std::FILE* err);
// Runs a sample once per loop string of a file and ranks them (measure_verb.cpp).
int measure_verb(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace weft::samples
