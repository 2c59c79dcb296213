// SPDX-License-Identifier: MIT
// The routing file of `--routing file:PATH`: one line per layer, "layer <l>: <count> <count> ...",
// the layers in order from 0, every layer with the same number of experts; '#' starts a comment.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "collectives/routing.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

bool parse_count(const std::string& text, std::uint64_t& out) {
  if (text.empty() || text.size() > 19) return false;  // 19 digits always fit 64 bits
  out = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return true;
}

}  // namespace

RoutingTable parse_routing_table(std::istream& in, const std::string& name) {
  RoutingTable table;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = name + ":" + std::to_string(number) + ": ";
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string word;
    if (!(words >> word)) continue;  // blank or a comment
    std::string label;
    if (word != "layer" || !(words >> label) || label.size() < 2 || label.back() != ':') {
      throw ConfigError(where + "expected 'layer <n>: <count> <count> ...', got '" + line + "'");
    }
    std::uint64_t layer = 0;
    if (!parse_count(label.substr(0, label.size() - 1), layer)) {
      throw ConfigError(where + "'" + label.substr(0, label.size() - 1) +
                        "' is not a layer number");
    }
    if (layer != table.layers.size()) {
      throw ConfigError(where + "layer " + std::to_string(layer) + " where layer " +
                        std::to_string(table.layers.size()) +
                        " was expected (layers are listed 0, 1, 2, ... in order)");
    }
    std::vector<std::uint64_t> counts;
    std::uint64_t sum = 0;
    while (words >> word) {
      std::uint64_t count = 0;
      if (!parse_count(word, count)) {
        throw ConfigError(where + "'" + word + "' is not a token count (an integer >= 0)");
      }
      if (sum + count < sum) throw ConfigError(where + "the counts overflow 64 bits");
      counts.push_back(count);
      sum += count;
    }
    if (counts.empty())
      throw ConfigError(where + "layer " + std::to_string(layer) + " lists no experts");
    if (!table.layers.empty() && counts.size() != table.layers.front().size()) {
      throw ConfigError(where + "layer " + std::to_string(layer) + " has " +
                        std::to_string(counts.size()) + " experts, layer 0 has " +
                        std::to_string(table.layers.front().size()));
    }
    if (sum == 0) {
      throw ConfigError(where + "layer " + std::to_string(layer) +
                        " routes no tokens: its shares are undefined");
    }
    table.layers.push_back(std::move(counts));
  }
  if (table.layers.empty()) throw ConfigError(name + ": no 'layer <n>: ...' line");
  return table;
}

RoutingTable read_routing_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw ConfigError("cannot read routing file '" + path + "': " + std::strerror(errno));
  }
  return parse_routing_table(in, path);
}

}  // namespace commprof
