// SPDX-License-Identifier: MIT
#include "src/timeline/op_range_text.hpp"

#include <cstdlib>
#include <sstream>

namespace commprof {
namespace {

std::string clean(const std::string& value) {
  std::string out = value.empty() ? std::string("_") : value;
  for (char& c : out) {
    if (c == ' ' || c == '[' || c == ']' || c == '=') c = '_';
  }
  return out;
}

bool parse_u64(const std::string& s, std::uint64_t& out) {
  if (s.empty() || s.size() > 20) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  char* end = nullptr;
  out = std::strtoull(s.c_str(), &end, 10);
  return *end == '\0';
}

}  // namespace

std::string format_op_range_text(const std::string& name, const OpRangeTag& tag) {
  std::string s = name;
  s += " [coll=";
  s += clean(tag.collective);
  s += " comm=";
  s += clean(tag.comm);
  s += " size=";
  s += std::to_string(tag.comm_size);
  s += " bytes=";
  s += std::to_string(tag.bytes);
  s += ']';
  return s;
}

ParsedOpRangeText parse_op_range_text(const std::string& text) {
  ParsedOpRangeText out;
  out.name = text;
  const std::size_t open = text.rfind(" [");
  if (open == std::string::npos || text.empty() || text.back() != ']') return out;
  std::istringstream fields(text.substr(open + 2, text.size() - open - 3));
  OpRangeTag tag;
  bool coll = false, comm = false, size = false, bytes = false;
  std::string field;
  while (fields >> field) {
    const std::size_t eq = field.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == field.size()) return out;
    const std::string key = field.substr(0, eq);
    const std::string value = field.substr(eq + 1);
    std::uint64_t n = 0;
    if (key == "coll") {
      tag.collective = value;
      coll = true;
    } else if (key == "comm") {
      tag.comm = value;
      comm = true;
    } else if (key == "size") {
      if (!parse_u64(value, n) || n == 0 || n > 1u << 30) return out;
      tag.comm_size = static_cast<int>(n);
      size = true;
    } else if (key == "bytes") {
      if (!parse_u64(value, n)) return out;
      tag.bytes = n;
      bytes = true;
    }
  }
  if (!(coll && comm && size && bytes)) return out;
  out.name = text.substr(0, open);
  out.tag = std::move(tag);
  return out;
}

}  // namespace commprof
