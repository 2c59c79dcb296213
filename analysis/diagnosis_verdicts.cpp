// SPDX-License-Identifier: MIT
// The classes of diagnosis.hpp, from the joined facts: what did not complete, and the stragglers.
#include <algorithm>
#include <numeric>

#include "analysis/diagnosis.hpp"
#include "src/core/log.hpp"

namespace commprof::diagnosis {
namespace {

std::string rank_list(const std::set<int>& ranks) {
  return rank_ranges(std::vector<int>(ranks.begin(), ranks.end()));
}

std::string plural(const std::set<int>& ranks) {
  return log::cat(ranks.size() == 1 ? "rank " : "ranks ", rank_list(ranks));
}

std::string describe(const Args& a) {
  std::string out = log::cat(a.function, " of ", a.bytes, " B");
  if (a.count != 0) out += log::cat(", count ", a.count);
  if (!a.dtype.empty()) out += log::cat(", ", a.dtype);
  return out;
}

std::string what(const Key& key, const KeyState& s) {
  std::string out = key.function == "p2p" ? log::cat("transfer ", key.comm, " #", key.seq)
                                          : log::cat(key.comm, " ", key.function, " #", key.seq);
  if (!s.name.empty())
    out += log::cat(" (", s.name, s.step >= 0 ? log::cat(", step ", s.step) : "", ")");
  if (s.graph) out += " in a CUDA graph's replay";
  return out;
}

// Each communicator's members the inputs know of: ranks whose files name it. Built once, so
// that a key's members are a lookup (asking every rank for every key grew with ranks squared:
// 13.7 s for 8,192 synthetic ranks against 3.5 s for 4,096).
using Members = std::map<std::string, std::set<int>>;
Members members_by_comm(const Part& part) {
  Members out;
  for (const auto& [rank, facts] : part.ranks) {
    for (const std::string& comm : facts.comms) out[comm].insert(rank);
  }
  return out;
}

// The members of the key's communicator; a transfer's are its two ends.
std::set<int> members(const Members& by_comm, const Key& key) {
  std::set<int> out;
  if (key.function == "p2p") {
    const auto space = key.comm.rfind(' ');
    const auto arrow = key.comm.find("->", space);
    if (space == std::string::npos || arrow == std::string::npos) return out;
    out.insert(std::stoi(key.comm.substr(space + 1, arrow - space - 1)));
    out.insert(std::stoi(key.comm.substr(arrow + 2)));
    return out;
  }
  const auto it = by_comm.find(key.comm);
  return it == by_comm.end() ? out : it->second;
}

Problem problem_of(const Key& key, const KeyState& s, std::string kind) {
  Problem p;
  p.kind = std::move(kind);
  p.comm = key.comm;
  p.function = key.function;
  p.name = s.name;
  p.seq = key.seq;
  p.step = s.step;
  return p;
}

// Ranks called it with other arguments: at this key, or (where the others left no record of it)
// against every earlier call of the same op on the communicator.
bool arguments_differ(const Part& part, const Key& key, const KeyState& s, Problem& p) {
  std::map<Args, std::set<int>> seen = s.args;
  std::string against = "the others";
  if (seen.size() == 1 && key.function != "p2p") {
    const auto usual = part.usual.find({key.comm, s.name});
    if (usual == part.usual.end() || usual->second.size() != 1 ||
        usual->second.begin()->first == seen.begin()->first)
      return false;
    seen.insert(*usual->second.begin());
    against = "every earlier call of it on the communicator";
  }
  if (seen.size() < 2) return false;
  // The majority's arguments are the expected ones; every other set names its ranks. Without a
  // majority (two ranks, one each) no rank is the odd one: every rank is named.
  const auto most = std::max_element(seen.begin(), seen.end(), [](const auto& a, const auto& b) {
    return a.second.size() < b.second.size();
  });
  const bool majority = std::count_if(seen.begin(), seen.end(), [&](const auto& a) {
                          return a.second.size() == most->second.size();
                        }) == 1;
  std::set<int> odd;
  std::string detail;
  for (const auto& [a, ranks] : seen) {
    if (majority && &a == &most->first) continue;
    odd.insert(ranks.begin(), ranks.end());
    detail += log::cat("; ", plural(ranks), ": ", describe(a));
  }
  p.ranks = rank_list(odd);
  if (majority) {
    p.verdict = log::cat("arguments differ: ", what(key, s), ": ", plural(odd),
                         " called it with other arguments than ", against);
    p.evidence = log::cat("expected ", describe(most->first), detail);
  } else {
    p.verdict = log::cat("arguments differ: ", what(key, s), ": ", plural(odd),
                         " called it with different arguments, no majority to tell which rank "
                         "is wrong");
    p.evidence = detail.substr(2);
  }
  for (int r : odd) {
    const auto f = part.ranks.find(r);
    if (f != part.ranks.end() && !f->second.error.empty())
      p.evidence +=
          log::cat("; rank ", r, "'s step ", f->second.failed_step, " failed: ", f->second.error);
  }
  return true;
}

// Where an absent rank went instead: on with its steps past this one (the CPU took another
// path), or nowhere it recorded (stopped or died before writing).
void absent_ranks(const Part& part, const Key& key, const KeyState& s, const std::set<int>& absent,
                  std::vector<Problem>& out) {
  std::set<int> went_on, silent;
  std::string went_on_detail, silent_detail;
  for (int r : absent) {
    const RankFacts& f = part.ranks.at(r);
    const auto last = f.last_seq.find(key.comm);
    const std::string last_on_comm =
        last == f.last_seq.end()
            ? log::cat("none on ", key.comm)
            : log::cat("#", last->second, " ", f.last_name.at(key.comm), " on ", key.comm);
    if (f.last_step >= s.step || f.failed_step >= 0) {
      went_on.insert(r);
      went_on_detail += log::cat(
          "; rank ", r, ": ",
          f.failed_step >= 0 ? log::cat("its step ", f.failed_step, " failed waiting on other work")
          : f.source == "flight-recorder"
              ? std::string("its Flight Recorder dump has no entry for it (entries are made at "
                            "enqueue)")
              : log::cat("recorded step ", s.step, " whole without it"),
          ", its last op on the communicator ", last_on_comm, ", its last op ",
          f.last_op.empty() ? "none" : f.last_op);
    } else {
      silent.insert(r);
      silent_detail += log::cat("; rank ", r, ": last step recorded ", f.last_step,
                                ", its last op ", f.last_op.empty() ? "none" : f.last_op);
    }
  }
  std::set<int> waiting = s.unfinished;
  for (int r : s.finished) waiting.erase(r);
  if (!went_on.empty()) {
    Problem p = problem_of(key, s, "never_launched");
    p.ranks = rank_list(went_on);
    p.waiting = rank_list(waiting);
    p.verdict = log::cat("never launched on ", plural(went_on), ": ", what(key, s),
                         " (the CPU took another path)");
    p.evidence = log::cat("finished on [", rank_list(s.finished), "], unfinished on [",
                          rank_list(waiting), "]", went_on_detail);
    out.push_back(std::move(p));
  }
  if (!silent.empty()) {
    Problem p = problem_of(key, s, "no_record");
    p.ranks = rank_list(silent);
    p.waiting = rank_list(waiting);
    p.verdict =
        log::cat("no record from ", plural(silent), " at ", what(key, s),
                 ": stopped or died before writing (a stall, SIGSTOP, SIGKILL or a crash); "
                 "cannot tell never launched from started but not finished: this source has no "
                 "record of the rank after its last step");
    p.evidence = log::cat("finished on [", rank_list(s.finished), "], unfinished on [",
                          rank_list(waiting), "]", silent_detail);
    out.push_back(std::move(p));
  }
}

// What the sources say of the GPU's side of a call launched everywhere and unfinished: not
// started on some ranks (their streams are held before it: the GPU stopped there), started on
// every one (the GPU or the link does not finish it), or not known.
std::string started_or_not(const KeyState& s, const std::set<int>& waiting) {
  std::set<int> started, not_started, unknown;
  for (int r : waiting) {
    if (s.gpu_started.count(r) != 0) {
      started.insert(r);
    } else if (s.gpu_not_started.count(r) != 0) {
      not_started.insert(r);
    } else {
      unknown.insert(r);
    }
  }
  if (!not_started.empty())
    return log::cat("; launched but not started on ", plural(not_started),
                    " (its kernel never began: the GPU stopped before it there)",
                    started.empty() ? "" : log::cat(", started on ", plural(started)),
                    unknown.empty() ? "" : log::cat(", not known on ", plural(unknown)));
  if (!started.empty() && unknown.empty())
    return "; started on every one and not finished: the GPU or the link (a kernel that does "
           "not complete: a peer's data that never comes, a failed link)";
  if (!started.empty())
    return log::cat("; started on ", plural(started), ", not known on ", plural(unknown));
  return "; cannot tell launched but not started from started but not finished: no kernel "
         "records in this source";
}

// One key that did not complete everywhere: its problems (none when it did).
std::vector<Problem> classify(const Part& part, const Members& by_comm, const Key& key,
                              const KeyState& s) {
  std::vector<Problem> out;
  const std::set<int> m = members(by_comm, key);
  std::set<int> absent;
  for (int r : m) {
    if (s.finished.count(r) == 0 && s.unfinished.count(r) == 0 && part.ranks.count(r) != 0)
      absent.insert(r);
  }
  // Finished on one rank means every member took part (each contributes before any finishes),
  // so a member whose record says only "submitted" ran it too.
  const bool done_somewhere = !s.finished.empty() && key.function != "p2p";
  if (absent.empty() && (s.unfinished.empty() || done_somewhere)) return out;
  if (!absent.empty()) {
    absent_ranks(part, key, s, absent, out);
    return out;
  }
  Problem q = problem_of(key, s, "launched_not_finished");
  std::set<int> waiting = s.unfinished;
  for (int r : s.finished) waiting.erase(r);
  q.ranks = rank_list(waiting);
  // Members without input (a dump missing) may not have launched it: say whose records speak.
  const std::string every = s.comm_size > static_cast<int>(m.size())
                                ? log::cat("launched on every member read (", m.size(), " of ",
                                           s.comm_size, "; the others gave no input)")
                                : std::string("launched on every member");
  q.verdict = log::cat(every, ", not finished on ", plural(waiting), ": ", what(key, s),
                       started_or_not(s, waiting));
  q.evidence = log::cat("finished on [", rank_list(s.finished), "], submitted and unfinished on [",
                        rank_list(waiting), "]");
  out.push_back(std::move(q));
  return out;
}

// Per communicator whose ranks' counts of launched collectives differ (the plugin counts every
// call, the untimed ones too), where no key of the first call the laggards lack was recorded
// (an untimed call: counted, not recorded, so its function is not known): the laggards never
// launched it.
std::vector<Problem> uncounted_launches(const Part& part, const std::set<std::string>& reported) {
  std::map<std::string, std::map<std::int64_t, std::set<int>>> by_comm;  // comm -> count -> ranks
  for (const auto& [rank, f] : part.ranks) {
    for (const auto& [comm, n] : f.launched) by_comm[comm][n].insert(rank);
  }
  std::vector<Problem> out;
  for (const auto& [comm, counts] : by_comm) {
    if (counts.size() < 2 || reported.count(comm) != 0) continue;
    const std::int64_t seq = counts.begin()->first;  // the laggards' next call
    const auto recorded = std::find_if(part.keys.begin(), part.keys.end(), [&](const auto& k) {
      return k.first.comm == comm && k.first.seq == seq && k.first.function != "p2p";
    });
    if (recorded != part.keys.end()) continue;  // the keys' own verdict speaks for it
    Problem p;
    p.kind = "never_launched";
    p.comm = comm;
    p.function = "collective";
    p.seq = seq;
    const std::set<int>& laggards = counts.begin()->second;
    std::set<int> others;
    for (auto it = std::next(counts.begin()); it != counts.end(); ++it)
      others.insert(it->second.begin(), it->second.end());
    p.ranks = rank_list(laggards);
    p.waiting = rank_list(others);
    p.verdict = log::cat("never launched on ", plural(laggards), ": ", comm, " collective #", seq,
                         " (the CPU took another path; an untimed call: counted, not recorded, "
                         "so its function is not known)");
    p.evidence = log::cat(plural(laggards), " launched ", seq, " collective(s) on ", comm,
                          "; up to ", counts.rbegin()->first, " on ", plural(others),
                          " (the NCCL profiler plugin's counts)");
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

std::vector<Problem> stragglers(const Part& part, const Options& options);

std::vector<Problem> diagnose(const Part& part, const Options& options) {
  std::vector<Problem> out;
  // Calls whose arguments differ, wherever they are: a cause, which the ranks then wait behind.
  std::set<std::string> reported;
  for (const auto& [key, s] : part.keys) {
    Problem p = problem_of(key, s, "arguments_differ");
    if (!arguments_differ(part, key, s, p)) continue;
    out.push_back(std::move(p));
  }
  // Per communicator the first key that did not complete: those after it wait behind it.
  std::map<std::string, int> behind;
  std::map<std::string, std::vector<Problem>> pending;
  const Members by_comm = members_by_comm(part);
  for (const auto& [key, s] : part.keys) {
    if (reported.count(key.comm) != 0) {
      if (s.finished.size() < static_cast<std::size_t>(s.comm_size)) ++behind[key.comm];
      continue;
    }
    std::vector<Problem> found = classify(part, by_comm, key, s);
    if (found.empty()) continue;
    // Launched everywhere and unfinished: a later key of the communicator may name its cause
    // (a receive never posted shifts a pair's transfers by one).
    if (found.front().kind == "launched_not_finished") {
      if (pending.count(key.comm) == 0) {
        pending[key.comm] = std::move(found);
      } else {
        ++behind[key.comm];
      }
      continue;
    }
    pending.erase(key.comm);
    reported.insert(key.comm);
    for (Problem& p : found) out.push_back(std::move(p));
  }
  for (auto& [comm, found] : pending) {
    if (reported.count(comm) != 0) continue;
    for (Problem& p : found) out.push_back(std::move(p));
  }
  for (Problem& p : uncounted_launches(part, reported)) out.push_back(std::move(p));
  for (Problem& p : out) {
    if (const auto b = behind.find(p.comm); b != behind.end())
      p.evidence += log::cat("; ", b->second, " later on ", p.comm, " not complete behind it");
  }
  // Where some rank is to blame, what was launched everywhere and left unfinished waits on it
  // (a pipeline stalls whole): counted in the first verdict's evidence, not verdicts of their own.
  const auto is_waiting = [](const Problem& p) { return p.kind == "launched_not_finished"; };
  const auto waiting = std::count_if(out.begin(), out.end(), is_waiting);
  if (waiting > 0 && waiting < static_cast<std::ptrdiff_t>(out.size())) {
    out.erase(std::remove_if(out.begin(), out.end(), is_waiting), out.end());
    out.front().evidence += log::cat("; ", waiting,
                                     " other collective(s) or transfer(s) launched everywhere and "
                                     "unfinished, waiting behind it");
  }
  if (out.empty()) out = stragglers(part, options);
  return out;
}

}  // namespace commprof::diagnosis
