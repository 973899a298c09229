#include "mlp_trainer.hpp"

#include <omp.h>

#include <algorithm>
#include <cstddef>

#include <weft/jit/error.hpp>

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

}  // namespace

MlpTrainer::MlpTrainer(const MlpShape& shape, std::uint64_t seed, int threads) : shape_(shape) {
  const ops::GemmDesc desc{.M = shape.width, .N = shape.columns, .K = shape.width, .layers = shape.layers,
                           .bias = true, .relu = true};
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
    throw Error("weft-mlp-mpi: the forward and backward passes' blocked layouts differ (blocks " +
                describe() + ")");
  }
  const std::int64_t bm = f.bm, bn = f.bn;
  relu_bwd_.emplace(tpp::UnaryDesc{.op = tpp::UnaryOp::relu_bwd, .m = bm * bn, .n = 1, .ld_in = bm * bn,
                                   .ld_out = bm * bn});

  weight_size_ = ops::blocked_size(lf.left);
  parameter_size_ = weight_size_ + fwd_->m_blocking().padded();
  activation_size_ = ops::blocked_size(lf.out);
  const std::uint64_t bytes = add_bytes(bytes_needed({2 * shape.layers, parameter_size_}, sizeof(float)),
                                         bytes_needed({shape.layers + 4, activation_size_}, sizeof(float)));
  const std::string what = "the MLP's weights, gradients and activations (" + std::to_string(shape.layers) +
                           " layers of " + std::to_string(shape.width) + " x " + std::to_string(shape.width) +
                           ", " + std::to_string(shape.columns) + " columns)";
  require_memory(what, bytes);
  allocating(what, bytes, [&] {
    parameters_.assign(at(shape.layers), std::vector<float>(at(parameter_size_)));
    gradients_.assign(at(shape.layers), std::vector<float>(at(parameter_size_)));
    activations_.assign(at(shape.layers + 1), std::vector<float>(at(activation_size_)));
    target_.assign(at(activation_size_), 0.0f);
    grad_out_.assign(at(activation_size_), 0.0f);
    grad_pre_.assign(at(activation_size_), 0.0f);
    return 0;
  });

  for (int l = 0; l < shape.layers; ++l) {
    const std::vector<float> w = synthetic_weights(seed, l, shape.width);
    ops::pack(w.data(), ops::MatrixOrder::row_major, lf.left, parameters_[at(l)].data());
    const std::vector<float> bias = synthetic_biases(seed, l, shape.width);
    std::copy(bias.begin(), bias.end(), parameters_[at(l)].begin() + weight_size_);
  }
  const std::vector<float> x =
      synthetic_columns(seed, DataStream::input, shape.width, shape.first_column, shape.columns);
  ops::pack(x.data(), ops::MatrixOrder::column_major, lf.right, activations_[0].data());
  const std::vector<float> t =
      synthetic_columns(seed, DataStream::target, shape.width, shape.first_column, shape.columns);
  ops::pack(t.data(), ops::MatrixOrder::column_major, lf.out, target_.data());
}

void MlpTrainer::forward() {
  std::vector<float*> acts;
  std::vector<const float*> weights, biases;
  for (std::vector<float>& a : activations_) acts.push_back(a.data());
  for (const std::vector<float>& p : parameters_) {
    weights.push_back(p.data());
    biases.push_back(p.data() + weight_size_);
  }
  fwd_->run(acts, weights, biases);
}

double MlpTrainer::backward(GradientExchange& exchange) {
  const std::int64_t n = activation_size_;
  const float* out = activations_[at(shape_.layers)].data();
  const float* target = target_.data();
  float* grad_out = grad_out_.data();
  float* grad_pre = grad_pre_.data();
  // The padding of the output and of the target is zero (the passes never write it, pack() zeroes
  // it), so the gradient's padding is zero too and adds nothing to the sums below.
  // The loss is the mean over a column's W outputs (then over the batch): its gradient's scale, and
  // so the learning rates that converge, do not grow with the width.
  const float per_output = 1.0f / static_cast<float>(shape_.width);
  double loss = 0;
#pragma omp parallel for reduction(+ : loss)
  for (std::int64_t i = 0; i < n; ++i) {
    const float e = out[i] - target[i];
    grad_out[i] = e * per_output;
    loss += 0.5 * static_cast<double>(e) * e;
  }
  loss /= static_cast<double>(shape_.width);

  const ops::GemmFwdConfig& f = fwd_->config();
  const std::int64_t tile = f.bm * f.bn, tiles = n / tile, mb = fwd_->m_blocking().blocks(),
                     nb = fwd_->n_blocking().blocks();
  for (int l = shape_.layers - 1; l >= 0; --l) {
    const float* output = activations_[at(l + 1)].data();
#pragma omp parallel for
    for (std::int64_t t = 0; t < tiles; ++t) {
      (*relu_bwd_)(tpp::UnaryArgs{.in = grad_out + t * tile, .out = grad_pre + t * tile, .aux = output + t * tile});
    }
    float* grad = gradients_[at(l)].data();
    upd_->run(grad_pre, activations_[at(l)].data(), grad);
    // db = the row sums of dZ ([Nb][Mb][bn][bm]): each thread owns whole bias tiles, and every
    // element is summed in the same order whatever the team, as the one-rank check needs.
    float* grad_bias = grad + weight_size_;
#pragma omp parallel for
    for (std::int64_t im = 0; im < mb; ++im) {
      float* db = grad_bias + im * f.bm;
      for (std::int64_t i = 0; i < f.bm; ++i) db[i] = 0.0f;
      for (std::int64_t in = 0; in < nb; ++in) {
        const float* dz = grad_pre + (in * mb + im) * tile;
        for (std::int64_t j = 0; j < f.bn; ++j)
          for (std::int64_t i = 0; i < f.bm; ++i) db[i] += dz[j * f.bm + i];
      }
    }
    exchange.ready(l, gradients_[at(l)]);
    exchange.progress();
    if (l > 0) {
      bwd_->run(parameters_[at(l)].data(), grad_pre, grad_out);
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
