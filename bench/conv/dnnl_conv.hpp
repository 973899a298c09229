// The oneDNN side of the convolution benchmark: fp32 direct convolution primitives (forward
// training, backward by data, backward by weights) on the layouts oneDNN picks itself
// (format_tag::any), created once per layer and pass. The inputs are generated as plain NCHW / OIHW
// (seeds 1, 2 in the primitive's input order: conv_pass.hpp) and reordered into those layouts while
// preparing; the timed run is execute + wait.
#pragma once

#if defined(WEFT_HAVE_DNNL)

#include <algorithm>
#include <cctype>
#include <memory>
#include <string>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>
#include <weft/ops/verification.hpp>

#include "conv_pass.hpp"

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

// A memory of layout `desc` holding random values (fixed seed), reordered from the plain layout
// (NCHW, OIHW).
inline dnnl::memory random_memory(Prepared& p, const dnnl::memory::desc& desc, const dims& shape, std::uint64_t seed) {
  dnnl::memory plain({shape, dnnl::memory::data_type::f32, tag::abcd}, p.engine);
  ops::fill_random(static_cast<float*>(plain.get_data_handle()),
                   static_cast<std::int64_t>(plain.get_desc().get_size() / sizeof(float)), seed);
  dnnl::memory blocked(desc, p.engine);
  dnnl::reorder(plain, blocked).execute(p.stream, plain, blocked);
  p.stream.wait();
  return blocked;
}

// oneDNN's name of a blocked layout, from the dimension letters of its plain form: "nChw16c" for
// N, C/16, H, W, 16 channels (the outer dimensions by decreasing stride, upper case when blocked).
inline std::string layout_name(const dnnl::memory::desc& md, const std::string& letters) {
  const dnnl_blocking_desc_t& b = md.data.format_desc.blocking;
  std::vector<int> order(letters.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return b.strides[x] > b.strides[y]; });
  std::string name;
  for (int d : order) {
    bool blocked = false;
    for (int i = 0; i < b.inner_nblks; ++i) blocked = blocked || b.inner_idxs[i] == d;
    const char letter = letters[static_cast<std::size_t>(d)];
    name += blocked ? static_cast<char>(std::toupper(letter)) : letter;
  }
  for (int i = 0; i < b.inner_nblks; ++i) {
    name += std::to_string(b.inner_blks[i]) + letters[static_cast<std::size_t>(b.inner_idxs[i])];
  }
  return name;
}

// An input of the primitive: its argument, oneDNN's layout for it, its dimensions and their letters.
struct Input {
  int arg;
  dnnl::memory::desc desc;
  dims shape;
  const char* letters;  // "nchw" or "oihw"
};

// The primitive of `pd` with random inputs and an output of oneDNN's layout; one run = execute + wait.
// Its info: the implementation and the layouts, e.g. "jit:avx512_core nChw16c OIhw16i16o -> nChw16c".
template <class PrimitiveDesc>
PreparedPass prepared(const std::shared_ptr<Prepared>& p, const PrimitiveDesc& pd, const std::vector<Input>& inputs,
                      int output_arg, const dnnl::memory::desc& output_desc, const char* output_letters) {
  p->primitive = dnnl::primitive(pd);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    p->args[inputs[i].arg] = random_memory(*p, inputs[i].desc, inputs[i].shape, i + 1);
  }
  p->args[output_arg] = dnnl::memory(output_desc, p->engine);
  std::string info = pd.impl_info_str();
  for (const Input& input : inputs) info += " " + layout_name(input.desc, input.letters);
  info += " -> " + layout_name(output_desc, output_letters);
  return {[p] {
            p->primitive.execute(p->stream, p->args);
            p->stream.wait();
          },
          info,
          [p, output_arg] {
            dnnl::memory out = p->args.at(output_arg);
            const dnnl::memory::desc plain_desc(out.get_desc().dims(), dnnl::memory::data_type::f32, tag::abcd);
            std::vector<float> plain(plain_desc.get_size() / sizeof(float));
            dnnl::memory plain_memory(plain_desc, p->engine, plain.data());
            dnnl::reorder(out, plain_memory).execute(p->stream, out, plain_memory);
            p->stream.wait();
            return plain;
          }};
}

}  // namespace dnnl_conv

inline std::optional<PreparedPass> prepare_dnnl(const samples::ConvLayer& l, Pass pass, std::int64_t N,
                                               jit::DataType dtype) {
  using namespace dnnl_conv;
  // bf16: every tensor bf16 (the weight gradient too, as weft's update writes it); oneDNN
  // accumulates in fp32.
  const bool bf16 = dtype == jit::DataType::bf16;
  const auto p = std::make_shared<Prepared>();
  const dims src{N, l.C, l.H, l.W}, wei{l.K, l.C, l.R, l.S}, dst{N, l.K, l.ofh(), l.ofw()};
  const dims strides{l.stride, l.stride}, padding{l.pad, l.pad};
  const auto type = bf16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
  const auto any = [type](const dims& d) { return dnnl::memory::desc(d, type, tag::any); };
  const auto algo = dnnl::algorithm::convolution_direct;  // no Winograd: the same work as a direct convolution
  // The forward primitive descriptor also is the hint the backward ones need.
  const dnnl::convolution_forward::desc fwd_desc(dnnl::prop_kind::forward_training, algo, any(src), any(wei), any(dst),
                                                 strides, padding, padding);
  const dnnl::convolution_forward::primitive_desc fwd(fwd_desc, p->engine);
  PreparedPass result = [&] {
    if (pass == Pass::fwd) {
      return prepared(p, fwd,
                      {{DNNL_ARG_SRC, fwd.src_desc(), src, "nchw"},  //
                       {DNNL_ARG_WEIGHTS, fwd.weights_desc(), wei, "oihw"}},
                      DNNL_ARG_DST, fwd.dst_desc(), "nchw");
    }
    if (pass == Pass::bwd) {
      const dnnl::convolution_backward_data::desc bwd_desc(algo, any(src), any(wei), any(dst), strides, padding,
                                                           padding);
      const dnnl::convolution_backward_data::primitive_desc bwd(bwd_desc, p->engine, fwd);
      return prepared(p, bwd,
                      {{DNNL_ARG_DIFF_DST, bwd.diff_dst_desc(), dst, "nchw"},  //
                       {DNNL_ARG_WEIGHTS, bwd.weights_desc(), wei, "oihw"}},
                      DNNL_ARG_DIFF_SRC, bwd.diff_src_desc(), "nchw");
    }
    const dnnl::convolution_backward_weights::desc upd_desc(algo, any(src), any(wei), any(dst), strides, padding,
                                                            padding);
    const dnnl::convolution_backward_weights::primitive_desc upd(upd_desc, p->engine, fwd);
    return prepared(p, upd,
                    {{DNNL_ARG_SRC, upd.src_desc(), src, "nchw"},  //
                     {DNNL_ARG_DIFF_DST, upd.diff_dst_desc(), dst, "nchw"}},
                    DNNL_ARG_DIFF_WEIGHTS, upd.diff_weights_desc(), "oihw");
  }();
  if (bf16) result.rounding = 0x1p-8;  // each result rounded to bf16 once
  return result;
}

}  // namespace weft::bench

#endif  // WEFT_HAVE_DNNL
