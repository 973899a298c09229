#include "best_gemm_config.hpp"

#include <algorithm>
#include <optional>

#include <weft/jit/error.hpp>

#include "gemm_defaults.hpp"
#include "gemm_workload.hpp"

namespace weft::tuner {
namespace {

// The problem's shape and epilogue with a tuned configuration; nullopt when GemmFwd rejects it.
std::optional<samples::GemmFwdConfig> apply(const samples::GemmFwdConfig& problem, const TunedConfig& tuned) {
  samples::GemmFwdConfig c = to_gemm_config(tuned, {problem.M, problem.N, problem.K});
  c.n_layers = problem.n_layers;
  c.fuse_bias = problem.fuse_bias;
  c.fuse_relu = problem.fuse_relu;
  if (c.n_layers > 1) c.bk = c.bm;  // an MLP feeds outputs back as inputs
  try {
    samples::GemmFwd validate(c);
    return c;
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

std::string_view to_string(ConfigSource source) {
  switch (source) {
    case ConfigSource::exact: return "exact hit";
    case ConfigSource::nearest: return "nearest tuned shape";
    case ConfigSource::heuristic: return "heuristic";
  }
  return "?";
}

std::string GemmChoice::describe() const {
  return std::string(to_string(source)) + ": " + config.loop_string + " bm=" + std::to_string(config.bm) +
         " bn=" + std::to_string(config.bn) + " bk=" + std::to_string(config.bk) +
         " kbf=" + std::to_string(config.kbf) + " (" + detail + ")";
}

samples::GemmFwdConfig heuristic_gemm_config(const samples::GemmFwdConfig& problem, int threads) {
  samples::GemmFwdConfig c = samples::recommended_gemm_config(problem, threads);
  try {
    samples::GemmFwd validate(c);
  } catch (const Error&) {
    c = problem;  // the sample's defaults
    const samples::GemmFwdConfig defaults;
    c.loop_string = defaults.loop_string;
    c.bm = c.bn = c.bk = 32;
    c.kbf = 1;
    c.k_blocks.clear();
    c.m_blocks.clear();
    c.n_blocks.clear();
  }
  return c;
}

GemmChoice best_gemm_config(const samples::GemmFwdConfig& problem, int threads, const TuningDatabase& database) {
  GemmChoice choice;
  choice.config = heuristic_gemm_config(problem, threads);
  const GemmShape shape{problem.M, problem.N, problem.K};
  TuningDatabase::Lookup hit;
  try {
    hit = database.lookup(gemm_key(shape, threads), MachineFingerprint::current());
  } catch (const Error& e) {
    choice.detail = std::string("database unreadable: ") + e.what();
    return choice;
  }
  if (hit.match == TuningDatabase::Match::none) {
    choice.detail = "no record for this machine and " + std::to_string(threads) + " threads in " +
                    database.path().string();
    return choice;
  }
  TunedConfig tuned = hit.record->config;
  auto config = apply(problem, tuned);
  if (!config && hit.match == TuningDatabase::Match::nearest) {
    tuned.blocks.clear();  // block lists of another shape may not fit this one
    config = apply(problem, tuned);
  }
  if (!config) {
    choice.detail = "the database's record does not fit this problem: " + hit.record->config.to_string();
    return choice;
  }
  choice.config = *config;
  choice.source = hit.match == TuningDatabase::Match::exact ? ConfigSource::exact : ConfigSource::nearest;
  choice.detail = database.path().string() + ": " + hit.record->key.to_string() + ", " +
                  std::to_string(static_cast<int>(hit.record->gflops)) + " GFLOPS when tuned";
  return choice;
}

}  // namespace weft::tuner
