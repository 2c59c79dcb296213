// SPDX-License-Identifier: MIT
#include "collectives/links/link_model.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "src/collective/collective_kind.hpp"
#include "src/collective/collective_spec.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"

namespace commprof {

const char* link_class_name(LinkClass c) {
  return c == LinkClass::kIntraNode ? "intra_node" : "inter_node";
}

LinkClass parse_link_class(const std::string& text) {
  if (text == "intra_node") return LinkClass::kIntraNode;
  if (text == "inter_node") return LinkClass::kInterNode;
  throw ConfigError("unknown link class '" + text + "': expected intra_node or inter_node");
}

std::optional<CollectiveKind> link_collective(const std::string& recorded) {
  if (recorded == "send" || recorded == "recv" || recorded == "sendrecv" || recorded == "p2p")
    return CollectiveKind::kSendRecv;
  try {
    return parse_collective(recorded);
  } catch (const ConfigError&) {
    return std::nullopt;
  }
}

CollectiveKind parse_link_collective(const std::string& text) {
  if (const std::optional<CollectiveKind> kind = link_collective(text)) return *kind;
  throw ConfigError("the link model knows no collective '" + text + "'");
}

const char* link_collective_name(CollectiveKind kind) {
  return kind == CollectiveKind::kSendRecv ? "p2p" : collective_name(kind);
}

int link_steps(CollectiveKind kind, int n) {
  if (kind == CollectiveKind::kSendRecv) return 1;
  const int hops = std::max(0, n - 1);
  // NCCL's ring: an all-reduce is a reduce-scatter then an all-gather, n−1 steps each.
  return kind == CollectiveKind::kAllReduce ? 2 * hops : hops;
}

double link_bus_factor(CollectiveKind kind, int n) {
  if (kind == CollectiveKind::kSendRecv) return 1.0;
  return collective_spec(kind).busbw_factor(n);
}

double LinkFit::time_us(std::uint64_t bytes, int n) const {
  double t = latency_us * link_steps(collective, n);
  if (busbw_gbps > 0)
    t += static_cast<double>(bytes) * link_bus_factor(collective, n) / (busbw_gbps * 1e3);
  return t;
}

const LinkFit* LinkModel::find(CollectiveKind collective, LinkClass link, const std::string& group,
                               std::string* fallback) const {
  auto pick = [&](auto&& ok) -> const LinkFit* {
    for (const LinkFit& f : fits) {
      if (f.collective == collective && ok(f)) return &f;
    }
    return nullptr;
  };
  auto note = [&](const LinkFit* f, const std::string& why) {
    if (f != nullptr && fallback != nullptr) *fallback = why;
    return f;
  };
  if (fallback != nullptr) fallback->clear();
  if (const LinkFit* f = pick([&](const LinkFit& x) { return x.link == link && x.group == group; }))
    return f;
  if (const LinkFit* f = pick([&](const LinkFit& x) { return x.link == link && x.group.empty(); }))
    return note(f, "");
  if (const LinkFit* f = pick([&](const LinkFit& x) { return x.link == link; })) {
    return note(f, log::cat(link_collective_name(collective), " of ", group, " from the ", f->group,
                            " communicators' fit"));
  }
  const LinkFit* f = pick([&](const LinkFit&) { return true; });
  return note(f, log::cat(link_collective_name(collective), " ", link_class_name(link),
                          " from the ", link_class_name(f == nullptr ? link : f->link), " fit"));
}

namespace {

using LinkKey = std::tuple<CollectiveKind, LinkClass, std::string>;

// Weighted least squares of t = a·x + c·y (no intercept) with weights 1/t²: relative errors.
struct Normal {
  double xx = 0, xy = 0, yy = 0, xt = 0, yt = 0;
};

void fit_one(LinkFit& fit, const std::vector<const LinkSample*>& points) {
  Normal s;
  std::vector<double> xs, ys;
  bool sizes_differ = false, steps_differ = false;
  for (const LinkSample* p : points) {
    const double x = link_steps(p->collective, p->ranks);
    const double y = static_cast<double>(p->bytes) * link_bus_factor(p->collective, p->ranks) / 1e3;
    const double w = 1.0 / (p->time_us * p->time_us);
    s.xx += w * x * x;
    s.xy += w * x * y;
    s.yy += w * y * y;
    s.xt += w * x * p->time_us;
    s.yt += w * y * p->time_us;
    if (!xs.empty() && x != xs.front()) steps_differ = true;
    if (!ys.empty() && y != ys.front()) sizes_differ = true;
    xs.push_back(x);
    ys.push_back(y);
  }
  double a = 0, c = 0;  // latency per step (µs), inverse bus bandwidth (µs per kB)
  const double det = s.xx * s.yy - s.xy * s.xy;
  const bool both = det > 1e-12 * s.xx * s.yy && (sizes_differ || steps_differ);
  if (both) {
    a = (s.xt * s.yy - s.yt * s.xy) / det;
    c = (s.yt * s.xx - s.xt * s.xy) / det;
  }
  // One parameter where the points cannot tell them apart, or where the pair came out negative
  // (a latency below 0 is noise on a bandwidth-bound sweep, and the reverse).
  if (!both || a < 0 || c <= 0) {
    const double a_only = s.xx > 0 ? s.xt / s.xx : 0.0;
    const double c_only = s.yy > 0 ? s.yt / s.yy : 0.0;
    if (both && a < 0 && c_only > 0) {
      a = 0, c = c_only;
    } else if (both && c <= 0 && a_only > 0) {
      a = a_only, c = 0;
    } else if (c_only > 0) {  // bandwidth-bound sizes are what a projection scales most
      a = 0, c = c_only;
    } else {
      a = a_only, c = 0;
    }
  }
  fit.latency_us = a;
  fit.busbw_gbps = c > 0 ? 1.0 / c : 0.0;
  double sq = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const double model = a * xs[i] + c * ys[i];
    const double rel = (model - points[i]->time_us) / points[i]->time_us;
    sq += rel * rel;
  }
  fit.rms_rel_error = std::sqrt(sq / static_cast<double>(points.size()));
}

// Every sample usable: a positive time, ranks.
void check_samples(const std::vector<LinkSample>& samples) {
  if (samples.empty()) throw ConfigError("no measured collectives to fit a link model to");
  for (const LinkSample& p : samples) {
    if (!(p.time_us > 0) || !std::isfinite(p.time_us)) {
      throw ConfigError(std::string("link model: ") + link_collective_name(p.collective) + " of " +
                        std::to_string(p.bytes) + " B on " + std::to_string(p.ranks) +
                        " ranks has time " + std::to_string(p.time_us) +
                        " us; times must be positive");
    }
    if (p.ranks < 1) {
      throw ConfigError(std::string("link model: ") + link_collective_name(p.collective) + " on " +
                        std::to_string(p.ranks) + " ranks");
    }
  }
}

// The figures of the points a fit is made of: sizes, communicator sizes.
void describe_points(LinkFit& f, const std::vector<const LinkSample*>& points) {
  f.points = static_cast<int>(points.size());
  f.min_bytes = points.front()->bytes;
  for (const LinkSample* p : points) {
    f.min_bytes = std::min(f.min_bytes, p->bytes);
    f.max_bytes = std::max(f.max_bytes, p->bytes);
    if (std::find(f.ranks.begin(), f.ranks.end(), p->ranks) == f.ranks.end())
      f.ranks.push_back(p->ranks);
  }
  std::sort(f.ranks.begin(), f.ranks.end());
}

}  // namespace

LinkModel fit_link_model(std::vector<LinkSample> samples, const std::string& source) {
  check_samples(samples);
  std::map<LinkKey, std::vector<const LinkSample*>> sets;
  LinkModel m;
  m.source = source;
  m.samples = std::move(samples);
  for (const LinkSample& p : m.samples) sets[{p.collective, p.link, p.group}].push_back(&p);
  for (const auto& [key, points] : sets) {
    LinkFit f;
    std::tie(f.collective, f.link, f.group) = key;
    describe_points(f, points);
    fit_one(f, points);
    m.fits.push_back(f);
  }
  return m;
}

LinkFit fit_pooled_link(const std::vector<LinkSample>& samples) {
  check_samples(samples);
  std::vector<const LinkSample*> points;
  for (const LinkSample& p : samples) points.push_back(&p);
  LinkFit f;
  f.collective = samples.front().collective;
  f.link = samples.front().link;
  f.group = samples.front().group;
  describe_points(f, points);
  fit_one(f, points);
  return f;
}

std::vector<LinkSample> merge_samples(std::vector<LinkSample> base,
                                      const std::vector<LinkSample>& more) {
  for (const LinkSample& p : more) {
    auto same = [&](const LinkSample& q) {
      return q.collective == p.collective && q.link == p.link && q.group == p.group &&
             q.ranks == p.ranks && q.bytes == p.bytes;
    };
    base.erase(std::remove_if(base.begin(), base.end(), same), base.end());
    base.push_back(p);
  }
  return base;
}

}  // namespace commprof
