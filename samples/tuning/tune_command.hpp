// weft-tune as a function, so that tests run every path of the tool in-process:
//
//   char* argv[] = {"weft-tune", "gemm", "--M", "64", "--N", "64", "--K", "64", "--dry-run"};
//   int status = weft::samples::weft_tune_main(9, argv, stdout, stderr);
//
// Exit status: 0 success; 1 a run-time failure (a measurement or a file write that failed, memory
// that could not be allocated); 2 bad usage, with a message naming the argument on `err`: unknown
// commands and options, missing, repeated or malformed values, values out of range, a problem the
// tensor front end rejects, sizes this machine cannot hold, a request that leaves no candidate to
// measure, and a plot or database path that cannot be written (checked before the search).
#pragma once

#include <cstdio>

namespace weft::samples {

int weft_tune_main(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace weft::samples
