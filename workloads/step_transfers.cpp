// SPDX-License-Identifier: MIT
// StepBuilder: the pipeline schedule's sends and receives between neighbouring stages.
#include "workloads/step_builder.hpp"

namespace commprof {

// The P2P op `id` of the group whose world ranks are `group` records its peers' world ranks.
void StepBuilder::with_world(int id, const std::vector<int>& group) {
  auto& shared = group_world_[&group];
  if (!shared) shared = std::make_shared<const std::vector<int>>(group);
  std::get<PlannedP2P>(plan_.ops.at(static_cast<std::size_t>(id)).call).world = shared;
}

int StepBuilder::transfer(const PipeItem& it, int produced) {
  const std::uint64_t count = tokens_hidden_ / static_cast<std::uint64_t>(sp() ? t_ : 1);
  std::string name;
  const bool chunks = c_.virtual_stages > 1;
  auto part = [&](const char* what, const P2PTransfer& t, int mb, int chunk) {
    if (t.peer < 0) return;
    name += name.empty() ? "pp." : "+";
    name += log::cat(what, t.forward ? "_act" : "_grad");
    if (chunks) name += log::cat(".mb", mb, "c", chunk);
  };
  for (int i = 0; i < 2; ++i) part("send", it.sends[i], it.send_mb[i], it.send_chunk[i]);
  for (int i = 0; i < 2; ++i) part("recv", it.recvs[i], it.recv_mb[i], it.recv_chunk[i]);
  if (!chunks) name += log::cat(".mb", it.micro_batch);
  const bool sends = used(it.sends) > 0, recvs = used(it.recvs) > 0;
  const int id = plan_.p2p(name, Group::kPp, it.sends, it.recvs, count, {sends ? produced : -1});
  with_world(id, place_.pp_group);
  return recvs ? id : -1;
}

}  // namespace commprof
