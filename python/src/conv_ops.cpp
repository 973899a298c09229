// The convolution passes of weft::ops as PreparedOps, on NCHW activations and KCRS filters (what
// torch.nn.functional.conv2d takes), converted by the library's conv_layout.hpp functions. Those
// convert floats; a bf16 tensor goes through floats exactly (bf16 -> float is exact, and the
// values come back to bf16 unchanged).
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <type_traits>
#include <string>
#include <utility>
#include <variant>

#include "ops_factories.hpp"
#include "weft/ops/best_conv_config.hpp"

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

std::int64_t product(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (std::int64_t extent : shape) n *= extent;
  return n;
}

std::int64_t blocked_elements(const ConvOperandLayout& layout) {
  if (const auto* bias = std::get_if<BiasLayout>(&layout)) return bias->k.padded();
  if (const auto* a = std::get_if<ActivationLayout>(&layout)) return a->size();
  return std::get<FilterLayout>(layout).size();
}

// plain floats -> blocked floats (filters: blocked tiles, not yet VNNI-2).
std::vector<float> blocked_floats(const ConvOperandLayout& layout, const float* plain) {
  if (const auto* a = std::get_if<ActivationLayout>(&layout)) return ops::nchw_to_blocked(plain, *a);
  if (const auto* f = std::get_if<FilterLayout>(&layout)) return ops::kcrs_to_blocked(plain, *f);
  return ops::blocked_bias(plain, std::get<BiasLayout>(layout).k);
}

// blocked floats -> plain floats.
void plain_floats(const ConvOperandLayout& layout, const float* blocked, float* plain) {
  if (const auto* a = std::get_if<ActivationLayout>(&layout)) {
    ops::blocked_to_nchw(blocked, plain, *a);
  } else if (const auto* f = std::get_if<FilterLayout>(&layout)) {
    ops::blocked_to_kcrs(blocked, plain, *f);
  } else {
    const Blocking& k = std::get<BiasLayout>(layout).k;
    std::copy(blocked, blocked + k.size, plain);
  }
}

template <class Pass>
class ConvOp : public PreparedOp {
 public:
  void to_blocked(std::size_t i, const void* plain, void* blocked) const override {
    const ConvOperandLayout& layout = layouts_.at(i);
    const std::int64_t count = product(operands_.at(i).shape);
    if (dtype_ != jit::DataType::bf16) {
      // Activations and filters straight into the scratch; the bias is small.
      if (const auto* a = std::get_if<ActivationLayout>(&layout)) {
        ops::nchw_to_blocked(static_cast<const float*>(plain), *a, static_cast<float*>(blocked));
        return;
      }
      if (const auto* f = std::get_if<FilterLayout>(&layout)) {
        ops::kcrs_to_blocked(static_cast<const float*>(plain), *f, static_cast<float*>(blocked));
        return;
      }
      const std::vector<float> b = blocked_floats(layout, static_cast<const float*>(plain));
      std::memcpy(blocked, b.data(), b.size() * sizeof(float));
      return;
    }
    const std::vector<float> floats = ops::to_floats(static_cast<const bfloat16*>(plain), count);
    const std::vector<float> b = blocked_floats(layout, floats.data());
    const std::vector<bfloat16> h = std::holds_alternative<FilterLayout>(layout)
                                        ? ops::filter_to_vnni2(b, std::get<FilterLayout>(layout))
                                        : ops::to_bf16(b);
    std::memcpy(blocked, h.data(), h.size() * sizeof(bfloat16));
  }

  void from_blocked(std::size_t i, const void* blocked, void* plain) const override {
    const ConvOperandLayout& layout = layouts_.at(i);
    if (dtype_ != jit::DataType::bf16) {
      plain_floats(layout, static_cast<const float*>(blocked), static_cast<float*>(plain));
      return;
    }
    const auto* tiles = static_cast<const bfloat16*>(blocked);
    const std::vector<float> b = std::holds_alternative<FilterLayout>(layout)
                                     ? ops::vnni2_to_filter(tiles, std::get<FilterLayout>(layout))
                                     : ops::to_floats(tiles, blocked_elements(layout));
    std::vector<float> floats(static_cast<std::size_t>(product(operands_.at(i).shape)));
    plain_floats(layout, b.data(), floats.data());
    const std::vector<bfloat16> h = ops::to_bf16(floats);  // exact: the values are bf16 already
    std::memcpy(plain, h.data(), h.size() * sizeof(bfloat16));
  }

 protected:
  template <class Config>
  ConvOp(const Config& config, ConfigOrigin origin, int threads) : PreparedOp(config.dtype, std::move(origin), threads) {
    omp_set_num_threads(threads);  // the team the loop nests (and the update's partial filters) are built for
    pass_.emplace(config);
  }

  void add(std::string name, std::vector<std::int64_t> shape, bool output, ConvOperandLayout layout) {
    operands_.push_back({std::move(name), std::move(shape), blocked_elements(layout), output});
    layouts_.push_back(std::move(layout));
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
        }
      },
      [&] { return ops::best_conv_config(ops::conv_config<Config>(desc), threads); },
      [&] { return ops::default_conv_config<Config>(desc, threads); });
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
