#include <weft/ops/vnni2_pairs.hpp>

#include <omp.h>

#include <algorithm>
#include <optional>
#include <string>

#include <weft/jit/error.hpp>
#include <weft/ops/element_type.hpp>
#include <weft/ops/gemm_layout.hpp>
#include <weft/tpp/unary.hpp>

namespace weft::ops {
namespace {

void check(const void* in, const void* out, std::int64_t rows, std::int64_t cols, const char* what) {
  require_buffers(what, {{"in", in}, {"out", out}});
  if (rows < 1 || cols < 0 || cols % 2 != 0)
    throw Error(std::string(what) + ": a column-major matrix of rows >= 1 and an even number of columns, got " +
                std::to_string(rows) + " x " + std::to_string(cols));
}

// Column pairs per parallel chunk: a few chunks per thread, whole pairs.
std::int64_t chunk_pairs(std::int64_t pairs) { return std::max<std::int64_t>(1, parallel_chunk(pairs, omp_get_max_threads())); }

tpp::Unary pack_kernel(std::int64_t rows, std::int64_t cols) {
  return tpp::Unary(tpp::UnaryDesc{.op = tpp::UnaryOp::vnni2_pack, .m = rows, .n = cols, .ld_in = rows, .ld_out = rows,
                                   .types = {.in = jit::DataType::f32, .out = jit::DataType::bf16}});
}

}  // namespace

void pack_vnni2(const float* in, std::int64_t rows, std::int64_t cols, jit::bfloat16* out) {
  check(in, out, rows, cols, "pack_vnni2");
  const std::int64_t pairs = cols / 2;
  if (pairs == 0) return;
  const std::int64_t chunk = chunk_pairs(pairs);  // divides pairs: one kernel for every chunk
  const tpp::Unary kernel = pack_kernel(rows, 2 * chunk);
#pragma omp parallel for schedule(static)
  for (std::int64_t first = 0; first < pairs; first += chunk) {
    kernel(tpp::UnaryArgs{.in = in + 2 * first * rows, .out = out + 2 * first * rows});
  }
}

void unpack_vnni2(const float* in, std::int64_t rows, std::int64_t cols, float* out) {
  check(in, out, rows, cols, "unpack_vnni2");
  const std::int64_t pairs = cols / 2;
#pragma omp parallel for schedule(static)
  for (std::int64_t p = 0; p < pairs; ++p) {
    const float* pair = in + 2 * p * rows;
    float* even = out + 2 * p * rows;
    float* odd = even + rows;
    for (std::int64_t i = 0; i < rows; ++i) {
      even[i] = pair[2 * i];
      odd[i] = pair[2 * i + 1];
    }
  }
}

}  // namespace weft::ops
