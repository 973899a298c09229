// The forward sample's buffers and its check, in FP32, bf16 or FP64: what weft-gemm runs, and what
// the tests run on small shapes.
//
//   const GemmFwd gemm(config);
//   GemmFwdData<bfloat16> data(gemm, /*ring_buffer=*/false);   // random A, B, bias; blocked copies
//   data.run();                                                 // every layer
//   Verdict v = data.check();
//
// Inputs: A (M x K, one weight for every layer), B (K x N) and the bias (M) are random in [-1, 1)
// from fixed seeds, rounded to T, kept plain (the references read them) and blocked (the weight
// tiles in VNNI-2 in bf16). Layer l writes output l, or with `ring_buffer` (PARLOOPER's
// use_ping_pong_bufs) output l mod 2; the outputs start zeroed, since an MLP layer reads the
// previous output's padding rows as K padding.
//
// The check: FP32, the last output against the layers' chain computed in double, relative L2
// error within sum_tolerance(K) per layer; FP64 the same (inputs the float values, held as doubles),
// read back as float, within kF64CheckedAsFloat per layer (verification.hpp). bf16, every layer against the reference computed in
// double from that layer's own input (for a layer after the first, the previous output as the
// sample rounded it), every element within its bf16 bound (verification.hpp); the verdict is the
// worst layer's. When the ring overwrote earlier outputs, the check runs the layers once more with
// one output each, checks that run, and requires the same last output bits as the ring's.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <weft/ops/element_type.hpp>
#include <weft/ops/gemm_fwd.hpp>

#include "sample_driver.hpp"

namespace weft::samples {

// The random inputs' seeds, and what the outputs start as: 0 for an MLP (its padding rows are the
// next layer's K padding), anything for one layer (a test that the first chunk never reads C).
struct GemmFwdInit {
  std::uint64_t a_seed = 1, b_seed = 2, bias_seed = 3;
  float out_fill = 0.0f;
};

template <class T>
class GemmFwdData {
 public:
  // `gemm` must outlive this object; T must be its precision's type, and out_fill 0 for an MLP
  // (weft::Error otherwise).
  GemmFwdData(const ops::GemmFwd& gemm, bool ring_buffer, GemmFwdInit init = {});

  void run() const { gemm_.run(acts_, weights_, biases_); }
  Verdict check() const;

  int output_buffers() const { return static_cast<int>(outputs_.size()); }
  // activations()[0] is B, activations()[l + 1] layer l's output (blocked).
  std::span<T* const> activations() const { return acts_; }

  // Bytes the constructor allocates, with (`check`) what check() allocates on top.
  static std::uint64_t bytes(const ops::GemmFwd& gemm, bool ring_buffer, bool check);

 private:
  Verdict check_layers(std::span<T* const> acts) const;

  const ops::GemmFwd& gemm_;
  bool ring_buffer_;
  std::vector<float> a_, b_, bias_;  // plain, the values of T
  std::vector<std::vector<T>> weights_blocked_;
  std::vector<T> input_, bias_t_;
  std::vector<std::vector<T>> outputs_;
  std::vector<T*> acts_;
  std::vector<const T*> weights_, biases_;
};

extern template class GemmFwdData<float>;
extern template class GemmFwdData<ops::bfloat16>;

}  // namespace weft::samples
