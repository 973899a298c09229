// The backward GEMM samples as one kind of pass: out = op(left) x op(right), every operand a plain
// column-major matrix kept in a blocked layout, op the transpose where the pass says so. What
// weft-gemm-bwd and weft-gemm-upd (and their tests) do around the kernel is then the same code:
//
//   const GemmBwd bwd(config);
//   GemmPassData<float> data(bwd.layout(), 1, 2);   // random W and dY (seeds 1, 2), blocked; dX zeroed
//   bwd.run(data.left(), data.right(), data.out());
//   Verdict v = data.check(bwd.bf16_sum());         // dX against W^T x dY in double precision
//
// In bf16 (GemmPassData<bfloat16>, layout.dtype bf16) the random inputs are rounded to bf16,
// the blocked copies hold bfloat16 (VNNI-2 tiles where the layout says so), and the check bounds
// every element's error (verification.hpp, bf16_error_bound) for the way the pass sums it.
// In f64 (GemmPassData<double>) the inputs are doubles with all 53 bits random, and the check is
// against the reference summed in double, within sum_tolerance_f64 (as the operators' f64 tests).
//
// The forward sample, with its bias, ReLU and layers, has its own driver (weft_gemm.cpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include <weft/jit/data_type.hpp>
#include <weft/ops/element_type.hpp>
#include <weft/ops/gemm_layout.hpp>
#include <weft/ops/verification.hpp>

#include "sample_driver.hpp"

namespace weft::samples {

// T: float for an f32 layout, bfloat16 for a bf16 one, double for an f64 one (weft::Error otherwise).
template <class T>
class GemmPassData {
 public:
  // The plain matrices' elements: double in f64, else float (holding the values of T).
  using Plain = std::conditional_t<std::is_same_v<T, double>, double, float>;

  // Random inputs from the seeds (rounded to T), their blocked copies, and a blocked output filled
  // with `out_fill`.
  GemmPassData(const ops::GemmPassLayout& layout, std::uint64_t left_seed, std::uint64_t right_seed,
               float out_fill = 0.0f);

  const T* left() const { return left_blocked_.data(); }
  const T* right() const { return right_blocked_.data(); }
  T* out() { return out_blocked_.data(); }

  // The output (unblocked) against op(left) x op(right) computed in double precision: in f32 the
  // relative L2 error within sum_tolerance(reduction), in f64 within sum_tolerance_f64(reduction);
  // in bf16 every element within its bound for `sum` (how the pass summed it; unused otherwise).
  Verdict check(const ops::Bf16Sum& sum) const;
  // Bytes the constructor allocates, with (`check`) what check() allocates on top.
  static std::uint64_t bytes(const ops::GemmPassLayout& layout, bool check);

 private:
  ops::GemmPassLayout layout_;
  std::vector<Plain> left_, right_;  // plain, the values the blocked copies hold
  std::vector<T> left_blocked_, right_blocked_, out_blocked_;
};

extern template class GemmPassData<float>;
extern template class GemmPassData<ops::bfloat16>;
extern template class GemmPassData<double>;

// The run of weft-gemm-bwd and weft-gemm-upd: checks that the buffers fit this machine (`what`
// names them for the message), allocates and fills them in the pass's precision, prints `header`,
// then times, checks and reports `pass` (GemmBwd or GemmUpd). Returns the exit status.
template <class T, class Pass>
int run_gemm_pass_in(const Pass& pass, const RunSettings& settings, const std::string& what,
                     const std::string& header) {
  const ops::GemmPassLayout layout = pass.layout();
  MemoryTally memory;
  memory.add_bytes(pass.run_memory_bytes(settings.threads));
  memory.add_bytes(GemmPassData<T>::bytes(layout, settings.check));
  return run_within_memory(what, memory.bytes(), [&] {
    GemmPassData<T> data(layout, 1, 2);
    std::fputs(header.c_str(), stdout);
    return measure_and_report(settings, {.run = [&] { pass.run(data.left(), data.right(), data.out()); },
                                         .flops = pass.flops(),
                                         .measure_tag = pass.measure_tag(settings.threads),
                                         .verify = [&] { return data.check(pass.bf16_sum()); }});
  });
}

template <class Pass>
int run_gemm_pass(const Pass& pass, const RunSettings& settings, const std::string& what, const std::string& header) {
  if (pass.config().bf16()) return run_gemm_pass_in<ops::bfloat16>(pass, settings, what, header);
  if (pass.config().f64()) return run_gemm_pass_in<double>(pass, settings, what, header);
  return run_gemm_pass_in<float>(pass, settings, what, header);
}

}  // namespace weft::samples
