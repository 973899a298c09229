// Direct convolutions in double precision, the oracle every convolution sample is checked
// against. Plain, unpadded tensors: input N x C x H x W, filter K x C x R x S, output
// N x K x ofh x ofw (ConvShape); padding is implicit zeros, as in the definition
//
//   out(n, k, p, q) = sum_{c, r, s} in(n, c, p stride_h + r - pad_h, q stride_w + s - pad_w) w(k, c, r, s)
//
// with taps outside the image contributing nothing. Backward by data and by weights are its
// derivatives: grad_in(n, c, y, x) = sum over the (k, p, q, r, s) that read (y, x) of
// grad_out(n, k, p, q) w(k, c, r, s); grad_w(k, c, r, s) = sum over (n, p, q) of
// grad_out(n, k, p, q) in(n, c, p stride_h + r - pad_h, q stride_w + s - pad_w).
#pragma once

#include <weft/ops/conv_shape.hpp>

namespace weft::ops {

// out = relu?(conv(in, w) + bias) with bias a vector of K (nullptr: none).
void conv_fwd_reference(const ConvShape& shape, const float* input, const float* filter, const float* bias,
                        bool relu, float* output);

void conv_bwd_data_reference(const ConvShape& shape, const float* grad_output, const float* filter,
                             float* grad_input);

void conv_bwd_weights_reference(const ConvShape& shape, const float* input, const float* grad_output,
                                float* grad_filter);

}  // namespace weft::ops
