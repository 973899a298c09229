// Tile-bound tuning: the best configuration of a workload among those with given tiles.
//
// A layer whose weight lives in one blocked layout between calls (weft.torch) runs its three passes
// with the tiles of that layout: a pass whose free best blocks the weight otherwise would read it
// through a gather per call. Such a pass asks for the best with the layer's tiles; weft-tune
// --tile-bound measures it and stores it under a key carrying the tiles (WorkloadKey::tiles), apart
// from the free search's best of the same shape.
//
//   WorkloadKey key = tile_bound_key(workload.key(2), workload.knob_choices(), {"bc", "bk"});
//   // "conv_fwd N=2 ... fp32 threads=2 tiles bc=64 bk=64"
//   has_tiles(record.config, key.tiles);   // does a (free) record's configuration use them?
#pragma once

#include <string>
#include <vector>

#include "weft/tuner/tuned_config.hpp"
#include "weft/tuner/workload_key.hpp"

namespace weft::tuner {

// `key` bound to the values every knob setting of `choices` gives the knobs `names`. Throws
// weft::Error when the choices disagree on one (a tile-bound search tries one value per tile) or
// one lacks a knob.
WorkloadKey tile_bound_key(WorkloadKey key, const std::vector<Knobs>& choices, const std::vector<std::string>& names);

// Whether `config` sets each knob of `tiles` to its value.
bool has_tiles(const TunedConfig& config, const Knobs& tiles);

// `config` with the knobs of `tiles` set (added where missing).
TunedConfig with_tiles(TunedConfig config, const Knobs& tiles);

// " bc=64 bk=64": the tiles as an error message names them.
std::string tiles_text(const Knobs& tiles);

}  // namespace weft::tuner
