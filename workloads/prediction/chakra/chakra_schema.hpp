// SPDX-License-Identifier: MIT
// The Chakra execution-trace schema as field numbers and enum values: ChakraProtoMsg in
// schema/protobuf/et_def.proto of github.com/mlcommons/chakra (commit 21585d8, 2026-05-20; the
// file last changed in a1120dd, 2024-05-09; the package calls itself 1.0.0), identical in
// github.com/astra-sim/chakra (bf222b2), which ASTRA-sim builds its feeder from. Numbers are
// the schema's facts; protobuf_writer.hpp puts them on the wire.
#pragma once

#include <cstdint>

namespace commprof::chakra {

/// GlobalMetadata: the first message of a trace file.
namespace global_metadata {
inline constexpr int kVersion = 1;  ///< string
inline constexpr int kAttr = 2;     ///< repeated AttributeProto
}  // namespace global_metadata

/// Node: one message per op after the metadata.
namespace node {
inline constexpr int kId = 1;               ///< uint64
inline constexpr int kName = 2;             ///< string
inline constexpr int kType = 3;             ///< NodeType (enum, varint)
inline constexpr int kCtrlDeps = 4;         ///< repeated uint64 (packed)
inline constexpr int kDataDeps = 5;         ///< repeated uint64 (packed)
inline constexpr int kStartTimeMicros = 6;  ///< uint64
inline constexpr int kDurationMicros = 7;   ///< uint64
inline constexpr int kAttr = 10;            ///< repeated AttributeProto
}  // namespace node

/// AttributeProto: a name and one value of a oneof; only the kinds commprof writes.
namespace attribute {
inline constexpr int kName = 1;        ///< string
inline constexpr int kInt32Val = 7;    ///< int32 (varint; negative as 10 bytes)
inline constexpr int kInt64Val = 9;    ///< int64 (varint)
inline constexpr int kUint64Val = 13;  ///< uint64 (varint)
inline constexpr int kBoolVal = 27;    ///< bool (varint 0/1)
inline constexpr int kBoolList = 28;   ///< BoolList { repeated bool values = 1; } (packed)
inline constexpr int kStringVal = 29;  ///< string
inline constexpr int kListValues = 1;  ///< the `values` field of every *List message
}  // namespace attribute

/// enum NodeType.
enum class NodeType : std::uint32_t {
  kInvalid = 0,
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kComp = 4,
  kCommSend = 5,
  kCommRecv = 6,
  kCommColl = 7,
};

/// enum CollectiveCommType.
enum class CollectiveCommType : std::int64_t {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};

}  // namespace commprof::chakra
