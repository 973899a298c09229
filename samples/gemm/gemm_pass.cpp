#include "gemm_pass.hpp"

#include "gemm_reference.hpp"

namespace weft::samples {
namespace {

std::vector<float> random_matrix(const PassMatrix& m, std::uint64_t seed) {
  std::vector<float> plain(static_cast<std::size_t>(m.rows.size * m.cols.size));
  fill_random(plain.data(), m.rows.size * m.cols.size, seed);
  return plain;
}

std::vector<float> blocked_copy(const PassMatrix& m, const std::vector<float>& plain) {
  return to_blocked(plain.data(), m.rows, m.cols, m.row_block_major);
}

}  // namespace

GemmPassData::GemmPassData(const GemmPassLayout& layout, std::uint64_t left_seed, std::uint64_t right_seed,
                           float out_fill)
    : layout_(layout),
      left_(random_matrix(layout.left, left_seed)),
      right_(random_matrix(layout.right, right_seed)),
      left_blocked_(blocked_copy(layout.left, left_)),
      right_blocked_(blocked_copy(layout.right, right_)),
      out_blocked_(static_cast<std::size_t>(layout.out.rows.padded() * layout.out.cols.padded()), out_fill) {}

Verdict GemmPassData::check() const {
  const PassMatrix& o = layout_.out;
  std::vector<float> ref(static_cast<std::size_t>(o.rows.size * o.cols.size)), result(ref.size());
  gemm_reference(o.rows.size, o.cols.size, layout_.reduction(), {left_.data(), layout_.left.transposed},
                 {right_.data(), layout_.right.transposed}, nullptr, false, ref.data());
  from_blocked(out_blocked_.data(), result.data(), o.rows, o.cols, o.row_block_major);
  return {compare(result.data(), ref.data(), o.rows.size * o.cols.size), sum_tolerance(layout_.reduction())};
}

std::uint64_t GemmPassData::bytes(const GemmPassLayout& layout, bool check) {
  MemoryTally memory;
  for (const PassMatrix* m : {&layout.left, &layout.right}) {
    memory.add_floats({m->rows.size, m->cols.size});
    memory.add_floats({m->rows.padded(), m->cols.padded()});
  }
  memory.add_floats({layout.out.rows.padded(), layout.out.cols.padded()});
  if (check) {
    for (const PassMatrix* m : {&layout.left, &layout.right})
      if (m->transposed) memory.add_floats({m->rows.size, m->cols.size});  // the reference's plain copy
    memory.add_floats({layout.out.rows.size, layout.out.cols.size});     // the reference
    memory.add_floats({layout.out.rows.size, layout.out.cols.size});     // the result, unblocked
  }
  return memory.bytes();
}

}  // namespace weft::samples
