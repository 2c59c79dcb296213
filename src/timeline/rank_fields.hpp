// SPDX-License-Identifier: MIT
// The fields of a rank file (schema commprof.rank), each named once: its key, the member that
// holds it in the record and in the view the streaming reader hands out, and what a reader checks
// beyond its type. The writer, both readers, the record/view conversions and the fuzz targets'
// differ all walk these tables, so a new field is one line here and one member in op_record.hpp
// and rank_file.hpp. (schema, version, config, units, steps and ops are structure, not fields:
// the writer and the readers handle them by name.)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "src/timeline/op_record.hpp"
#include "src/timeline/rank_views.hpp"

namespace commprof::rank_fields {

/// What a reader checks of a value beyond its type.
enum class Check {
  kNone,
  kTime,         ///< within [-kMaxTimeNs, kMaxTimeNs]
  kNonNegative,  ///< not below zero (and, for a number, not NaN); checked once the record is read
};

/// One field: its key in the file, its member in the record and in the view. An optional field
/// is written only when its value is not the member's default (its initializer in the record:
/// -1 for comm_rank, whose 0 is a rank), and a file without it reads as that default: what only
/// some sources know (NCCL's algorithm of a collective) costs the other files nothing, and files of
/// earlier writers stay readable.
template <class Record, class RecordValue, class View, class ViewValue>
struct Field {
  using record_type = Record;
  using view_type = View;
  std::string_view key;
  RecordValue Record::*record;
  ViewValue View::*view;
  Check check;
  bool optional;
};

template <class R, class RV, class V, class VV>
constexpr Field<R, RV, V, VV> field(std::string_view key, RV R::*record, VV V::*view,
                                    Check check = Check::kNone) {
  return {key, record, view, check, false};
}
template <class R, class RV, class V, class VV>
constexpr Field<R, RV, V, VV> optional_field(std::string_view key, RV R::*record, VV V::*view,
                                             Check check = Check::kNone) {
  return {key, record, view, check, true};
}

/// Every field of the header but the structural ones, in the order the writer writes them (and
/// the streaming reader expects: all of them before "steps"). The record is its own view.
inline constexpr auto kHeader =
    std::make_tuple(field("rank", &RankTimeline::rank, &RankTimeline::rank),
                    field("world_size", &RankTimeline::world_size, &RankTimeline::world_size),
                    field("local_rank", &RankTimeline::local_rank, &RankTimeline::local_rank),
                    field("host", &RankTimeline::host, &RankTimeline::host),
                    field("device", &RankTimeline::device, &RankTimeline::device),
                    field("backend", &RankTimeline::backend, &RankTimeline::backend),
                    field("clock_offset_ns", &RankTimeline::clock_offset_ns,
                          &RankTimeline::clock_offset_ns, Check::kTime));

/// A step's fields but "ops" (written last).
inline constexpr auto kStep =
    std::make_tuple(field("index", &StepRecord::index, &StepView::index),
                    field("warmup", &StepRecord::warmup, &StepView::warmup),
                    field("start_ns", &StepRecord::start_ns, &StepView::start_ns, Check::kTime),
                    field("end_ns", &StepRecord::end_ns, &StepView::end_ns, Check::kTime));

/// An op's fields.
inline constexpr auto kOp = std::make_tuple(
    field("name", &OpRecord::name, &OpView::name),
    field("category", &OpRecord::category, &OpView::category),
    field("stream", &OpRecord::stream, &OpView::stream),
    field("collective", &OpRecord::collective, &OpView::collective),
    field("comm", &OpRecord::comm, &OpView::comm),
    field("comm_size", &OpRecord::comm_size, &OpView::comm_size, Check::kNonNegative),
    field("seq", &OpRecord::seq, &OpView::seq), field("bytes", &OpRecord::bytes, &OpView::bytes),
    field("flops", &OpRecord::flops, &OpView::flops, Check::kNonNegative),
    field("start_ns", &OpRecord::start_ns, &OpView::start_ns, Check::kTime),
    field("end_ns", &OpRecord::end_ns, &OpView::end_ns, Check::kTime),
    optional_field("dtype", &OpRecord::dtype, &OpView::dtype),
    optional_field("count", &OpRecord::count, &OpView::count),
    optional_field("algo", &OpRecord::algo, &OpView::algo),
    optional_field("proto", &OpRecord::proto, &OpView::proto),
    optional_field("channels", &OpRecord::channels, &OpView::channels, Check::kNonNegative),
    optional_field("enqueue_ns", &OpRecord::enqueue_ns, &OpView::enqueue_ns, Check::kTime),
    optional_field("graph", &OpRecord::graph, &OpView::graph),
    optional_field("in_place", &OpRecord::in_place, &OpView::in_place),
    optional_field("recv_bytes", &OpRecord::recv_bytes, &OpView::recv_bytes),
    optional_field("after", &OpRecord::after, &OpView::after, Check::kNonNegative),
    optional_field("send_to", &OpRecord::send_to, &OpView::send_to, Check::kNonNegative),
    optional_field("recv_from", &OpRecord::recv_from, &OpView::recv_from, Check::kNonNegative),
    optional_field("peer_send_bytes", &OpRecord::peer_send_bytes, &OpView::peer_send_bytes),
    optional_field("peer_recv_bytes", &OpRecord::peer_recv_bytes, &OpView::peer_recv_bytes),
    optional_field("comm_rank", &OpRecord::comm_rank, &OpView::comm_rank));

template <class Table>
inline constexpr std::size_t kCount = std::tuple_size_v<Table>;
static_assert(kCount<decltype(kOp)> <= 32, "readers mark the fields seen in 32-bit masks");

namespace detail {
template <class Table, class F, std::size_t... I>
constexpr void for_each(const Table& table, F& f, std::index_sequence<I...>) {
  (f(std::get<I>(table), I), ...);
}
// Byte by byte rather than through memcmp: keys are a few bytes, and the compiler unrolls this
// against the table's constant keys (the streaming reader compares every key of every op).
inline constexpr bool same_key(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}
template <class Table, class F, std::size_t... I>
bool find(const Table& table, std::string_view key, F& f, std::index_sequence<I...>) {
  return ((same_key(std::get<I>(table).key, key) && (f(std::get<I>(table), I), true)) || ...);
}
}  // namespace detail

/// Calls f(field, index) for every field of `table`, in order.
template <class Table, class F>
constexpr void for_each(const Table& table, F&& f) {
  detail::for_each(table, f, std::make_index_sequence<std::tuple_size_v<Table>>{});
}

/// Calls f(field, index) for the field of `table` whose key is `key` and returns true; false
/// when no field has that key (a field of a later writer: readers skip it).
template <class Table, class F>
bool find(const Table& table, std::string_view key, F&& f) {
  return detail::find(table, key, f, std::make_index_sequence<std::tuple_size_v<Table>>{});
}

/// The bits (1 << index) of the fields of `table` that every record must have.
template <class Table>
constexpr unsigned required_mask(const Table& table) {
  unsigned mask = 0;
  for_each(table, [&](const auto& f, std::size_t i) {
    if (!f.optional) mask |= 1u << i;
  });
  return mask;
}

/// A list of op indices ("after"): a vector in the record, a span in the view.
template <class V>
inline constexpr bool kIsIndexList =
    std::is_same_v<V, std::vector<std::int32_t>> || std::is_same_v<V, OpIndices>;
/// Any list field: the index lists and the bytes per peer.
template <class V>
inline constexpr bool kIsList = kIsIndexList<V> || std::is_same_v<V, std::vector<std::uint64_t>> ||
                                std::is_same_v<V, PeerBytes>;

template <class V>
bool any_negative(const V& list) {
  for (const std::int32_t i : list) {
    if (i < 0) return true;
  }
  return false;
}

/// `f`'s value in `r`, a record or a view.
template <class R, class F>
constexpr const auto& value_in(const R& r, const F& f) {
  if constexpr (std::is_same_v<R, typename F::record_type>) {
    return r.*(f.record);
  } else {
    return r.*(f.view);
  }
}

/// Whether `R` is an op (record or view): the one record with a comm_rank.
template <class R, class = void>
inline constexpr bool kHasCommRank = false;
template <class R>
inline constexpr bool kHasCommRank<R, std::void_t<decltype(&R::comm_rank)>> = true;

/// An op's comm_rank: -1 (not known) or an index in its communicator.
template <class R>
constexpr bool comm_rank_valid(const R& r) {
  return r.comm_rank == -1 || (r.comm_rank >= 0 && r.comm_rank < r.comm_size);
}

/// The checks a whole record (or view) must pass once every field is read, in one place for both
/// readers: nothing marked kNonNegative below zero, no end before its start, a comm_rank within
/// its communicator. Returns "" when it passes, else the problem ("end_ns is before start_ns").
template <class Table, class R>
std::string record_problem(const Table& table, const R& r) {
  if (r.end_ns < r.start_ns) return "end_ns is before start_ns";
  if constexpr (kHasCommRank<R>) {
    if (!comm_rank_valid(r)) return "comm_rank is not within [0, comm_size) (nor -1: not known)";
  }
  std::string problem;
  for_each(table, [&](const auto& f, std::size_t) {
    if (!problem.empty() || f.check != Check::kNonNegative) return;
    const auto& v = value_in(r, f);
    using V = std::decay_t<decltype(v)>;
    if constexpr (std::is_floating_point_v<V>) {
      if (!(v >= 0)) problem = std::string(f.key) + " is negative or not a number";
    } else if constexpr (kIsIndexList<V>) {
      if (any_negative(v)) problem = std::string(f.key) + " holds a negative index";
    } else if constexpr (std::is_signed_v<V>) {
      if (v < 0) problem = std::string(f.key) + " is negative";
    }
  });
  return problem;
}

/// record_problem's verdict alone, without building a message: the streaming reader's hot path.
template <class Table, class R>
bool record_valid(const Table& table, const R& r) {
  bool ok = r.end_ns >= r.start_ns;
  if constexpr (kHasCommRank<R>) ok = ok && comm_rank_valid(r);
  for_each(table, [&](const auto& f, std::size_t) {
    if (f.check != Check::kNonNegative) return;
    const auto& v = value_in(r, f);
    using V = std::decay_t<decltype(v)>;
    if constexpr (kIsIndexList<V>) {
      ok = ok && !any_negative(v);
    } else if constexpr (std::is_signed_v<V>) {
      ok = ok && v >= 0;
    }
  });
  return ok;
}

}  // namespace commprof::rank_fields
