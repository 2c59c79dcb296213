// SPDX-License-Identifier: MIT
#include "src/timeline/json_object.hpp"

#include <nlohmann/json.hpp>

#include "src/core/errors.hpp"

namespace commprof {

using nlohmann::ordered_json;

JsonObject::JsonObject() = default;

JsonObject::JsonObject(ordered_json value)
    : value_(std::make_unique<ordered_json>(std::move(value))) {
  if (!value_->is_object()) throw Error("not a JSON object: " + value_->dump());
}

JsonObject JsonObject::parse(std::string_view text) {
  ordered_json value;
  try {
    value = ordered_json::parse(text.begin(), text.end());
  } catch (const ordered_json::exception& e) {
    throw Error(std::string("not valid JSON: ") + e.what());
  }
  if (!value.is_object()) throw Error("not a JSON object");
  return JsonObject(std::move(value));
}

JsonObject::JsonObject(const JsonObject& other)
    : value_(other.value_ ? std::make_unique<ordered_json>(*other.value_) : nullptr) {}

JsonObject::JsonObject(JsonObject&& other) noexcept : value_(std::move(other.value_)) {}

JsonObject& JsonObject::operator=(const JsonObject& other) {
  if (this != &other)
    value_ = other.value_ ? std::make_unique<ordered_json>(*other.value_) : nullptr;
  return *this;
}

JsonObject& JsonObject::operator=(JsonObject&& other) noexcept {
  value_ = std::move(other.value_);
  return *this;
}

JsonObject::~JsonObject() = default;

const ordered_json& JsonObject::json() const {
  static const ordered_json empty = ordered_json::object();
  return value_ ? *value_ : empty;
}

// Bytes that are not UTF-8 (a file name imported as is) become U+FFFD rather than an exception.
std::string JsonObject::dump() const {
  return json().dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

bool operator==(const JsonObject& a, const JsonObject& b) { return a.json() == b.json(); }

}  // namespace commprof
