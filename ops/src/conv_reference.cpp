#include <weft/ops/conv_reference.hpp>

#include <cstdint>
#include <vector>

#include "weft/tpp/min_max_relu.hpp"

namespace weft::ops {
namespace {

// The taps of one output pixel along one dimension: the filter indices t in [first, last) whose
// input index p * stride + t - pad lies inside [0, extent).
struct TapRange {
  std::int64_t first, last;
};

TapRange taps(std::int64_t p, std::int64_t stride, std::int64_t pad, std::int64_t filter, std::int64_t extent) {
  const std::int64_t origin = p * stride - pad;
  std::int64_t first = origin < 0 ? -origin : 0;
  std::int64_t last = extent - origin < filter ? extent - origin : filter;
  if (last < first) last = first;
  return {first, last};
}

// Calls visit(r, s, i) for every tap (r, s) of output pixel (p, q) that lies inside the image,
// with i the index of the input pixel it reads within one H x W plane.
template <class Visit>
void for_each_tap(const ConvShape& sh, std::int64_t p, std::int64_t q, Visit&& visit) {
  const TapRange rr = taps(p, sh.stride_h, sh.pad_h, sh.R, sh.H);
  const TapRange sr = taps(q, sh.stride_w, sh.pad_w, sh.S, sh.W);
  for (std::int64_t r = rr.first; r < rr.last; ++r) {
    const std::int64_t row = (p * sh.stride_h + r - sh.pad_h) * sh.W + q * sh.stride_w - sh.pad_w;
    for (std::int64_t s = sr.first; s < sr.last; ++s) visit(r, s, row + s);
  }
}

}  // namespace

void conv_fwd_reference(const ConvShape& sh, const float* input, const float* filter, const float* bias, bool relu,
                        float* output) {
  const std::int64_t P = sh.ofh(), Q = sh.ofw();
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (std::int64_t n = 0; n < sh.N; ++n) {
    for (std::int64_t k = 0; k < sh.K; ++k) {
      std::vector<double> acc(static_cast<std::size_t>(P * Q), bias != nullptr ? bias[k] : 0.0);
      for (std::int64_t c = 0; c < sh.C; ++c) {
        const float* in = input + (n * sh.C + c) * sh.H * sh.W;
        const float* w = filter + (k * sh.C + c) * sh.R * sh.S;
        for (std::int64_t p = 0; p < P; ++p) {
          for (std::int64_t q = 0; q < Q; ++q) {
            double sum = 0;
            for_each_tap(sh, p, q, [&](std::int64_t r, std::int64_t s, std::int64_t i) {
              sum += double(in[i]) * double(w[r * sh.S + s]);
            });
            acc[static_cast<std::size_t>(p * Q + q)] += sum;
          }
        }
      }
      float* out = output + (n * sh.K + k) * P * Q;
      for (std::int64_t i = 0; i < P * Q; ++i) {
        const double v = acc[static_cast<std::size_t>(i)];
        out[i] = static_cast<float>(relu ? tpp::relu(v) : v);
      }
    }
  }
}

void conv_bwd_data_reference(const ConvShape& sh, const float* grad_output, const float* filter,
                             float* grad_input) {
  const std::int64_t P = sh.ofh(), Q = sh.ofw();
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (std::int64_t n = 0; n < sh.N; ++n) {
    for (std::int64_t c = 0; c < sh.C; ++c) {
      std::vector<double> acc(static_cast<std::size_t>(sh.H * sh.W), 0.0);
      for (std::int64_t k = 0; k < sh.K; ++k) {
        const float* go = grad_output + (n * sh.K + k) * P * Q;
        const float* w = filter + (k * sh.C + c) * sh.R * sh.S;
        for (std::int64_t p = 0; p < P; ++p) {
          for (std::int64_t q = 0; q < Q; ++q) {
            const double g = go[p * Q + q];
            for_each_tap(sh, p, q, [&](std::int64_t r, std::int64_t s, std::int64_t i) {
              acc[static_cast<std::size_t>(i)] += g * double(w[r * sh.S + s]);
            });
          }
        }
      }
      float* gi = grad_input + (n * sh.C + c) * sh.H * sh.W;
      for (std::int64_t i = 0; i < sh.H * sh.W; ++i) gi[i] = static_cast<float>(acc[static_cast<std::size_t>(i)]);
    }
  }
}

void conv_bwd_weights_reference(const ConvShape& sh, const float* input, const float* grad_output,
                                float* grad_filter) {
  const std::int64_t P = sh.ofh(), Q = sh.ofw();
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (std::int64_t k = 0; k < sh.K; ++k) {
    for (std::int64_t c = 0; c < sh.C; ++c) {
      std::vector<double> acc(static_cast<std::size_t>(sh.R * sh.S), 0.0);
      for (std::int64_t n = 0; n < sh.N; ++n) {
        const float* in = input + (n * sh.C + c) * sh.H * sh.W;
        const float* go = grad_output + (n * sh.K + k) * P * Q;
        for (std::int64_t p = 0; p < P; ++p) {
          for (std::int64_t q = 0; q < Q; ++q) {
            const double g = go[p * Q + q];
            for_each_tap(sh, p, q, [&](std::int64_t r, std::int64_t s, std::int64_t i) {
              acc[static_cast<std::size_t>(r * sh.S + s)] += g * double(in[i]);
            });
          }
        }
      }
      float* gw = grad_filter + (k * sh.C + c) * sh.R * sh.S;
      for (std::int64_t i = 0; i < sh.R * sh.S; ++i) gw[i] = static_cast<float>(acc[static_cast<std::size_t>(i)]);
    }
  }
}

}  // namespace weft::ops
