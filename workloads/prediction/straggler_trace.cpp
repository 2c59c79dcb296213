// SPDX-License-Identifier: MIT
// The dependency model is our own reading of the artifact's analyzer/dependency_model.py (commit
// 8efcd7f); the names of ops follow its "<kind>_<seq>_<stage>" so that messages can be compared.
#include "workloads/prediction/straggler_trace.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "src/core/errors.hpp"

namespace commprof {
namespace {

constexpr double kUsPerS = 1e6;
// Slack when telling a pipeline send/receive that was recorded but never ran (before the first or
// after the last compute of its direction) from a real one: the artifact's 50 us.
constexpr double kNoOpSlackS = 5e-5;

const std::set<std::string> kKnownKinds = {"forward-compute",
                                           "backward-compute",
                                           "forward-send",
                                           "forward-recv",
                                           "backward-send",
                                           "backward-recv",
                                           "params-all-gather",
                                           "grads-reduce-scatter",
                                           "separate-grads-all-reduce",
                                           "layernorm-grads-all-reduce",
                                           "embedding-grads-all-reduce",
                                           "optimizer-clip-main-grad",
                                           "optimizer",
                                           "gc"};

bool is_p2p(const std::string& k) {
  return k == "forward-send" || k == "forward-recv" || k == "backward-send" || k == "backward-recv";
}
bool is_dp_comm(const std::string& k) {
  return k == "params-all-gather" || k == "grads-reduce-scatter" ||
         k == "separate-grads-all-reduce";
}
bool is_compute(const std::string& k) { return k == "forward-compute" || k == "backward-compute"; }
// Idealised with the median: every communication, whether or not it waits for peers here.
bool is_comm_kind(const std::string& k) {
  return is_p2p(k) || is_dp_comm(k) || k == "layernorm-grads-all-reduce" ||
         k == "embedding-grads-all-reduce" || k == "optimizer-clip-main-grad";
}
// Attribution merges a direction's send and receive, as the paper's tables do.
std::string label_of(const std::string& k) {
  if (k == "forward-send" || k == "forward-recv") return "forward-pp-comm";
  if (k == "backward-send" || k == "backward-recv") return "backward-pp-comm";
  return k;
}
std::string op_name(const std::string& kind, int seq, int stage) {
  return kind + "_" + std::to_string(seq) + "_" + std::to_string(stage);
}

[[noreturn]] void bad(const std::string& path, const std::string& why) {
  throw Error(path + ": not a StragglerAnalysis timeline: " + why);
}

std::string read_text(const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "rb");  // reads plain files as they are, too
  if (gz == nullptr) throw Error(path + ": cannot open");
  std::string out;
  char buf[1 << 16];
  for (int n; (n = gzread(gz, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  int code = 0;
  const std::string why = gzerror(gz, &code);
  gzclose(gz);
  if (code != Z_OK && code != Z_STREAM_END) throw Error(path + ": damaged gzip: " + why);
  return out;
}

int int_arg(const nlohmann::json& args, const char* key, int missing) {
  const auto it = args.find(key);
  if (it == args.end() || it->is_null()) return missing;
  return it->get<int>();
}

// The ops of the timeline's events (thread names first: they give each thread's stage).
std::vector<StragglerOp> ops_of(const std::string& path, const nlohmann::json& events) {
  std::map<std::pair<int, int>, std::pair<int, int>> threads;  // (pid, tid) -> (stage, tp rank)
  for (const auto& e : events) {
    if (e.value("ph", "") != "M" || e.value("name", "") != "thread_name") continue;
    int stage = 0, tp = 0;
    const std::string name = e.contains("args") ? e.at("args").value("name", "") : "";
    if (std::sscanf(name.c_str(), "PP rank %d, TP rank %d", &stage, &tp) != 2)
      bad(path, "thread name '" + name + "' does not say 'PP rank S, TP rank T'");
    threads[{e.value("pid", -1), e.value("tid", -1)}] = {stage, tp};
  }
  std::vector<StragglerOp> ops;
  for (const auto& e : events) {
    if (e.value("ph", "") != "X") continue;
    const auto t = threads.find({e.value("pid", -1), e.value("tid", -1)});
    if (t == threads.end()) bad(path, "an op on a thread with no 'PP rank' name");
    if (t->second.second != 0) continue;  // tensor-parallel peers repeat rank 0's schedule
    StragglerOp op;
    op.kind = e.value("name", "");
    if (kKnownKinds.count(op.kind) == 0) bad(path, "unknown op kind '" + op.kind + "'");
    if (!e.contains("args") || !e.at("args").contains("step") || !e.at("args").contains("seq_id"))
      bad(path, "an op without args.step and args.seq_id");
    const nlohmann::json& args = e.at("args");
    op.dp_rank = e.value("pid", 0);
    if (op.dp_rank < 0 || op.stage < 0 || t->second.first < 0)
      bad(path, "a negative data-parallel rank (pid) or stage");
    op.stage = t->second.first;
    op.step = args.at("step").get<std::int64_t>();
    op.seq = int_arg(args, "seq_id", 0);
    op.chunk = int_arg(args, "model_chunk", -1);
    op.start = e.value("ts", 0.0) / kUsPerS;
    op.end = op.start + e.value("dur", 0.0) / kUsPerS;
    ops.push_back(std::move(op));
  }
  if (ops.empty()) bad(path, "no op events");
  return ops;
}

}  // namespace

std::vector<StragglerOp> read_straggler_timeline(const std::string& path) {
  nlohmann::json j = nlohmann::json::parse(read_text(path), nullptr, false);
  if (j.is_discarded()) bad(path, "not JSON");
  const nlohmann::json& events = j.is_object() && j.contains("traceEvents") ? j["traceEvents"] : j;
  if (!events.is_array()) bad(path, "no event array");
  try {
    return ops_of(path, events);
  } catch (const nlohmann::json::exception& e) {  // a field of the wrong type
    bad(path, e.what());
  }
}

namespace {

using OpList = std::vector<const StragglerOp*>;

// Builds the shared graph from data-parallel rank 0's first step.
class ModelBuilder {
 public:
  explicit ModelBuilder(const OpList& first) : first_(first) {
    for (const StragglerOp* op : first) {
      pp_ = std::max(pp_, op->stage + 1);
      if (is_compute(op->kind)) vpp_ = std::max(vpp_, op->chunk + 1);
    }
    for (const StragglerOp* op : first) {
      const std::string name = op_name(op->kind, op->seq, op->stage);
      if (id_.count(name) != 0) throw Error("the trace has op " + name + " twice in one step");
      id_[name] = static_cast<int>(g_.nodes.size());
      by_name_[name] = op;
      IdealNode n;
      n.name = name;
      n.kind = op->kind;
      n.label = label_of(op->kind);
      n.stage = op->stage;
      n.comm = is_comm_kind(op->kind);
      g_.nodes.push_back(std::move(n));
    }
  }

  IdealGraph build(int dp) {
    std::map<std::string, std::vector<int>> pairs;
    for (int s = 0; s < pp_; ++s) {
      const OpList comp = sorted(s, [](const StragglerOp& o) { return is_compute(o.kind); });
      chain(ids(comp), {});
      pipeline_stage(s, comp, pairs);
      first_backward_exchange(s, comp);
    }
    for (auto& [key, members] : pairs) {
      if (members.size() != 2)
        throw Error("pipeline send/receive " + key + " has " + std::to_string(members.size()) +
                    " participants, not 2");
      group(members, false);
    }
    data_parallel(dp > 1);
    return std::move(g_);
  }

 private:
  template <class Pred>
  OpList sorted(int stage, Pred pred) const {
    OpList out;
    for (const StragglerOp* op : first_)
      if (op->stage == stage && pred(*op)) out.push_back(op);
    std::stable_sort(out.begin(), out.end(), [](const StragglerOp* a, const StragglerOp* b) {
      return std::tie(a->start, a->seq, a->kind) < std::tie(b->start, b->seq, b->kind);
    });
    return out;
  }
  bool has(const std::string& name) const { return id_.count(name) != 0; }
  int node(const std::string& name) const {
    const auto it = id_.find(name);
    if (it == id_.end())
      throw Error("the dependency model needs op " + name +
                  ", which data-parallel rank 0's first step does not have");
    return it->second;
  }
  int node(const StragglerOp* op) const { return node(op_name(op->kind, op->seq, op->stage)); }
  std::vector<int> ids(const OpList& ops) const {
    std::vector<int> out;
    for (const StragglerOp* op : ops) out.push_back(node(op));
    return out;
  }
  void dep(int v, int u) { g_.nodes[static_cast<std::size_t>(v)].deps.push_back(u); }
  void chain(const std::vector<int>& ops, std::vector<int> last) {
    for (int v : ops) {
      for (int u : last) dep(v, u);
      last = {v};
    }
  }
  void group(const std::vector<int>& members, bool across_dp) {
    for (int m : members)
      g_.nodes[static_cast<std::size_t>(m)].group = static_cast<int>(g_.groups.size());
    g_.groups.push_back({members, across_dp});
  }

  void pipeline_stage(int s, const OpList& comp, std::map<std::string, std::vector<int>>& pairs);
  void tie_to_compute(int s, const OpList& comp, const std::string& dir, bool send,
                      const OpList& comm, std::set<const StragglerOp*>& noop);
  void first_backward_exchange(int s, const OpList& comp);
  void data_parallel(bool use_dp);
  void after_last_backward(int s, bool use_dp, bool overlapped);

  const OpList& first_;
  int pp_ = 1, vpp_ = 1;
  IdealGraph g_;
  std::map<std::string, int> id_;
  std::map<std::string, const StragglerOp*> by_name_;
};

// A direction's sends (or receives) matched in order to the computes they follow (or feed).
void ModelBuilder::tie_to_compute(int s, const OpList& comp, const std::string& dir, bool send,
                                  const OpList& comm, std::set<const StragglerOp*>& noop) {
  const std::string ck = dir + "-compute", kind = dir + (send ? "-send" : "-recv");
  double last_start = -1e300, first_end = 1e300;
  int computes = 0;
  for (const StragglerOp* c : comp) {
    if (c->kind != ck) continue;
    last_start = std::max(last_start, c->start);
    first_end = std::min(first_end, c->end);
    ++computes;
  }
  auto ran = [&](const StragglerOp* o) {
    return send ? o->end >= first_end - kNoOpSlackS : o->start <= last_start + kNoOpSlackS;
  };
  int real = 0, cid = 0;
  for (const StragglerOp* o : comm) real += (o->kind == kind && ran(o)) ? 1 : 0;
  if (real != computes) {
    if ((s != 0 && s != pp_ - 1) || !(real == 0 || real + 1 == computes))
      throw Error("stage " + std::to_string(s) + " has " + std::to_string(real) + " " + kind +
                  " ops for " + std::to_string(computes) + " " + ck + " ops");
    if (!send && real + 1 == computes) cid = 1;
  }
  const int delta = (dir == "forward") == send ? 1 : -1;
  for (const StragglerOp* o : comm) {
    if (o->kind != kind || !ran(o)) continue;
    const std::string match = op_name(ck, cid, s);
    const int m = node(match);
    const int peer_chunk = by_name_.at(match)->chunk * pp_ + s + delta;
    if (peer_chunk >= 0 && peer_chunk < vpp_ * pp_) noop.erase(o);
    if (send) {
      dep(node(o), m);
    } else {
      dep(m, node(o));
      if (cid > 0) dep(node(o), node(op_name(ck, cid - 1, s)));
    }
    ++cid;
  }
}

void ModelBuilder::pipeline_stage(int s, const OpList& comp,
                                  std::map<std::string, std::vector<int>>& pairs) {
  const OpList comm = sorted(s, [](const StragglerOp& o) { return is_p2p(o.kind); });
  std::set<const StragglerOp*> noop(comm.begin(), comm.end());
  for (const char* dir : {"forward", "backward"})
    for (bool send : {true, false}) tie_to_compute(s, comp, dir, send, comm, noop);
  for (const char* kind : {"forward-send", "forward-recv", "backward-send", "backward-recv"}) {
    const std::string k = kind;
    const bool send = k.find("send") != std::string::npos;
    const int delta = (k.rfind("forward", 0) == 0) == send ? 1 : -1;
    const std::string peer_kind = k.substr(0, k.find('-')) + (send ? "-recv" : "-send");
    std::vector<int> stream;
    int valid = 0;
    for (const StragglerOp* o : comm) {
      if (o->kind != k) continue;
      stream.push_back(node(o));
      if (noop.count(o) != 0) {
        group({node(o)}, false);
        continue;
      }
      std::string a = op_name(k, valid, s), b = op_name(peer_kind, valid, (s + delta + pp_) % pp_);
      if (b < a) std::swap(a, b);
      pairs[a + "," + b].push_back(node(o));
      ++valid;
    }
    chain(stream, {});
  }
}

// The first backward exchange waits for the forward compute two before the first backward.
void ModelBuilder::first_backward_exchange(int s, const OpList& comp) {
  std::size_t i = 0;
  while (i < comp.size() && comp[i]->kind != "backward-compute") ++i;
  if (i == comp.size() || i < 2) return;
  if (comp[i - 1]->kind != "forward-compute" || comp[i - 2]->kind != "forward-compute")
    throw Error("stage " + std::to_string(s) +
                ": the two computes before the first backward are not both forward");
  for (const char* k : {"backward-recv", "backward-send"})
    if (has(op_name(k, 0, s))) dep(node(op_name(k, 0, s)), node(comp[i - 2]));
}

void ModelBuilder::data_parallel(bool use_dp) {
  bool overlapped = false;
  for (const StragglerOp* op : first_) overlapped |= op->kind == "separate-grads-all-reduce";
  for (int s = 0; s < pp_; ++s) {
    if (use_dp) {
      const OpList comp = sorted(s, [](const StragglerOp& o) { return is_compute(o.kind); });
      chain(ids(sorted(s,
                       [](const StragglerOp& o) {
                         return o.kind == "params-all-gather" || o.kind == "grads-reduce-scatter";
                       })),
            {});
      // A chunk's first forward waits for its parameters' (last) all-gather.
      OpList ag = sorted(s, [](const StragglerOp& o) { return o.kind == "params-all-gather"; });
      std::sort(ag.begin(), ag.end(), [](auto* a, auto* b) { return a->seq > b->seq; });
      std::set<int> seen;
      for (const StragglerOp* a : ag) {
        if (!seen.insert(a->chunk).second) continue;
        for (const StragglerOp* c : comp) {
          if (c->kind != "forward-compute" || c->chunk != a->chunk) continue;
          dep(node(c), node(a));
          break;
        }
      }
      if (overlapped) {  // a chunk's reduce-scatter waits for its last backward
        OpList rs =
            sorted(s, [](const StragglerOp& o) { return o.kind == "grads-reduce-scatter"; });
        std::sort(rs.begin(), rs.end(), [](auto* a, auto* b) { return a->seq < b->seq; });
        std::set<int> done;
        for (const StragglerOp* r : rs) {
          if (!done.insert(r->chunk).second) continue;
          const StragglerOp* last = nullptr;
          for (const StragglerOp* c : comp)
            if (c->kind == "backward-compute" && c->chunk == r->chunk &&
                (!last || c->end > last->end))
              last = c;
          if (last != nullptr) dep(node(r), node(last));
        }
      }
    }
    after_last_backward(s, use_dp, overlapped);
  }
  for (const StragglerOp* op : first_)
    if (use_dp && is_dp_comm(op->kind)) group({node(op)}, true);
  std::vector<int> emb = {node(op_name("embedding-grads-all-reduce", 0, 0))};
  if (pp_ > 1) emb.push_back(node(op_name("embedding-grads-all-reduce", 0, pp_ - 1)));
  group(emb, false);
  std::vector<int> clip;
  for (int s = 0; s < pp_; ++s) clip.push_back(node(op_name("optimizer-clip-main-grad", 0, s)));
  group(clip, true);
}

// gc after the last compute, then the gradient reductions, clipping and the optimizer.
void ModelBuilder::after_last_backward(int s, bool use_dp, bool overlapped) {
  const OpList comp = sorted(s, [](const StragglerOp& o) { return is_compute(o.kind); });
  if (comp.empty()) throw Error("stage " + std::to_string(s) + " has no compute op");
  const StragglerOp* last = comp.front();
  for (const StragglerOp* c : comp)
    if (c->end > last->end) last = c;
  const int gc = node(op_name("gc", 0, s));
  dep(gc, node(last));
  int rs_count = 0;
  for (const StragglerOp* op : first_)
    if (op->stage == s && op->kind == "grads-reduce-scatter")
      rs_count = std::max(rs_count, op->seq + 1);
  std::vector<int> tail = {node(op_name("layernorm-grads-all-reduce", 0, s))};
  if (s == 0 || s == pp_ - 1) tail.push_back(node(op_name("embedding-grads-all-reduce", 0, s)));
  std::vector<int> after = {gc};
  if (use_dp && overlapped) {
    tail.push_back(node(op_name("separate-grads-all-reduce", 0, s)));
    if (rs_count > 0)
      after.insert(after.begin(), node(op_name("grads-reduce-scatter", rs_count - 1, s)));
  } else if (use_dp) {
    for (int i = 0; i < rs_count; ++i) tail.push_back(node(op_name("grads-reduce-scatter", i, s)));
  }
  tail.push_back(node(op_name("optimizer-clip-main-grad", 0, s)));
  tail.push_back(node(op_name("optimizer", 0, s)));
  chain(tail, after);
}

}  // namespace

IdealGraph straggler_graph(const std::vector<StragglerOp>& ops) {
  if (ops.empty()) throw Error("the trace has no op");
  std::set<std::int64_t> steps;
  int dp = 0;
  for (const StragglerOp& op : ops) {
    steps.insert(op.step);
    dp = std::max(dp, op.dp_rank + 1);
  }
  OpList first;
  for (const StragglerOp& op : ops)
    if (op.dp_rank == 0 && op.step == *steps.begin()) first.push_back(&op);
  IdealGraph g = ModelBuilder(first).build(dp);
  g.dp = dp;
  g.has_stages = true;
  g.steps.assign(steps.begin(), steps.end());
  std::map<std::string, int> id;
  for (std::size_t v = 0; v < g.nodes.size(); ++v) id[g.nodes[v].name] = static_cast<int>(v);
  const std::size_t n = g.nodes.size(), inst = g.instances();
  std::vector<std::vector<double>> start(n, std::vector<double>(inst)), end = start;
  std::vector<std::vector<char>> seen(n, std::vector<char>(inst, 0));
  for (const StragglerOp& op : ops) {
    const std::string name = op_name(op.kind, op.seq, op.stage);
    const auto it = id.find(name);
    const std::string where = " (step " + std::to_string(op.step) + ", data-parallel rank " +
                              std::to_string(op.dp_rank) + ")";
    if (it == id.end()) throw Error("op " + name + where + " is not in the first step's graph");
    const std::size_t i =
        static_cast<std::size_t>(std::distance(steps.begin(), steps.find(op.step))) *
            static_cast<std::size_t>(dp) +
        static_cast<std::size_t>(op.dp_rank);
    start[it->second][i] = op.start;
    end[it->second][i] = op.end;
    seen[it->second][i] = 1;
  }
  for (std::size_t v = 0; v < n; ++v)
    for (std::size_t i = 0; i < inst; ++i)
      if (!seen[v][i])
        throw Error("op " + g.nodes[v].name + " is missing in step " +
                    std::to_string(g.steps[i / static_cast<std::size_t>(dp)]) +
                    ", data-parallel rank " + std::to_string(i % static_cast<std::size_t>(dp)));
  g.duration.assign(n, std::vector<double>(inst));
  for (std::size_t v = 0; v < n; ++v)
    for (std::size_t i = 0; i < inst; ++i) g.duration[v][i] = end[v][i] - start[v][i];
  set_transfers(g, start, end);
  return g;
}

}  // namespace commprof
