// The portable BRGEMM: the test oracle and the kernel behind WEFT_ISA=reference. It sums in the
// same order as the generated code (C or 0, then batch by batch, k ascending, one fused multiply-add
// per term), so on the same inputs the two agree bit for bit.
#include <cmath>
#include <cstdint>

#include "weft/tpp/brgemm.hpp"

namespace weft::tpp {

namespace {

const float* batch_a(const BrgemmDesc& d, const BrgemmArgs& args, std::int64_t i) {
  switch (d.batch) {
    case BrgemmBatch::strided: return args.a + i * args.stride_a;
    case BrgemmBatch::offsets: return args.a + args.offsets_a[i];
    case BrgemmBatch::addresses: return args.addresses_a[i];
  }
  return nullptr;
}

const float* batch_b(const BrgemmDesc& d, const BrgemmArgs& args, std::int64_t i) {
  switch (d.batch) {
    case BrgemmBatch::strided: return args.b + i * args.stride_b;
    case BrgemmBatch::offsets: return args.b + args.offsets_b[i];
    case BrgemmBatch::addresses: return args.addresses_b[i];
  }
  return nullptr;
}

}  // namespace

void brgemm_reference(const BrgemmDesc& d, const BrgemmArgs& args) {
  validate(d);
  check_args(d, args);
  for (std::int64_t j = 0; j < d.n; ++j) {
    for (std::int64_t i = 0; i < d.m; ++i) {
      float& c = args.c[i + j * d.ldc];
      float acc = d.beta == 0 ? 0.0f : c;
      for (std::int64_t r = 0; r < args.count; ++r) {
        const float* a = batch_a(d, args, r);
        const float* b = batch_b(d, args, r);
        for (std::int64_t p = 0; p < d.k; ++p) acc = std::fma(a[i + p * d.lda], b[p + j * d.ldb], acc);
      }
      if (d.bias == BrgemmBias::per_row) acc += args.bias[i];
      if (d.bias == BrgemmBias::per_col) acc += args.bias[j];
      if (d.activation == BrgemmActivation::relu) acc = acc > 0.0f || std::isnan(acc) ? acc : 0.0f;
      if (d.activation == BrgemmActivation::unary) acc = unary_reference_value(d.unary, acc, d.unary_alpha);
      c = acc;
    }
  }
}

}  // namespace weft::tpp
