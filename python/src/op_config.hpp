// The `config=` argument of weft.ops' operators, and the configuration weft.tune returns: "auto"
// (the tuning database, else the machine's default), "default" (the machine's untuned default),
// or a dict in the tuner's terms (tuner::TunedConfig, what weft-tune stores):
//
//   {"loop_string": "aCB", "bm": 64, "bn": 32, "bk": 64, "kbf": 2, "blocks": [[], [], [4]]}
//
// The knobs are the pass's (GEMM: bm bn bk and its chunks kbf / mbf / nbf, the backward passes'
// private_trans; convolution: bc bk and the pass's knobs); a knob left out keeps the operator's
// default; "blocks" gives the outer occurrences' block sizes per loop letter a, b, ... (empty:
// PARLOOPER's rule). A dict without loop_string holds tiles only (GEMM bm bn bk, convolution bc
// bk): "auto" bound to them (the best tuned configuration with these tiles, else the untuned one
// with them: ops::best_gemm_config / best_conv_config with tiles), as weft.torch asks for its
// layers' weight layouts:
//
//   {"bc": 64, "bk": 64}
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <utility>
#include <vector>

#include "prepared_op.hpp"
#include "weft/tuner/tuned_config.hpp"
#include "weft/tuner/tuned_lookup.hpp"

namespace weft::python {

struct OpConfig {
  enum class Kind { explicit_config, tuned, machine_default };
  Kind kind = Kind::tuned;
  tuner::TunedConfig explicit_config = {};  // with Kind::explicit_config
  tuner::Knobs tiles = {};  // with Kind::tuned: empty, or the tiles it is bound to
};

// TypeError / ValueError naming 'config' (and the key) for anything else than the above; a knob
// not in `knob_names` is refused with the list of those taken, a dict without loop_string holding
// another key than `tile_names` with those.
OpConfig parse_op_config(pybind11::handle config, const std::vector<std::string>& knob_names,
                         const std::vector<std::string>& tile_names);

// The dict form of a tuned configuration (what parse_op_config takes back).
pybind11::dict config_dict(const tuner::TunedConfig& config);

// The knob names of a configuration, in order.
std::vector<std::string> knob_names_of(const tuner::Knobs& knobs);

// What PreparedOp::source() says: "explicit", "default" (asked for, or "auto" without a record),
// "tuned (exact hit)" or "tuned (nearest tuned shape)".
std::string source_name(const OpConfig& request, tuner::ConfigSource found);

// A pass's configuration as `request` asks: explicit (from_tuned(request's TunedConfig), keeping
// what the descriptor says: keep_descriptor(config, described)), tuned (lookup()) or the machine's
// default (machine_default()); with its origin for PreparedOp: the lookup's own description of
// its choice, or an explicit configuration in the tuner's one-line form (it was looked up nowhere).
template <class Config, class FromTuned, class KeepDescriptor, class Lookup, class MachineDefault>
std::pair<Config, ConfigOrigin> choose_config(const OpConfig& request, const Config& described, FromTuned from_tuned,
                                              KeepDescriptor keep_descriptor, Lookup lookup,
                                              MachineDefault machine_default) {
  if (request.kind == OpConfig::Kind::explicit_config) {
    Config config = from_tuned(request.explicit_config);
    config.dtype = described.dtype;
    keep_descriptor(config, described);
    return {config, {source_name(request, tuner::ConfigSource::heuristic), request.explicit_config.to_string()}};
  }
  const tuner::TunedChoice<Config> choice =
      request.kind == OpConfig::Kind::tuned
          ? lookup()
          : tuner::TunedChoice<Config>{machine_default(), tuner::ConfigSource::heuristic, "the machine's default"};
  return {choice.config, {source_name(request, choice.source), choice.describe()}};
}

}  // namespace weft::python
