// The portable BRGEMM: the test oracle and the kernel behind WEFT_ISA=reference. It sums in the
// same order as the generated code (C or 0, then batch by batch, k ascending, one fused multiply-add
// per term), so on the same inputs the two agree bit for bit.
#include <cmath>
#include <cstdint>

#include "weft/tpp/brgemm.hpp"

namespace weft::tpp {

namespace {

// Batch entry i of A (or B): `base` plus the stride or the offset, or the i-th address.
const float* batch_entry(const BrgemmDesc& d, std::int64_t i, const void* base, std::int64_t stride,
                         const std::int64_t* offsets, const void* const* addresses) {
  const auto* first = static_cast<const float*>(base);
  switch (d.batch) {
    case BrgemmBatch::strided: return first + i * stride;
    case BrgemmBatch::offsets: return first + offsets[i];
    case BrgemmBatch::addresses: return static_cast<const float*>(addresses[i]);
  }
  return nullptr;
}

}  // namespace

void brgemm_reference(const BrgemmDesc& d, const BrgemmArgs& args) {
  validate(d);  // all f32: the pointers are floats
  check_args(d, args);
  auto* out = static_cast<float*>(args.c);
  const auto* bias = static_cast<const float*>(args.bias);
  // Distances in B_i between k steps and between columns.
  const std::int64_t b_row = d.b_transposed ? d.ldb : 1, b_col = d.b_transposed ? 1 : d.ldb;
  for (std::int64_t j = 0; j < d.n; ++j) {
    for (std::int64_t i = 0; i < d.m; ++i) {
      float& c = out[i + j * d.ldc];
      float acc = d.beta == 0 ? 0.0f : c;
      for (std::int64_t r = 0; r < args.count; ++r) {
        const float* a = batch_entry(d, r, args.a, args.stride_a, args.offsets_a, args.addresses_a);
        const float* b = batch_entry(d, r, args.b, args.stride_b, args.offsets_b, args.addresses_b);
        for (std::int64_t p = 0; p < d.k; ++p) acc = std::fma(a[i + p * d.lda], b[b_row * p + b_col * j], acc);
      }
      if (d.bias == BrgemmBias::per_row) acc += bias[i];
      if (d.bias == BrgemmBias::per_col) acc += bias[j];
      if (d.activation == BrgemmActivation::relu) acc = acc > 0.0f || std::isnan(acc) ? acc : 0.0f;
      if (d.activation == BrgemmActivation::unary) acc = unary_reference_value(d.unary, acc, d.unary_alpha);
      c = acc;
    }
  }
}

}  // namespace weft::tpp
