#include "gemm_fwd_data.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include <weft/jit/error.hpp>
#include <weft/ops/gemm_reference.hpp>

namespace weft::samples {
namespace {

using weft::ops::bfloat16;
using weft::ops::from_blocked;
using weft::ops::GemmFwd;
using weft::ops::GemmFwdConfig;
using weft::ops::round_to_element_type;

std::vector<float> random_values(std::int64_t count, std::int64_t padded, std::uint64_t seed) {
  std::vector<float> v(static_cast<std::size_t>(padded), 0.0f);
  ops::fill_random(v.data(), count, seed);
  return v;
}

std::size_t output_size(const GemmFwd& gemm) {
  return static_cast<std::size_t>(gemm.n_blocking().padded() * gemm.m_blocking().padded());
}

}  // namespace

template <class T>
GemmFwdData<T>::GemmFwdData(const GemmFwd& gemm, bool ring_buffer, GemmFwdInit init)
    : gemm_(gemm), ring_buffer_(ring_buffer) {
  const GemmFwdConfig& c = gemm.config();
  ops::require_buffers_of<T>(c.dtype, "GemmFwdData");
  if (c.n_layers > 1 && init.out_fill != 0.0f)
    throw Error("GemmFwdData: an MLP's outputs must start zeroed (their padding is the next layer's K padding)");
  const ops::Blocking mB = gemm.m_blocking(), nB = gemm.n_blocking(), kB = gemm.k_blocking();
  a_ = random_values(c.M * c.K, c.M * c.K, init.a_seed);
  b_ = random_values(c.K * c.N, c.K * c.N, init.b_seed);
  bias_ = random_values(c.M, mB.padded(), init.bias_seed);
  // The values the sample computes on, exactly: the references read these.
  round_to_element_type<T>(a_);
  round_to_element_type<T>(b_);
  round_to_element_type<T>(bias_);
  // In bf16 the weight tiles are VNNI-2, BRGEMM's A (PARLOOPER packs its weights so too, untimed).
  weights_blocked_.assign(static_cast<std::size_t>(c.n_layers),
                          ops::to_blocked<T>(a_.data(), mB, kB, true, gemm.layout().left.order));
  input_ = ops::to_blocked<T>(b_.data(), kB, nB, false);
  bias_t_ = ops::converted<T>(bias_);
  const int n_outputs = ring_buffer ? std::min(c.n_layers, 2) : c.n_layers;
  outputs_.assign(static_cast<std::size_t>(n_outputs), std::vector<T>(output_size(gemm), ops::from_float<T>(init.out_fill)));
  // The input stays intact, so every run computes the same thing.
  acts_.push_back(input_.data());
  for (int l = 0; l < c.n_layers; ++l) {
    acts_.push_back(outputs_[static_cast<std::size_t>(l % n_outputs)].data());
    weights_.push_back(weights_blocked_[static_cast<std::size_t>(l)].data());
    biases_.push_back(bias_t_.data());
  }
}

template <class T>
Verdict GemmFwdData<T>::check_layers(std::span<T* const> acts) const {
  const GemmFwdConfig& c = gemm_.config();
  const std::int64_t M = c.M, N = c.N, K = c.K;
  const float* bias = c.fuse_bias ? bias_.data() : nullptr;
  if constexpr (!std::is_same_v<T, bfloat16>) {
    std::vector<float> out(static_cast<std::size_t>(M * N)), ref_in = b_, ref_out(out.size());
    from_blocked(acts.back(), out.data(), gemm_.m_blocking(), gemm_.n_blocking(), false);
    for (int l = 0; l < c.n_layers; ++l) {
      ops::gemm_reference(M, N, K, a_.data(), ref_in.data(), bias, c.fuse_relu, ref_out.data());
      ref_in.swap(ref_out);
    }
    const double tolerance = std::is_same_v<T, double> ? ops::kF64CheckedAsFloat : ops::sum_tolerance(K);
    return {ops::compare(out.data(), ref_in.data(), M * N), tolerance * c.n_layers};
  } else {
    const ops::Bf16Sum sum = gemm_.bf16_sum();
    std::vector<float> in(static_cast<std::size_t>(K * N)), out(static_cast<std::size_t>(M * N)), ref(out.size());
    ops::Bf16Magnitudes magnitudes;
    Verdict worst;
    for (int l = 0; l < c.n_layers; ++l) {
      const auto layer = static_cast<std::size_t>(l);
      // Layer l's input: B, or layer l - 1's output (an MLP has M == K and bm == bk: one layout).
      from_blocked(acts[layer], in.data(), gemm_.k_blocking(), gemm_.n_blocking(), false);
      from_blocked(acts[layer + 1], out.data(), gemm_.m_blocking(), gemm_.n_blocking(), false);
      ops::gemm_reference(M, N, K, a_.data(), in.data(), bias, c.fuse_relu, ref.data(), &magnitudes, sum.chunk_terms);
      const ops::ErrorNorms e = ops::compare_within(out.data(), ref.data(), magnitudes, M * N, sum);
      const bool fails = !e.passed(0), worst_fails = !worst.norms.passed(0);
      if (l > 0 && (fails < worst_fails ||
                    (fails == worst_fails && e.worst_error_to_bound <= worst.norms.worst_error_to_bound)))
        continue;
      worst.norms = e;
      if (c.n_layers > 1) worst.note = "; worst layer: " + std::to_string(l + 1) + " of " + std::to_string(c.n_layers);
    }
    return worst;
  }
}

template <class T>
Verdict GemmFwdData<T>::check() const {
  const int layers = gemm_.config().n_layers;
  // FP32 and FP64 check the last output only; bf16 needs every layer's input and output.
  if (!std::is_same_v<T, bfloat16> || !ring_buffer_ || layers <= 2) return check_layers(acts_);
  // The ring overwrote the outputs of all but the last two layers: run once more with one output
  // per layer, check that run, and require the same last output bits as the ring's (each block is
  // computed by the same calls in the same order either way).
  std::vector<std::vector<T>> separate(static_cast<std::size_t>(layers), std::vector<T>(output_size(gemm_), T{}));
  std::vector<T*> all{acts_.front()};
  for (auto& o : separate) all.push_back(o.data());
  gemm_.run(all, weights_, biases_);
  Verdict v = check_layers(all);
  if (std::memcmp(all.back(), acts_.back(), output_size(gemm_) * sizeof(T)) != 0) {
    v.norms.beyond_bound = std::max<std::int64_t>(v.norms.beyond_bound, 1);  // fails the check
    v.note += "; the ring buffers' last output differs from a run with one buffer per layer";
  }
  return v;
}

template <class T>
std::uint64_t GemmFwdData<T>::bytes(const GemmFwd& gemm, bool ring_buffer, bool check) {
  const GemmFwdConfig& c = gemm.config();
  const ops::Blocking mB = gemm.m_blocking(), nB = gemm.n_blocking(), kB = gemm.k_blocking();
  const std::uint64_t element = sizeof(T);
  const std::int64_t layers = c.n_layers;
  const std::int64_t outputs = ring_buffer ? std::min<std::int64_t>(layers, 2) : layers;
  MemoryTally memory;
  memory.add_floats({c.M, c.K});                                                              // A
  memory.add_floats({c.K, c.N});                                                              // B
  memory.add_floats({mB.blocks(), mB.block});                                                 // bias
  memory.add_elements({mB.blocks(), mB.block}, element);                                      // bias in T
  memory.add_elements({layers + 1, mB.blocks(), mB.block, kB.blocks(), kB.block}, element);  // blocked A, one per layer
  memory.add_elements({kB.blocks(), kB.block, nB.blocks(), nB.block}, element);              // blocked B
  memory.add_elements({outputs, nB.blocks(), nB.block, mB.blocks(), mB.block}, element);     // blocked outputs
  if (check) {
    memory.add_floats({c.M, c.N});  // the result, unblocked
    memory.add_floats({c.K, c.N});  // the reference's input
    memory.add_floats({c.M, c.N});  // the reference's output
    if (std::is_same_v<T, bfloat16>) {
      memory.add_elements({2, c.M, c.N}, sizeof(double));  // the magnitudes of the bf16 bound
      if (ring_buffer && layers > 2)                    // the rerun with one output per layer
        memory.add_elements({layers, nB.blocks(), nB.block, mB.blocks(), mB.block}, element);
    }
  }
  return memory.bytes();
}

template class GemmFwdData<float>;
template class GemmFwdData<bfloat16>;
template class GemmFwdData<double>;

}  // namespace weft::samples
