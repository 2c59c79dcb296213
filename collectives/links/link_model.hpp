// SPDX-License-Identifier: MIT
// The link model: how long a collective of S bytes takes on n ranks, shaped as NCCL's cost model
// is (ring algorithm): a latency per step of the ring times its steps (all-reduce 2(n−1),
// all-gather, reduce-scatter, broadcast, reduce and the all-to-alls n−1, a send/receive 1), plus
// the bytes the bus carries (S × the collective's busbw factor for n) over a bus bandwidth:
//   time_us = latency_us × steps(n) + S × busbw_factor(n) / (busbw_GBps × 1e3)
// One (latency, bandwidth) per collective, link class (within a node, across nodes) and, where a
// fit was made from a run's own collectives, communicator kind ("dp", "tp"). Both parameters come
// from least squares over the measured sizes and communicator sizes, weighted to fit relative
// errors (a 1 KiB call counts as much as a 256 MiB one).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/collective/collective_kind.hpp"

namespace commprof {

enum class LinkClass { kIntraNode, kInterNode };
const char* link_class_name(LinkClass c);  ///< "intra_node", "inter_node"
/// Throws ConfigError naming the text.
LinkClass parse_link_class(const std::string& text);

// The model is keyed by collective kind. A point-to-point transfer (a send, a receive, a grouped
// sendrecv) is CollectiveKind::kSendRecv: one step, bus factor 1, as nccl-tests' sendrecv; its
// name in files and reports is "p2p".

/// The ring steps of `kind` on n ranks (a transfer: 1).
int link_steps(CollectiveKind kind, int n);
/// The bus factor of `kind` on n ranks (a transfer: 1).
double link_bus_factor(CollectiveKind kind, int n);
/// The model's kind of a recorded collective name: send, recv, sendrecv and "p2p" are
/// kSendRecv, the others as parse_collective reads them; std::nullopt for a name of none.
std::optional<CollectiveKind> link_collective(const std::string& recorded);
/// link_collective, or ConfigError naming `text`.
CollectiveKind parse_link_collective(const std::string& text);
/// "p2p" for kSendRecv, else collective_name.
const char* link_collective_name(CollectiveKind kind);

/// One measured time.
struct LinkSample {
  CollectiveKind collective = CollectiveKind::kAllReduce;
  LinkClass link = LinkClass::kIntraNode;
  std::string group;  ///< communicator kind ("dp"), "" for a sweep over the world
  int ranks = 2;
  std::uint64_t bytes = 0;  ///< S, as nccl-tests' size column
  double time_us = 0.0;
};

struct LinkFit {
  CollectiveKind collective = CollectiveKind::kAllReduce;
  LinkClass link = LinkClass::kIntraNode;
  std::string group;
  double latency_us = 0.0;  ///< per ring step
  double busbw_gbps = 0.0;  ///< 0: no bandwidth term (every size took the same time)
  int points = 0;
  double rms_rel_error = 0.0;  ///< of the fit over its points, a ratio
  std::vector<int> ranks;      ///< the communicator sizes it saw
  std::uint64_t min_bytes = 0, max_bytes = 0;
  /// The fit's time for S bytes on n ranks, µs.
  double time_us(std::uint64_t bytes, int n) const;
};

struct LinkModel {
  std::string source;  ///< what it was fitted from
  std::vector<LinkFit> fits;
  std::vector<LinkSample> samples;  ///< the points (kept, so a later sweep refits with them)
  /// The fit for `collective` on `link` of communicator kind `group`: that group's, else the
  /// sweep's (group ""), else another group's of the same link class, else the other link
  /// class's (`fallback` says which was taken, "" when the first). nullptr when the collective
  /// has none.
  const LinkFit* find(CollectiveKind collective, LinkClass link, const std::string& group,
                      std::string* fallback = nullptr) const;
};

/// Fits one LinkFit per (collective, link class, group) of `samples`. A set whose points cannot
/// tell latency from bandwidth (one step count and one size) keeps the bandwidth alone (the
/// latency alone where the bus moves no bytes). Throws ConfigError on an empty set or a
/// non-positive time.
LinkModel fit_link_model(std::vector<LinkSample> samples, const std::string& source);

/// One (latency, bandwidth) over `samples` of any collectives, sizes and communicator sizes: the
/// fit fit_link_model makes of one collective, over them all (a dimension of ASTRA-sim's
/// network carries every collective of its communicators; export-chakra's network file). Its
/// latency and bandwidth stand for every collective of the samples; its collective, link and
/// group are the first sample's. Throws ConfigError as fit_link_model does.
LinkFit fit_pooled_link(const std::vector<LinkSample>& samples);

/// `base`'s samples with `more` added: a point of the same collective, link, group, ranks and
/// bytes replaces the older one.
std::vector<LinkSample> merge_samples(std::vector<LinkSample> base,
                                      const std::vector<LinkSample>& more);

/// The file's text (schema commprof.links, version 1, JSON); parse_link_model reads it back.
std::string link_model_text(const LinkModel& model);
/// The file (schema commprof.links, version 1), written atomically.
void write_link_model(const std::string& path, const LinkModel& model);
/// Throws ConfigError naming the file and the field when it is not a link model of version 1.
LinkModel read_link_model(const std::string& path);
LinkModel parse_link_model(const std::string& text, const std::string& source);

}  // namespace commprof
