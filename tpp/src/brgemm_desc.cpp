// Descriptor identity (hash, name) and the checks that keep bad descriptors away from the emitter.
#include <cstdint>
#include <string>

#include "op_properties.hpp"
#include "weft/jit/checked_arithmetic.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/jit/error.hpp"
#include "weft/jit/kernel_cache.hpp"
#include "weft/tpp/brgemm.hpp"

namespace weft::tpp {

std::size_t BrgemmDescHash::operator()(const BrgemmDesc& d) const noexcept {
  std::size_t seed = 0;
  jit::hash_combine(seed, d.m);
  jit::hash_combine(seed, d.n);
  jit::hash_combine(seed, d.k);
  jit::hash_combine(seed, d.lda);
  jit::hash_combine(seed, d.ldb);
  jit::hash_combine(seed, d.ldc);
  jit::hash_combine(seed, d.beta);
  jit::hash_combine(seed, static_cast<int>(d.batch));
  jit::hash_combine(seed, static_cast<int>(d.bias));
  jit::hash_combine(seed, static_cast<int>(d.activation));
  jit::hash_combine(seed, static_cast<int>(d.unary));
  jit::hash_combine(seed, d.unary_alpha);
  jit::hash_combine(seed, static_cast<int>(d.prefetch));
  jit::hash_combine(seed, d.b_transposed);
  jit::hash_combine(seed, d.types);
  return seed;
}

namespace {

const char* name(BrgemmBatch b) {
  switch (b) {
    case BrgemmBatch::strided: return "strided";
    case BrgemmBatch::offsets: return "offsets";
    case BrgemmBatch::addresses: return "addresses";
  }
  return "?";
}

const char* name(BrgemmBias b) {
  switch (b) {
    case BrgemmBias::none: return "";
    case BrgemmBias::per_row: return "_bias_row";
    case BrgemmBias::per_col: return "_bias_col";
  }
  return "?";
}

const char* name(BrgemmActivation a) {
  switch (a) {
    case BrgemmActivation::none: return "";
    case BrgemmActivation::relu: return "_relu";
    case BrgemmActivation::unary: return "_";
  }
  return "?";
}

[[noreturn]] void reject(const BrgemmDesc& d, const std::string& why) {
  throw Error("brgemm descriptor (m=" + std::to_string(d.m) + " n=" + std::to_string(d.n) +
              " k=" + std::to_string(d.k) + " lda=" + std::to_string(d.lda) + " ldb=" +
              std::to_string(d.ldb) + " ldc=" + std::to_string(d.ldc) + "): " + why);
}

}  // namespace

std::string to_string(const BrgemmDesc& d) {
  return "brgemm_m" + std::to_string(d.m) + "_n" + std::to_string(d.n) + "_k" + std::to_string(d.k) +
         "_lda" + std::to_string(d.lda) + "_ldb" + std::to_string(d.ldb) + "_ldc" +
         std::to_string(d.ldc) + "_beta" + std::to_string(d.beta) + "_" + name(d.batch) +
         name(d.bias) + name(d.activation) +
         (d.activation == BrgemmActivation::unary ? to_string(d.unary) : std::string()) +
         (d.prefetch == BrgemmPrefetch::next_c ? "_prefetch_next_c" : "") + (d.b_transposed ? "_b_transposed" : "") +
         name_suffix(d.types);
}

void validate(const BrgemmDesc& d) {
  if (d.m < 1) reject(d, "m must be >= 1");
  if (d.n < 1) reject(d, "n must be >= 1");
  if (d.k < 1) reject(d, "k must be >= 1");
  if (d.lda < d.m) reject(d, "lda must be >= m");
  if (!d.b_transposed && d.ldb < d.k) reject(d, "ldb must be >= k");
  if (d.b_transposed && d.ldb < d.n) reject(d, "ldb must be >= n (b_transposed: B is stored as its n x k transpose)");
  if (d.ldc < d.m) reject(d, "ldc must be >= m");
  if (d.beta != 0 && d.beta != 1) reject(d, "beta must be 0 or 1, got " + std::to_string(d.beta));
  auto in_enum = [&](auto value, auto last, const char* field, const char* names) {
    if (static_cast<unsigned>(value) > static_cast<unsigned>(last))
      reject(d, std::string(field) + " " + std::to_string(static_cast<unsigned>(value)) + " is none of " + names);
  };
  in_enum(d.batch, BrgemmBatch::addresses, "batch", "strided, offsets, addresses");
  in_enum(d.bias, BrgemmBias::per_col, "bias", "none, per_row, per_col");
  in_enum(d.activation, BrgemmActivation::unary, "activation", "none, relu, unary");
  in_enum(d.prefetch, BrgemmPrefetch::next_c, "prefetch", "none, next_c");
  // Checked whatever the activation: the descriptor is a cache key, and to_string prints the field.
  in_enum(d.unary, UnaryOp::vnni2_unpack, "unary", "the UnaryOps");
  if (d.activation == BrgemmActivation::unary && !is_elementwise(d.unary))
    reject(d, "the unary epilogue must be an element-wise op, not " + to_string(d.unary));
  const bool takes_alpha = d.activation == BrgemmActivation::unary && detail::unary_op_properties(d.unary).takes_alpha;
  // One descriptor per kernel: an unused alpha would make equal kernels look different to the cache.
  if (!takes_alpha && d.unary_alpha != 0.0f) reject(d, "unary_alpha given to an epilogue that takes none");
  // One descriptor per kernel: with beta = 0 C is never read, and a prefetch of it is no use.
  if (d.prefetch == BrgemmPrefetch::next_c && d.beta != 1) reject(d, "prefetch next_c needs beta = 1");
  if (const std::string why = why_unsupported_brgemm(d.types); !why.empty()) reject(d, why);
  const bool bf16 = d.types.in == jit::DataType::bf16;
  if (bf16 && d.k % 2 != 0)
    reject(d, "k must be even for bf16 inputs (A is in VNNI-2: pairs of k), got " + std::to_string(d.k));
  if (bf16 && d.b_transposed) reject(d, "b_transposed is not implemented for bf16 inputs (B's pairs of k must be adjacent)");
  if (d.types.compute == jit::DataType::f64 && d.activation == BrgemmActivation::unary)
    reject(d, "the unary epilogue (" + to_string(d.unary) + ") is not implemented in f64; relu is");
  // The generated code addresses every element of one A_i, B_i and C with 32-bit displacements
  // from a base register: each spans less than 2 GiB.
  const std::int64_t in_bytes = static_cast<std::int64_t>(jit::size_of(d.types.in));
  const std::int64_t out_bytes = static_cast<std::int64_t>(jit::size_of(d.types.out));
  const auto check_span = [&](std::int64_t ld, std::int64_t count, std::int64_t bytes, const char* what) {
    try {
      checked_mul(checked_mul(ld, count, what, kIntLimit), bytes, what, kIntLimit);
    } catch (const Error& e) {
      reject(d, e.what());
    }
  };
  check_span(d.lda, d.k, in_bytes, "the bytes A spans (lda x k x element bytes)");
  if (d.b_transposed) check_span(d.ldb, d.k, in_bytes, "the bytes B spans (ldb x k x element bytes, b_transposed)");
  else check_span(d.ldb, d.n, in_bytes, "the bytes B spans (ldb x n x element bytes)");
  check_span(d.ldc, d.n, out_bytes, "the bytes C spans (ldc x n x element bytes)");
}

}  // namespace weft::tpp
