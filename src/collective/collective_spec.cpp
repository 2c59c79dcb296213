// SPDX-License-Identifier: MIT
#include "src/collective/collective_spec.hpp"

#include <algorithm>
#include <stdexcept>

namespace commprof {
namespace {

// Per-rank chunk of a divided collective, rounded down to a multiple of 16 bytes as nccl-tests
// does: (count / nranks) & ~(16 / eltSize − 1).
std::uint64_t divided_chunk(std::uint64_t total_elements, std::size_t elem_size, int n) {
  std::uint64_t chunk = total_elements / static_cast<std::uint64_t>(n);
  const std::uint64_t align = elem_size < 16 ? 16 / elem_size : 1;
  return chunk & ~(align - 1);
}

const CollectiveSpec kSpecs[] = {
    {CollectiveKind::kAllReduce, "allreduce", "2(n-1)/n", true, false},
    {CollectiveKind::kAllGather, "allgather", "(n-1)/n", false, false},
    {CollectiveKind::kReduceScatter, "reducescatter", "(n-1)/n", true, false},
    {CollectiveKind::kBroadcast, "broadcast", "1", false, true},
    {CollectiveKind::kReduce, "reduce", "1", true, true},
    {CollectiveKind::kAllToAll, "alltoall", "(n-1)/n", false, false},
    {CollectiveKind::kSendRecv, "sendrecv", "1", false, false},
    // Per call, from its routed counts (AllToAllvLayout): the busiest rank's bytes to or from
    // other ranks over S; (n-1)/n when every pair exchanges the same count, as alltoall.
    {CollectiveKind::kAllToAllV, "alltoallv", "max_r off-rank bytes / S", false, false},
    // Uneven all-gather and reduce-scatter: S is the whole gathered (or reduced) buffer, the
    // same on every rank, and the factor is their even kinds', as if the counts were equal
    // (docs/analysis.md says why).
    {CollectiveKind::kAllGatherV, "allgatherv", "(n-1)/n", false, false},
    {CollectiveKind::kReduceScatterV, "reducescatterv", "(n-1)/n", true, false},
};

}  // namespace

const CollectiveSpec& collective_spec(CollectiveKind kind) {
  for (const CollectiveSpec& spec : kSpecs) {
    if (spec.kind == kind) return spec;
  }
  return kSpecs[0];
}

double CollectiveSpec::busbw_factor(int n) const {
  const double nn = static_cast<double>(n);
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2.0 * (nn - 1.0) / nn;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kAllToAllV:  // equal splits; routed ones: AllToAllvLayout
    case CollectiveKind::kAllGatherV:
    case CollectiveKind::kReduceScatterV:
      return (nn - 1.0) / nn;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
    case CollectiveKind::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

CollectiveSizes CollectiveSpec::sizes(std::uint64_t requested_bytes, DType dtype, int n) const {
  const std::size_t s = dtype_size(dtype);
  const std::uint64_t elements = requested_bytes / s;
  const std::uint64_t nn = static_cast<std::uint64_t>(n);
  CollectiveSizes out;
  switch (kind) {
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
    case CollectiveKind::kSendRecv:
      out.count = out.send_count = out.recv_count = elements;
      break;
    case CollectiveKind::kAllGather:   // count = elements sent per rank; S = receive buffer
    case CollectiveKind::kAllGatherV:  // as even as the counts can be (theirs come with a call)
      out.count = out.send_count = divided_chunk(elements, s, n);
      out.recv_count = out.count * nn;
      break;
    case CollectiveKind::kReduceScatter:  // count = elements received per rank; S = send buffer
    case CollectiveKind::kReduceScatterV:
      out.count = out.recv_count = divided_chunk(elements, s, n);
      out.send_count = out.count * nn;
      break;
    case CollectiveKind::kAllToAll:  // count = elements per peer; S = whole buffer
      out.count = divided_chunk(elements, s, n);
      out.send_count = out.recv_count = out.count * nn;
      break;
    case CollectiveKind::kAllToAllV:  // count = elements a rank sends in all; S = that, as mean
      out.count = out.send_count = out.recv_count = elements;
      break;
  }
  out.bytes = std::max(out.send_count, out.recv_count) * s;
  return out;
}

CollectiveSizes CollectiveSpec::sizes_for_count(std::uint64_t count, DType dtype, int n) const {
  const auto nn = static_cast<std::uint64_t>(n);
  CollectiveSizes out;
  out.count = out.send_count = out.recv_count = count;
  if (kind == CollectiveKind::kAllGather || kind == CollectiveKind::kAllGatherV) {
    out.recv_count = count * nn;
  }
  if (kind == CollectiveKind::kReduceScatter || kind == CollectiveKind::kReduceScatterV) {
    out.send_count = count * nn;
  }
  if (kind == CollectiveKind::kAllToAll) out.send_count = out.recv_count = count * nn;
  out.bytes = std::max(out.send_count, out.recv_count) * dtype_size(dtype);
  return out;
}

std::uint64_t reduce_stride(DType dtype, int n) {
  const std::uint64_t limit = dtype_max_exact_integer(dtype);
  const auto nn = static_cast<std::uint64_t>(n);
  return nn <= limit ? 1 : (nn + limit - 1) / limit;
}

std::uint64_t reduce_modulus(DType dtype, int n) {
  const std::uint64_t stride = reduce_stride(dtype, n);
  const std::uint64_t contributors = (static_cast<std::uint64_t>(n) + stride - 1) / stride;
  const std::uint64_t limit = dtype_max_exact_integer(dtype) / contributors + 1;
  return std::max<std::uint64_t>(2, std::min<std::uint64_t>(7, limit));
}

std::uint64_t data_modulus(DType dtype) {
  switch (dtype) {
    case DType::kBFloat16:
      return 251;  // largest prime ≤ 256
    case DType::kFloat16:
      return 2039;  // largest prime ≤ 2048
    default:
      return 65521;  // largest prime < 2^16
  }
}

FillPattern CollectiveSpec::input(int rank, int n, DType dtype, std::uint64_t seed) const {
  FillPattern p;
  p.rank = rank;
  p.seed = seed;
  if (reduces) {
    p.kind = FillKind::kReduceInput;
    p.modulus = reduce_modulus(dtype, n);
    p.stride = reduce_stride(dtype, n);
  } else {
    p.kind = FillKind::kData;
    p.modulus = data_modulus(dtype);
  }
  return p;
}

ExpectPattern CollectiveSpec::expected(int rank, int n, int root, DType dtype, std::uint64_t seed,
                                       const CollectiveSizes& sizes) const {
  ExpectPattern e;
  e.nranks = n;
  e.rank = rank;
  e.seed = seed;
  e.modulus = reduces ? reduce_modulus(dtype, n) : data_modulus(dtype);
  e.stride = reduces ? reduce_stride(dtype, n) : 1;
  switch (kind) {
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kReduce:
      e.kind = ExpectKind::kReduceSum;
      break;
    case CollectiveKind::kReduceScatter:  // my block of the reduced send buffers
      e.kind = ExpectKind::kReduceSum;
      e.first_index = static_cast<std::uint64_t>(rank) * sizes.count;
      break;
    case CollectiveKind::kAllGather:
      e.kind = ExpectKind::kGathered;
      e.chunk = sizes.count;
      break;
    case CollectiveKind::kAllToAll:
      e.kind = ExpectKind::kAllToAll;
      e.chunk = sizes.count;
      break;
    case CollectiveKind::kBroadcast:
      e.kind = ExpectKind::kData;
      e.source = root;
      break;
    case CollectiveKind::kSendRecv:
      e.kind = ExpectKind::kData;
      e.source = (rank - 1 + n) % n;
      break;
    case CollectiveKind::kAllToAllV:
      // Each peer's block has its own source and offset: no one pattern covers the buffer.
      throw std::logic_error("alltoallv's data is checked per peer (AllToAllvLayout::expected)");
    case CollectiveKind::kAllGatherV:
    case CollectiveKind::kReduceScatterV:
      throw std::logic_error("allgatherv and reducescatterv are not benchmarked: no pattern");
  }
  return e;
}

bool CollectiveSpec::output_defined(int rank, int root) const {
  return kind != CollectiveKind::kReduce || rank == root;
}

}  // namespace commprof
