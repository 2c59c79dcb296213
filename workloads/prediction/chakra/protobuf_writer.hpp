// SPDX-License-Identifier: MIT
// A small protobuf encoder (the wire format of developers.google.com/protocol-buffers, proto3):
// varints, length-delimited fields (strings, nested messages, packed repeated scalars), and the
// varint length prefix that Chakra's trace files put before each message. Only what the Chakra
// export needs; written here so the analysis links no protobuf library.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace commprof::chakra {

/// One message being encoded. Fields are appended in the order called; the writer does not
/// check numbers against a schema (chakra_schema.hpp holds them).
class ProtoWriter {
 public:
  /// A varint field (uint64, uint32, enum, bool). int32/int64 go through int64(): a negative
  /// value is its two's complement as 10 bytes, as protobuf encodes it.
  void varint(int field, std::uint64_t value);
  void int64(int field, std::int64_t value) { varint(field, static_cast<std::uint64_t>(value)); }
  void boolean(int field, bool value) { varint(field, value ? 1 : 0); }
  /// proto3's implicit presence: a zero scalar is not written (a reader takes it as 0).
  void varint_if_set(int field, std::uint64_t value) {
    if (value != 0) varint(field, value);
  }
  /// A length-delimited field: a string, bytes, or an encoded message.
  void bytes(int field, std::string_view value);
  void message(int field, const ProtoWriter& nested) { bytes(field, nested.data()); }
  /// A packed repeated varint field; nothing when `values` is empty.
  void packed(int field, const std::vector<std::uint64_t>& values);

  const std::string& data() const { return data_; }

 private:
  void tag(int field, int wire_type);
  std::string data_;
};

/// Appends `message` with its length as a varint before it: one record of a Chakra trace file.
void append_delimited(std::string& out, const ProtoWriter& message);

}  // namespace commprof::chakra
