// Binary element-wise main primitives (out = in0 op in1 over the prim dims): tpp::Binary, where a
// stride-0 input becomes a row, column or scalar broadcast; a portable loop for other layouts (only
// with allow_generic_primitives).
#include <algorithm>
#include <optional>

#include "block_kernels.hpp"
#include "tpp_ops.hpp"
#include "weft/tensor/reference.hpp"
#include "weft/tpp/binary.hpp"

namespace weft::tensor::detail {

namespace {

bool unit(std::int64_t stride, std::int64_t size) { return stride == 1 || size == 1; }

// How one input of a rows x cols block maps onto the TPP's layouts; nullopt if none fits.
struct InputLayout {
  tpp::Broadcast bcast = tpp::Broadcast::none;
  std::int64_t ld = 0;
};
std::optional<InputLayout> input_layout(std::int64_t row_stride, std::int64_t col_stride,
                                        std::int64_t rows, std::int64_t cols) {
  const bool rows_fixed = row_stride == 0 || rows == 1;
  const bool cols_fixed = col_stride == 0 || cols == 1;
  if (rows_fixed && cols_fixed && (rows > 1 || cols > 1)) return InputLayout{tpp::Broadcast::scalar, 0};
  if (unit(row_stride, rows) && rows > 1 && cols_fixed && cols > 1)
    return InputLayout{tpp::Broadcast::col, 0};
  if (rows_fixed && rows > 1 && unit(col_stride, cols)) return InputLayout{tpp::Broadcast::row, 0};
  if (unit(row_stride, rows))
    return InputLayout{tpp::Broadcast::none, cols == 1 ? std::max(col_stride, rows) : col_stride};
  return std::nullopt;
}

class TppBinaryKernel final : public MainKernel {
 public:
  explicit TppBinaryKernel(const tpp::BinaryDesc& d) : binary_(d), fn_(binary_.kernel()) {}
  void run(const void* in0, const void* in1, void* out, bool, bool) const noexcept override {
    const tpp::BinaryArgs args{.in0 = in0, .in1 = in1, .out = out};
    if (fn_) {
      fn_(&args);
    } else {
      binary_(args);
    }
  }
  std::string describe() const override { return tpp::to_string(binary_.desc()); }

 private:
  tpp::Binary binary_;
  tpp::BinaryKernelFn fn_;
};

// In double, rounded once to T (float or double, the dtype): every binary op is then correctly
// rounded in T.
template <class T>
class PortableBinaryKernel final : public MainKernel {
 public:
  PortableBinaryKernel(prim_t op, Block2d b) : op_(op), b_(b) {}
  void run(const void* in0_data, const void* in1_data, void* out_data, bool, bool) const noexcept override {
    const T* in0 = static_cast<const T*>(in0_data);
    const T* in1 = static_cast<const T*>(in1_data);
    T* out = static_cast<T*>(out_data);
    for (std::int64_t j = 0; j < b_.cols; ++j)
      for (std::int64_t i = 0; i < b_.rows; ++i)
        out[i * b_.out_row + j * b_.out_col] = static_cast<T>(
            binary_value(op_, in0[i * b_.in0_row + j * b_.in0_col], in1[i * b_.in1_row + j * b_.in1_col]));
  }
  std::string describe() const override { return "portable " + to_string(op_); }

 private:
  prim_t op_;
  Block2d b_;
};

}  // namespace

std::unique_ptr<MainKernel> make_binary_kernel(const Contraction& op, const std::vector<std::size_t>& block,
                                              const ValidationOptions& options) {
  const Block2d b = make_block(op, block);
  const auto a = input_layout(b.in0_row, b.in0_col, b.rows, b.cols);
  const auto c = input_layout(b.in1_row, b.in1_col, b.rows, b.cols);
  if (unit(b.out_row, b.rows) && distinct_output_columns(b) && a && c) {
    tpp::BinaryDesc d;
    d.op = binary_tpp_op(op.main);
    d.m = b.rows;
    d.n = b.cols;
    d.bcast0 = a->bcast;
    d.bcast1 = c->bcast;
    d.ld_in0 = a->bcast == tpp::Broadcast::none ? a->ld : b.rows;
    d.ld_in1 = c->bcast == tpp::Broadcast::none ? c->ld : b.rows;
    d.ld_out = b.cols == 1 ? std::max(b.out_col, b.rows) : b.out_col;
    d.types = tpp_types(op.dtype);
    try {
      return std::make_unique<TppBinaryKernel>(d);
    } catch (const weft::Error& ex) {
      throw ConfigError(error_t::err_invalid_main_configuration,
                        "the binary primitive " + to_string(op.main) + " rejects the prim dims: " +
                            ex.what());
    }
  }
  if (!options.allow_generic_primitives)
    throw ConfigError(error_t::err_invalid_strides,
                      to_string(op.main) + " needs a prim dimension with stride 1 in out and in "
                                           "each input that is not broadcast (stride 0)" +
                          (block.empty() ? std::string()
                                         : "; prim " + name_dimension(op, block[0]) + " has strides (" +
                                               std::to_string(b.in0_row) + ", " +
                                               std::to_string(b.in1_row) + ", " +
                                               std::to_string(b.out_row) + ")") +
                          repeated_output_columns_note(b));
  if (op.dtype == dtype_t::fp64) return std::make_unique<PortableBinaryKernel<double>>(op.main, b);
  return std::make_unique<PortableBinaryKernel<float>>(op.main, b);
}

}  // namespace weft::tensor::detail
