#include "mlp_trainer.hpp"

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include <weft/jit/error.hpp>
#include <weft/ops/element_type.hpp>

#include "synthetic_data.hpp"

namespace weft::samples {

namespace {

// The passes hand each other buffers without converting them: the weights GemmFwd reads are the
// ones GemmBwd reads and GemmUpd writes, and one layer's output is the next one's input and the
// backward passes' gradient. True when two operands are stored alike.
bool same_storage(const ops::PassMatrix& a, const ops::PassMatrix& b) {
  return a.rows.size == b.rows.size && a.rows.block == b.rows.block && a.cols.size == b.cols.size &&
         a.cols.block == b.cols.block && a.row_block_major == b.row_block_major && a.order == b.order;
}

std::size_t at(std::int64_t i) { return static_cast<std::size_t>(i); }

// Element conversions of the passes' types: ops::to_float, ops::from_float<T>, ops::converted<T>.
using ops::converted;
using ops::from_float;
using ops::to_float;

}  // namespace

MlpTrainer::MlpTrainer(const MlpShape& shape, std::uint64_t seed, int threads) : shape_(shape) {
  const ops::GemmDesc desc{.M = shape.width, .N = shape.columns, .K = shape.width, .dtype = shape.dtype,
                           .layers = shape.layers, .bias = true, .relu = true};
  fwd_.emplace(ops::default_gemm_config<ops::GemmFwdConfig>(desc, threads));
  const ops::GemmFwdConfig& f = fwd_->config();
  // The backward passes take the forward's tiles (their layouts must match it) and loops that keep
  // their reductions sequential: backward by data over K and N blocks in parallel (M is summed),
  // by weights over K and M blocks (N, the batch, is summed), so no partial copies are needed.
  ops::GemmBwdConfig b = ops::gemm_config<ops::GemmBwdConfig>(desc);
  ops::GemmUpdConfig u = ops::gemm_config<ops::GemmUpdConfig>(desc);
  b.bm = u.bm = f.bm;
  b.bn = u.bn = f.bn;
  b.bk = u.bk = f.bk;
  b.loop_string = "ACb";
  u.loop_string = "ABc";
  bwd_.emplace(b);
  upd_.emplace(u);
  const ops::GemmPassLayout lf = fwd_->layout(), lb = bwd_->layout(), lu = upd_->layout();
  if (!same_storage(lf.left, lb.left) || !same_storage(lf.left, lu.out) || !same_storage(lf.right, lf.out) ||
      !same_storage(lf.out, lb.right) || !same_storage(lf.right, lb.out) || !same_storage(lf.out, lu.left) ||
      !same_storage(lf.right, lu.right)) {
    throw Error("weft-mlp-mpi: the forward and backward passes' blocked layouts differ (" + describe() + ")");
  }
  const std::int64_t tile = f.bm * f.bn;
  relu_bwd_.emplace(tpp::UnaryDesc{.op = tpp::UnaryOp::relu_bwd, .m = tile, .n = 1, .ld_in = tile, .ld_out = tile,
                                   .types = {.in = shape.dtype, .out = shape.dtype}});

  weight_size_ = ops::blocked_size(lf.left);
  parameter_size_ = weight_size_ + fwd_->m_blocking().padded();
  activation_size_ = ops::blocked_size(lf.out);
  const std::uint64_t element = bf16() ? sizeof(jit::bfloat16) : sizeof(float);
  std::uint64_t bytes = add_bytes(bytes_needed({2 * shape.layers, parameter_size_}, sizeof(float)),
                                  bytes_needed({shape.layers + 3, activation_size_}, element));
  bytes = add_bytes(bytes, bytes_needed({activation_size_}, sizeof(float)));
  if (bf16()) bytes = add_bytes(bytes, bytes_needed({shape.layers + 1, parameter_size_}, element));
  const std::string what = "the MLP's weights, gradients and activations (" + std::to_string(shape.layers) +
                           " layers of " + std::to_string(shape.width) + " x " + std::to_string(shape.width) +
                           ", " + std::to_string(shape.columns) + " columns)";
  require_memory(what, bytes);
  allocating(what, bytes, [&] {
    parameters_.assign(at(shape.layers), std::vector<float>(at(parameter_size_)));
    gradients_.assign(at(shape.layers), std::vector<float>(at(parameter_size_)));
    target_.assign(at(activation_size_), 0.0f);
    if (bf16()) {
      allocate(bf16_);
    } else {
      allocate(f32_);
    }
    return 0;
  });

  for (int l = 0; l < shape.layers; ++l) {
    const std::vector<float> w = synthetic_weights(seed, l, shape.width);
    ops::pack(w.data(), ops::MatrixOrder::row_major, lf.left, parameters_[at(l)].data());
    const std::vector<float> bias = synthetic_biases(seed, l, shape.width);
    std::copy(bias.begin(), bias.end(), parameters_[at(l)].begin() + weight_size_);
  }
  refresh();
  const std::vector<float> x =
      synthetic_columns(seed, DataStream::input, shape.width, shape.first_column, shape.columns);
  if (bf16()) {
    ops::pack(converted<jit::bfloat16>(x).data(), ops::MatrixOrder::column_major, lf.right,
              bf16_.activations[0].data());
  } else {
    ops::pack(x.data(), ops::MatrixOrder::column_major, lf.right, f32_.activations[0].data());
  }
  const std::vector<float> t =
      synthetic_columns(seed, DataStream::target, shape.width, shape.first_column, shape.columns);
  ops::pack(t.data(), ops::MatrixOrder::column_major, lf.out, target_.data());
}

template <class T>
MlpTrainer::PassBuffers<T>& MlpTrainer::buffers() {
  if constexpr (std::is_same_v<T, float>) {
    return f32_;
  } else {
    return bf16_;
  }
}

template <class T>
void MlpTrainer::allocate(PassBuffers<T>& b) {
  b.activations.assign(at(shape_.layers + 1), std::vector<T>(at(activation_size_)));
  b.grad_out.assign(at(activation_size_), T{});
  b.grad_pre.assign(at(activation_size_), T{});
  if constexpr (!std::is_same_v<T, float>) {
    b.weights.assign(at(shape_.layers), std::vector<T>(at(parameter_size_)));
    b.grad_weight.assign(at(weight_size_), T{});
  }
}

template <class T>
const T* MlpTrainer::weights(int layer) {
  if constexpr (std::is_same_v<T, float>) {
    return parameters_[at(layer)].data();
  } else {
    return bf16_.weights[at(layer)].data();
  }
}

void MlpTrainer::refresh() {
  if (!bf16()) return;
  for (int l = 0; l < shape_.layers; ++l) {
    const float* p = parameters_[at(l)].data();
    jit::bfloat16* w = bf16_.weights[at(l)].data();
    const std::int64_t n = parameter_size_;
#pragma omp parallel for
    for (std::int64_t i = 0; i < n; ++i) w[i] = jit::to_bfloat16(p[i]);
  }
}

void MlpTrainer::forward() {
  if (bf16()) {
    forward_typed<jit::bfloat16>();
  } else {
    forward_typed<float>();
  }
}

template <class T>
void MlpTrainer::forward_typed() {
  std::vector<T*> acts;
  std::vector<const T*> ws, biases;
  for (std::vector<T>& a : buffers<T>().activations) acts.push_back(a.data());
  for (int l = 0; l < shape_.layers; ++l) {
    ws.push_back(weights<T>(l));
    biases.push_back(weights<T>(l) + weight_size_);
  }
  fwd_->run(acts, ws, biases);
}

double MlpTrainer::backward(GradientExchange& exchange) {
  return bf16() ? backward_typed<jit::bfloat16>(exchange) : backward_typed<float>(exchange);
}

template <class T>
double MlpTrainer::backward_typed(GradientExchange& exchange) {
  PassBuffers<T>& b = buffers<T>();
  const std::int64_t n = activation_size_;
  const T* out = b.activations[at(shape_.layers)].data();
  const float* target = target_.data();
  T* grad_out = b.grad_out.data();
  T* grad_pre = b.grad_pre.data();
  // The padding of the output and of the target is zero (the passes never write it, pack() zeroes
  // it), so the gradient's padding is zero too and adds nothing to the sums below.
  // The loss is the mean over a column's W outputs (then over the batch): its gradient's scale, and
  // so the learning rates that converge, do not grow with the width.
  const float per_output = 1.0f / static_cast<float>(shape_.width);
  double loss = 0;
#pragma omp parallel for reduction(+ : loss)
  for (std::int64_t i = 0; i < n; ++i) {
    const float e = to_float(out[i]) - target[i];
    grad_out[i] = from_float<T>(e * per_output);
    loss += 0.5 * static_cast<double>(e) * e;
  }
  loss /= static_cast<double>(shape_.width);

  const ops::GemmFwdConfig& f = fwd_->config();
  const std::int64_t tile = f.bm * f.bn, tiles = n / tile, mb = fwd_->m_blocking().blocks(),
                     nb = fwd_->n_blocking().blocks();
  for (int l = shape_.layers - 1; l >= 0; --l) {
    const T* output = b.activations[at(l + 1)].data();
#pragma omp parallel for
    for (std::int64_t t = 0; t < tiles; ++t) {
      (*relu_bwd_)(tpp::UnaryArgs{.in = grad_out + t * tile, .out = grad_pre + t * tile, .aux = output + t * tile});
    }
    float* grad = gradients_[at(l)].data();
    if constexpr (std::is_same_v<T, float>) {
      upd_->run(grad_pre, b.activations[at(l)].data(), grad);
    } else {
      // dW comes in bf16 (VNNI-2 tiles); widened in place of the f32 gradient, position for
      // position, so that the sum over the ranks and the update are f32.
      T* dw = b.grad_weight.data();
      upd_->run(grad_pre, b.activations[at(l)].data(), dw);
      const std::int64_t w = weight_size_;
#pragma omp parallel for
      for (std::int64_t i = 0; i < w; ++i) grad[i] = to_float(dw[i]);
    }
    // db = the row sums of dZ ([Nb][Mb][bn][bm]), in f32: each thread owns whole bias tiles, and
    // every element is summed in the same order whatever the team, as the one-rank check needs.
    float* grad_bias = grad + weight_size_;
#pragma omp parallel for
    for (std::int64_t im = 0; im < mb; ++im) {
      float* db = grad_bias + im * f.bm;
      for (std::int64_t i = 0; i < f.bm; ++i) db[i] = 0.0f;
      for (std::int64_t in = 0; in < nb; ++in) {
        const T* dz = grad_pre + (in * mb + im) * tile;
        for (std::int64_t j = 0; j < f.bn; ++j)
          for (std::int64_t i = 0; i < f.bm; ++i) db[i] += to_float(dz[j * f.bm + i]);
      }
    }
    exchange.ready(l, gradients_[at(l)]);
    exchange.progress();
    if (l > 0) {
      bwd_->run(weights<T>(l), grad_pre, grad_out);
      exchange.progress();
    }
  }
  return loss;
}

void MlpTrainer::sgd(float step) {
  for (int l = 0; l < shape_.layers; ++l) {
    float* p = parameters_[at(l)].data();
    const float* g = gradients_[at(l)].data();
    const std::int64_t n = parameter_size_;
#pragma omp parallel for simd
    for (std::int64_t i = 0; i < n; ++i) p[i] -= step * g[i];
  }
  refresh();
}

std::span<float> MlpTrainer::parameters(int layer) { return parameters_[at(layer)]; }

std::vector<float> MlpTrainer::plain_parameters(int layer) const {
  const std::int64_t w = shape_.width;
  std::vector<float> plain(at(w * w + w));
  const std::vector<float>& p = parameters_[at(layer)];
  ops::unpack(p.data(), fwd_->layout().left, plain.data(), ops::MatrixOrder::row_major);
  std::copy(p.begin() + weight_size_, p.begin() + weight_size_ + w, plain.begin() + w * w);
  return plain;
}

double MlpTrainer::flops() const {
  return fwd_->flops() + shape_.layers * upd_->flops() + (shape_.layers - 1) * bwd_->flops();
}

std::string MlpTrainer::describe() const {
  const ops::GemmFwdConfig& f = fwd_->config();
  std::string text = "blocks " + std::to_string(f.bm) + " x " + std::to_string(f.bn) + " x " + std::to_string(f.bk) +
                     "; loops: forward " + f.loop_string;
  if (bwd_) text += ", backward by data " + bwd_->config().loop_string;
  if (upd_) text += ", by weights " + upd_->config().loop_string;
  return text;
}

}  // namespace weft::samples
