// What weft-mlp-mpi prints about the training, on rank 0: one line per step (loss, compute,
// exposed communication, optimizer and step times in ms), the mean over the steps after the first
// (which pays for first touches), the bytes the all-reduces moved, GFLOPS and the MEASURE line.
//
//   print_step_report(stdout, slowest, {.allreduces = L, .reduced_floats = ..., .flops = ..., .measure_tag = ...});
//
// `slowest` holds, per step and per column, the largest time over the ranks (the slowest rank sets
// the pace of a synchronous step), and the loss summed over the ranks and divided by the global
// batch.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "training_loop.hpp"

namespace weft::samples {

struct RunSummary {
  int allreduces = 0;                // per step
  std::int64_t reduced_floats = 0;   // per step and rank: the all-reduces' payload
  double flops = 0;                  // per step, all ranks together
  std::string measure_tag;
};

void print_step_report(std::FILE* out, const StepTimes& slowest, const RunSummary& summary);

}  // namespace weft::samples
