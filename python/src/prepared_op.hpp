// A prepared operator of weft::ops as the Python package sees it: named operands, each with its
// plain shape (row-major, what NumPy and torch users hold) and the element count of its blocked
// copy (the layout the C++ operator runs on), the conversions between the two, and one run on
// blocked buffers. gemm_ops.cpp and conv_ops.cpp make the six passes into such objects;
// ops_bindings.cpp binds them once for all, so the array checks, the GIL and the locking are
// written once.
//
//   std::shared_ptr<PreparedOp> op = make_gemm_forward(desc, config);
//   op->operands();                    // x, w, b (inputs), y (the output), with shapes
//   op->to_blocked(0, x_plain, x_blocked);
//   op->run({x_blocked, w_blocked, b_blocked, y_blocked});
//   op->from_blocked(3, y_blocked, y_plain);
#pragma once

#include <cstdint>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "weft/jit/data_type.hpp"

namespace weft::python {

struct Operand {
  std::string name;                  // the Python argument's name: "x", "w", "dy", ...
  std::vector<std::int64_t> shape;   // plain, row-major
  std::int64_t blocked_elements = 0; // of the blocked copy, padding and rims included
  bool output = false;               // written by run(); the others are read
  bool plain = false;                // the blocked layout is the plain one: run_plain uses the array in place
  std::vector<std::int64_t> rim;     // a convolution's activation: its (h, w) rims in the blocked layout
};

// Where a configuration came from ("explicit", "default", "tuned (exact hit)", "tuned (nearest
// tuned shape)") and the configuration in one line (loop string, tiles, knobs).
struct ConfigOrigin {
  std::string source, description;
};

class PreparedOp {
 public:
  virtual ~PreparedOp() = default;

  const std::vector<Operand>& operands() const { return operands_; }
  jit::DataType dtype() const { return dtype_; }
  const std::string& source() const { return origin_.source; }
  const std::string& description() const { return origin_.description; }
  // The OpenMP team the operator was prepared for (and runs with).
  int threads() const { return threads_; }

  // plain (operands()[i].shape, dtype()) -> blocked (blocked_elements), rims and padding zero.
  virtual void to_blocked(std::size_t i, const void* plain, void* blocked) const = 0;
  // blocked -> plain: the real elements.
  virtual void from_blocked(std::size_t i, const void* blocked, void* plain) const = 0;
  // to_blocked of a gradient through a ReLU: plain where forward_out (a plain tensor of the same
  // shape, the ReLU's output) passed it (> 0 or NaN), +0 elsewhere, in one pass. Activations only:
  // throws weft::Error naming the operand otherwise.
  virtual void to_blocked_relu_backward(std::size_t i, const void* plain, const void* forward_out,
                                        void* blocked) const = 0;
  // Sums of activation i's blocked copy over the batch (and pixels), one per output feature or
  // channel, in the dtype's sum type (float; double for f64): a bias gradient from a blocked output
  // gradient. Activations only: throws weft::Error naming the operand otherwise.
  virtual void channel_sums(std::size_t i, const void* blocked, void* out) const = 0;
  // One run on blocked buffers, one per operand in operands()' order. The operators keep scratch
  // between runs, so runs of one PreparedOp take turns (run_lock()).
  virtual void run(std::span<void* const> blocked) const = 0;
  // A bf16 pass that can also write its output in f32 says so (the GEMM backward by weights: the
  // weight gradient unrounded, for fp32 master weights kept in the bf16 layout), and runs so in
  // run_f32_output (the output buffer holding floats); the others are never asked to.
  virtual bool writes_f32_output() const { return false; }
  virtual void run_f32_output(std::span<void* const> blocked) const;
  // The GEMM backward by weights in bf16 writes that f32 output in the f32 layout's column-major
  // tiles instead where asked (ops::GemmUpd::run_f32_column_major: fp32 weights kept in that layout,
  // weft.torch under torch.autocast); the others are never asked to.
  virtual bool writes_f32_column_major() const { return false; }
  virtual void run_f32_column_major(std::span<void* const> blocked) const;

  std::mutex& run_lock() const { return run_mutex_; }

 protected:
  PreparedOp(jit::DataType dtype, ConfigOrigin origin, int threads)
      : dtype_(dtype), origin_(std::move(origin)), threads_(threads) {}

  std::vector<Operand> operands_;
  const jit::DataType dtype_;
  const ConfigOrigin origin_;
  const int threads_;

 private:
  mutable std::mutex run_mutex_;
};

inline void PreparedOp::run_f32_output(std::span<void* const> /*blocked*/) const {
  throw std::logic_error("PreparedOp::run_f32_output on an operator without an f32 output");
}

inline void PreparedOp::run_f32_column_major(std::span<void* const> /*blocked*/) const {
  throw std::logic_error("PreparedOp::run_f32_column_major on an operator without one");
}

}  // namespace weft::python
