// SPDX-License-Identifier: MIT
#include "src/timeline/unfinished_entry.hpp"

namespace commprof {

nlohmann::ordered_json unfinished_entry(const OpRecord& op, int step) {
  nlohmann::ordered_json e = {{"comm", op.comm}, {"collective", op.collective},
                              {"seq", op.seq},   {"name", op.name},
                              {"step", step},    {"bytes", op.bytes}};
  if (op.count != 0) e["count"] = op.count;
  if (!op.dtype.empty()) e["dtype"] = op.dtype;
  if (!op.send_to.empty()) e["send_to"] = op.send_to;
  if (!op.recv_from.empty()) e["recv_from"] = op.recv_from;
  e["state"] = "submitted";
  return e;
}

}  // namespace commprof
