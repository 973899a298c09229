// Unary primitives: the main primitive of element-wise / permutation operations (out = op(in0)
// over the prim dims, op(in0)^T when in0 and out are contiguous along different dims) and the
// touches (op applied in place to the output block). tpp::Unary where the layout fits, a portable
// loop otherwise (only with allow_generic_primitives).
#include <algorithm>
#include <optional>

#include "block_kernels.hpp"
#include "tpp_ops.hpp"
#include "weft/tensor/reference.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::tensor::detail {

namespace {

bool unit(std::int64_t stride, std::int64_t size) { return stride == 1 || size == 1; }

class TppUnaryKernel final : public MainKernel {
 public:
  explicit TppUnaryKernel(const tpp::UnaryDesc& d) : unary_(d), fn_(unary_.kernel()) {}
  void run(const void* in0, const void*, void* out, bool, bool) const noexcept override {
    const tpp::UnaryArgs args{.in = in0, .out = out, .ld_in = 0};  // 0: see plain_desc
    if (fn_) {
      fn_(&args);
    } else {
      unary_(args);
    }
  }
  std::string describe() const override { return tpp::to_string(unary_.desc()); }

 private:
  tpp::Unary unary_;
  tpp::UnaryKernelFn fn_;
};

// The portable loops compute in double and round once to T (float or double, the dtype): the same
// values as the reference contraction.
template <class T>
class PortableUnaryKernel final : public MainKernel {
 public:
  PortableUnaryKernel(prim_t op, Block2d b) : op_(op), b_(b) {}
  void run(const void* in0_data, const void*, void* out_data, bool, bool) const noexcept override {
    const T* in0 = static_cast<const T*>(in0_data);
    T* out = static_cast<T*>(out_data);
    for (std::int64_t j = 0; j < b_.cols; ++j)
      for (std::int64_t i = 0; i < b_.rows; ++i) {
        const double x = op_ == prim_t::zero ? 0.0 : in0[i * b_.in0_row + j * b_.in0_col];
        out[i * b_.out_row + j * b_.out_col] = static_cast<T>(unary_value(op_, x));
      }
  }
  std::string describe() const override {
    return "portable " + to_string(op_) + " " + std::to_string(b_.rows) + "x" +
           std::to_string(b_.cols);
  }

 private:
  prim_t op_;
  Block2d b_;
};

class TppTouchKernel final : public TouchKernel {
 public:
  explicit TppTouchKernel(const tpp::UnaryDesc& d) : unary_(d), fn_(unary_.kernel()) {}
  void run(void* out) const noexcept override {
    const tpp::UnaryArgs args{.in = out, .out = out};
    if (fn_) {
      fn_(&args);
    } else {
      unary_(args);
    }
  }
  std::string describe() const override { return tpp::to_string(unary_.desc()) + " in place"; }

 private:
  tpp::Unary unary_;
  tpp::UnaryKernelFn fn_;
};

template <class T>
class PortableTouchKernel final : public TouchKernel {
 public:
  PortableTouchKernel(prim_t op, Block2d b) : op_(op), b_(b) {}
  void run(void* out_data) const noexcept override {
    T* out = static_cast<T*>(out_data);
    for (std::int64_t j = 0; j < b_.cols; ++j)
      for (std::int64_t i = 0; i < b_.rows; ++i) {
        T& v = out[i * b_.out_row + j * b_.out_col];
        v = static_cast<T>(unary_value(op_, v));
      }
  }
  std::string describe() const override { return "portable " + to_string(op_) + " in place"; }

 private:
  prim_t op_;
  Block2d b_;
};

tpp::UnaryDesc plain_desc(prim_t op, dtype_t dtype, std::int64_t rows, std::int64_t cols,
                          std::int64_t ld_in, std::int64_t ld_out) {
  tpp::UnaryDesc d;
  d.op = unary_tpp_op(op);
  d.types = tpp_types(dtype);
  d.m = rows;
  d.n = cols;
  // With one column the leading dimension is never stepped; give the TPP one it accepts. An input
  // of stride 0 along the columns keeps ld_in 0: given at call time, where TppUnaryKernel's
  // UnaryArgs::ld_in 0 makes every column read the first (a column broadcast, tpp/unary.hpp).
  d.ld_in = cols == 1 ? std::max(ld_in, rows) : ld_in;
  d.ld_out = cols == 1 ? std::max(ld_out, rows) : ld_out;
  if (op == prim_t::zero) d.ld_in = d.ld_out;
  return d;
}

// in0 and out contiguous along different dims of the block: out = main(in0)^T. The TPP reads
// A (cols x rows), contiguous along the block's columns, and stores B = op(A)^T; a copy is the plain
// transpose kernel, every other op its transpose_out form (the op applied before the shuffles).
tpp::UnaryDesc transposed_desc(prim_t op, dtype_t dtype, const Block2d& b) {
  tpp::UnaryDesc d;
  d.op = op == prim_t::copy ? tpp::UnaryOp::transpose : unary_tpp_op(op);
  d.transpose_out = op != prim_t::copy;
  d.types = tpp_types(dtype);
  d.m = b.cols;
  d.n = b.rows;
  d.ld_in = b.in0_row;  // 0 broadcasts A's first column, as in plain_desc
  // B has one column when the block has one: its leading dimension is never stepped.
  d.ld_out = b.cols == 1 ? std::max(b.out_col, b.rows) : b.out_col;
  return d;
}

}  // namespace

Block2d make_block(const Contraction& op, const std::vector<std::size_t>& prims) {
  Block2d b;
  if (!prims.empty()) {
    const Dim& r = op.dims[prims[0]];
    b.rows = r.size;
    b.in0_row = r.stride_in0;
    b.in1_row = r.stride_in1;
    b.out_row = r.stride_out;
  }
  if (prims.size() > 1) {
    const Dim& c = op.dims[prims[1]];
    b.cols = c.size;
    b.in0_col = c.stride_in0;
    b.in1_col = c.stride_in1;
    b.out_col = c.stride_out;
  }
  return b;
}

std::unique_ptr<MainKernel> make_unary_kernel(const Contraction& op, const std::vector<std::size_t>& block,
                                              const ValidationOptions& options) {
  const Block2d b = make_block(op, block);
  const bool reads = op.main != prim_t::zero;
  try {
    if (unit(b.out_row, b.rows) && distinct_output_columns(b) && (!reads || unit(b.in0_row, b.rows)))
      return std::make_unique<TppUnaryKernel>(
          plain_desc(op.main, op.dtype, b.rows, b.cols, b.in0_col, b.out_col));
    if (reads && block.size() == 2 && unit(b.out_row, b.rows) && distinct_output_columns(b) &&
        unit(b.in0_col, b.cols))
      return std::make_unique<TppUnaryKernel>(transposed_desc(op.main, op.dtype, b));
  } catch (const ConfigError&) {
    throw;
  } catch (const weft::Error& ex) {
    throw ConfigError(error_t::err_invalid_main_configuration,
                      "the unary primitive " + to_string(op.main) + " rejects the prim dims: " +
                          ex.what());
  }
  if (!options.allow_generic_primitives) {
    std::string where =
        block.empty() ? std::string("no prim dims") : "prim " + name_dimension(op, block[0]);
    throw ConfigError(error_t::err_invalid_strides,
                      to_string(op.main) + " needs a prim dimension with stride 1 in out (and in "
                                           "in0, or a second prim dimension with stride 1 in in0: "
                                           "a transposed output); " +
                          where + " has strides (" + std::to_string(b.in0_row) + ", " +
                          std::to_string(b.out_row) + ") in (in0, out)" + repeated_output_columns_note(b));
  }
  if (op.dtype == dtype_t::fp64) return std::make_unique<PortableUnaryKernel<double>>(op.main, b);
  return std::make_unique<PortableUnaryKernel<float>>(op.main, b);
}

std::unique_ptr<TouchKernel> make_touch_kernel(prim_t touch, const Contraction& op,
                                               const std::vector<std::size_t>& block,
                                               const ValidationOptions& options, error_t error) {
  const Block2d b = make_block(op, block);
  if (unit(b.out_row, b.rows) && distinct_output_columns(b)) {
    try {
      return std::make_unique<TppTouchKernel>(
          plain_desc(touch, op.dtype, b.rows, b.cols, b.out_col, b.out_col));
    } catch (const ConfigError&) {
      throw;
    } catch (const weft::Error& ex) {
      throw ConfigError(error, "the touch primitive " + to_string(touch) +
                                   " rejects the output block: " + ex.what());
    }
  }
  if (!options.allow_generic_primitives)
    throw ConfigError(error, "the touch primitive " + to_string(touch) +
                                 " needs the output block contiguous along its first dimension; " +
                                 (block.empty() ? std::string("there is no prim dimension")
                                                : "prim " + name_dimension(op, block[0]) +
                                                      " has stride " + std::to_string(b.out_row) +
                                                      " in out") +
                                 repeated_output_columns_note(b));
  if (op.dtype == dtype_t::fp64) return std::make_unique<PortableTouchKernel<double>>(touch, b);
  return std::make_unique<PortableTouchKernel<float>>(touch, b);
}

}  // namespace weft::tensor::detail
