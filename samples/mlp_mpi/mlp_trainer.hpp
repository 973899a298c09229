// One process's part of data-parallel MLP training: the layers relu(W_l x + b_l), W_l width x
// width, on `columns` columns of the global batch, with the weights operators (ops/) prepared once
// in blocked layouts and run every step:
//
//   forward    GemmFwd, all layers in one run (fused bias and ReLU), every layer's output kept
//   backward   the loss gradient (X_L - T) / width (the loss: half the squared error averaged over a
//              column's outputs, summed over this rank's columns), then
//              per layer from the top: the ReLU's gradient (TPP relu_bwd), dW = dZ X^T (GemmUpd), db
//              = the row sums of dZ, handed to the GradientExchange, then dX = W^T dZ (GemmBwd) for
//              the layer below
//   sgd        parameters -= step * gradient, step = learning rate / global batch (the gradients
//              are sums over the global batch once exchanged)
//
// A layer's weights and bias are one buffer (parameters(l)): [W blocked][b, padded to whole
// tiles], and its gradient has the same layout (GemmUpd writes dW in W's blocked layout), so one
// all-reduce and one update loop per layer cover both. No MPI here: the check's one-rank reference
// is this class with a LocalExchange.
//
// In bf16 (MlpShape::dtype) the passes read and write bf16 (weights in VNNI-2 tiles, fp32
// accumulation) while the parameters, their gradients (widened from the update's bf16 dW) and the
// update stay f32, element for element in the same blocked positions: f32 master weights, rounded
// to the passes' bf16 copy after every change (refresh()), and f32 sums over the ranks.
//
//   MlpTrainer trainer({.layers = 4, .width = 256, .first_column = 64, .columns = 64}, seed, threads);
//   trainer.forward();
//   const double loss = trainer.backward(exchange);
//   exchange.complete();
//   trainer.sgd(lr / global_batch);
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <weft/jit/bfloat16.hpp>
#include <weft/jit/data_type.hpp>
#include <weft/ops/gemm.hpp>
#include <weft/tpp/unary.hpp>

#include "gradient_exchange.hpp"

namespace weft::samples {

struct MlpShape {
  int layers = 1;
  std::int64_t width = 0;
  std::int64_t first_column = 0;  // of the global batch: which inputs and targets this trainer makes
  std::int64_t columns = 0;
  jit::DataType dtype = jit::DataType::f32;  // of the passes: f32 or bf16
};

class MlpTrainer {
 public:
  // Prepares the passes for `threads` (the OpenMP team the runs will have) and makes the weights,
  // biases, inputs and targets from `seed` (synthetic_data.hpp). Throws weft::Error (a
  // MemoryError naming the buffers when they cannot fit).
  MlpTrainer(const MlpShape& shape, std::uint64_t seed, int threads);

  void forward();
  // Hands each layer's gradient (sums over this trainer's columns) to `exchange`, top layer first,
  // calling exchange.progress() between the passes. Returns the loss: half the squared error
  // averaged over the outputs of a column, summed over this trainer's columns.
  double backward(GradientExchange& exchange);
  void sgd(float step);

  int layers() const { return shape_.layers; }
  // Layer `layer`'s weights and bias, blocked, f32 (the buffer the broadcast moves). After writing
  // them, call refresh().
  std::span<float> parameters(int layer);
  // Makes the passes' copy of the parameters (bf16) follow them; nothing in f32.
  void refresh();
  // The same, plain: width x width row-major weights, then the width biases.
  std::vector<float> plain_parameters(int layer) const;
  // Floats all-reduced per step: every layer's parameters buffer, padding included.
  std::int64_t reduced_floats() const { return shape_.layers * parameter_size_; }
  // Of one step: forward and update of every layer, backward by data of all but the first.
  double flops() const;
  bool bf16() const { return shape_.dtype == jit::DataType::bf16; }
  // "blocks 64 x 48 x 64; loops: forward aBcb, backward by data ACb, by weights ABc".
  std::string describe() const;

 private:
  // What the passes read and write, in their element type. In f32 the weights are parameters_ and
  // dW is written into gradients_ directly, so `weights` and `grad_weight` stay empty.
  template <class T>
  struct PassBuffers {
    std::vector<std::vector<T>> weights;      // per layer: [W][b], the parameters rounded
    std::vector<std::vector<T>> activations;  // the input, then each layer's output
    std::vector<T> grad_out, grad_pre;        // dL/dX of a layer's output; after the ReLU
    std::vector<T> grad_weight;               // the update's dW before it is widened
  };
  template <class T>
  PassBuffers<T>& buffers();
  template <class T>
  void allocate(PassBuffers<T>& b);
  template <class T>
  void forward_typed();
  template <class T>
  double backward_typed(GradientExchange& exchange);
  template <class T>
  const T* weights(int layer);

  MlpShape shape_;
  std::optional<ops::GemmFwd> fwd_;
  std::optional<ops::GemmBwd> bwd_;
  std::optional<ops::GemmUpd> upd_;
  std::optional<tpp::Unary> relu_bwd_;     // on one bm x bn tile, flat
  std::int64_t weight_size_ = 0;           // floats of blocked W
  std::int64_t parameter_size_ = 0;        // W and the padded bias
  std::int64_t activation_size_ = 0;       // floats of a blocked width x columns activation
  std::vector<std::vector<float>> parameters_, gradients_;  // f32, whatever the passes' type
  std::vector<float> target_;                               // T, f32
  PassBuffers<float> f32_;
  PassBuffers<jit::bfloat16> bf16_;
};

}  // namespace weft::samples
