// SPDX-License-Identifier: MIT
// What a `commprof bench` run was asked to do, each setting declared once (src/fields/
// field_table.hpp): its member of bench.json's "config" (the key; the routing's settings in its
// "alltoallv" object, present when the sweep has alltoallv), and its words in the text header,
// where it has any: the settings line ("# dtype float, iters 20, …") or the alltoallv table's
// routing line. The rows' columns are bench_fields.hpp's; this is the run's own record.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "collectives/bench/bench.hpp"
#include "src/fields/field_formats.hpp"

namespace commprof::bench_run_fields {

using fields::Field;
using fields::field;
using U = ReportUnit;

/// Which text line of the header shows a setting.
enum class Line { kNone, kSettings, kRouting };

/// One setting of the run.
struct Setting {
  Field<BenchReport> field;        ///< key: its member of bench.json's config (or its object)
  Line line = Line::kNone;         ///< where the text header shows it
  std::string_view json_object{};  ///< "alltoallv": a member of config.alltoallv
  /// Its JSON value where the field's value cannot say it (a list); nullptr: the field's.
  nlohmann::ordered_json (*json)(const BenchReport&) = nullptr;

  constexpr Setting shown_in(Line l) const {
    Setting s = *this;
    s.line = l;
    return s;
  }
  constexpr Setting of_routing() const {
    Setting s = *this;
    s.json_object = "alltoallv";
    return s;
  }
  constexpr Setting json_as(nlohmann::ordered_json (*value)(const BenchReport&)) const {
    Setting s = *this;
    s.json = value;
    return s;
  }
};

/// What busbw means for alltoallv, in the routing line's note and in bench.json.
inline constexpr std::string_view kAllToAllvBusbw =
    "busiest rank: the most bytes any rank sends to, or receives from, other ranks";

inline bool has_alltoallv(const BenchReport& r) {
  const auto& ops = r.config.ops;
  return std::find(ops.begin(), ops.end(), CollectiveKind::kAllToAllV) != ops.end();
}

inline const std::string& backend(const BenchReport& r) { return r.backend; }
inline const std::string& backend_reason(const BenchReport& r) { return r.backend_reason; }
inline fields::Value no_scalar(const BenchReport&) { return {}; }
/// A setting whose JSON a hook writes (a list, text made on demand): no scalar value.
constexpr Field<BenchReport> hooked(std::string_view key, std::string_view label,
                                    std::string_view help) {
  Field<BenchReport> f;
  f.key = key;
  f.get = &no_scalar;
  f.label = label;
  f.help = help;
  return f;
}
inline nlohmann::ordered_json ops_list(const BenchReport& r) {
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (CollectiveKind op : r.config.ops) ops.push_back(collective_name(op));
  return ops;
}
inline std::uint64_t min_bytes(const BenchReport& r) { return r.config.min_bytes; }
inline std::uint64_t max_bytes(const BenchReport& r) { return r.config.max_bytes; }
inline std::uint64_t step_factor(const BenchReport& r) { return r.config.step_factor; }
inline int iters(const BenchReport& r) { return r.config.iters; }
inline int warmup(const BenchReport& r) { return r.config.warmup; }
inline std::string_view dtype(const BenchReport& r) { return dtype_name(r.config.dtype); }
inline bool check(const BenchReport& r) { return r.config.check; }
inline int root(const BenchReport& r) { return r.config.root; }
inline std::string_view instrument(const BenchReport& r) {
  return instrument_name(r.config.instrument);
}
inline bool graph(const BenchReport& r) { return r.config.graph; }
inline bool estimate(const BenchReport& r) { return r.config.estimate; }
inline std::string_view placement(const BenchReport&) { return "out_of_place"; }
// The routing's text is made on demand (RoutingSpec::text), so it reaches JSON through a hook.
inline nlohmann::ordered_json routing_json(const BenchReport& r) { return r.config.routing.text(); }
inline int experts(const BenchReport& r) { return r.config.moe.experts; }
inline int top_k(const BenchReport& r) { return r.config.moe.top_k; }
inline std::int64_t hidden(const BenchReport& r) {
  return static_cast<std::int64_t>(r.config.moe.hidden);
}
inline std::int64_t moe_step(const BenchReport& r) {
  return static_cast<std::int64_t>(r.config.moe.step);
}
inline int moe_layer(const BenchReport& r) { return r.config.moe.layer; }
inline std::string_view busbw_basis(const BenchReport&) { return kAllToAllvBusbw; }

// The text header's words for each setting it shows, in its order.
inline std::string dtype_words(const BenchReport& r) { return "dtype " + std::string(dtype(r)); }
inline std::string iters_words(const BenchReport& r) { return "iters " + std::to_string(iters(r)); }
inline std::string warmup_words(const BenchReport& r) {
  return "warmup " + std::to_string(warmup(r));
}
inline std::string check_words(const BenchReport& r) {
  return std::string("check ") + (check(r) ? "on" : "off");
}
inline std::string placement_words(const BenchReport&) { return "out-of-place"; }
inline std::string sizes_words(const BenchReport& r) {
  return "sizes " + std::to_string(min_bytes(r)) + ".." + std::to_string(max_bytes(r)) + " B by x" +
         std::to_string(step_factor(r));
}
inline std::string routing_words(const BenchReport& r) {
  return "routing " + r.config.routing.text();
}
inline std::string experts_words(const BenchReport& r) {
  return std::to_string(experts(r)) + " experts";
}
inline std::string top_k_words(const BenchReport& r) { return "top-" + std::to_string(top_k(r)); }
inline std::string hidden_words(const BenchReport& r) {
  return std::to_string(hidden(r)) + " element(s) per token";
}
inline std::string step_words(const BenchReport& r) {
  return "step " + std::to_string(moe_step(r)) + " layer " + std::to_string(moe_layer(r));
}

// In bench.json's order. A setting the text shows in words of its own carries them as its text
// cell (Field::text); the sweep's bounds are one phrase, on min_bytes.
inline constexpr Setting kSettings[] = {
    Setting{field<&backend>("backend", U::kText, "backend", "The backend that ran.")},
    Setting{
        field<&backend_reason>("backend_reason", U::kText, "backend reason", "Why that backend.")},
    Setting{hooked("ops", "ops", "The collectives.")}.json_as(&ops_list),
    Setting{field<&min_bytes>("min_bytes", U::kBytes, "sizes", "The smallest size (-b).")
                .text_by(&sizes_words)}
        .shown_in(Line::kSettings),
    Setting{field<&max_bytes>("max_bytes", U::kBytes, "max bytes", "The largest size (-e).")},
    Setting{field<&step_factor>("step_factor", U::kFactor, "step factor",
                                "Each size over the one before (-f).")},
    Setting{field<&iters>("iters", U::kCount, "iters", "Timed calls per size (-n).")
                .text_by(&iters_words)}
        .shown_in(Line::kSettings),
    Setting{field<&warmup>("warmup", U::kCount, "warmup", "Untimed calls first (-w).")
                .text_by(&warmup_words)}
        .shown_in(Line::kSettings),
    Setting{field<&dtype>("dtype", U::kText, "dtype", "The element type.").text_by(&dtype_words)}
        .shown_in(Line::kSettings),
    Setting{
        field<&check>("check", U::kText, "check", "Results verified (-c).").text_by(&check_words)}
        .shown_in(Line::kSettings),
    Setting{field<&root>("root", U::kId, "root", "The root rank of rooted collectives.")},
    Setting{field<&instrument>("instrument", U::kText, "instrument", "Per-call timing asked.")},
    Setting{field<&graph>("graph", U::kText, "graph", "The loop replayed as a CUDA graph.")},
    Setting{field<&estimate>("estimate", U::kText, "estimate", "The library's estimate asked.")},
    Setting{field<&placement>("placement", U::kText, "placement", "Buffers' placement.")
                .text_by(&placement_words)}
        .shown_in(Line::kSettings),
    Setting{hooked("routing", "routing", "Where tokens go (alltoallv).").text_by(&routing_words)}
        .of_routing()
        .json_as(&routing_json)
        .shown_in(Line::kRouting),
    Setting{field<&experts>("experts", U::kCount, "experts", "Experts routed to.")
                .text_by(&experts_words)}
        .of_routing()
        .shown_in(Line::kRouting),
    Setting{field<&top_k>("top_k", U::kCount, "top-k", "Experts per token.").text_by(&top_k_words)}
        .of_routing()
        .shown_in(Line::kRouting),
    Setting{field<&hidden>("hidden_elements", U::kCount, "hidden", "Elements per token.")
                .text_by(&hidden_words)}
        .of_routing()
        .shown_in(Line::kRouting),
    Setting{field<&moe_step>("step", U::kCount, "step", "The routing's step.").text_by(&step_words)}
        .of_routing()
        .shown_in(Line::kRouting),
    Setting{field<&moe_layer>("layer", U::kCount, "layer", "The routing's layer.")}.of_routing(),
    Setting{field<&busbw_basis>("busbw_basis", U::kText, "busbw", "What alltoallv's busbw is.")}
        .of_routing(),
};

/// bench.json's "config": every setting, the routing's in "alltoallv" when the sweep has it.
inline nlohmann::ordered_json config_json(const BenchReport& report) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  const bool routed = has_alltoallv(report);
  for (const Setting& s : kSettings) {
    if (!s.json_object.empty() && !routed) continue;
    nlohmann::ordered_json& into = s.json_object.empty() ? j : j[std::string(s.json_object)];
    into[std::string(s.field.key)] =
        s.json != nullptr ? s.json(report) : fields::json_value(s.field, report);
  }
  return j;
}

/// The words of header line `line`: each setting it shows, ", " between them.
inline std::string line_words(const BenchReport& report, Line line) {
  std::string out;
  for (const Setting& s : kSettings) {
    if (s.line != line) continue;
    out += (out.empty() ? "" : ", ") + s.field.text(report);
  }
  return out;
}

}  // namespace commprof::bench_run_fields
