// The weft side of the convolution benchmark: ConvFwd / ConvBwd / ConvUpd (samples/conv/) built for
// one ResNet-50 layer with PARLOOPER's settings from the layer list where they fit FP32, on buffers
// in the pass's own blocked layouts; the timed run is the pass's run() alone.
//
// Settings per pass:
// - fwd: the list's loop string and blockings (bc and bk no larger than C and K: conv1's bc = 4 is
//   PARLOOPER's bf16 padding of C = 3). Grid strings (A{C:14}C{R:4}...) are tuned for its 56 threads;
//   on another team size they run as the same nest without the grid, `Afgbcde` with the list's
//   blockings. Padding is physical (the input's rims are part of its layout, written while
//   preparing), whatever the list's logical_padding says: logical padding with a copy would put that
//   copy into the timing, and without one the stem computes tap by tap at half the speed.
// - bwd: the list's line, on a filter transposed for its BRGEMMs while preparing
//   (ConvBwd::transpose_filter, then run_transposed), as oneDNN gets its backward filter layout from
//   a reorder outside the timing.
// - upd: the list's strings index PARLOOPER's bf16 update nests, not the FP32 one: `Abcdefg` on one
//   thread (images and pixels in one BRGEMM chain, no partial filters), `aBCdefg` on more (the C and
//   K blocks shared out: every tile has one owner, no partial filters to reduce), with the list's bc
//   and bk.
// weft_auto (built with the tuner): the configuration the samples' `auto` runs for the layer's shape
// and team (the tuning database's; scripts/tune_conv_resnet50.sh fills it), same padding and
// buffers; its note names the source (exact hit, nearest tuned shape, heuristic = untuned default).
// The inputs are the plain tensors oneDNN's side generates (dnnl_conv.hpp: fill_random with seeds
// 1, 2 in the primitive's input order), converted while preparing, so the two results can be compared.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <weft/ops/conv_bwd.hpp>
#include <weft/ops/conv_fwd.hpp>
#include <weft/ops/conv_layout.hpp>
#include "conv_pass.hpp"
#include <weft/ops/conv_upd.hpp>
#if defined(WEFT_HAVE_TUNER)
#include <weft/ops/verification.hpp>

#include <weft/ops/best_conv_config.hpp>
#endif

namespace weft::bench {

namespace weft_conv {

// Plain random values of `count` elements (the seed as oneDNN's side uses it for the same input).
inline std::vector<float> plain_random(std::int64_t count, std::uint64_t seed) {
  std::vector<float> v(static_cast<std::size_t>(count));
  ops::fill_random(v.data(), count, seed);
  return v;
}

// The threads a grid string asks for: the product of its {R:n} / {C:n} / {L:n} ways (1 without a grid).
inline std::int64_t grid_threads(const std::string& loop_string) {
  std::int64_t threads = 1;
  for (std::size_t at = loop_string.find(':'); at != std::string::npos; at = loop_string.find(':', at + 1)) {
    threads *= std::max<std::int64_t>(1, std::strtoll(loop_string.c_str() + at + 1, nullptr, 10));
  }
  return threads;
}

inline ops::ConvShape shape_of(const samples::ConvLayer& l, std::int64_t N) {
  return {.N = N, .H = l.H, .W = l.W, .C = l.C, .K = l.K, .R = l.R, .S = l.S, .stride_h = l.stride,
          .stride_w = l.stride, .pad_h = l.pad, .pad_w = l.pad};
}

// A blocked activation tensor as plain NCHW (its rims dropped).
inline std::vector<float> plain_activations(const std::vector<float>& blocked, const ops::ActivationLayout& o) {
  std::vector<float> plain(static_cast<std::size_t>(o.images * o.channels.size * o.h * o.w));
  ops::blocked_to_nchw(blocked.data(), plain.data(), o);
  return plain;
}

template <class Config>
void set_loops(Config& c, const samples::ConvLayer& l, std::int64_t N, const std::string& loop_string,
               std::int64_t bc, std::int64_t bk) {
  c.loop_string = loop_string;
  c.shape = shape_of(l, N);
  c.bc = std::min(bc, l.C);
  c.bk = std::min(bk, l.K);
}

// One pass's objects and buffers; the timed closure and the result closure share them (in bf16
// the *_bf16 ones).
template <class Pass>
struct State {
  std::optional<Pass> pass;
  std::vector<float> in0, in1, out;
  std::vector<jit::bfloat16> in0_bf16, in1_bf16, out_bf16;
};

// The list's settings per pass (see the top of this file); `note` says what was changed.
inline ops::ConvFwdConfig list_config(const samples::ConvLayer& l, const samples::FwdChoice& f, std::int64_t N,
                                      int threads, std::string& note) {
  ops::ConvFwdConfig c;
  std::string loop_string = f.loop_string;
  if (grid_threads(loop_string) > 1 && grid_threads(loop_string) != threads) {
    note = " (listed " + loop_string + " is a grid of " + std::to_string(grid_threads(loop_string)) + " threads)";
    loop_string = "Afgbcde";
  }
  set_loops(c, l, N, loop_string, f.bc, f.bk);
  c.h_block = f.h_block;
  c.w_block = f.w_block;
  c.c_block = f.c_block;
  c.k_block = f.k_block;
  c.h_in_gemm = f.h_in_gemm;
  c.pack_input = f.pack_input != 0;
  return c;
}

inline ops::ConvBwdConfig list_config(const samples::ConvLayer& l, const samples::BwdChoice& b, std::int64_t N,
                                      int, std::string&) {
  ops::ConvBwdConfig c;
  set_loops(c, l, N, b.loop_string, b.bc, b.bk);
  c.h_block = b.h_block;
  c.w_block = b.w_block;
  c.c_block = b.c_block;
  c.k_block = b.k_block;
  c.h_in_gemm = b.h_in_gemm;
  return c;
}

inline ops::ConvUpdConfig list_config(const samples::ConvLayer& l, const samples::UpdChoice& u, std::int64_t N,
                                      int threads, std::string& note) {
  ops::ConvUpdConfig c;
  set_loops(c, l, N, threads == 1 ? "Abcdefg" : "aBCdefg", u.bc, u.bk);
  note = " (weft's default string, not the list's: it indexes PARLOOPER's bf16 update nests)";
  return c;
}

inline std::optional<PreparedPass> prepare(const ops::ConvFwdConfig& c, int threads, const std::string& note) {
  const ops::ConvShape& l = c.shape;
  auto s = std::make_shared<State<ops::ConvFwd>>();
  const ops::ConvFwd& conv = s->pass.emplace(c);
  const auto src = plain_random(l.N * l.C * l.H * l.W, 1), wei = plain_random(l.K * l.C * l.R * l.S, 2);
  s->in0 = ops::nchw_to_blocked(src.data(), conv.input_layout());
  s->in1 = ops::kcrs_to_blocked(wei.data(), conv.filter_layout());
  s->out.resize(static_cast<std::size_t>(conv.output_layout().size()));
  if (c.bf16()) {
    s->in0_bf16 = ops::to_bf16(s->in0);
    s->in1_bf16 = ops::filter_to_vnni2(s->in1, conv.filter_layout());
    s->out_bf16.resize(s->out.size());
    return PreparedPass{[s] { s->pass->run(s->in0_bf16.data(), s->in1_bf16.data(), nullptr, s->out_bf16.data()); },
                        conv.measure_tag(threads) + " bf16" + note,
                        [s] {
                          const auto out = ops::to_floats(s->out_bf16.data(), static_cast<std::int64_t>(s->out_bf16.size()));
                          return plain_activations(out, s->pass->output_layout());
                        },
                        conv.reduction_terms(), conv.tolerance() - ops::sum_tolerance(conv.reduction_terms() + 1)};
  }
  return PreparedPass{[s] { s->pass->run(s->in0.data(), s->in1.data(), nullptr, s->out.data()); },
                      conv.measure_tag(threads) + note,
                      [s] { return plain_activations(s->out, s->pass->output_layout()); },
                      conv.reduction_terms()};
}

inline std::optional<PreparedPass> prepare(const ops::ConvBwdConfig& c, int threads, const std::string& note) {
  const ops::ConvShape& l = c.shape;
  auto s = std::make_shared<State<ops::ConvBwd>>();
  const ops::ConvBwd& conv = s->pass.emplace(c);
  const auto dst = plain_random(l.N * l.K * l.ofh() * l.ofw(), 1), wei = plain_random(l.K * l.C * l.R * l.S, 2);
  s->in0 = ops::nchw_to_blocked(dst.data(), conv.grad_output_layout());
  const auto blocked_wei = ops::kcrs_to_blocked(wei.data(), conv.filter_layout());
  s->in1.resize(static_cast<std::size_t>(conv.transposed_filter_layout().size()));
  s->out.resize(static_cast<std::size_t>(conv.grad_input_layout().size()));
  if (c.bf16()) {
    s->in0_bf16 = ops::to_bf16(s->in0);
    s->in1_bf16.resize(s->in1.size());
    conv.transpose_filter(ops::filter_to_vnni2(blocked_wei, conv.filter_layout()).data(), s->in1_bf16.data());
    s->out_bf16.resize(s->out.size());
    return PreparedPass{[s] { s->pass->run_transposed(s->in1_bf16.data(), s->in0_bf16.data(), s->out_bf16.data()); },
                        conv.measure_tag(threads) + " " + ops::to_string(conv.path()) +
                            " bf16 (filter transposed while preparing)" + note,
                        [s] {
                          const auto out = ops::to_floats(s->out_bf16.data(), static_cast<std::int64_t>(s->out_bf16.size()));
                          return plain_activations(out, s->pass->grad_input_layout());
                        },
                        conv.reduction_terms(), conv.tolerance() - ops::sum_tolerance(conv.reduction_terms())};
  }
  conv.transpose_filter(blocked_wei.data(), s->in1.data());
  return PreparedPass{[s] { s->pass->run_transposed(s->in1.data(), s->in0.data(), s->out.data()); },
                      conv.measure_tag(threads) + " " + ops::to_string(conv.path()) +
                          " (filter transposed while preparing)" + note,
                      [s] { return plain_activations(s->out, s->pass->grad_input_layout()); },
                      conv.reduction_terms()};
}

inline std::optional<PreparedPass> prepare(const ops::ConvUpdConfig& c, int threads, const std::string& note) {
  const ops::ConvShape& l = c.shape;
  auto s = std::make_shared<State<ops::ConvUpd>>();
  const ops::ConvUpd& conv = s->pass.emplace(c);
  const auto src = plain_random(l.N * l.C * l.H * l.W, 1), dst = plain_random(l.N * l.K * l.ofh() * l.ofw(), 2);
  s->in0 = ops::nchw_to_blocked(src.data(), conv.input_layout());
  s->in1 = ops::nchw_to_blocked(dst.data(), conv.grad_output_layout());
  s->out.resize(static_cast<std::size_t>(conv.filter_layout().size()));
  // The filter as plain KCRS, from its blocked floats (in bf16 read back from its VNNI-2 tiles).
  const auto plain_filter = [s] {
    const ops::ConvShape& shape = s->pass->config().shape;
    if (s->pass->config().bf16()) s->out = ops::vnni2_to_filter(s->out_bf16.data(), s->pass->filter_layout());
    std::vector<float> plain(static_cast<std::size_t>(shape.K * shape.C * shape.R * shape.S));
    ops::blocked_to_kcrs(s->out.data(), plain.data(), s->pass->filter_layout());
    return plain;
  };
  if (c.bf16()) {
    s->in0_bf16 = ops::to_bf16(s->in0);
    s->in1_bf16 = ops::to_bf16(s->in1);
    s->out_bf16.resize(s->out.size());
    PreparedPass prepared{[s] { s->pass->run(s->in0_bf16.data(), s->in1_bf16.data(), s->out_bf16.data()); },
                          conv.measure_tag(threads) + note, plain_filter, conv.reduction_length()};
    prepared.rounding = conv.tolerance() - ops::sum_tolerance(conv.reduction_length());
    return prepared;
  }
  return PreparedPass{[s] { s->pass->run(s->in0.data(), s->in1.data(), s->out.data()); },
                      conv.measure_tag(threads) + note, plain_filter, conv.reduction_length()};
}

// A pass on the list's settings for it; nothing when the list has no settings for the pass.
template <class Choice>
std::optional<PreparedPass> prepare_listed(const samples::ConvLayer& l, const std::optional<Choice>& choice,
                                           std::int64_t N, int threads, jit::DataType dtype) {
  if (!choice) return std::nullopt;
  std::string note;
  auto config = list_config(l, *choice, N, threads, note);
  config.dtype = dtype;
  // conv1 (C = 3): the list's bc = 4 is PARLOOPER's bf16 padding of C; bf16 needs an even bc.
  if (config.bf16() && config.bc % 2 != 0) config.bc += 1;
  return prepare(config, threads, note);
}

#if defined(WEFT_HAVE_TUNER)
// The pass as the samples' `auto` runs it: the tuning database's choice for the shape and team
// (best_conv_config.hpp), physical padding as in the listed column; the source (exact hit,
// nearest tuned shape, heuristic) leads the row's note.
template <class Config, class Choice>
std::optional<PreparedPass> prepare_tuned(const samples::ConvLayer& l, const std::optional<Choice>& listed,
                                          std::int64_t N, int threads, jit::DataType dtype) {
  if (!listed) return std::nullopt;
  Config problem;
  problem.shape = shape_of(l, N);
  problem.dtype = dtype;
  const auto choice = weft::ops::best_conv_config(problem, threads);
  return prepare(choice.config, threads, " (" + std::string(weft::tuner::to_string(choice.source)) + ")");
}
#endif

}  // namespace weft_conv

// A pass the list does not give settings for is not offered (the bench does not ask for it).
inline std::optional<PreparedPass> prepare_weft(const samples::ConvLayer& l, Pass pass, std::int64_t N,
                                                jit::DataType dtype) {
  const int threads = omp_get_max_threads();  // the bench sets it (and N = threads) before preparing
  if (pass == Pass::fwd) return weft_conv::prepare_listed(l, l.fwd, N, threads, dtype);
  if (pass == Pass::bwd) return weft_conv::prepare_listed(l, l.bwd, N, threads, dtype);
  return weft_conv::prepare_listed(l, l.upd, N, threads, dtype);
}

#if defined(WEFT_HAVE_TUNER)
// weft_auto: the tuned configuration (the passes the list has, so that its rows are the same).
// bf16: on the database's bf16 records (`weft-tune conv --dtype bf16`).
inline std::optional<PreparedPass> prepare_weft_auto(const samples::ConvLayer& l, Pass pass, std::int64_t N,
                                                     jit::DataType dtype) {
  const int threads = omp_get_max_threads();
  if (pass == Pass::fwd) return weft_conv::prepare_tuned<ops::ConvFwdConfig>(l, l.fwd, N, threads, dtype);
  if (pass == Pass::bwd) return weft_conv::prepare_tuned<ops::ConvBwdConfig>(l, l.bwd, N, threads, dtype);
  return weft_conv::prepare_tuned<ops::ConvUpdConfig>(l, l.upd, N, threads, dtype);
}
#endif

}  // namespace weft::bench
