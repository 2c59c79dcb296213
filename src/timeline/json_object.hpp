// SPDX-License-Identifier: MIT
// A JSON object held by value: the run's configuration in a rank file. Declared over
// nlohmann/json_fwd.hpp so that the many files that see a RankTimeline do not each compile the
// whole JSON library (about 2.5 s of CPU per file); those that build or read a configuration
// include <nlohmann/json.hpp> themselves.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace commprof {

class JsonObject {
 public:
  /// The empty object, {}.
  JsonObject();
  /// Throws Error when `value` is not an object.
  explicit JsonObject(nlohmann::ordered_json value);
  /// Parses `text`; throws Error when it is not one JSON object (and nothing after it).
  static JsonObject parse(std::string_view text);

  JsonObject(const JsonObject& other);
  JsonObject(JsonObject&& other) noexcept;
  JsonObject& operator=(const JsonObject& other);
  JsonObject& operator=(JsonObject&& other) noexcept;
  ~JsonObject();

  const nlohmann::ordered_json& json() const;
  /// The compact text, keys in the order they were added or read.
  std::string dump() const;
  /// Equal as JSON values (1 and 1.0 are equal; the order of keys matters, as in the file).
  friend bool operator==(const JsonObject& a, const JsonObject& b);

 private:
  // Null means {}: moving out leaves the empty object without allocating (moves stay noexcept,
  // so vectors of timelines move rather than copy).
  std::unique_ptr<nlohmann::ordered_json> value_;
};

}  // namespace commprof
