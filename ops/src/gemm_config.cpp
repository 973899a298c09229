#include <weft/ops/gemm.hpp>

#include <type_traits>

#include <weft/ops/best_gemm_config.hpp>

namespace weft::ops {

template <class Config>
Config gemm_config(const GemmDesc& desc) {
  Config c;
  c.M = desc.M;
  c.N = desc.N;
  c.K = desc.K;
  c.dtype = desc.dtype;
  if constexpr (std::is_same_v<Config, GemmFwdConfig>) {
    c.n_layers = desc.layers;
    c.fuse_bias = desc.bias;
    c.fuse_relu = desc.relu;
  }
  return c;
}

template <class Config>
Config tuned_gemm_config(const GemmDesc& desc, int threads) {
  return best_gemm_config(gemm_config<Config>(desc), threads).config;
}

template <class Config>
Config default_gemm_config(const GemmDesc& desc, int threads) {
  if constexpr (std::is_same_v<Config, GemmFwdConfig>) {
    return heuristic_gemm_config(gemm_config<Config>(desc), threads);
  } else {
    return gemm_config<Config>(desc);
  }
}

template GemmFwdConfig gemm_config(const GemmDesc&);
template GemmBwdConfig gemm_config(const GemmDesc&);
template GemmUpdConfig gemm_config(const GemmDesc&);
template GemmFwdConfig tuned_gemm_config(const GemmDesc&, int);
template GemmBwdConfig tuned_gemm_config(const GemmDesc&, int);
template GemmUpdConfig tuned_gemm_config(const GemmDesc&, int);
template GemmFwdConfig default_gemm_config(const GemmDesc&, int);
template GemmBwdConfig default_gemm_config(const GemmDesc&, int);
template GemmUpdConfig default_gemm_config(const GemmDesc&, int);

}  // namespace weft::ops
