// SPDX-License-Identifier: MIT
// A rank file's steps and ops as its readers hand them out (views into the text read) and as its
// field table (rank_fields.hpp) reads them: the types alone, so the table and the file's reading
// and writing (rank_file.hpp) need not include each other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "src/timeline/op_record.hpp"

namespace commprof {

/// A list of numbers as read, pointing into the reader's storage or a record's vector.
template <class T>
class ListView {
 public:
  ListView() = default;
  ListView(const T* data, std::size_t size) : data_(data), size_(size) {}
  // Implicit, as a string_view from a string: a record's list seen as a view.
  ListView(const std::vector<T>& v)  // NOLINT(google-explicit-constructor)
      : data_(v.data()), size_(v.size()) {}
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  const T* data_ = nullptr;
  std::size_t size_ = 0;
};
/// Op indices ("after") or world ranks ("send_to", "recv_from").
using OpIndices = ListView<std::int32_t>;
/// Bytes per peer ("peer_send_bytes", "peer_recv_bytes").
using PeerBytes = ListView<std::uint64_t>;

/// One op as read, its strings pointing into the file's text (valid during RankStepSink::step).
struct OpView {
  std::string_view name, stream, collective, comm;
  Category category = Category::kComp;
  int comm_size = 0;
  std::int64_t seq = -1;
  std::uint64_t bytes = 0;
  double flops = 0.0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::string_view dtype, algo, proto;  // optional fields: empty / 0 / false when absent
  std::uint64_t count = 0;
  int channels = 0;
  std::int64_t enqueue_ns = 0;
  bool graph = false;
  int in_place = -1;  ///< -1: not known
  std::uint64_t recv_bytes = 0;
  OpIndices after;               ///< valid as long as the strings are
  OpIndices send_to, recv_from;  ///< world ranks (not op indices), as long as the strings are
  PeerBytes peer_send_bytes, peer_recv_bytes;  ///< as long as the strings are
  int comm_rank = -1;                          ///< -1: not known
  std::int64_t duration_ns() const { return end_ns - start_ns; }
};

/// One step as read; `ops` valid during RankStepSink::step only.
struct StepView {
  int index = 0;
  bool warmup = false;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  const std::vector<OpView>* ops = nullptr;
};

/// Views of a materialised step (the slow path, and tests).
std::vector<OpView> op_views(const StepRecord& step);
/// The step a view describes, with its own strings.
StepRecord to_step_record(const StepView& step);

}  // namespace commprof
