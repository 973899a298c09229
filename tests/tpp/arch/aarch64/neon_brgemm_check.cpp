#include "neon_brgemm_check.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "emitters.hpp"
#include "guarded_buffer.hpp"
#include "weft/jit/bfloat16.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/data_type.hpp"

namespace weft::tpp::neon_brgemm_test {
namespace {

using jit::DataType;
using test::Flush;
using Buffer = test::GuardedBuffer<std::uint8_t>;

// Elements of `type` in [-1, 1], with a special value every `special_every` elements.
void fill(Buffer& buffer, DataType type, std::mt19937& rng, int special_every) {
  static const double specials[] = {std::numeric_limits<double>::quiet_NaN(), -0.0, 0.0,
                                    std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                                    1e-39, -3e-40, 1e30, -1e30};
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  const std::size_t bytes = jit::size_of(type), count = buffer.size() / bytes;
  std::size_t next_special = 0;
  for (std::size_t i = 0; i < count; ++i) {
    double x = dist(rng);
    if (special_every > 0 && rng() % static_cast<unsigned>(special_every) == 0) {
      x = specials[next_special++ % std::size(specials)];
    }
    std::uint8_t* at = buffer.data() + i * bytes;
    switch (type) {
      case DataType::f32: {
        const auto f = static_cast<float>(x);
        std::memcpy(at, &f, 4);
        break;
      }
      case DataType::bf16: {
        jit::bfloat16 h = jit::to_bfloat16(static_cast<float>(x));
        // to_bfloat16 flushes denormals: write a denormal bf16's bits directly.
        if (x != 0 && std::fabs(x) < 1e-38) h.bits = static_cast<std::uint16_t>(x < 0 ? 0x8023 : 0x0041);
        std::memcpy(at, &h.bits, 2);
        break;
      }
      case DataType::f64: std::memcpy(at, &x, 8); break;
    }
  }
}

// Element i of C as an integer that orders like the value (for a distance in ulps).
std::int64_t ordered(const std::uint8_t* base, std::size_t i, DataType type) {
  auto order = [](std::int64_t bits, std::int64_t sign) { return bits & sign ? sign - 1 - bits : bits; };
  switch (type) {
    case DataType::f32: {
      std::int32_t v;
      std::memcpy(&v, base + 4 * i, 4);
      return order(static_cast<std::uint32_t>(v), std::int64_t{1} << 31);
    }
    case DataType::bf16: {
      std::uint16_t v;
      std::memcpy(&v, base + 2 * i, 2);
      return order(v, 1 << 15);
    }
    case DataType::f64: {
      std::int64_t v;
      std::memcpy(&v, base + 8 * i, 8);
      return v < 0 ? std::numeric_limits<std::int64_t>::min() - v : v;
    }
  }
  return 0;
}

double value(const std::uint8_t* base, std::size_t i, DataType type) {
  switch (type) {
    case DataType::f32: {
      float f;
      std::memcpy(&f, base + 4 * i, 4);
      return f;
    }
    case DataType::bf16: {
      jit::bfloat16 h;
      std::memcpy(&h.bits, base + 2 * i, 2);
      return jit::to_float(h);
    }
    case DataType::f64: {
      double x;
      std::memcpy(&x, base + 8 * i, 8);
      return x;
    }
  }
  return 0;
}

bool is_nan(const std::uint8_t* base, std::size_t i, DataType type) { return std::isnan(value(base, i, type)); }

}  // namespace

std::unique_ptr<jit::GeneratedCode> emit_neon(const BrgemmDesc& d) {
  return detail::emit_kernel(d, plan_brgemm(d, jit::Isa::neon));
}

void check(const BrgemmDesc& d, std::int64_t count, std::uint32_t seed, const CheckOptions& options) {
  SCOPED_TRACE(to_string(d) + " count=" + std::to_string(count) + " seed=" + std::to_string(seed));
  std::mt19937 rng(seed);
  const DataType in = d.types.in, out = d.types.out;
  const auto in_bytes = static_cast<std::int64_t>(jit::size_of(in));
  const auto out_bytes = static_cast<std::int64_t>(jit::size_of(out));
  const bool vnni = in == DataType::bf16;
  // Elements each operand spans (A in VNNI-2 for bf16: the last pair block's 2 m values).
  const std::int64_t a_size = vnni ? (d.k / 2 - 1) * 2 * d.lda + 2 * d.m : d.lda * (d.k - 1) + d.m;
  const std::int64_t b_size = d.b_transposed ? d.ldb * (d.k - 1) + d.n : d.ldb * (d.n - 1) + d.k;
  const std::int64_t c_size = d.ldc * (d.n - 1) + d.m;
  // Entries a little apart (stride > size) so that a kernel confusing them would differ.
  const std::int64_t stride_a = a_size + 3, stride_b = b_size + 5;
  const std::int64_t entries = std::max<std::int64_t>(count, 1);
  const Flush flush = options.flush_front ? Flush::front : Flush::back;
  auto buffer = [&](std::int64_t elements, std::int64_t bytes, DataType type) {
    auto b = std::make_unique<Buffer>(static_cast<std::size_t>(elements * bytes), flush);
    fill(*b, type, rng, options.special_every);
    return b;
  };
  auto a = buffer(stride_a * (entries - 1) + a_size, in_bytes, in);
  auto b = buffer(stride_b * (entries - 1) + b_size, in_bytes, in);
  auto c = buffer(c_size, out_bytes, out);
  const std::int64_t bias_size = d.bias == BrgemmBias::per_row ? d.m : d.n;
  auto bias = buffer(bias_size, out_bytes, out);
  std::vector<std::unique_ptr<Buffer>> own;
  std::vector<const void*> addresses_a, addresses_b;
  std::vector<std::int64_t> offsets_a, offsets_b;
  for (std::int64_t i = 0; i < entries; ++i) {
    // Offsets in reverse order: entry 0 is the one at the guard page.
    offsets_a.push_back((entries - 1 - i) * stride_a);
    offsets_b.push_back((entries - 1 - i) * stride_b);
    own.push_back(buffer(a_size, in_bytes, in));
    addresses_a.push_back(own.back()->data());
    own.push_back(buffer(b_size, in_bytes, in));
    addresses_b.push_back(own.back()->data());
  }
  BrgemmArgs args{.a = a->data(), .b = b->data(), .c = c->data(), .count = count};
  if (d.bias != BrgemmBias::none) args.bias = bias->data();
  set_batch(args, d.batch, stride_a, stride_b, offsets_a, offsets_b, addresses_a, addresses_b);
  std::vector<std::uint8_t> expected(c->begin(), c->end());
  BrgemmArgs ref_args = args;
  ref_args.c = expected.data();
  brgemm_reference(d, ref_args);

  auto code = options.emit ? options.emit(d) : emit_neon(d);
  auto fn = code->finalize<BrgemmKernelFn>(to_string(d));
  fn(&args);
  for (std::int64_t j = 0; j < d.n; ++j) {
    for (std::int64_t i = 0; i < d.ldc && i + j * d.ldc < c_size; ++i) {
      const auto at = static_cast<std::size_t>(i + j * d.ldc);
      const std::uint8_t* got = c->data() + at * static_cast<std::size_t>(out_bytes);
      const std::uint8_t* want = expected.data() + at * static_cast<std::size_t>(out_bytes);
      bool same = std::memcmp(got, want, static_cast<std::size_t>(out_bytes)) == 0;
      if (!same && options.ulps > 0 && i < d.m) {
        const std::int64_t distance = std::llabs(ordered(c->data(), at, out) - ordered(expected.data(), at, out));
        same = is_nan(c->data(), at, out) ? is_nan(expected.data(), at, out) : distance <= options.ulps;
      }
      if (!same) {
        ADD_FAILURE() << "first difference at row " << i << " column " << j << ": " << value(c->data(), at, out)
                      << " vs " << value(expected.data(), at, out) << " (reference)";
        return;
      }
    }
  }
}

}  // namespace weft::tpp::neon_brgemm_test
