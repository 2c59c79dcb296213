// SPDX-License-Identifier: MIT
// The link model's file: schema "commprof.links", version 1, one JSON object.
//   {"schema": "commprof.links", "version": 1, "source": "...",
//    "time_formula": "...",
//    "fits": [{"collective", "link", "group", "latency_us", "busbw_gbps", "points",
//              "rms_rel_error", "ranks", "min_bytes", "max_bytes"}],
//    "samples": [{"collective", "link", "group", "ranks", "bytes", "time_us"}]}
// busbw_gbps counts bus bytes (S × the busbw factor, as nccl-tests' busbw), 10⁹ B/s.
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "collectives/links/link_model.hpp"
#include "src/core/atomic_file.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

constexpr const char* kLinksSchema = "commprof.links";
constexpr int kLinksVersion = 1;

nlohmann::ordered_json sample_json(const LinkSample& p) {
  return {{"collective", p.collective}, {"link", link_class_name(p.link)},
          {"group", p.group},           {"ranks", p.ranks},
          {"bytes", p.bytes},           {"time_us", p.time_us}};
}

nlohmann::ordered_json fit_json(const LinkFit& f) {
  return {{"collective", f.collective},
          {"link", link_class_name(f.link)},
          {"group", f.group},
          {"latency_us", f.latency_us},
          {"busbw_gbps", f.busbw_gbps},
          {"points", f.points},
          {"rms_rel_error", f.rms_rel_error},
          {"ranks", f.ranks},
          {"min_bytes", f.min_bytes},
          {"max_bytes", f.max_bytes}};
}

// A field of `j`, of the type asked, or ConfigError naming the file, where and what.
template <class T>
T field(const nlohmann::json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end()) throw ConfigError(where + ": no \"" + key + "\"");
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    throw ConfigError(where + ": \"" + key + "\" has the wrong type (" + it->dump() + ")");
  }
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
  for (const LinkFit& f : m.fits) j["fits"].push_back(fit_json(f));
  j["samples"] = nlohmann::ordered_json::array();
  for (const LinkSample& p : m.samples) j["samples"].push_back(sample_json(p));
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
  const auto schema = field<std::string>(j, "schema", top);
  if (schema != kLinksSchema) {
    throw ConfigError(top + ": schema '" + schema + "', expected '" + kLinksSchema +
                      "' (commprof bench --fit-links writes it)");
  }
  const int version = field<int>(j, "version", top);
  if (version != kLinksVersion) {
    throw ConfigError(top + ": version " + std::to_string(version) + ", this commprof reads " +
                      std::to_string(kLinksVersion));
  }
  LinkModel m;
  m.source = j.value("source", std::string());
  const auto fits = j.find("fits");
  if (fits == j.end() || !fits->is_array()) throw ConfigError(top + ": no \"fits\" array");
  for (std::size_t i = 0; i < fits->size(); ++i) {
    const nlohmann::json& e = (*fits)[i];
    const std::string where = top + ", fits[" + std::to_string(i) + "]";
    if (!e.is_object()) throw ConfigError(where + ": not an object");
    LinkFit f;
    f.collective = field<std::string>(e, "collective", where);
    try {
      link_steps(f.collective, 2);
      f.link = parse_link_class(field<std::string>(e, "link", where));
    } catch (const ConfigError& bad) {
      throw ConfigError(where + ": " + bad.what());
    }
    f.group = e.value("group", std::string());
    f.latency_us = field<double>(e, "latency_us", where);
    f.busbw_gbps = field<double>(e, "busbw_gbps", where);
    if (f.latency_us < 0 || f.busbw_gbps < 0 || (f.latency_us == 0 && f.busbw_gbps == 0)) {
      throw ConfigError(where + ": latency_us " + std::to_string(f.latency_us) +
                        " and busbw_gbps " + std::to_string(f.busbw_gbps) +
                        " (neither may be negative, and not both 0)");
    }
    f.points = e.value("points", 0);
    f.rms_rel_error = e.value("rms_rel_error", 0.0);
    f.ranks = e.value("ranks", std::vector<int>());
    f.min_bytes = e.value("min_bytes", std::uint64_t{0});
    f.max_bytes = e.value("max_bytes", std::uint64_t{0});
    m.fits.push_back(f);
  }
  if (m.fits.empty()) throw ConfigError(top + ": \"fits\" is empty");
  if (const auto samples = j.find("samples"); samples != j.end() && samples->is_array()) {
    for (std::size_t i = 0; i < samples->size(); ++i) {
      const nlohmann::json& e = (*samples)[i];
      const std::string where = top + ", samples[" + std::to_string(i) + "]";
      if (!e.is_object()) throw ConfigError(where + ": not an object");
      LinkSample p;
      p.collective = field<std::string>(e, "collective", where);
      try {
        p.link = parse_link_class(field<std::string>(e, "link", where));
      } catch (const ConfigError& bad) {
        throw ConfigError(where + ": " + bad.what());
      }
      p.group = e.value("group", std::string());
      p.ranks = field<int>(e, "ranks", where);
      p.bytes = field<std::uint64_t>(e, "bytes", where);
      p.time_us = field<double>(e, "time_us", where);
      m.samples.push_back(p);
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
