// SPDX-License-Identifier: MIT
// The link model's file: schema "commprof.links", version 1, one JSON object.
//   {"schema": "commprof.links", "version": 1, "source": "...",
//    "time_formula": "...",
//    "fits": [{...}], "samples": [{...}]}
// each fit and sample an object of the fields link_fields.hpp lists, which the writer and the
// parser both walk.
// busbw_gbps counts bus bytes (S × the busbw factor, as nccl-tests' busbw), 10⁹ B/s.
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <tuple>

#include "collectives/links/link_fields.hpp"
#include "collectives/links/link_model.hpp"
#include "src/core/atomic_file.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

constexpr const char* kLinksSchema = "commprof.links";
constexpr int kLinksVersion = 1;

// A member's value in the file: a link class and a collective by their names, anything else as
// it is.
template <class T>
nlohmann::ordered_json json_of(const T& v) {
  return v;
}
nlohmann::ordered_json json_of(LinkClass c) { return link_class_name(c); }
nlohmann::ordered_json json_of(CollectiveKind k) { return link_collective_name(k); }

// A value of the type asked, or ConfigError saying the key has the wrong type.
template <class T>
void read_value(const nlohmann::json& v, T& out, std::string_view key) {
  try {
    out = v.get<T>();
  } catch (const nlohmann::json::exception&) {
    throw ConfigError("\"" + std::string(key) + "\" has the wrong type (" + v.dump() + ")");
  }
}
void read_value(const nlohmann::json& v, LinkClass& out, std::string_view key) {
  std::string name;
  read_value(v, name, key);
  out = parse_link_class(name);
}
void read_value(const nlohmann::json& v, CollectiveKind& out, std::string_view key) {
  std::string name;
  read_value(v, name, key);
  out = parse_link_collective(name);
}

// `row` as an object, every field of `table` in its order.
template <class Row, class Table>
nlohmann::ordered_json row_json(const Row& row, const Table& table) {
  nlohmann::ordered_json j;
  std::apply([&](const auto&... f) { ((j[std::string(f.key)] = json_of(row.*f.member)), ...); },
             table);
  return j;
}

// A row from object `e` (`where` names it in errors): every field of `table` read and checked.
template <class Row, class Table>
Row row_of(const nlohmann::json& e, const Table& table, const std::string& where) {
  if (!e.is_object()) throw ConfigError(where + ": not an object");
  Row row;
  auto read = [&](const auto& f) {
    const auto it = e.find(std::string(f.key));
    if (it == e.end()) {
      if (f.required) throw ConfigError(where + ": no \"" + std::string(f.key) + "\"");
      return;  // the member's default
    }
    try {
      read_value(*it, row.*f.member, f.key);
      if (f.check != nullptr) f.check(row.*f.member);
    } catch (const ConfigError& bad) {
      throw ConfigError(where + ": " + bad.what());
    }
  };
  std::apply([&](const auto&... f) { (read(f), ...); }, table);
  return row;
}

// A member of the file's top object, of the type asked, or ConfigError naming the file.
template <class T>
T top_field(const nlohmann::json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end()) throw ConfigError(where + ": no \"" + key + "\"");
  T out;
  try {
    read_value(*it, out, key);
  } catch (const ConfigError& bad) {
    throw ConfigError(where + ": " + bad.what());
  }
  return out;
}

}  // namespace

std::string link_model_text(const LinkModel& m) {
  nlohmann::ordered_json j;
  j["schema"] = kLinksSchema;
  j["version"] = kLinksVersion;
  j["source"] = m.source;
  j["time_formula"] =
      "time_us = latency_us * steps(n) + bytes * busbw_factor(n) / (busbw_gbps * 1e3); steps: "
      "allreduce 2(n-1), p2p 1, others n-1; busbw_gbps 0: no bandwidth term";
  j["fits"] = nlohmann::ordered_json::array();
  for (const LinkFit& f : m.fits) j["fits"].push_back(row_json(f, link_fields::kFit));
  j["samples"] = nlohmann::ordered_json::array();
  for (const LinkSample& p : m.samples) j["samples"].push_back(row_json(p, link_fields::kSample));
  return j.dump(2);
}

void write_link_model(const std::string& path, const LinkModel& m) {
  const std::string text = link_model_text(m);
  write_file_atomically(path, [&](std::ostream& os) { os << text << '\n'; });
}

LinkModel parse_link_model(const std::string& text, const std::string& source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError("link model '" + source + "' is not JSON: " + e.what());
  }
  const std::string top = "link model '" + source + "'";
  if (!j.is_object()) throw ConfigError(top + ": not a JSON object");
  const auto schema = top_field<std::string>(j, "schema", top);
  if (schema != kLinksSchema) {
    throw ConfigError(top + ": schema '" + schema + "', expected '" + kLinksSchema +
                      "' (commprof bench --fit-links writes it)");
  }
  const int version = top_field<int>(j, "version", top);
  if (version != kLinksVersion) {
    throw ConfigError(top + ": version " + std::to_string(version) + ", this commprof reads " +
                      std::to_string(kLinksVersion));
  }
  LinkModel m;
  m.source = j.value("source", std::string());
  const auto fits = j.find("fits");
  if (fits == j.end() || !fits->is_array()) throw ConfigError(top + ": no \"fits\" array");
  for (std::size_t i = 0; i < fits->size(); ++i) {
    const std::string where = top + ", fits[" + std::to_string(i) + "]";
    const LinkFit f = row_of<LinkFit>((*fits)[i], link_fields::kFit, where);
    if (f.latency_us < 0 || f.busbw_gbps < 0 || (f.latency_us == 0 && f.busbw_gbps == 0)) {
      throw ConfigError(where + ": latency_us " + std::to_string(f.latency_us) +
                        " and busbw_gbps " + std::to_string(f.busbw_gbps) +
                        " (neither may be negative, and not both 0)");
    }
    m.fits.push_back(f);
  }
  if (m.fits.empty()) throw ConfigError(top + ": \"fits\" is empty");
  if (const auto samples = j.find("samples"); samples != j.end() && samples->is_array()) {
    for (std::size_t i = 0; i < samples->size(); ++i) {
      const std::string where = top + ", samples[" + std::to_string(i) + "]";
      m.samples.push_back(row_of<LinkSample>((*samples)[i], link_fields::kSample, where));
    }
  }
  return m;
}

LinkModel read_link_model(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot read link model '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError("cannot read link model '" + path + "'");
  return parse_link_model(text.str(), path);
}

}  // namespace commprof
