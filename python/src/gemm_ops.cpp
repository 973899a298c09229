// The GEMM passes of weft::ops as PreparedOps, in torch.nn.functional.linear's convention: the
// library's column-major C (M x N) = A (M x K) B (K x N) is, for row-major NumPy arrays,
// y (N, M) = x (N, K) @ w (M, K).T + b: A is w as given (row-major), B is x read column-major,
// and y is C written column-major. The backward passes follow from the same reading.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "ops_factories.hpp"
#include "weft/ops/best_gemm_config.hpp"
#include "weft/ops/blocked_sums.hpp"

namespace weft::python {

namespace {

using ops::bfloat16;
using ops::GemmPassKind;
using ops::MatrixOrder;
using ops::PassMatrix;

// One operand of a GEMM pass: a matrix of the pass's layout read in `order`, or a bias vector of
// `bias_size` values padded to `bias_padded`.
struct GemmOperand {
  PassMatrix matrix;
  MatrixOrder order = MatrixOrder::row_major;
  std::int64_t bias_size = 0, bias_padded = 0;  // bias_padded > 0: a bias
};

template <class F>
void on_element_type(jit::DataType dtype, F&& f) {
  if (dtype == jit::DataType::bf16) {
    f(bfloat16{});
  } else if (dtype == jit::DataType::f64) {
    f(double{});
  } else {
    f(float{});
  }
}

template <class Pass>
class GemmOp : public PreparedOp {
 public:
  void to_blocked(std::size_t i, const void* plain, void* blocked) const override {
    const GemmOperand& o = codecs_.at(i);
    on_element_type(dtype_, [&]<class T>(T) {
      if (o.bias_padded > 0) {
        T* out = static_cast<T*>(blocked);
        std::memcpy(out, plain, static_cast<std::size_t>(o.bias_size) * sizeof(T));
        std::fill(out + o.bias_size, out + o.bias_padded, T{});
      } else {
        ops::pack(static_cast<const T*>(plain), o.order, o.matrix, static_cast<T*>(blocked));
      }
    });
  }

  void to_blocked_relu_backward(std::size_t i, const void* plain, const void* forward_out,
                                void* blocked) const override {
    const GemmOperand& o = activation(i);
    on_element_type(dtype_, [&]<class T>(T) {
      ops::pack_relu_backward(static_cast<const T*>(plain), static_cast<const T*>(forward_out), o.order, o.matrix,
                              static_cast<T*>(blocked));
    });
  }

  void channel_sums(std::size_t i, const void* blocked, void* out) const override {
    const GemmOperand& o = activation(i);
    if (dtype_ == jit::DataType::f64) {
      ops::row_sums(static_cast<const double*>(blocked), o.matrix, static_cast<double*>(out));
    } else if (dtype_ == jit::DataType::bf16) {
      ops::row_sums(static_cast<const bfloat16*>(blocked), o.matrix, static_cast<float*>(out));
    } else {
      ops::row_sums(static_cast<const float*>(blocked), o.matrix, static_cast<float*>(out));
    }
  }

  void from_blocked(std::size_t i, const void* blocked, void* plain) const override {
    const GemmOperand& o = codecs_.at(i);
    on_element_type(dtype_, [&]<class T>(T) {
      if (o.bias_padded > 0) {
        std::memcpy(plain, blocked, static_cast<std::size_t>(o.bias_size) * sizeof(T));
      } else {
        ops::unpack(static_cast<const T*>(blocked), o.matrix, static_cast<T*>(plain), o.order);
      }
    });
  }

 protected:
  template <class Config>
  GemmOp(const Config& config, ConfigOrigin origin, int threads) : PreparedOp(config.dtype, std::move(origin), threads) {
    omp_set_num_threads(threads);  // the team the loop nests are built for
    pass_.emplace(config);
  }

  void add(std::string name, std::vector<std::int64_t> shape, bool output, GemmOperand codec) {
    const std::int64_t elements = codec.bias_padded > 0 ? codec.bias_padded : ops::blocked_size(codec.matrix);
    // A plain matrix read as column-major: the row-major array itself.
    const bool plain = codec.bias_padded == 0 && codec.order == MatrixOrder::column_major && codec.matrix.plain();
    operands_.push_back({std::move(name), std::move(shape), elements, output, plain, {}});
    codecs_.push_back(codec);
  }

  // run() of the two backward passes: the blocked operands in the pass's order.
  template <class T>
  void run_pass(const void* first, const void* second, void* out) const {
    pass_->run(static_cast<const T*>(first), static_cast<const T*>(second), static_cast<T*>(out));
  }

  // Operand i, which must be an activation (plain column-major, column-major tiles).
  const GemmOperand& activation(std::size_t i) const {
    const GemmOperand& o = codecs_.at(i);
    if (o.bias_padded > 0 || o.order != MatrixOrder::column_major || o.matrix.order != ops::TileOrder::column_major) {
      throw Error("operand '" + operands_.at(i).name + "' is no activation (a weight or a bias)");
    }
    return o;
  }

  std::optional<Pass> pass_;
  std::vector<GemmOperand> codecs_;
};
// Forward and MLP: operands x, w (per layer), b (per layer, with bias), y.
class GemmForwardOp : public GemmOp<ops::GemmFwd> {
 public:
  GemmForwardOp(const ops::GemmFwdConfig& config, ConfigOrigin origin, int threads)
      : GemmOp(config, std::move(origin), threads), layers_(config.n_layers) {
    const ops::GemmPassLayout l = pass_->layout();
    const std::int64_t M = config.M, N = config.N, K = config.K;
    const auto named = [&](const char* base, int layer) {
      return layers_ == 1 ? std::string(base) : base + std::to_string(layer);
    };
    add("x", {N, K}, false, {l.right, MatrixOrder::column_major});
    for (int layer = 0; layer < layers_; ++layer) add(named("w", layer), {M, K}, false, {l.left, MatrixOrder::row_major});
    if (config.fuse_bias) {
      GemmOperand bias;
      bias.bias_size = M;
      bias.bias_padded = pass_->m_blocking().padded();
      for (int layer = 0; layer < layers_; ++layer) add(named("b", layer), {M}, false, bias);
    }
    add("y", {N, M}, true, {l.out, MatrixOrder::column_major});
    // An MLP's inner layers write blocked activations that nobody outside sees.
    hidden_.resize(static_cast<std::size_t>(layers_ - 1),
                   std::vector<std::byte>(static_cast<std::size_t>(ops::blocked_size(l.out)) * jit::size_of(dtype_)));
  }

  void run(std::span<void* const> blocked) const override {
    const bool bias = pass_->config().fuse_bias;
    on_element_type(dtype_, [&]<class T>(T) {
      const auto typed = [&](std::size_t i) { return static_cast<T*>(blocked[i]); };
      std::vector<T*> activations{typed(0)};
      for (auto& h : hidden_) activations.push_back(reinterpret_cast<T*>(h.data()));
      activations.push_back(typed(blocked.size() - 1));
      std::vector<const T*> weights, biases;
      for (int layer = 0; layer < layers_; ++layer) {
        weights.push_back(typed(1 + static_cast<std::size_t>(layer)));
        biases.push_back(bias ? typed(1 + static_cast<std::size_t>(layers_ + layer)) : nullptr);
      }
      pass_->run(std::span<T* const>(activations), std::span<const T* const>(weights), std::span<const T* const>(biases));
    });
  }

 private:
  int layers_ = 1;
  mutable std::vector<std::vector<std::byte>> hidden_;
};

// Backward by data: operands dy, w -> dx; the pass takes (w, dy, dx).
class GemmBackwardDataOp : public GemmOp<ops::GemmBwd> {
 public:
  GemmBackwardDataOp(const ops::GemmBwdConfig& c, ConfigOrigin origin, int threads) : GemmOp(c, std::move(origin), threads) {
    const ops::GemmPassLayout l = pass_->layout();
    add("dy", {c.N, c.M}, false, {l.right, MatrixOrder::column_major});
    add("w", {c.M, c.K}, false, {l.left, MatrixOrder::row_major});
    add("dx", {c.N, c.K}, true, {l.out, MatrixOrder::column_major});
  }

  void run(std::span<void* const> b) const override {
    on_element_type(dtype_, [&]<class T>(T) { run_pass<T>(b[1], b[0], b[2]); });
  }
};

// Backward by weights: operands dy, x -> dw, in the pass's order.
class GemmBackwardWeightsOp : public GemmOp<ops::GemmUpd> {
 public:
  GemmBackwardWeightsOp(const ops::GemmUpdConfig& c, ConfigOrigin origin, int threads) : GemmOp(c, std::move(origin), threads) {
    const ops::GemmPassLayout l = pass_->layout();
    add("dy", {c.N, c.M}, false, {l.left, MatrixOrder::column_major});
    add("x", {c.N, c.K}, false, {l.right, MatrixOrder::column_major});
    add("dw", {c.M, c.K}, true, {l.out, MatrixOrder::row_major});
  }

  void run(std::span<void* const> b) const override {
    on_element_type(dtype_, [&]<class T>(T) { run_pass<T>(b[0], b[1], b[2]); });
  }

  bool writes_f32_output() const override { return dtype_ == jit::DataType::bf16; }
  void run_f32_output(std::span<void* const> b) const override {
    pass_->run(static_cast<const bfloat16*>(b[0]), static_cast<const bfloat16*>(b[1]), static_cast<float*>(b[2]));
  }
  bool writes_f32_column_major() const override { return writes_f32_output(); }
  void run_f32_column_major(std::span<void* const> b) const override {
    pass_->run_f32_column_major(static_cast<const bfloat16*>(b[0]), static_cast<const bfloat16*>(b[1]),
                                static_cast<float*>(b[2]));
  }
};

template <class Op, class Config>
std::shared_ptr<PreparedOp> make(const ops::GemmDesc& desc, const OpConfig& request, int threads, bool plain_dy) {
  auto [config, origin] = choose_config(
      request, ops::gemm_config<Config>(desc),
      [&](const tuner::TunedConfig& tuned) {
        return ops::to_gemm_pass_config<Config>(tuned, {desc.M, desc.N, desc.K, desc.layers}, threads);
      },
      [](Config& chosen, const Config& described) {
        if constexpr (std::is_same_v<Config, ops::GemmFwdConfig>) {
          chosen.fuse_bias = described.fuse_bias;
          chosen.fuse_relu = described.fuse_relu;
        }
      },
      [&] { return ops::best_gemm_config(ops::gemm_config<Config>(desc), threads, request.tiles); },
      [&] { return ops::default_gemm_config<Config>(desc, threads); });
  // The activations PyTorch holds, read and written in place where the pass can (measured as fast
  // as on blocked copies: docs/ops.md), which spares the calls their conversions.
  std::string plain;  // the operands read or written in place, for the description
  const auto use = [&](bool& flag, bool possible, const char* names) {
    flag = possible;
    if (possible) plain += std::string(plain.empty() ? "" : ", ") + names;
  };
  if constexpr (std::is_same_v<Config, ops::GemmFwdConfig>) {
    use(config.plain_activations, ops::GemmFwd::takes_plain_activations(config), "x, y");
  } else if constexpr (std::is_same_v<Config, ops::GemmBwdConfig>) {
    use(config.plain_grad_output, plain_dy && ops::GemmBwd::takes_plain_grad_output(config), "dy");
    use(config.plain_grad_input, true, "dx");
  } else {
    use(config.plain_grad_output, ops::GemmUpd::takes_plain_grad_output(config), "dy");
    use(config.plain_input, ops::GemmUpd::takes_plain_input(config), "x");
  }
  if (!plain.empty()) origin.description += "; plain: " + plain;
  return std::make_shared<Op>(config, std::move(origin), threads);
}

}  // namespace

std::shared_ptr<PreparedOp> make_gemm_op(GemmPassKind pass, const ops::GemmDesc& desc, const OpConfig& config,
                                         int threads, bool plain_dy) {
  switch (pass) {
    case GemmPassKind::fwd: return make<GemmForwardOp, ops::GemmFwdConfig>(desc, config, threads, plain_dy);
    case GemmPassKind::bwd: return make<GemmBackwardDataOp, ops::GemmBwdConfig>(desc, config, threads, plain_dy);
    case GemmPassKind::upd: break;
  }
  return make<GemmBackwardWeightsOp, ops::GemmUpdConfig>(desc, config, threads, plain_dy);
}

std::vector<std::string> gemm_knob_names(GemmPassKind pass) {
  std::vector<std::string> names{"bm", "bn", "bk", ops::chunks_knob(pass)};
  if (pass != GemmPassKind::fwd) names.emplace_back("private_trans");
  return names;
}

}  // namespace weft::python
