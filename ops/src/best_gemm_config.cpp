#include <weft/ops/best_gemm_config.hpp>

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <weft/jit/error.hpp>
#include <weft/ops/element_type.hpp>
#include <weft/ops/gemm.hpp>
#include <weft/ops/gemm_defaults.hpp>
#include <weft/ops/gemm_workload.hpp>
#include <weft/tuner/tile_bound.hpp>

namespace weft::ops {
namespace {

template <class Config>
constexpr GemmPassKind pass_of() {
  if constexpr (std::is_same_v<Config, GemmFwdConfig>) return GemmPassKind::fwd;
  else if constexpr (std::is_same_v<Config, GemmBwdConfig>) return GemmPassKind::bwd;
  else return GemmPassKind::upd;
}

template <class Config>
using PassOf = std::conditional_t<std::is_same_v<Config, GemmFwdConfig>, GemmFwd,
                                  std::conditional_t<std::is_same_v<Config, GemmBwdConfig>,
                                                     GemmBwd, GemmUpd>>;

GemmShape shape_of(const GemmLoops& problem, int layers) { return {problem.M, problem.N, problem.K, layers}; }

int layers_of(const GemmFwdConfig& problem) { return problem.n_layers; }
int layers_of(const GemmLoops&) { return 1; }

// `c` if its pass takes it (the pass's check(), which generates no code), else nullopt.
template <class Config>
std::optional<Config> checked(const Config& c) {
  try {
    PassOf<Config>::check(c);
    return c;
  } catch (const Error&) {
    return std::nullopt;
  }
}

// The problem with a tuned configuration; nullopt when the sample rejects it.
template <class Config>
std::optional<Config> apply(const Config& problem, const tuner::TunedConfig& tuned, int threads) {
  Config c = to_gemm_pass_config<Config>(tuned, shape_of(problem, layers_of(problem)), threads);
  c.dtype = problem.dtype;  // a record of another precision is validated in this one's (bf16: even tiles)
  if constexpr (std::is_same_v<Config, GemmFwdConfig>) {
    c.fuse_bias = problem.fuse_bias;
    c.fuse_relu = problem.fuse_relu;
    if (c.n_layers > 1) c.bk = c.bm;  // an MLP feeds outputs back as inputs (a single layer's record)
  }
  return checked(c);
}

// The plain loops (gemm_config) for what the problem computes.
template <class Config>
Config default_config(const Config& problem) {
  GemmDesc desc{.M = problem.M, .N = problem.N, .K = problem.K, .dtype = problem.dtype};
  if constexpr (std::is_same_v<Config, GemmFwdConfig>) {
    desc.layers = problem.n_layers;
    desc.bias = problem.fuse_bias;
    desc.relu = problem.fuse_relu;
  }
  return gemm_config<Config>(desc);
}

// The keys of the problem's pass and shape in `dtype`: an MLP's own, then a single layer's; with
// tiles, each bound to them before all the free ones.
template <class Config>
std::vector<tuner::WorkloadKey> keys_of(const Config& problem, int threads, jit::DataType dtype,
                                        const tuner::Knobs& tiles) {
  const int layers = layers_of(problem);
  std::vector<tuner::WorkloadKey> keys{gemm_key(pass_of<Config>(), shape_of(problem, layers), threads, dtype)};
  if (layers > 1) keys.push_back(gemm_key(pass_of<Config>(), shape_of(problem, 1), threads, dtype));
  if (tiles.empty()) return keys;
  std::vector<tuner::WorkloadKey> bound = keys;
  for (tuner::WorkloadKey& key : bound) key.tiles = tiles;
  bound.insert(bound.end(), keys.begin(), keys.end());
  return bound;
}

// `c` with the tiles set, if its pass takes them.
template <class Config>
std::optional<Config> with_tiles(Config c, const tuner::Knobs& tiles) {
  for (const auto& [name, value] : tiles) {
    if (name == "bm") c.bm = value;
    else if (name == "bn") c.bn = value;
    else if (name == "bk") c.bk = value;
    else throw Error("a GEMM's tiles are bm, bn and bk, not " + name);
  }
  return checked(c);
}

template <class Config>
GemmPassChoice<Config> best_config(const Config& problem, Config heuristic, int threads, const tuner::Knobs& tiles,
                                   const tuner::TuningDatabase& database) {
  const auto fits = [&](const tuner::TunedConfig& c) {
    return tuner::has_tiles(c, tiles) && apply(problem, c, threads).has_value();
  };
  tuner::TunedLookup found = find_tuned_config(database, keys_of(problem, threads, problem.dtype, tiles), fits);
  // bf16 without a bf16 record that fits: the FP32 record's loops and tiles, where bf16 takes them.
  // Not f64: FP32's tiles hold twice the rows of registers in f64, and the f64 heuristic (half of
  // FP32's rows) is the better guess.
  if (!found.config && problem.dtype == jit::DataType::bf16) {
    tuner::TunedLookup fp32 = find_tuned_config(database, keys_of(problem, threads, jit::DataType::f32, tiles), fits);
    const std::string name = precision_name(problem.dtype);
    if (fp32.config) {
      fp32.detail = "no " + name + " record fits; the FP32 one, run in " + name + ": " + fp32.detail;
      found = std::move(fp32);
    } else if (fp32.detail != found.detail) {
      found.detail += "; FP32: " + fp32.detail;
    }
  }
  GemmPassChoice<Config> choice{std::move(heuristic), found.source, found.detail};
  if (found.config) {
    choice.config = *apply(problem, *found.config, threads);
  } else if (!tiles.empty()) {
    std::optional<Config> untuned = with_tiles(choice.config, tiles);
    if (!untuned) untuned = with_tiles(default_config(problem), tiles);
    if (!untuned) {
      throw Error("the GEMM's " + std::string(to_string(pass_of<Config>())) + " pass takes no configuration with" +
                  tuner::tiles_text(tiles) + " for M=" + std::to_string(problem.M) + " N=" + std::to_string(problem.N) +
                  " K=" + std::to_string(problem.K));
    }
    choice.config = *untuned;
  }
  return choice;
}

std::string extra_knobs(const GemmFwdConfig& c) { return " kbf=" + std::to_string(c.kbf); }
std::string extra_knobs(const GemmBwdConfig& c) {
  return " mbf=" + std::to_string(c.mbf) + " private_trans=" + std::to_string(c.private_trans ? 1 : 0);
}
std::string extra_knobs(const GemmUpdConfig& c) {
  return " nbf=" + std::to_string(c.nbf) + " private_trans=" + std::to_string(c.private_trans ? 1 : 0) +
         " n_partial_filters=" + std::to_string(c.n_partial_filters);
}

// "<source>: <loop_string> <tiles> <the pass's knobs> (<detail>)"
template <class Config>
std::string describe_choice(const tuner::TunedChoice<Config>& choice) {
  const Config& config = choice.config;
  return std::string(to_string(choice.source)) + ": " + config.loop_string + " bm=" + std::to_string(config.bm) +
         " bn=" + std::to_string(config.bn) + " bk=" + std::to_string(config.bk) + extra_knobs(config) + " (" +
         choice.detail + ")";
}

}  // namespace

GemmFwdConfig heuristic_gemm_config(const GemmFwdConfig& problem, int threads) {
  GemmFwdConfig c = recommended_gemm_config(problem, threads);
  try {
    GemmFwd::check(c);
  } catch (const Error&) {
    c = default_config(problem);
  }
  return c;
}

GemmChoice best_gemm_config(const GemmFwdConfig& problem, int threads, const tuner::TuningDatabase& database) {
  return best_gemm_config(problem, threads, {}, database);
}
GemmChoice best_gemm_config(const GemmFwdConfig& problem, int threads, const tuner::Knobs& tiles,
                            const tuner::TuningDatabase& database) {
  return best_config(problem, heuristic_gemm_config(problem, threads), threads, tiles, database);
}

GemmBwdChoice best_gemm_config(const GemmBwdConfig& problem, int threads, const tuner::TuningDatabase& database) {
  return best_gemm_config(problem, threads, {}, database);
}
GemmBwdChoice best_gemm_config(const GemmBwdConfig& problem, int threads, const tuner::Knobs& tiles,
                               const tuner::TuningDatabase& database) {
  return best_config(problem, default_config(problem), threads, tiles, database);
}

GemmUpdChoice best_gemm_config(const GemmUpdConfig& problem, int threads, const tuner::TuningDatabase& database) {
  return best_gemm_config(problem, threads, {}, database);
}
GemmUpdChoice best_gemm_config(const GemmUpdConfig& problem, int threads, const tuner::Knobs& tiles,
                               const tuner::TuningDatabase& database) {
  return best_config(problem, default_config(problem), threads, tiles, database);
}

}  // namespace weft::ops

namespace weft::tuner {
template <>
std::string TunedChoice<ops::GemmFwdConfig>::describe() const {
  return ops::describe_choice(*this);
}
template <>
std::string TunedChoice<ops::GemmBwdConfig>::describe() const {
  return ops::describe_choice(*this);
}
template <>
std::string TunedChoice<ops::GemmUpdConfig>::describe() const {
  return ops::describe_choice(*this);
}
}  // namespace weft::tuner
