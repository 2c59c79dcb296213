// SPDX-License-Identifier: MIT
#include "src/collective/collective_kind.hpp"

#include <algorithm>
#include <sstream>

#include "src/core/errors.hpp"
#include "src/core/name_table.hpp"

namespace commprof {

const std::vector<CollectiveKind>& all_collective_kinds() {
  static const std::vector<CollectiveKind> kinds = {
      CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
      CollectiveKind::kBroadcast, CollectiveKind::kReduce,    CollectiveKind::kAllToAll,
      CollectiveKind::kSendRecv};
  return kinds;
}

namespace {
constexpr NamedValue<CollectiveKind> kCollectiveNames[] = {
    {CollectiveKind::kAllReduce, "allreduce"},
    {CollectiveKind::kAllGather, "allgather"},
    {CollectiveKind::kReduceScatter, "reducescatter"},
    {CollectiveKind::kBroadcast, "broadcast"},
    {CollectiveKind::kReduce, "reduce"},
    {CollectiveKind::kAllToAll, "alltoall"},
    {CollectiveKind::kSendRecv, "sendrecv"},
    {CollectiveKind::kAllToAllV, "alltoallv"},
    {CollectiveKind::kAllGatherV, "allgatherv"},
    {CollectiveKind::kReduceScatterV, "reducescatterv"}};
}  // namespace

const char* collective_name(CollectiveKind kind) { return name_of(kCollectiveNames, kind); }

CollectiveKind parse_collective(const std::string& text) {
  std::string key;
  for (char c : text) {
    if (c != '_' && c != '-') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (const NamedValue<CollectiveKind>& entry : kCollectiveNames) {
    if (key == entry.name) return entry.value;
  }
  // A list may also be `all` (parse_collective_list), so the message offers it too.
  std::string names = names_of(kCollectiveNames);
  names.replace(names.rfind(" or "), 4, ", ");
  throw ConfigError("unknown collective '" + text + "': expected " + names + " or all");
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
