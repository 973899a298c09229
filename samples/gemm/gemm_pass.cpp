#include "gemm_pass.hpp"

#include <type_traits>

#include <weft/ops/gemm_reference.hpp>

namespace weft::samples {
namespace {

using weft::ops::GemmPassLayout;
using weft::ops::PassMatrix;

// Random values in [-1, 1) from `seed`, rounded to T.
template <class T>
std::vector<float> random_matrix(const PassMatrix& m, std::uint64_t seed) {
  std::vector<float> plain(static_cast<std::size_t>(m.rows.size * m.cols.size));
  ops::fill_random(plain.data(), m.rows.size * m.cols.size, seed);
  ops::round_to_element_type<T>(plain);
  return plain;
}

template <class T>
std::vector<T> blocked_copy(const PassMatrix& m, const std::vector<float>& plain) {
  return ops::to_blocked<T>(plain.data(), m.rows, m.cols, m.row_block_major, m.order);
}

template <class T>
const GemmPassLayout& checked(const GemmPassLayout& layout) {
  ops::require_buffers_of<T>(layout.dtype, "GemmPassData");
  return layout;
}

}  // namespace

template <class T>
GemmPassData<T>::GemmPassData(const GemmPassLayout& layout, std::uint64_t left_seed, std::uint64_t right_seed,
                              float out_fill)
    : layout_(checked<T>(layout)),
      left_(random_matrix<T>(layout.left, left_seed)),
      right_(random_matrix<T>(layout.right, right_seed)),
      left_blocked_(blocked_copy<T>(layout.left, left_)),
      right_blocked_(blocked_copy<T>(layout.right, right_)),
      out_blocked_(static_cast<std::size_t>(layout.out.rows.padded() * layout.out.cols.padded()),
                   ops::from_float<T>(out_fill)) {}

template <class T>
Verdict GemmPassData<T>::check(const ops::Bf16Sum& sum) const {
  const PassMatrix& o = layout_.out;
  const std::int64_t count = o.rows.size * o.cols.size;
  std::vector<float> ref(static_cast<std::size_t>(count));
  ops::Bf16Magnitudes magnitudes;
  ops::gemm_reference(o.rows.size, o.cols.size, layout_.reduction(), {left_.data(), layout_.left.transposed},
                      {right_.data(), layout_.right.transposed}, nullptr, false, ref.data(),
                      std::is_same_v<T, float> ? nullptr : &magnitudes, sum.chunk_terms);
  std::vector<float> result(ref.size());
  ops::from_blocked(out_blocked_.data(), result.data(), o.rows, o.cols, o.row_block_major, o.order);
  if constexpr (std::is_same_v<T, float>) {
    return {ops::compare(result.data(), ref.data(), count), ops::sum_tolerance(layout_.reduction())};
  } else {
    return {ops::compare_within(result.data(), ref.data(), magnitudes, count, sum), 0};
  }
}

template <class T>
std::uint64_t GemmPassData<T>::bytes(const GemmPassLayout& layout, bool check) {
  MemoryTally memory;
  for (const PassMatrix* m : {&layout.left, &layout.right}) {
    memory.add_floats({m->rows.size, m->cols.size});                        // plain
    memory.add_elements({m->rows.padded(), m->cols.padded()}, sizeof(T));  // blocked
  }
  memory.add_elements({layout.out.rows.padded(), layout.out.cols.padded()}, sizeof(T));
  if (check) {
    const std::int64_t rows = layout.out.rows.size, cols = layout.out.cols.size;
    for (const PassMatrix* m : {&layout.left, &layout.right})
      if (m->transposed) memory.add_floats({m->rows.size, m->cols.size});  // the reference's plain copy
    memory.add_floats({rows, cols});                                        // the reference
    memory.add_floats({rows, cols});                                        // the result, unblocked
    if (!std::is_same_v<T, float>) memory.add_elements({2, rows, cols}, sizeof(double));  // the bf16 bound's magnitudes
  }
  return memory.bytes();
}

template class GemmPassData<float>;
template class GemmPassData<ops::bfloat16>;

}  // namespace weft::samples
