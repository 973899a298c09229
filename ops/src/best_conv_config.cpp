#include <weft/ops/best_conv_config.hpp>

#include <optional>
#include <type_traits>
#include <vector>

#include <weft/jit/error.hpp>
#include <weft/ops/conv_workload.hpp>
#include <weft/tuner/tile_bound.hpp>

namespace weft::ops {
namespace {

template <class Config>
constexpr ConvPassKind pass_of() {
  if constexpr (std::is_same_v<Config, ConvFwdConfig>) return ConvPassKind::fwd;
  else if constexpr (std::is_same_v<Config, ConvBwdConfig>) return ConvPassKind::bwd;
  else return ConvPassKind::upd;
}

// The problem under a tuned (or the default) configuration; nullopt when the sample rejects it.
template <class Config>
std::optional<Config> apply(const Config& problem, const tuner::TunedConfig& tuned) {
  try {
    Config c;
    if constexpr (std::is_same_v<Config, ConvFwdConfig>) c = to_conv_fwd_config(tuned, problem.shape);
    else if constexpr (std::is_same_v<Config, ConvBwdConfig>) c = to_conv_bwd_config(tuned, problem.shape);
    else c = to_conv_upd_config(tuned, problem.shape);
    // What the user asked for beyond the tuner's knobs.
    c.dtype = problem.dtype;
    if constexpr (std::is_same_v<Config, ConvFwdConfig>) {
      c.logical_padding = problem.logical_padding;
      c.input_padding_copy = problem.input_padding_copy;
      c.pad_h_in = problem.pad_h_in, c.pad_w_in = problem.pad_w_in;
      c.pad_h_out = problem.pad_h_out, c.pad_w_out = problem.pad_w_out;
      c.zero_output_rims = problem.zero_output_rims;
      c.with_bias = problem.with_bias;
      c.with_relu = problem.with_relu;
      ConvFwd::check(c);
    } else if constexpr (std::is_same_v<Config, ConvBwdConfig>) {
      ConvBwd::check(c);
    } else {
      c.use_mb_par_f32 = problem.use_mb_par_f32;
      c.pad_h_out = problem.pad_h_out, c.pad_w_out = problem.pad_w_out;
      ConvUpd::check(c);
    }
    return c;
  } catch (const Error&) {
    return std::nullopt;
  }
}

template <class Config>
ConvPassChoice<Config> best_config(const Config& problem, int threads, const tuner::Knobs& tiles,
                                   const tuner::TuningDatabase& database) {
  std::vector<tuner::WorkloadKey> keys{conv_key(pass_of<Config>(), problem.shape, threads, problem.dtype)};
  if (!tiles.empty()) {  // the tile-bound records first, then free ones with these tiles
    tuner::WorkloadKey bound = keys.front();
    bound.tiles = tiles;
    keys.insert(keys.begin(), std::move(bound));
  }
  const tuner::TunedLookup found = find_tuned_config(database, keys, [&](const tuner::TunedConfig& c) {
    return tuner::has_tiles(c, tiles) && apply(problem, c).has_value();
  });
  if (found.config) return {*apply(problem, *found.config), found.source, found.detail};
  // Untuned (forward: the machine model's choice), else the default, where the sample takes them
  // for this problem (with the tiles asked for); else the problem as given (its own checks then
  // name what is wrong).
  const ConvPassKind pass = pass_of<Config>();
  std::optional<Config> fallback =
      apply(problem, tuner::with_tiles(untuned_conv_config(pass, problem.shape, threads, problem.dtype), tiles));
  if (!fallback)
    fallback = apply(problem, tuner::with_tiles(default_conv_config(pass, problem.shape, problem.dtype), tiles));
  if (!fallback && !tiles.empty()) {
    throw Error("the convolution's " + std::string(to_string(pass)) + " pass takes no configuration with" +
                tuner::tiles_text(tiles) + " for this shape");
  }
  Config c = fallback ? *fallback : problem;
  if (!fallback) c.loop_string = default_conv_config(pass, problem.shape).loop_string;
  return {c, found.source, found.detail};
}

std::string str(std::int64_t v) { return std::to_string(v); }

std::string knobs_text(const ConvFwdConfig& c) {
  return " h_in_gemm=" + str(c.h_in_gemm) + " w_block=" + str(c.w_block) + " c_block=" + str(c.c_block) +
         " k_block=" + str(c.k_block) + " h_block=" + str(c.h_block) + " pack_input=" + str(c.pack_input);
}
std::string knobs_text(const ConvBwdConfig& c) {
  return " h_in_gemm=" + str(c.h_in_gemm) + " w_block=" + str(c.w_block) + " k_block=" + str(c.k_block) +
         " c_block=" + str(c.c_block) + " h_block=" + str(c.h_block);
}
std::string knobs_text(const ConvUpdConfig& c) { return " h_in_gemm=" + str(c.h_in_gemm); }

// "<source>: <loop_string> <tiles> <the pass's knobs> (<detail>)"
template <class Config>
std::string describe_choice(const tuner::TunedChoice<Config>& choice) {
  const Config& config = choice.config;
  return std::string(to_string(choice.source)) + ": " + config.loop_string + " bc=" + str(config.bc) +
         " bk=" + str(config.bk) + knobs_text(config) + " (" + choice.detail + ")";
}

}  // namespace

ConvFwdChoice best_conv_config(const ConvFwdConfig& problem, int threads, const tuner::TuningDatabase& database) {
  return best_config(problem, threads, {}, database);
}
ConvFwdChoice best_conv_config(const ConvFwdConfig& problem, int threads, const tuner::Knobs& tiles,
                               const tuner::TuningDatabase& database) {
  return best_config(problem, threads, tiles, database);
}
ConvBwdChoice best_conv_config(const ConvBwdConfig& problem, int threads, const tuner::TuningDatabase& database) {
  return best_config(problem, threads, {}, database);
}
ConvBwdChoice best_conv_config(const ConvBwdConfig& problem, int threads, const tuner::Knobs& tiles,
                               const tuner::TuningDatabase& database) {
  return best_config(problem, threads, tiles, database);
}
ConvUpdChoice best_conv_config(const ConvUpdConfig& problem, int threads, const tuner::TuningDatabase& database) {
  return best_config(problem, threads, {}, database);
}
ConvUpdChoice best_conv_config(const ConvUpdConfig& problem, int threads, const tuner::Knobs& tiles,
                               const tuner::TuningDatabase& database) {
  return best_config(problem, threads, tiles, database);
}

}  // namespace weft::ops

namespace weft::tuner {
template <>
std::string TunedChoice<ops::ConvFwdConfig>::describe() const {
  return ops::describe_choice(*this);
}
template <>
std::string TunedChoice<ops::ConvBwdConfig>::describe() const {
  return ops::describe_choice(*this);
}
template <>
std::string TunedChoice<ops::ConvUpdConfig>::describe() const {
  return ops::describe_choice(*this);
}
}  // namespace weft::tuner
