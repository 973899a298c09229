// What every sample does around its kernel: check that its buffers fit this machine before
// allocating them, time the kernel, compare it with its reference, and print the result: time,
// GFLOPS, the check's verdict and the machine-readable MEASURE line of PARLOOPER's samples. The
// exit status is 0, or 1 when the check failed (bad arguments are weft/cli/run_tool.hpp's).
//
//   MemoryTally memory;
//   memory.add_floats({M, K});   // every buffer the run allocates
//   return run_within_memory("weft-gemm with ... (A, B, C)", memory.bytes(), [&] {
//     ... allocate, fill, print the sample's header line ...
//     return measure_and_report(settings, {.run = [&] { gemm.run(...); }, .flops = gemm.flops(),
//                                          .measure_tag = gemm.measure_tag(threads),
//                                          .verify = [&] { return Verdict{compare(...), tolerance}; }});
//   });
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>

#include <weft/ops/verification.hpp>

namespace weft::samples {

// The options of a run that every sample takes.
struct RunSettings {
  bool check = true;             // --check
  std::int64_t warmup = 1;       // --warmup: untimed calls first
  std::int64_t iterations = 10;  // n_iters: timed calls
  int threads = 1;               // the team size the runs use (after --threads)
};

struct Verdict {
  ops::ErrorNorms norms;
  double tolerance = 0;  // on norms.l2_rel_error, unless the norms carry element-wise bounds
  std::string note = {};  // printed after the norms, e.g. which layer of an MLP they are
};

// One timed kernel of a sample and its check.
struct TimedPass {
  std::function<void()> run;  // one iteration
  double flops = 0;           // of one iteration
  std::string measure_tag;
  std::function<Verdict()> verify;  // after the timed runs, when settings.check
};

// Times `pass` (settings.warmup untimed calls, then settings.iterations timed ones), verifies it
// when settings.check, and prints the verdict, "time: ...", "GFLOPS: ..." and
// "MEASURE <gflops> <tag>". Returns the exit status: 1 when the check failed, else 0.
int measure_and_report(const RunSettings& settings, const TimedPass& pass);

// Seconds per call of `fn` over `iterations` calls, after `warmup` untimed calls.
double seconds_per_call(const std::function<void()>& fn, std::int64_t warmup, std::int64_t iterations);

// Bytes of the buffers a run allocates, added up without overflow (kBytesOverflow saturates).
class MemoryTally {
 public:
  void add_floats(std::initializer_list<std::int64_t> dims);
  void add_elements(std::initializer_list<std::int64_t> dims, std::uint64_t element_bytes);
  void add_bytes(std::uint64_t bytes);
  std::uint64_t bytes() const { return bytes_; }

 private:
  std::uint64_t bytes_ = 0;
};

// weft::MemoryError naming `what` when `bytes` overflow or exceed this machine (bad usage), before
// anything is allocated; else returns body(), whose failed allocations become a MemoryError
// (allocation_failed, a run-time failure) saying how much the run needed.
int run_within_memory(const std::string& what, std::uint64_t bytes, const std::function<int()>& body);

}  // namespace weft::samples
