// The portable BRGEMM: the test oracle and the kernel behind WEFT_ISA=reference. It sums in the
// same order as the generated code (C or 0, then batch by batch, k ascending, one fused multiply-add
// per term; in bf16 each pair of k as k + 1, then k), so on the same inputs the two agree bit for bit
// (vdpbf16ps too, as long as no input or partial sum is denormal: it flushes those).
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "weft/jit/bfloat16.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/tpp/brgemm.hpp"
#include "weft/tpp/min_max_relu.hpp"

namespace weft::tpp {

namespace {

using jit::DataType;

// Batch entry i of A (or B): `base` plus the stride or the offset (in elements of `bytes` bytes), or
// the i-th address.
const char* batch_entry(const BrgemmDesc& d, std::int64_t i, const void* base, std::int64_t stride,
                        const std::int64_t* offsets, const void* const* addresses, std::int64_t bytes) {
  const auto* first = static_cast<const char*>(base);
  switch (d.batch) {
    case BrgemmBatch::strided: return first + i * stride * bytes;
    case BrgemmBatch::offsets: return first + offsets[i] * bytes;
    case BrgemmBatch::addresses: return static_cast<const char*>(addresses[i]);
  }
  return nullptr;
}

// Element `index` of an array of `type`, exactly, as the accumulator type Acc.
template <class Acc>
Acc read(const void* base, std::int64_t index, DataType type) {
  switch (type) {
    case DataType::f32: return static_cast<Acc>(static_cast<const float*>(base)[index]);
    case DataType::bf16: return static_cast<Acc>(jit::to_float(static_cast<const jit::bfloat16*>(base)[index]));
    case DataType::f64: return static_cast<Acc>(static_cast<const double*>(base)[index]);
  }
  return Acc{};
}

template <class Acc>
void write(void* base, std::int64_t index, DataType type, Acc value) {
  switch (type) {
    case DataType::f32: static_cast<float*>(base)[index] = static_cast<float>(value); return;
    case DataType::bf16:
      static_cast<jit::bfloat16*>(base)[index] = jit::to_bfloat16(static_cast<float>(value));
      return;
    case DataType::f64: static_cast<double*>(base)[index] = static_cast<double>(value); return;
  }
}

// Acc is float (f32 and bf16 inputs) or double (f64).
template <class Acc>
void reference(const BrgemmDesc& d, const BrgemmArgs& args) {
  const DataType in = d.types.in, out = d.types.out;
  const auto in_bytes = static_cast<std::int64_t>(jit::size_of(in));
  const bool vnni = in == DataType::bf16;
  // Distances in B_i between k steps and between columns.
  const std::int64_t b_row = d.b_transposed ? d.ldb : 1, b_col = d.b_transposed ? 1 : d.ldb;
  // A_i(i, p): column-major, or VNNI-2 in bf16 (brgemm.hpp).
  auto a_index = [&](std::int64_t i, std::int64_t p) {
    return vnni ? (p / 2) * 2 * d.lda + 2 * i + p % 2 : i + p * d.lda;
  };
  for (std::int64_t j = 0; j < d.n; ++j) {
    for (std::int64_t i = 0; i < d.m; ++i) {
      const std::int64_t at = i + j * d.ldc;
      Acc acc = d.beta == 0 ? Acc{0} : read<Acc>(args.c, at, out);
      for (std::int64_t r = 0; r < args.count; ++r) {
        const char* a = batch_entry(d, r, args.a, args.stride_a, args.offsets_a, args.addresses_a, in_bytes);
        const char* b = batch_entry(d, r, args.b, args.stride_b, args.offsets_b, args.addresses_b, in_bytes);
        auto term = [&](std::int64_t p) {
          acc = std::fma(read<Acc>(a, a_index(i, p), in), read<Acc>(b, b_row * p + b_col * j, in), acc);
        };
        for (std::int64_t p = 0; p < d.k; p += vnni ? 2 : 1) {
          if (vnni) term(p + 1);  // vdpbf16ps's order: the odd element of the pair first
          term(p);
        }
      }
      if (d.bias == BrgemmBias::per_row) acc += read<Acc>(args.bias, i, out);
      if (d.bias == BrgemmBias::per_col) acc += read<Acc>(args.bias, j, out);
      if (d.activation == BrgemmActivation::relu) acc = relu(acc);
      if constexpr (std::is_same_v<Acc, float>) {
        if (d.activation == BrgemmActivation::unary) acc = unary_reference_value(d.unary, acc, d.unary_alpha);
      }
      write<Acc>(args.c, at, out, acc);
    }
  }
}

}  // namespace

void brgemm_reference(const BrgemmDesc& d, const BrgemmArgs& args) {
  validate(d);  // also: f64 has no unary epilogue
  check_args(d, args);
  if (d.types.compute == DataType::f64) {
    reference<double>(d, args);
  } else {
    reference<float>(d, args);
  }
}

}  // namespace weft::tpp
