// SPDX-License-Identifier: MIT
#include "workloads/prediction/chakra/protobuf_writer.hpp"

#include "analysis/byte_codec.hpp"

namespace commprof::chakra {
namespace {

// Protobuf's wire types: 0 varint, 2 length-delimited (the others are not written here).
constexpr int kWireVarint = 0;
constexpr int kWireLengthDelimited = 2;

}  // namespace

void ProtoWriter::tag(int field, int wire_type) {
  put_varint(data_,
             (static_cast<std::uint64_t>(field) << 3) | static_cast<std::uint64_t>(wire_type));
}

void ProtoWriter::varint(int field, std::uint64_t value) {
  tag(field, kWireVarint);
  put_varint(data_, value);
}

void ProtoWriter::bytes(int field, std::string_view value) {
  tag(field, kWireLengthDelimited);
  put_varint(data_, value.size());
  data_.append(value);
}

void ProtoWriter::packed(int field, const std::vector<std::uint64_t>& values) {
  if (values.empty()) return;
  std::string body;
  for (const std::uint64_t v : values) put_varint(body, v);
  bytes(field, body);
}

void append_delimited(std::string& out, const ProtoWriter& message) {
  put_varint(out, message.data().size());
  out.append(message.data());
}

}  // namespace commprof::chakra
