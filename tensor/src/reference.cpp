#include "weft/tensor/reference.hpp"

#include <cmath>
#include <vector>

#include "prim_dims.hpp"
#include "weft/tpp/min_max_relu.hpp"

// No default in the switches over prim_t: a primitive added to prim_t stops the build here until
// the reference computes it, instead of passing its input through.
#pragma GCC diagnostic error "-Wswitch"

namespace weft::tensor {

double unary_value(prim_t p, double x) {
  switch (p) {
    case prim_t::none: case prim_t::copy: return x;
    case prim_t::zero: return 0.0;
    case prim_t::relu: return tpp::relu(x);
    case prim_t::square: return x * x;
    case prim_t::reciprocal: return 1.0 / x;
    case prim_t::sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case prim_t::exp: return std::exp(x);
    case prim_t::tanh: return std::tanh(x);
    case prim_t::sqrt: return std::sqrt(x);
    case prim_t::gelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case prim_t::gemm: case prim_t::brgemm: case prim_t::add: case prim_t::sub: case prim_t::mul:
    case prim_t::div: case prim_t::min: case prim_t::max:
      break;
  }
  throw ConfigError(error_t::err_wrong_primitive, to_string(p) + " is no unary primitive");
}

double binary_value(prim_t p, double a, double b) {
  switch (p) {
    case prim_t::add: return a + b;
    case prim_t::sub: return a - b;
    case prim_t::mul: return a * b;
    case prim_t::div: return a / b;
    case prim_t::min: return tpp::minimum(a, b);
    case prim_t::max: return tpp::maximum(a, b);
    case prim_t::zero: case prim_t::copy: case prim_t::relu: case prim_t::gemm: case prim_t::brgemm:
    case prim_t::square: case prim_t::reciprocal: case prim_t::sigmoid: case prim_t::exp:
    case prim_t::tanh: case prim_t::sqrt: case prim_t::gelu: case prim_t::none:
      break;
  }
  throw ConfigError(error_t::err_wrong_primitive, to_string(p) + " is no binary element-wise primitive");
}

namespace {

// A remainder among the dims of one for_each_point: points with the outer index at its last
// iteration and the inner index at or past last_block do not exist.
struct Ragged {
  std::size_t outer, inner;
  std::int64_t last_block;
};

// Calls f(off_in0, off_in1, off_out) for every point of the given dimensions.
template <class F>
void for_each_point(const std::vector<const Dim*>& dims, const std::vector<Ragged>& ragged, F&& f) {
  std::vector<std::int64_t> idx(dims.size(), 0);
  const std::size_t n = dims.size();
  for (;;) {
    std::int64_t o0 = 0, o1 = 0, oo = 0;
    for (std::size_t i = 0; i < n; ++i) {
      o0 += idx[i] * dims[i]->stride_in0;
      o1 += idx[i] * dims[i]->stride_in1;
      oo += idx[i] * dims[i]->stride_out;
    }
    bool exists = true;
    for (const Ragged& r : ragged)
      exists = exists && !(idx[r.outer] == dims[r.outer]->size - 1 && idx[r.inner] >= r.last_block);
    if (exists) f(o0, o1, oo);
    std::size_t i = n;
    while (i > 0) {
      --i;
      if (++idx[i] < dims[i]->size) break;
      idx[i] = 0;
      if (i == 0) return;
    }
    if (n == 0) return;
  }
}

}  // namespace

namespace {

// Acc: double for float data; long double (the x87 64-bit significand on x86-64) for double data,
// so that the sums of an fp64 contraction are checked against more precision than they have. The
// touches and element-wise mains are computed in double and rounded to T: for fp64 inputs every
// op is one correctly rounded double operation (what the f64 TPPs compute).
template <class T, class Acc>
void reference_in(const Contraction& op, const T* in0, const T* in1, T* out) {
  std::vector<const Dim*> outer, reduced;
  std::vector<std::size_t> position(op.dims.size());  // of each dim in its group
  for (std::size_t i = 0; i < op.dims.size(); ++i) {
    auto& group = is_gemm_like(op.main) && op.dims[i].type == dim_t::k ? reduced : outer;
    position[i] = group.size();
    group.push_back(&op.dims[i]);
  }
  std::vector<Ragged> outer_ragged, reduced_ragged;  // a pair has one type: both in one group
  for (std::size_t i = 0; i < op.dims.size(); ++i) {
    if (op.dims[i].last_block == 0) continue;
    const std::size_t p = detail::ragged_partner(op, i);
    if (p == detail::kNoDim) continue;  // validation rejects it
    (is_gemm_like(op.main) && op.dims[i].type == dim_t::k ? reduced_ragged : outer_ragged)
        .push_back({position[i], position[p], op.dims[i].last_block});
  }
  for_each_point(outer, outer_ragged, [&](std::int64_t o0, std::int64_t o1, std::int64_t oo) {
    Acc value;
    if (is_gemm_like(op.main)) {
      // The first touch writes a T before the accumulation starts.
      Acc acc = static_cast<T>(unary_value(op.first_touch, out[oo]));
      for_each_point(reduced, reduced_ragged, [&](std::int64_t r0, std::int64_t r1, std::int64_t) {
        acc += static_cast<Acc>(in0[o0 + r0]) * static_cast<Acc>(in1[o1 + r1]);
      });
      value = acc;
    } else if (is_binary_elementwise(op.main)) {
      value = binary_value(op.main, in0[o0], in1[o1]);
    } else {
      value = op.main == prim_t::zero ? 0.0 : unary_value(op.main, in0[o0]);
    }
    out[oo] = static_cast<T>(unary_value(op.last_touch, static_cast<T>(value)));
  });
}

}  // namespace

void reference_contraction(const Contraction& op, const float* in0, const float* in1, float* out) {
  if (op.dtype != dtype_t::fp32)
    throw ConfigError(error_t::err_wrong_dtype, "reference_contraction: the operation is " + to_string(op.dtype) +
                                                    ", the tensors given are float (fp32)");
  reference_in<float, double>(op, in0, in1, out);
}

void reference_contraction(const Contraction& op, const double* in0, const double* in1, double* out) {
  if (op.dtype != dtype_t::fp64)
    throw ConfigError(error_t::err_wrong_dtype, "reference_contraction: the operation is " + to_string(op.dtype) +
                                                    ", the tensors given are double (fp64)");
  reference_in<double, long double>(op, in0, in1, out);
}

}  // namespace weft::tensor
