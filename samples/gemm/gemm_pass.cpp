#include "gemm_pass.hpp"

#include <type_traits>

#include <weft/ops/gemm_reference.hpp>
#include <weft/ops/matrix_packing.hpp>

namespace weft::samples {
namespace {

using weft::ops::GemmPassLayout;
using weft::ops::PassMatrix;

template <class T>
using PlainOf = typename GemmPassData<T>::Plain;

// Random values in [-1, 1) from `seed`, rounded to T (doubles: all 53 bits random).
template <class T>
std::vector<PlainOf<T>> random_matrix(const PassMatrix& m, std::uint64_t seed) {
  std::vector<PlainOf<T>> plain(static_cast<std::size_t>(m.rows.size * m.cols.size));
  ops::fill_random(plain.data(), m.rows.size * m.cols.size, seed);
  if constexpr (!std::is_same_v<T, double>) ops::round_to_element_type<T>(plain);
  return plain;
}

template <class T>
std::vector<T> blocked_copy(const PassMatrix& m, const std::vector<PlainOf<T>>& plain) {
  if constexpr (std::is_same_v<T, double>) {
    std::vector<double> blocked(static_cast<std::size_t>(ops::blocked_size(m)));
    ops::pack(plain.data(), ops::MatrixOrder::column_major, m, blocked.data());
    return blocked;
  } else {
    return ops::to_blocked<T>(plain.data(), m.rows, m.cols, m.row_block_major, m.order);
  }
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
  std::vector<Plain> ref(static_cast<std::size_t>(count)), result(ref.size());
  const ops::GemmOperandOf<Plain> op_left{left_.data(), layout_.left.transposed},
      op_right{right_.data(), layout_.right.transposed};
  if constexpr (std::is_same_v<T, double>) {
    ops::gemm_reference(o.rows.size, o.cols.size, layout_.reduction(), op_left, op_right, nullptr, false, ref.data());
    ops::unpack(out_blocked_.data(), o, result.data(), ops::MatrixOrder::column_major);
    return {ops::compare(result.data(), ref.data(), count), ops::sum_tolerance_f64(layout_.reduction())};
  } else {
    ops::Bf16Magnitudes magnitudes;
    ops::gemm_reference(o.rows.size, o.cols.size, layout_.reduction(), op_left, op_right, nullptr, false, ref.data(),
                        std::is_same_v<T, float> ? nullptr : &magnitudes, sum.chunk_terms);
    ops::from_blocked(out_blocked_.data(), result.data(), o.rows, o.cols, o.row_block_major, o.order);
    if constexpr (std::is_same_v<T, float>) {
      return {ops::compare(result.data(), ref.data(), count), ops::sum_tolerance(layout_.reduction())};
    } else {
      return {ops::compare_within(result.data(), ref.data(), magnitudes, count, sum), 0};
    }
  }
}

template <class T>
std::uint64_t GemmPassData<T>::bytes(const GemmPassLayout& layout, bool check) {
  MemoryTally memory;
  for (const PassMatrix* m : {&layout.left, &layout.right}) {
    memory.add_elements({m->rows.size, m->cols.size}, sizeof(Plain));  // plain
    memory.add_elements({m->rows.padded(), m->cols.padded()}, sizeof(T));  // blocked
  }
  memory.add_elements({layout.out.rows.padded(), layout.out.cols.padded()}, sizeof(T));
  if (check) {
    const std::int64_t rows = layout.out.rows.size, cols = layout.out.cols.size;
    for (const PassMatrix* m : {&layout.left, &layout.right})  // the reference's plain copy
      if (m->transposed) memory.add_elements({m->rows.size, m->cols.size}, sizeof(Plain));
    memory.add_elements({rows, cols}, sizeof(Plain));  // the reference
    memory.add_elements({rows, cols}, sizeof(Plain));  // the result, unblocked
    if (std::is_same_v<T, ops::bfloat16>)
      memory.add_elements({2, rows, cols}, sizeof(double));  // the bf16 bound's magnitudes
  }
  return memory.bytes();
}

template class GemmPassData<float>;
template class GemmPassData<ops::bfloat16>;
template class GemmPassData<double>;

}  // namespace weft::samples
