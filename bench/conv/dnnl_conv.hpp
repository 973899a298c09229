// The oneDNN side of the convolution benchmark: fp32 direct convolution primitives (forward
// training, backward by data, backward by weights) on the layouts oneDNN picks itself
// (format_tag::any), created once per layer and pass. The inputs are generated as plain NCHW / OIHW
// and reordered into those layouts while preparing; the timed run is execute + wait.
#pragma once

#if defined(WEFT_HAVE_DNNL)

#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "conv_pass.hpp"
#include "verification.hpp"

namespace weft::bench {

namespace dnnl_conv {

using dims = dnnl::memory::dims;
using tag = dnnl::memory::format_tag;

// One primitive with its arguments; the memories it refers to live as long as it does.
struct Prepared {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::primitive primitive;
  std::unordered_map<int, dnnl::memory> args;
};

// A memory of layout `desc` holding random values (fixed seed), reordered from plain `plain_tag`.
inline dnnl::memory random_memory(Prepared& p, const dnnl::memory::desc& desc, const dims& shape, tag plain_tag,
                                  std::uint64_t seed) {
  dnnl::memory plain({shape, dnnl::memory::data_type::f32, plain_tag}, p.engine);
  samples::fill_random(static_cast<float*>(plain.get_data_handle()),
                       static_cast<std::int64_t>(plain.get_desc().get_size() / sizeof(float)), seed);
  dnnl::memory blocked(desc, p.engine);
  dnnl::reorder(plain, blocked).execute(p.stream, plain, blocked);
  p.stream.wait();
  return blocked;
}

}  // namespace dnnl_conv

inline std::optional<PreparedPass> prepare_dnnl(const samples::ConvLayer& l, Pass pass, std::int64_t N) {
  using namespace dnnl_conv;
  auto p = std::make_shared<Prepared>();
  const dims src_dims{N, l.C, l.H, l.W}, wei_dims{l.K, l.C, l.R, l.S}, dst_dims{N, l.K, l.ofh(), l.ofw()};
  const dims strides{l.stride, l.stride}, padding{l.pad, l.pad};
  const auto any = [](const dims& d) { return dnnl::memory::desc(d, dnnl::memory::data_type::f32, tag::any); };
  const auto algo = dnnl::algorithm::convolution_direct;  // no Winograd: the same work as a direct convolution
  // The forward primitive descriptor also is the hint the backward ones need.
  const dnnl::convolution_forward::desc fwd_desc(dnnl::prop_kind::forward_training, algo, any(src_dims),
                                                 any(wei_dims), any(dst_dims), strides, padding, padding);
  const dnnl::convolution_forward::primitive_desc fwd_pd(fwd_desc, p->engine);
  std::string info;
  if (pass == Pass::fwd) {
    p->primitive = dnnl::convolution_forward(fwd_pd);
    p->args[DNNL_ARG_SRC] = random_memory(*p, fwd_pd.src_desc(), src_dims, tag::nchw, 1);
    p->args[DNNL_ARG_WEIGHTS] = random_memory(*p, fwd_pd.weights_desc(), wei_dims, tag::oihw, 2);
    p->args[DNNL_ARG_DST] = dnnl::memory(fwd_pd.dst_desc(), p->engine);
    info = fwd_pd.impl_info_str();
  } else if (pass == Pass::bwd) {
    const dnnl::convolution_backward_data::desc desc(algo, any(src_dims), any(wei_dims), any(dst_dims), strides,
                                                     padding, padding);
    const dnnl::convolution_backward_data::primitive_desc pd(desc, p->engine, fwd_pd);
    p->primitive = dnnl::convolution_backward_data(pd);
    p->args[DNNL_ARG_DIFF_DST] = random_memory(*p, pd.diff_dst_desc(), dst_dims, tag::nchw, 1);
    p->args[DNNL_ARG_WEIGHTS] = random_memory(*p, pd.weights_desc(), wei_dims, tag::oihw, 2);
    p->args[DNNL_ARG_DIFF_SRC] = dnnl::memory(pd.diff_src_desc(), p->engine);
    info = pd.impl_info_str();
  } else {
    const dnnl::convolution_backward_weights::desc desc(algo, any(src_dims), any(wei_dims), any(dst_dims), strides,
                                                        padding, padding);
    const dnnl::convolution_backward_weights::primitive_desc pd(desc, p->engine, fwd_pd);
    p->primitive = dnnl::convolution_backward_weights(pd);
    p->args[DNNL_ARG_SRC] = random_memory(*p, pd.src_desc(), src_dims, tag::nchw, 1);
    p->args[DNNL_ARG_DIFF_DST] = random_memory(*p, pd.diff_dst_desc(), dst_dims, tag::nchw, 2);
    p->args[DNNL_ARG_DIFF_WEIGHTS] = dnnl::memory(pd.diff_weights_desc(), p->engine);
    info = pd.impl_info_str();
  }
  return PreparedPass{[p] {
                        p->primitive.execute(p->stream, p->args);
                        p->stream.wait();
                      },
                      info};
}

}  // namespace weft::bench

#endif  // WEFT_HAVE_DNNL
