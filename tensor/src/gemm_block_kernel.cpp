// The gemm/brgemm main primitive: tpp::Brgemm over the prim dims, in up to four variants (beta 0/1
// for a fused zero first touch, with/without a fused ReLU epilogue for the last touch), in f32 or
// f64 (the BRGEMM TPP has both, with the same epilogues).
#include <algorithm>
#include <optional>

#include "block_kernels.hpp"
#include "prim_dims.hpp"
#include "weft/tpp/brgemm.hpp"
#include "weft/tpp/min_max_relu.hpp"

namespace weft::tensor::detail {

namespace {

class BrgemmBlockKernel final : public MainKernel {
 public:
  BrgemmBlockKernel(const tpp::BrgemmDesc& base, std::int64_t count, std::int64_t stride_a,
                    std::int64_t stride_b, bool fuse_zero, bool fuse_relu, tpp::BrgemmPrefetch prefetch)
      : count_(count), stride_a_(stride_a), stride_b_(stride_b) {
    for (int first = 0; first < 2; ++first)
      for (int last = 0; last < 2; ++last) {
        tpp::BrgemmDesc d = base;
        d.beta = fuse_zero && first ? 0 : 1;
        d.prefetch = d.beta == 1 ? prefetch : tpp::BrgemmPrefetch::none;  // beta 0 reads no C
        d.activation = fuse_relu && last ? tpp::BrgemmActivation::relu : tpp::BrgemmActivation::none;
        kernels_[first][last].emplace(d);
        fns_[first][last] = kernels_[first][last]->kernel();
      }
  }

  void run(const void* in0, const void* in1, void* out, bool first,
           bool last) const noexcept override {
    const tpp::BrgemmArgs args{.a = in0, .b = in1, .c = out, .count = count_,
                               .stride_a = stride_a_, .stride_b = stride_b_};
    if (auto fn = fns_[first][last]) {
      fn(&args);
    } else {
      (*kernels_[first][last])(args);
    }
  }

  std::string describe() const override {
    std::string s = "brgemm batch " + std::to_string(count_) + " strides (" +
                    std::to_string(stride_a_) + ", " + std::to_string(stride_b_) + "):";
    for (const auto& row : kernels_)
      for (const auto& k : row) s += "\n    " + tpp::to_string(k->desc());
    return s;
  }

 private:
  std::optional<tpp::Brgemm> kernels_[2][2];
  tpp::BrgemmKernelFn fns_[2][2] = {};
  std::int64_t count_, stride_a_, stride_b_;
};

// Any strides: C(m, n) += sum_br sum_k A(m, k) * B(k, n), m innermost so unit strides vectorize;
// in T (float or double, the operation's dtype), products and sums rounded to T.
struct StridedGemmShape {
  std::int64_t m, n, k, count;
  std::int64_t a_m, a_k, a_br, b_k, b_n, b_br, c_m, c_n;
};

template <class T>
class StridedGemmKernel final : public MainKernel {
 public:
  StridedGemmKernel(StridedGemmShape s, bool fuse_zero, bool fuse_relu)
      : s_(s), fuse_zero_(fuse_zero), fuse_relu_(fuse_relu) {}

  void run(const void* in0, const void* in1, void* out, bool first, bool last) const noexcept override {
    const T* a = static_cast<const T*>(in0);
    const T* b = static_cast<const T*>(in1);
    T* c = static_cast<T*>(out);
    if (fuse_zero_ && first)
      for (std::int64_t j = 0; j < s_.n; ++j)
        for (std::int64_t i = 0; i < s_.m; ++i) c[i * s_.c_m + j * s_.c_n] = T(0);
    for (std::int64_t r = 0; r < s_.count; ++r)
      for (std::int64_t j = 0; j < s_.n; ++j)
        for (std::int64_t p = 0; p < s_.k; ++p) {
          const T bv = b[r * s_.b_br + p * s_.b_k + j * s_.b_n];
          const T* ap = a + r * s_.a_br + p * s_.a_k;
          T* cp = c + j * s_.c_n;
          for (std::int64_t i = 0; i < s_.m; ++i) cp[i * s_.c_m] += ap[i * s_.a_m] * bv;
        }
    if (fuse_relu_ && last)
      for (std::int64_t j = 0; j < s_.n; ++j)
        for (std::int64_t i = 0; i < s_.m; ++i) {
          T& v = c[i * s_.c_m + j * s_.c_n];
          v = tpp::relu(v);
        }
  }

  std::string describe() const override {
    return "portable strided gemm m" + std::to_string(s_.m) + " n" + std::to_string(s_.n) + " k" +
           std::to_string(s_.k) + " batch " + std::to_string(s_.count) +
           (sizeof(T) == sizeof(double) ? " (fp64)" : "");
  }

 private:
  StridedGemmShape s_;
  bool fuse_zero_, fuse_relu_;
};

}  // namespace

tpp::DataTypes tpp_types(dtype_t dtype) {
  const jit::DataType t = dtype == dtype_t::fp64 ? jit::DataType::f64 : jit::DataType::f32;
  return {.in = t, .out = t, .compute = t};
}

std::int64_t brgemm_lda(const Contraction& op, const GemmRoles& g) {
  const Dim& k = op.dims[g.k];
  return k.size == 1 ? std::max(k.stride_in0, op.dims[g.m].size) : k.stride_in0;
}

std::unique_ptr<MainKernel> make_gemm_kernel(const Contraction& op, const GemmRoles& g,
                                             const ValidationOptions& options, bool fuse_zero,
                                             bool fuse_relu, tpp::BrgemmPrefetch prefetch) {
  const Dim& m = op.dims[g.m];
  const Dim& n = op.dims[g.n];
  const Dim& k = op.dims[g.k];
  const Dim one{};  // size 1, strides 0: "no batch-reduce dim"
  const Dim& br = g.br == kNoDim ? one : op.dims[g.br];
  if (!fits_brgemm(op, g)) {
    if (!options.allow_generic_primitives)
      throw ConfigError(error_t::err_invalid_strides, "the prim dims do not fit the BRGEMM layout");
    const StridedGemmShape shape{m.size,        n.size,        k.size,         br.size,
                                 m.stride_in0,  k.stride_in0,  br.stride_in0,  k.stride_in1,
                                 n.stride_in1,  br.stride_in1, m.stride_out,   n.stride_out};
    if (op.dtype == dtype_t::fp64)
      return std::make_unique<StridedGemmKernel<double>>(shape, fuse_zero, fuse_relu);
    return std::make_unique<StridedGemmKernel<float>>(shape, fuse_zero, fuse_relu);
  }
  // A leading dimension of a size-1 dim is never used to step; make it one the TPP accepts.
  tpp::BrgemmDesc d;
  d.m = static_cast<std::int32_t>(m.size);
  d.n = static_cast<std::int32_t>(n.size);
  d.k = static_cast<std::int32_t>(k.size);
  d.lda = brgemm_lda(op, g);
  d.ldb = n.size == 1 ? std::max(n.stride_in1, k.size) : n.stride_in1;
  d.ldc = n.size == 1 ? std::max(n.stride_out, m.size) : n.stride_out;
  d.types = tpp_types(op.dtype);
  try {
    return std::make_unique<BrgemmBlockKernel>(d, br.size, br.stride_in0, br.stride_in1, fuse_zero,
                                               fuse_relu, prefetch);
  } catch (const ConfigError&) {
    throw;
  } catch (const weft::Error& e) {
    throw ConfigError(error_t::err_invalid_main_configuration,
                      "the BRGEMM primitive rejects the prim dims m = " + name_dimension(op, g.m) +
                          ", n = " + name_dimension(op, g.n) + ", k = " + name_dimension(op, g.k) +
                          ": " + e.what());
  }
}

}  // namespace weft::tensor::detail
