// The backward GEMM samples as one kind of pass: out = op(left) x op(right), every operand a plain
// column-major matrix kept in a blocked layout, op the transpose where the pass says so. What
// weft-gemm-bwd and weft-gemm-upd (and their tests) do around the kernel is then the same code:
//
//   const GemmBwd bwd(config);
//   GemmPassData data(bwd.layout(), 1, 2);   // random W and dY (seeds 1, 2), blocked; dX zeroed
//   bwd.run(data.left(), data.right(), data.out());
//   ErrorNorms e = data.check();             // dX against W^T x dY in double precision
//
// The forward sample, with its bias, ReLU and layers, has its own driver (weft_gemm.cpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "blocked_layout.hpp"
#include "sample_driver.hpp"
#include "verification.hpp"

namespace weft::samples {

// A plain column-major `rows.size x cols.size` matrix and its blocked copy's layout.
struct PassMatrix {
  Blocking rows, cols;
  bool row_block_major = false;  // to_blocked's order
  bool transposed = false;       // the product reads its transpose
};

struct GemmPassLayout {
  PassMatrix left, right, out;
  // Terms of each output sum: the columns of op(left).
  std::int64_t reduction() const { return left.transposed ? left.rows.size : left.cols.size; }
};

class GemmPassData {
 public:
  // Random inputs from the seeds, their blocked copies, and a blocked output filled with `out_fill`.
  GemmPassData(const GemmPassLayout& layout, std::uint64_t left_seed, std::uint64_t right_seed,
               float out_fill = 0.0f);

  const float* left() const { return left_blocked_.data(); }
  const float* right() const { return right_blocked_.data(); }
  float* out() { return out_blocked_.data(); }

  // The output (unblocked) against op(left) x op(right) computed in double precision.
  Verdict check() const;
  // Bytes the constructor allocates, with (`check`) what check() allocates on top.
  static std::uint64_t bytes(const GemmPassLayout& layout, bool check);

 private:
  GemmPassLayout layout_;
  std::vector<float> left_, right_;  // plain
  std::vector<float> left_blocked_, right_blocked_, out_blocked_;
};

// The run of weft-gemm-bwd and weft-gemm-upd: checks that the buffers fit this machine (`what`
// names them for the message), allocates and fills them, prints `header`, then times, checks and
// reports `pass` (GemmBwd or GemmUpd). Returns the exit status.
template <class Pass>
int run_gemm_pass(const Pass& pass, const RunSettings& settings, const std::string& what, const std::string& header) {
  const GemmPassLayout layout = pass.layout();
  MemoryTally memory;
  memory.add_bytes(pass.run_memory_bytes(settings.threads));
  memory.add_bytes(GemmPassData::bytes(layout, settings.check));
  return run_within_memory(what, memory.bytes(), [&] {
    GemmPassData data(layout, 1, 2);
    std::fputs(header.c_str(), stdout);
    return measure_and_report(settings, {.run = [&] { pass.run(data.left(), data.right(), data.out()); },
                                         .flops = pass.flops(),
                                         .measure_tag = pass.measure_tag(settings.threads),
                                         .verify = [&] { return data.check(); }});
  });
}

}  // namespace weft::samples
