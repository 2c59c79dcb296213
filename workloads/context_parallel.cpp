// SPDX-License-Identifier: MIT
#include "workloads/context_parallel.hpp"

#include <sstream>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/core/name_table.hpp"

namespace commprof {

namespace {
constexpr NamedValue<CpMode> kCpModeNames[] = {
    {CpMode::kP2p, "p2p"}, {CpMode::kA2a, "a2a"}, {CpMode::kAllGather, "allgather"}};
}  // namespace

CpMode parse_cp_mode(const std::string& text) {
  return parse_name(kCpModeNames, text, "unknown --cp-mode");
}

const char* cp_mode_name(CpMode m) { return name_of(kCpModeNames, m); }

std::array<int, 2> cp_chunks(int cp, int cp_rank) { return {cp_rank, 2 * cp - 1 - cp_rank}; }

std::vector<CpBlock> cp_ring_steps(int seq, int cp, int cp_rank) {
  const int c = seq / (2 * cp);
  std::vector<CpBlock> steps;
  for (int i = 0; i < cp; ++i) {
    const int source = (cp_rank - i + cp) % cp;
    if (i == 0) {
      // The rank's chunks in order [r, 2cp−1−r]: one causal kernel over them masks exactly the
      // pairs the whole sequence's causal mask keeps.
      steps.push_back({2 * c, 2 * c, true, source});
    } else if (i <= cp_rank) {
      steps.push_back({2 * c, c, false, source});
    } else {
      steps.push_back({c, 2 * c, false, source});
    }
  }
  return steps;
}

std::vector<CpBlock> cp_allgather_blocks(int seq, int cp, int cp_rank) {
  const int c = seq / (2 * cp);
  std::vector<CpBlock> blocks;
  for (const int chunk : cp_chunks(cp, cp_rank)) blocks.push_back({c, (chunk + 1) * c, true, -1});
  return blocks;
}

std::uint64_t cp_kv_elements(const ModelShape& s, int tp, int cp) {
  return static_cast<std::uint64_t>(s.micro_batch) * static_cast<std::uint64_t>(s.seq / cp) *
         static_cast<std::uint64_t>(s.key_value_heads() / tp) *
         static_cast<std::uint64_t>(s.head_dim());
}

std::uint64_t cp_q_elements(const ModelShape& s, int tp, int cp) {
  return static_cast<std::uint64_t>(s.micro_batch) * static_cast<std::uint64_t>(s.seq / cp) *
         static_cast<std::uint64_t>(s.heads / tp) * static_cast<std::uint64_t>(s.head_dim());
}

ModelShape cp_local_shape(const ModelShape& shape, int cp) {
  ModelShape local = shape;
  local.seq = shape.seq / cp;
  return local;
}

namespace {
std::string block_text(const CpBlock& b) {
  return log::cat(b.q_seq, " queries x ", b.kv_seq, " keys", b.causal ? " causal" : " full");
}
}  // namespace

std::string cp_summary(const ModelShape& s, const ParallelLayout& l, CpMode mode, int cp_rank) {
  if (l.cp == 1) return "";
  const std::uint64_t e = dtype_size(s.dtype);
  const std::uint64_t kv = cp_kv_elements(s, l.tp, l.cp), q = cp_q_elements(s, l.tp, l.cp);
  const std::array<int, 2> chunks = cp_chunks(l.cp, cp_rank);
  std::ostringstream os;
  os << "# cp " << l.cp << ", --cp-mode " << cp_mode_name(mode) << ": " << s.seq / l.cp
     << " of the " << s.seq << " tokens per micro-batch on each CP rank";
  if (mode == CpMode::kA2a) {
    os << "\n#   per layer and micro-batch: forward all-to-alls of Q (" << q << " elements, "
       << q * e << " B), K and V (" << kv << " elements, " << kv * e << " B each), attention over "
       << s.seq << " tokens on " << s.heads / l.tp / l.cp << " heads ("
       << s.key_value_heads() / l.tp / l.cp << " key/value), all-to-all of O (" << q * e
       << " B); backward dO in, dQ, dK, dV out\n";
    return os.str();
  }
  os << "; cp rank " << cp_rank << " holds chunks " << chunks[0] << " and " << chunks[1] << " of "
     << 2 * l.cp << " (" << s.seq / (2 * l.cp) << " tokens each)\n";
  if (mode == CpMode::kP2p) {
    const std::vector<CpBlock> steps = cp_ring_steps(s.seq, l.cp, cp_rank);
    os << "#   per layer and micro-batch: " << l.cp - 1 << " ring steps forward, each sending K+V ("
       << 2 * kv << " elements, " << 2 * kv * e << " B) to cp rank " << (cp_rank + 1) % l.cp
       << " and receiving as much from " << (cp_rank + l.cp - 1) % l.cp << "; backward " << l.cp - 1
       << " of K+V and " << l.cp << " of dK+dV (as many bytes)\n";
    for (std::size_t i = 0; i < steps.size(); ++i) {
      os << "#   step " << i << ": K/V of cp rank " << steps[i].source << ", "
         << block_text(steps[i]) << '\n';
    }
    return os.str();
  }
  os << "#   per layer and micro-batch: all-gathers of K and V (" << kv << " elements per rank, "
     << kv * l.cp * e << " B each gathered), again in the backward, reduce-scatters of dK and dV ("
     << kv * l.cp * e << " B each)\n";
  const std::vector<CpBlock> blocks = cp_allgather_blocks(s.seq, l.cp, cp_rank);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    os << "#   chunk " << chunks[i] << ": " << block_text(blocks[i]) << " (bottom-right)\n";
  }
  return os.str();
}

void validate_context_parallel(const ModelShape& s, const ParallelLayout& l, CpMode mode) {
  if (l.cp == 1) return;
  const int chunks = mode == CpMode::kA2a ? l.cp : 2 * l.cp;
  if (s.seq % chunks != 0) {
    throw ConfigError(log::cat("--seq ", s.seq, " is not divisible by ", chunks, " (--cp-mode ",
                               cp_mode_name(mode), " splits the sequence into ",
                               mode == CpMode::kA2a ? "cp" : "2 x cp", " chunks)"));
  }
  if (mode != CpMode::kA2a) return;
  const int g = s.key_value_heads() / l.tp;
  if (g < l.cp || g % l.cp != 0) {
    throw ConfigError(log::cat("--cp-mode a2a splits each rank's key/value heads over the ", l.cp,
                               " CP ranks: ", g, " key/value heads per TP rank (",
                               s.key_value_heads(), " over tp ", l.tp, ") are not a multiple of ",
                               l.cp, " (use --cp-mode p2p or allgather)"));
  }
}

}  // namespace commprof
