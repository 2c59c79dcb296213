// SPDX-License-Identifier: MIT
#include "src/backend/collective_kind.hpp"

#include <algorithm>
#include <sstream>

#include "src/core/errors.hpp"

namespace commprof {

const std::vector<CollectiveKind>& all_collective_kinds() {
  static const std::vector<CollectiveKind> kinds = {
      CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
      CollectiveKind::kBroadcast, CollectiveKind::kReduce,    CollectiveKind::kAllToAll,
      CollectiveKind::kSendRecv};
  return kinds;
}

const char* collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "allreduce";
    case CollectiveKind::kAllGather:
      return "allgather";
    case CollectiveKind::kReduceScatter:
      return "reducescatter";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kReduce:
      return "reduce";
    case CollectiveKind::kAllToAll:
      return "alltoall";
    case CollectiveKind::kSendRecv:
      return "sendrecv";
  }
  return "?";
}

CollectiveKind parse_collective(const std::string& text) {
  std::string key;
  for (char c : text) {
    if (c != '_' && c != '-') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (CollectiveKind kind : all_collective_kinds()) {
    if (key == collective_name(kind)) return kind;
  }
  throw ConfigError("unknown collective '" + text +
                    "': expected allreduce, allgather, reducescatter, broadcast, reduce, "
                    "alltoall, sendrecv or all");
}

std::vector<CollectiveKind> parse_collective_list(const std::string& text) {
  if (text == "all") return all_collective_kinds();
  std::vector<CollectiveKind> kinds;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) throw ConfigError("empty name in collective list '" + text + "'");
    const CollectiveKind kind = parse_collective(item);
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
  }
  if (kinds.empty()) throw ConfigError("no collective named in '" + text + "'");
  return kinds;
}

}  // namespace commprof
