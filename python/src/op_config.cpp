#include "op_config.hpp"

#include <pybind11/stl.h>

#include <algorithm>

#include "buffers.hpp"

namespace weft::python {

namespace py = pybind11;

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

bool is_int(py::handle value) { return py::isinstance<py::int_>(value); }  // bool included: private_trans=True

std::vector<std::vector<long>> parse_blocks(py::handle value) {
  const auto fail = [] {
    throw_type_error("argument 'config': 'blocks' must be a list with one list of ints per loop letter a, b, ...");
  };
  if (!py::isinstance<py::sequence>(value) || py::isinstance<py::str>(value)) fail();
  std::vector<std::vector<long>> blocks;
  for (py::handle loop : value.cast<py::sequence>()) {
    if (!py::isinstance<py::sequence>(loop) || py::isinstance<py::str>(loop)) fail();
    std::vector<long>& sizes = blocks.emplace_back();
    for (py::handle size : loop.cast<py::sequence>()) {
      if (!is_int(size)) fail();
      sizes.push_back(size.cast<long>());
    }
  }
  return blocks;
}

}  // namespace

std::vector<std::string> knob_names_of(const tuner::Knobs& knobs) {
  std::vector<std::string> names;
  for (const auto& [name, value] : knobs) names.push_back(name);
  return names;
}

OpConfig parse_op_config(py::handle config, const std::vector<std::string>& knob_names,
                         const std::vector<std::string>& tile_names) {
  if (py::isinstance<py::str>(config)) {
    const std::string text = py::str(config);
    if (text == "auto") return {OpConfig::Kind::tuned, {}};
    if (text == "default") return {OpConfig::Kind::machine_default, {}};
    throw_value_error("argument 'config': '" + text + "' is none of 'auto', 'default' or a dict with a loop_string");
  }
  if (!py::isinstance<py::dict>(config)) {
    throw_type_error("argument 'config' must be 'auto', 'default' or a dict (loop_string, knobs, blocks), not " +
                     std::string(py::str(py::type::of(config).attr("__name__"))));
  }
  OpConfig parsed{OpConfig::Kind::explicit_config, {}};
  bool has_loop_string = false;
  for (auto [key_object, value] : config.cast<py::dict>()) {
    const std::string key = py::str(key_object);
    if (key == "loop_string") {
      if (!py::isinstance<py::str>(value)) throw_type_error("argument 'config': 'loop_string' must be a string");
      parsed.explicit_config.loop_string = py::str(value);
      has_loop_string = true;
    } else if (key == "blocks") {
      parsed.explicit_config.blocks = parse_blocks(value);
    } else if (std::find(knob_names.begin(), knob_names.end(), key) != knob_names.end()) {
      if (!is_int(value)) throw_type_error("argument 'config': knob '" + key + "' must be an int");
      parsed.explicit_config.knobs.emplace_back(key, value.cast<long>());
    } else {
      throw_value_error("argument 'config': unknown key '" + key + "'; this operator takes loop_string, blocks, " +
                        joined(knob_names));
    }
  }
  if (has_loop_string) return parsed;
  // Tiles only: the tuned choice bound to them.
  for (const auto& [name, value] : parsed.explicit_config.knobs) {
    if (std::find(tile_names.begin(), tile_names.end(), name) == tile_names.end())
      throw_value_error("argument 'config': a dict without 'loop_string' holds tiles only (" + joined(tile_names) +
                        ": the best configuration with them), not '" + name + "'");
    if (value < 1) throw_value_error("argument 'config': tile '" + name + "' must be positive, got " + std::to_string(value));
  }
  if (!parsed.explicit_config.blocks.empty())
    throw_value_error("argument 'config': a dict without 'loop_string' holds tiles only (" + joined(tile_names) +
                      "), not 'blocks'");
  if (parsed.explicit_config.knobs.empty())
    throw_value_error("argument 'config': a dict needs a 'loop_string', or tiles (" + joined(tile_names) + ") alone");
  return {OpConfig::Kind::tuned, {}, parsed.explicit_config.knobs};
}

std::string source_name(const OpConfig& request, tuner::ConfigSource found) {
  if (request.kind == OpConfig::Kind::explicit_config) return "explicit";
  if (found == tuner::ConfigSource::heuristic) return "default";
  return "tuned (" + std::string(tuner::to_string(found)) + ")";
}

py::dict config_dict(const tuner::TunedConfig& config) {
  py::dict d;
  d["loop_string"] = config.loop_string;
  for (const auto& [name, value] : config.knobs) d[py::str(name)] = value;
  d["blocks"] = config.blocks;
  return d;
}

}  // namespace weft::python
