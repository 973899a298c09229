// Conversions between a plain matrix (row-major or column-major, the caller's) and the blocked
// layout a GEMM operator reads or writes (one operand of its layout(), gemm_layout.hpp). They are
// separate calls, so that a caller times the operator and the conversions apart, and converts a
// weight once for many runs.
//
//   const weft::ops::GemmFwd gemm(config);
//   const weft::ops::PassMatrix& a = gemm.layout().left;        // the weights, M x K
//   std::vector<float> a_blocked(weft::ops::blocked_size(a));
//   weft::ops::pack(a_plain.data(), weft::ops::MatrixOrder::row_major, a, a_blocked.data());
//   ...
//   weft::ops::unpack(c_blocked.data(), gemm.layout().out, c_plain.data(), weft::ops::MatrixOrder::row_major);
//
// Elements are float, bfloat16 or double, the operator's dtype: a bf16 operator's blocked weights are in
// VNNI-2 tiles, which pack() writes as the layout says. The padding of partial tiles is written
// with zeros, which the operators rely on.
#pragma once

#include <cstdint>

#include <weft/jit/bfloat16.hpp>
#include <weft/ops/gemm_layout.hpp>

namespace weft::ops {

enum class MatrixOrder { column_major, row_major };

// Elements of the blocked copy of `m`: full tiles, the padding included.
std::int64_t blocked_size(const PassMatrix& m);

// plain: m.rows.size x m.cols.size in `order` (leading dimension the rows for column-major, the
// columns for row-major) -> blocked: blocked_size(m) elements. Throws weft::Error naming `plain`
// or `blocked` when null.
template <class T>
void pack(const T* plain, MatrixOrder order, const PassMatrix& m, T* blocked);

// The inverse: the real elements of `blocked` into `plain` (m.rows.size x m.cols.size in `order`).
template <class T>
void unpack(const T* blocked, const PassMatrix& m, T* plain, MatrixOrder order);

// pack() of a gradient through a ReLU, in one pass: grad where forward_out (the ReLU's output, of
// grad's shape and order) passed it (> 0, or NaN), +0 elsewhere. For column-major tiles from a
// column-major plain matrix (the activation gradients the backward passes read); other orders
// throw weft::Error, as null buffers do.
template <class T>
void pack_relu_backward(const T* grad, const T* forward_out, MatrixOrder order, const PassMatrix& m, T* blocked);

extern template void pack(const float*, MatrixOrder, const PassMatrix&, float*);
extern template void pack(const jit::bfloat16*, MatrixOrder, const PassMatrix&, jit::bfloat16*);
extern template void unpack(const float*, const PassMatrix&, float*, MatrixOrder);
extern template void unpack(const jit::bfloat16*, const PassMatrix&, jit::bfloat16*, MatrixOrder);
extern template void pack(const double*, MatrixOrder, const PassMatrix&, double*);
extern template void unpack(const double*, const PassMatrix&, double*, MatrixOrder);
extern template void pack_relu_backward(const float*, const float*, MatrixOrder, const PassMatrix&, float*);
extern template void pack_relu_backward(const jit::bfloat16*, const jit::bfloat16*, MatrixOrder, const PassMatrix&,
                                        jit::bfloat16*);
extern template void pack_relu_backward(const double*, const double*, MatrixOrder, const PassMatrix&, double*);

}  // namespace weft::ops
