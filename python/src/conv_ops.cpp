// The convolution passes of weft::ops as PreparedOps, on NCHW activations and KCRS filters (what
// torch.nn.functional.conv2d takes), converted by the library's conv_layout.hpp functions. Those
// convert floats; a bf16 tensor goes through floats exactly (bf16 -> float is exact, and the
// values come back to bf16 unchanged).
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <functional>
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

class ConvOp : public PreparedOp {
 public:
  void to_blocked(std::size_t i, const void* plain, void* blocked) const override {
    const ConvOperandLayout& layout = layouts_.at(i);
    const std::int64_t count = product(operands_.at(i).shape);
    if (dtype_ != jit::DataType::bf16) {
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
  void describe(jit::DataType dtype, std::string source, std::string description, int threads) {
    dtype_ = dtype;
    threads_ = threads;
    source_ = std::move(source);
    description_ = std::move(description);
    omp_set_num_threads(threads);  // the team the loop nests (and the update's partial filters) are built for
  }

  void add(std::string name, std::vector<std::int64_t> shape, bool output, ConvOperandLayout layout) {
    operands_.push_back({std::move(name), std::move(shape), blocked_elements(layout), output});
    layouts_.push_back(std::move(layout));
  }

  std::vector<ConvOperandLayout> layouts_;
};

std::vector<std::int64_t> nchw(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) { return {n, c, h, w}; }

// Forward: operands x, w, b (with bias), y.
class ConvForwardOp : public ConvOp {
 public:
  ConvForwardOp(const ops::ConvFwdConfig& config, std::string source, std::string description, int threads) {
    this->describe(config.dtype, std::move(source), std::move(description), threads);
    pass_.emplace(config);
    const ops::ConvShape& s = config.shape;
    add("x", nchw(s.N, s.C, s.H, s.W), false, pass_->input_layout());
    add("w", nchw(s.K, s.C, s.R, s.S), false, pass_->filter_layout());
    if (config.with_bias) add("b", {s.K}, false, BiasLayout{config.k_blocking()});
    add("y", nchw(s.N, s.K, s.ofh(), s.ofw()), true, pass_->output_layout());
  }

  void run(std::span<void* const> b) const override {
    const bool bias = pass_->config().with_bias;
    pass_->run(b[0], b[1], bias ? b[2] : nullptr, b[bias ? 3 : 2]);
  }

 private:
  std::optional<ops::ConvFwd> pass_;
};

// Backward by data: operands dy, w, dx.
class ConvBackwardDataOp : public ConvOp {
 public:
  ConvBackwardDataOp(const ops::ConvBwdConfig& config, std::string source, std::string description, int threads) {
    this->describe(config.dtype, std::move(source), std::move(description), threads);
    pass_.emplace(config);
    const ops::ConvShape& s = config.shape;
    add("dy", nchw(s.N, s.K, s.ofh(), s.ofw()), false, pass_->grad_output_layout());
    add("w", nchw(s.K, s.C, s.R, s.S), false, pass_->filter_layout());
    add("dx", nchw(s.N, s.C, s.H, s.W), true, pass_->grad_input_layout());
  }

  void run(std::span<void* const> b) const override { pass_->run(b[1], b[0], b[2]); }

 private:
  std::optional<ops::ConvBwd> pass_;
};

// Backward by weights: operands dy, x, dw.
class ConvBackwardWeightsOp : public ConvOp {
 public:
  ConvBackwardWeightsOp(const ops::ConvUpdConfig& config, std::string source, std::string description, int threads) {
    this->describe(config.dtype, std::move(source), std::move(description), threads);
    pass_.emplace(config);
    const ops::ConvShape& s = config.shape;
    add("dy", nchw(s.N, s.K, s.ofh(), s.ofw()), false, pass_->grad_output_layout());
    add("x", nchw(s.N, s.C, s.H, s.W), false, pass_->input_layout());
    add("dw", nchw(s.K, s.C, s.R, s.S), true, pass_->filter_layout());
  }

  void run(std::span<void* const> b) const override { pass_->run(b[1], b[0], b[2]); }

 private:
  std::optional<ops::ConvUpd> pass_;
};

template <class Config>
tuner::TunedChoice<Config> choose_conv_config(const ops::ConvDesc& desc, const OpConfig& config, int threads,
                                              const std::function<Config(const tuner::TunedConfig&)>& from_tuned) {
  omp_set_num_threads(threads);  // the update's check of a tuned record counts this team
  switch (config.kind) {
    case OpConfig::Kind::explicit_config: {
      Config c = from_tuned(config.explicit_config);
      const Config described = ops::conv_config<Config>(desc);  // dtype and fusions from the descriptor
      c.dtype = described.dtype;
      if constexpr (std::is_same_v<Config, ops::ConvFwdConfig>) {
        c.with_bias = described.with_bias;
        c.with_relu = described.with_relu;
      }
      return {c, tuner::ConfigSource::heuristic, "explicit"};
    }
    case OpConfig::Kind::tuned: return ops::best_conv_config(ops::conv_config<Config>(desc), threads);
    case OpConfig::Kind::machine_default: break;
  }
  return {ops::default_conv_config<Config>(desc, threads), tuner::ConfigSource::heuristic, "the machine's default"};
}

template <class Op, class Config>
std::shared_ptr<PreparedOp> make(const ops::ConvDesc& desc, const OpConfig& request, int threads,
                                 Config (*from_tuned)(const tuner::TunedConfig&, const ops::ConvShape&)) {
  const tuner::TunedChoice<Config> choice = choose_conv_config<Config>(
      desc, request, threads, [&](const tuner::TunedConfig& c) { return from_tuned(c, desc.shape); });
  return std::make_shared<Op>(choice.config, source_name(request, choice.source), description(request, choice), threads);
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
