// The convolution passes of weft::ops as PreparedOps, on NCHW activations and KCRS filters (what
// torch.nn.functional.conv2d takes), converted by the library's conv_layout.hpp functions, in f32
// or bf16 (whose filters are VNNI-2 tiles).
#include <omp.h>

#include <algorithm>
#include <optional>
#include <type_traits>
#include <string>
#include <utility>
#include <variant>

#include "ops_factories.hpp"
#include "weft/ops/best_conv_config.hpp"
#include "weft/ops/blocked_sums.hpp"

namespace weft::python {

namespace {

using ops::ActivationLayout;
using ops::bfloat16;
using ops::Blocking;
using ops::ConvPassKind;
using ops::FilterLayout;

struct BiasLayout {
  Blocking k;
};
using ConvOperandLayout = std::variant<ActivationLayout, FilterLayout, BiasLayout>;

std::int64_t blocked_elements(const ConvOperandLayout& layout) {
  if (const auto* bias = std::get_if<BiasLayout>(&layout)) return bias->k.padded();
  if (const auto* a = std::get_if<ActivationLayout>(&layout)) return a->size();
  return std::get<FilterLayout>(layout).size();
}

// One operand plain -> blocked (T: float, or bfloat16 whose filters go into VNNI-2 tiles), straight
// into the op's scratch: the conversions are most of a plain call's cost beyond the convolution.
template <class T>
void to_blocked_as(const ConvOperandLayout& layout, const T* plain, T* blocked) {
  if (const auto* a = std::get_if<ActivationLayout>(&layout)) {
    ops::nchw_to_blocked(plain, *a, blocked);
  } else if (const auto* f = std::get_if<FilterLayout>(&layout)) {
    if constexpr (std::is_same_v<T, bfloat16>) ops::kcrs_to_vnni2(plain, *f, blocked);
    else ops::kcrs_to_blocked(plain, *f, blocked);
  } else {
    const Blocking& k = std::get<BiasLayout>(layout).k;
    std::fill(std::copy(plain, plain + k.size, blocked), blocked + k.padded(), T{});
  }
}

template <class T>
void from_blocked_as(const ConvOperandLayout& layout, const T* blocked, T* plain) {
  if (const auto* a = std::get_if<ActivationLayout>(&layout)) {
    ops::blocked_to_nchw(blocked, plain, *a);
  } else if (const auto* f = std::get_if<FilterLayout>(&layout)) {
    if constexpr (std::is_same_v<T, bfloat16>) ops::vnni2_to_kcrs(blocked, plain, *f);
    else ops::blocked_to_kcrs(blocked, plain, *f);
  } else {
    std::copy(blocked, blocked + std::get<BiasLayout>(layout).k.size, plain);
  }
}

template <class Pass>
class ConvOp : public PreparedOp {
 public:
  void to_blocked(std::size_t i, const void* plain, void* blocked) const override {
    if (dtype_ == jit::DataType::bf16) {
      to_blocked_as(layouts_.at(i), static_cast<const bfloat16*>(plain), static_cast<bfloat16*>(blocked));
    } else {
      to_blocked_as(layouts_.at(i), static_cast<const float*>(plain), static_cast<float*>(blocked));
    }
  }

  void to_blocked_relu_backward(std::size_t i, const void* plain, const void* forward_out,
                                void* blocked) const override {
    const ActivationLayout* a = activation(i);
    if (dtype_ == jit::DataType::bf16) {
      ops::nchw_to_blocked_relu_backward(static_cast<const bfloat16*>(plain), static_cast<const bfloat16*>(forward_out),
                                         *a, static_cast<bfloat16*>(blocked));
    } else {
      ops::nchw_to_blocked_relu_backward(static_cast<const float*>(plain), static_cast<const float*>(forward_out), *a,
                                         static_cast<float*>(blocked));
    }
  }

  void channel_sums(std::size_t i, const void* blocked, void* out) const override {
    const ActivationLayout* a = activation(i);
    if (dtype_ == jit::DataType::bf16) {
      ops::channel_sums(static_cast<const bfloat16*>(blocked), *a, static_cast<float*>(out));
    } else {
      ops::channel_sums(static_cast<const float*>(blocked), *a, static_cast<float*>(out));
    }
  }

  void from_blocked(std::size_t i, const void* blocked, void* plain) const override {
    if (dtype_ == jit::DataType::bf16) {
      from_blocked_as(layouts_.at(i), static_cast<const bfloat16*>(blocked), static_cast<bfloat16*>(plain));
    } else {
      from_blocked_as(layouts_.at(i), static_cast<const float*>(blocked), static_cast<float*>(plain));
    }
  }

 protected:
  template <class Config>
  ConvOp(const Config& config, ConfigOrigin origin, int threads) : PreparedOp(config.dtype, std::move(origin), threads) {
    omp_set_num_threads(threads);  // the team the loop nests (and the update's partial filters) are built for
    pass_.emplace(config);
  }

  void add(std::string name, std::vector<std::int64_t> shape, bool output, ConvOperandLayout layout) {
    std::vector<std::int64_t> rim;
    bool plain = false;  // NCHW itself: blocks of one channel without rims (the forward's plain_output)
    if (const auto* a = std::get_if<ActivationLayout>(&layout)) {
      rim = {a->pad_h, a->pad_w};
      plain = a->channels.block == 1 && a->pad_h == 0 && a->pad_w == 0;
    }
    operands_.push_back({std::move(name), std::move(shape), blocked_elements(layout), output, plain, std::move(rim)});
    layouts_.push_back(std::move(layout));
  }

  // Operand i's layout, which must be an activation's.
  const ActivationLayout* activation(std::size_t i) const {
    const auto* a = std::get_if<ActivationLayout>(&layouts_.at(i));
    if (a == nullptr) throw Error("operand '" + operands_.at(i).name + "' is no activation (a filter or a bias)");
    return a;
  }

  std::optional<Pass> pass_;
  std::vector<ConvOperandLayout> layouts_;
};

// The plain shapes: the input (N, C, H, W), the output (N, K, P, Q), the filter (K, C, R, S).
std::vector<std::int64_t> input_nchw(const ops::ConvShape& s) { return {s.N, s.C, s.H, s.W}; }
std::vector<std::int64_t> output_nchw(const ops::ConvShape& s) { return {s.N, s.K, s.ofh(), s.ofw()}; }
std::vector<std::int64_t> filter_kcrs(const ops::ConvShape& s) { return {s.K, s.C, s.R, s.S}; }

// Forward: operands x, w, b (with bias), y.
class ConvForwardOp : public ConvOp<ops::ConvFwd> {
 public:
  ConvForwardOp(const ops::ConvFwdConfig& config, ConfigOrigin origin, int threads)
      : ConvOp(config, std::move(origin), threads) {
    add("x", input_nchw(config.shape), false, pass_->input_layout());
    add("w", filter_kcrs(config.shape), false, pass_->filter_layout());
    if (config.with_bias) add("b", {config.shape.K}, false, BiasLayout{config.k_blocking()});
    add("y", output_nchw(config.shape), true, pass_->output_layout());
  }

  void run(std::span<void* const> b) const override {
    const bool bias = pass_->config().with_bias;
    pass_->run(b[0], b[1], bias ? b[2] : nullptr, b[bias ? 3 : 2]);
  }
};

// Backward by data: operands dy, w -> dx; the pass takes (w, dy, dx).
class ConvBackwardDataOp : public ConvOp<ops::ConvBwd> {
 public:
  ConvBackwardDataOp(const ops::ConvBwdConfig& c, ConfigOrigin origin, int threads) : ConvOp(c, std::move(origin), threads) {
    add("dy", output_nchw(c.shape), false, pass_->grad_output_layout());
    add("w", filter_kcrs(c.shape), false, pass_->filter_layout());
    add("dx", input_nchw(c.shape), true, pass_->grad_input_layout());
  }

  // No float32 dx: ConvBwd writes grad_input in its own dtype only (a float32 `out` is refused).
  void run(std::span<void* const> b) const override { pass_->run(b[1], b[0], b[2]); }
};

// Backward by weights: operands dy, x -> dw; the pass takes (x, dy, dw).
class ConvBackwardWeightsOp : public ConvOp<ops::ConvUpd> {
 public:
  ConvBackwardWeightsOp(const ops::ConvUpdConfig& c, ConfigOrigin origin, int threads) : ConvOp(c, std::move(origin), threads) {
    add("dy", output_nchw(c.shape), false, pass_->grad_output_layout());
    add("x", input_nchw(c.shape), false, pass_->input_layout());
    add("dw", filter_kcrs(c.shape), true, pass_->filter_layout());
  }

  void run(std::span<void* const> b) const override { pass_->run(b[1], b[0], b[2]); }

  bool writes_f32_output() const override { return dtype_ == jit::DataType::bf16; }
  void run_f32_output(std::span<void* const> b) const override {
    pass_->run(static_cast<const jit::bfloat16*>(b[1]), static_cast<const jit::bfloat16*>(b[0]), static_cast<float*>(b[2]));
  }
};

template <class Op, class Config>
std::shared_ptr<PreparedOp> make(const ops::ConvDesc& desc, const OpConfig& request, int threads,
                                 Config (*from_tuned)(const tuner::TunedConfig&, const ops::ConvShape&)) {
  omp_set_num_threads(threads);  // the update's check of a tuned record counts this team
  auto [config, origin] = choose_config(
      request, ops::conv_config<Config>(desc), [&](const tuner::TunedConfig& tuned) { return from_tuned(tuned, desc.shape); },
      [](Config& chosen, const Config& described) {
        if constexpr (std::is_same_v<Config, ops::ConvFwdConfig>) {
          chosen.with_bias = described.with_bias;
          chosen.with_relu = described.with_relu;
        } else if constexpr (std::is_same_v<Config, ops::ConvUpdConfig>) {
          chosen.pad_h_out = described.pad_h_out;
          chosen.pad_w_out = described.pad_w_out;
        }
      },
      [&] { return ops::best_conv_config(ops::conv_config<Config>(desc), threads, request.tiles); },
      [&] { return ops::default_conv_config<Config>(desc, threads); });
  if constexpr (std::is_same_v<Config, ops::ConvFwdConfig>) {
    // The forward writes PyTorch's NCHW output itself where that pays: the transpose of each
    // call's rows while they are in cache instead of a blocked_to_nchw pass over the whole output.
    config.plain_output = ops::ConvFwd::plain_output_pays(config);
    if (config.plain_output) origin.description += "; plain: y";
  } else if constexpr (std::is_same_v<Config, ops::ConvBwdConfig>) {
    config.plain_grad_input = ops::ConvBwd::plain_grad_input_pays(config);  // likewise dx
    if (config.plain_grad_input) origin.description += "; plain: dx";
  }
  return std::make_shared<Op>(config, std::move(origin), threads);
}

}  // namespace

std::shared_ptr<PreparedOp> make_conv_op(ConvPassKind pass, const ops::ConvDesc& desc, const OpConfig& config,
                                         int threads) {
  switch (pass) {
    case ConvPassKind::fwd: return make<ConvForwardOp>(desc, config, threads, &ops::to_conv_fwd_config);
    case ConvPassKind::bwd: return make<ConvBackwardDataOp>(desc, config, threads, &ops::to_conv_bwd_config);
    case ConvPassKind::upd: break;
  }
  return make<ConvBackwardWeightsOp>(desc, config, threads, &ops::to_conv_upd_config);
}

std::vector<std::string> conv_knob_names(ConvPassKind pass, const ops::ConvDesc& desc) {
  return knob_names_of(ops::default_conv_config(pass, desc.shape, desc.dtype).knobs);
}

}  // namespace weft::python
