// weft-tune: searches loop strings, blockings and knobs for a workload in-process, prints the best
// candidates and stores the winner in the tuning database (docs/tuning.md). The tool is
// weft_tune_main (tune_command.hpp), which the tests run in-process.
#include <cstdio>

#include "tune_command.hpp"

int main(int argc, char** argv) { return weft::samples::weft_tune_main(argc, argv, stdout, stderr); }
