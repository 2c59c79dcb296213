// SPDX-License-Identifier: MIT
#include "src/fields/field_prometheus.hpp"

#include <charconv>
#include <cmath>

namespace commprof::fields {

std::string prometheus_label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string prometheus_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[40];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

std::string prometheus_label_text(const Value& v) {
  if (const auto* t = std::get_if<std::string_view>(&v)) return std::string(*t);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* u = std::get_if<ReportUnit>(&v)) return unit_name(*u);
  return prometheus_number(as_number(v));
}

void Exposition::sample(const std::string& name, std::string_view help, const Labels& labels,
                        double value) {
  auto [at, added] = index_.try_emplace(name, families_.size());
  if (added) families_.push_back({name, std::string(help), {}});
  std::string line = name;
  if (!labels.empty()) {
    line += '{';
    for (std::size_t i = 0; i < labels.size(); ++i) {
      line +=
          (i ? "," : "") + labels[i].first + "=\"" + prometheus_label_value(labels[i].second) + '"';
    }
    line += '}';
  }
  families_[at->second].samples.push_back(line + ' ' + prometheus_number(value));
}

void Exposition::write(std::ostream& os) const {
  for (const Family& f : families_) {
    os << "# HELP " << f.name << ' ' << f.help << "\n# TYPE " << f.name << " gauge\n";
    for (const std::string& s : f.samples) os << s << '\n';
  }
}

}  // namespace commprof::fields
