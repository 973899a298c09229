#include "step_report.hpp"

#include <cmath>
#include <cstddef>

#include <weft/jit/error.hpp>

namespace weft::samples {

namespace {

double mean(const std::vector<double>& v, std::size_t first) {
  double sum = 0;
  for (std::size_t i = first; i < v.size(); ++i) sum += v[i];
  return sum / static_cast<double>(v.size() - first);
}

}  // namespace

void print_step_report(std::FILE* out, const StepTimes& slowest, const RunSummary& summary) {
  std::fprintf(out, "%5s %12s %11s %16s %13s %8s\n", "step", "loss", "compute_ms", "exposed_comm_ms", "optimizer_ms",
               "step_ms");
  const std::size_t steps = slowest.compute.size();
  for (std::size_t s = 0; s < steps; ++s) {
    const double c = slowest.compute[s], m = slowest.communication[s], o = slowest.optimizer[s];
    std::fprintf(out, "%5zu %12.6e %11.3f %16.3f %13.3f %8.3f\n", s + 1, slowest.loss[s], 1e3 * c, 1e3 * m, 1e3 * o,
                 1e3 * (c + m + o));
  }
  for (std::size_t s = 0; s < steps; ++s) {
    if (std::isfinite(slowest.loss[s])) continue;
    std::fprintf(out, "note: the loss is not finite from step %zu on: the training diverged (lower --lr)\n", s + 1);
    break;
  }
  const std::size_t first = steps > 1 ? 1 : 0;
  const double c = mean(slowest.compute, first), m = mean(slowest.communication, first),
               o = mean(slowest.optimizer, first), step = c + m + o;
  const std::string which = steps > 1 ? "steps 2-" + std::to_string(steps) : "step 1";
  std::fprintf(out,
               "mean of %s (slowest rank per column): compute %.3f ms, exposed communication %.3f ms (%.1f%% of "
               "the step), optimizer %.3f ms, step %.3f ms\n",
               which.c_str(), 1e3 * c, 1e3 * m, step > 0 ? 100.0 * m / step : 0.0, 1e3 * o, 1e3 * step);
  const std::uint64_t bytes = static_cast<std::uint64_t>(summary.reduced_floats) * sizeof(float);
  std::fprintf(out, "reduced per step and rank: %d all-reduces (one per layer: weights and bias), %lld floats, %llu bytes (%s)\n",
               summary.allreduces, static_cast<long long>(summary.reduced_floats),
               static_cast<unsigned long long>(bytes), format_bytes(bytes).c_str());
  const double gflops = step > 0 ? summary.flops / step * 1e-9 : 0.0;
  std::fprintf(out, "GFLOPS: %.2f (all ranks, the mean step)\n", gflops);
  std::fprintf(out, "MEASURE %.2f %s\n", gflops, summary.measure_tag.c_str());
}

}  // namespace weft::samples
