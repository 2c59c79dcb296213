// SPDX-License-Identifier: MIT
// A reader of Chakra execution traces (.et) written here from the protobuf wire format: varints,
// tags and length-delimited messages parsed by hand, nothing shared with commprof's encoder
// (workloads/prediction/chakra/protobuf_writer.*, chakra_trace.*). The field and enum numbers
// are typed in from Chakra's et_def.proto (mlcommons/chakra, schema/protobuf/et_def.proto), not
// from commprof's chakra_schema.hpp. Used by the export's unit test and by the checker of the files
// `commprof export-chakra` writes (tests/tools/chakra_files_check.cpp).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace commprof::chakra_wire {

struct Cursor {
  const std::string& s;
  std::size_t at = 0;
  bool done() const { return at >= s.size(); }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      if (at >= s.size() || shift > 63) throw std::runtime_error("truncated varint");
      const auto byte = static_cast<unsigned char>(s[at++]);
      v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return v;
    }
  }
  std::string chunk() {
    const std::uint64_t n = varint();
    if (at + n > s.size()) throw std::runtime_error("truncated field");
    std::string out = s.substr(at, n);
    at += n;
    return out;
  }
};

// AttributeProto's members of its oneof `value` that the export may set (et_def.proto).
constexpr int kInt32Val = 7, kInt64Val = 9, kUint64Val = 13, kBoolVal = 27, kBoolList = 28,
              kStringVal = 29;

struct Attr {
  std::string name;
  int field = 0;  // which member of the oneof was set
  std::uint64_t number = 0;
  std::string text;
  std::vector<bool> list;
};

struct Node {
  std::uint64_t id = 0, type = 0, start = 0, duration = 0;
  std::string name;
  std::vector<std::uint64_t> ctrl, data;
  std::vector<Attr> attrs;
  const Attr& attr(const std::string& n) const {
    for (const Attr& a : attrs)
      if (a.name == n) return a;
    throw std::runtime_error("node " + name + " has no attribute " + n);
  }
  bool has(const std::string& n) const {
    for (const Attr& a : attrs)
      if (a.name == n) return true;
    return false;
  }
};

// A repeated uint64 field, packed (wire type 2) or not (wire type 0).
inline void repeated(Cursor& c, int wire, std::vector<std::uint64_t>& out) {
  if (wire == 0) {
    out.push_back(c.varint());
    return;
  }
  const std::string body = c.chunk();
  Cursor in{body};
  while (!in.done()) out.push_back(in.varint());
}

inline Attr read_attr(const std::string& bytes) {
  Attr a;
  Cursor c{bytes};
  while (!c.done()) {
    const std::uint64_t key = c.varint();
    const int field = static_cast<int>(key >> 3), wire = static_cast<int>(key & 7);
    const bool number =
        field == kInt32Val || field == kInt64Val || field == kUint64Val || field == kBoolVal;
    if (field == 1 && wire == 2) {
      a.name = c.chunk();
    } else if (number && wire == 0) {
      a.field = field;
      a.number = c.varint();
    } else if (field == kStringVal && wire == 2) {
      a.field = field;
      a.text = c.chunk();
    } else if (field == kBoolList && wire == 2) {  // BoolList { repeated bool values = 1; }
      a.field = field;
      const std::string list = c.chunk();
      Cursor l{list};
      while (!l.done()) {
        const std::uint64_t k = l.varint();
        if ((k >> 3) != 1) throw std::runtime_error("unexpected BoolList field");
        std::vector<std::uint64_t> v;
        repeated(l, static_cast<int>(k & 7), v);
        for (const std::uint64_t b : v) a.list.push_back(b != 0);
      }
    } else {
      throw std::runtime_error("unexpected attribute field " + std::to_string(field) +
                               " (wire type " + std::to_string(wire) + ") in '" + a.name + "'");
    }
  }
  return a;
}

inline Node read_node(const std::string& bytes) {
  Node n;
  Cursor c{bytes};
  while (!c.done()) {
    const std::uint64_t key = c.varint();
    const int field = static_cast<int>(key >> 3), wire = static_cast<int>(key & 7);
    switch (field) {
      case 1:
        n.id = c.varint();
        break;
      case 2:
        n.name = c.chunk();
        break;
      case 3:
        n.type = c.varint();
        break;
      case 4:
        repeated(c, wire, n.ctrl);
        break;
      case 5:
        repeated(c, wire, n.data);
        break;
      case 6:
        n.start = c.varint();
        break;
      case 7:
        n.duration = c.varint();
        break;
      case 10:
        n.attrs.push_back(read_attr(c.chunk()));
        break;
      default:
        throw std::runtime_error("unexpected node field " + std::to_string(field));
    }
  }
  return n;
}

struct Trace {
  std::string version;
  std::vector<Attr> meta;
  std::vector<Node> nodes;
};

// A file: length-delimited messages, GlobalMetadata { string version = 1; repeated attr = 2 }
// first, then Nodes.
inline Trace read_trace(const std::string& file) {
  Trace t;
  Cursor c{file};
  bool first = true;
  while (!c.done()) {
    const std::string message = c.chunk();
    if (first) {
      Cursor m{message};
      while (!m.done()) {
        const std::uint64_t key = m.varint();
        if ((key >> 3) == 1)
          t.version = m.chunk();
        else if ((key >> 3) == 2)
          t.meta.push_back(read_attr(m.chunk()));
        else
          throw std::runtime_error("unexpected metadata field");
      }
      first = false;
    } else {
      t.nodes.push_back(read_node(message));
    }
  }
  return t;
}

// NodeType values of et_def.proto.
constexpr std::uint64_t kComp = 4, kSend = 5, kRecv = 6, kColl = 7;
// CollectiveCommType values of et_def.proto.
constexpr std::uint64_t kAllReduce = 0, kReduce = 1, kAllGather = 2, kBroadcast = 5, kAllToAll = 6,
                        kReduceScatter = 7;

}  // namespace commprof::chakra_wire
