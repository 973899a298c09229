#include "weft/tuner/tile_bound.hpp"

#include <optional>

#include "weft/jit/error.hpp"

namespace weft::tuner {

WorkloadKey tile_bound_key(WorkloadKey key, const std::vector<Knobs>& choices, const std::vector<std::string>& names) {
  if (choices.empty()) throw Error("a tile-bound search needs at least one knob setting");
  key.tiles.clear();
  for (const std::string& name : names) {
    std::optional<long> value;
    for (const Knobs& knobs : choices) {
      TunedConfig setting;
      setting.knobs = knobs;
      const long v = setting.knob(name, -1);
      if (v < 0) throw Error("a tile-bound search needs knob " + name + " in every setting");
      if (value && *value != v)
        throw Error("a tile-bound search tries one value per tile, but " + name + " takes " + std::to_string(*value) +
                    " and " + std::to_string(v));
      value = v;
    }
    key.tiles.emplace_back(name, *value);
  }
  return key;
}

bool has_tiles(const TunedConfig& config, const Knobs& tiles) {
  for (const auto& [name, value] : tiles)
    if (config.knob(name, -1) != value) return false;
  return true;
}

TunedConfig with_tiles(TunedConfig config, const Knobs& tiles) {
  for (const auto& [name, value] : tiles) {
    bool set = false;
    for (auto& [n, v] : config.knobs)
      if (n == name) v = value, set = true;
    if (!set) config.knobs.emplace_back(name, value);
  }
  return config;
}

std::string tiles_text(const Knobs& tiles) {
  TunedConfig config;
  config.knobs = tiles;
  return config.to_string();
}

}  // namespace weft::tuner
