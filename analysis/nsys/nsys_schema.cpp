// SPDX-License-Identifier: MIT
#include "analysis/nsys/nsys_schema.hpp"

namespace commprof::nsys {

NsysSchema check_schema(Db& db) {
  NsysSchema schema;
  if (!db.has_table(kKernelTable)) db.fail("missing table " + std::string(kKernelTable));
  const std::vector<std::string> act_cols = {"start", "end", "streamId", "correlationId",
                                             "globalPid"};
  std::vector<std::string> kernel_cols = act_cols;
  kernel_cols.push_back("shortName");
  db.require_columns(kKernelTable, kernel_cols);
  if (!db.has_table("StringIds")) db.fail("missing table StringIds (kernel and NVTX names)");
  schema.memcpy = db.has_table(kMemcpyTable);
  schema.memset = db.has_table(kMemsetTable);
  if (schema.memcpy)
    db.require_columns(kMemcpyTable, {"start", "end", "streamId", "bytes", "copyKind"});
  if (schema.memset) db.require_columns(kMemsetTable, {"start", "end", "streamId", "bytes"});
  schema.runtime = db.has_table(kRuntimeTable);
  if (schema.runtime) db.require_columns(kRuntimeTable, {"start", "correlationId", "globalTid"});
  schema.nvtx = db.has_table(kNvtxTable);
  if (schema.nvtx) {
    db.require_columns(kNvtxTable, {"start", "end", "eventType", "category", "text", "textId",
                                    "globalTid", "domainId", "uint64Value"});
  }
  schema.nvtx_int64 = schema.nvtx && db.has_column(kNvtxTable, "int64Value");
  return schema;
}

std::string activity_query(const NsysSchema& schema, bool ordered) {
  std::string acts =
      std::string(
          "SELECT 0 AS kind, start, end, streamId, correlationId, globalPid, 0 AS bytes, ") +
      "shortName AS ref FROM " + kKernelTable;
  if (schema.memcpy) {
    acts += std::string(" UNION ALL SELECT 1, start, end, streamId, correlationId, globalPid, ") +
            "bytes, copyKind FROM " + kMemcpyTable;
  }
  if (schema.memset) {
    acts += std::string(" UNION ALL SELECT 2, start, end, streamId, correlationId, globalPid, ") +
            "bytes, 0 FROM " + kMemsetTable;
  }
  if (schema.runtime) {
    return "SELECT a.kind, a.start, a.end, a.streamId, a.bytes, a.ref, a.globalPid, "
           "COALESCE(r.start, a.start) AS launch, r.globalTid, "
           "CASE WHEN a.kind = 0 THEN (SELECT value FROM StringIds WHERE id = a.ref) END FROM (" +
           acts + ") a LEFT JOIN " + kRuntimeTable + " r ON r.correlationId = a.correlationId" +
           (ordered ? " ORDER BY launch" : "");
  }
  return "SELECT a.kind, a.start, a.end, a.streamId, a.bytes, a.ref, a.globalPid, "
         "a.start AS launch, NULL, CASE WHEN a.kind = 0 THEN (SELECT value FROM StringIds WHERE id "
         "= a.ref) END "
         "FROM (" +
         acts + ") a" + (ordered ? " ORDER BY a.start" : "");
}

std::string op_range_query(const NsysSchema& schema, const std::vector<std::int64_t>& domains) {
  // The payload: bytes (uint64) on COMP and MEM ranges and on COMM ranges without a tag; the
  // sequence number (int64) on tagged COMM ranges (src/timeline/op_range_text.hpp).
  return std::string("SELECT n.start, n.end, n.globalTid, n.category, ") + kNvtxText +
         ", n.uint64Value, " + (schema.nvtx_int64 ? "n.int64Value" : "NULL") + " FROM " +
         kNvtxTable +
         " n WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL AND n.category IS NOT NULL AND "
         "n.domainId IN (" +
         in_list(domains) + ") ORDER BY n.start";
}

}  // namespace commprof::nsys
