// SPDX-License-Identifier: MIT
// The tables of an nsys SQLite export (Nsight Systems 2025.3, `nsys export --type sqlite`) that
// `commprof import-nsys` reads, with the columns nsys writes: the synthetic exports of the
// import tests and of commprof_make_synthetic_nsys are built from this one definition.
#pragma once

namespace commprof::nsys_schema {

/// Strings, target info, NVTX, kernels and runtime API calls.
inline constexpr const char* kCoreTables =
    "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT, name TEXT, "
    "nameEnum INTEGER, value TEXT);"
    "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime "
    "TEXT);"
    "CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER, name TEXT, busLocation TEXT);"
    "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT "
    "NULL, rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, "
    "endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value "
    "INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL, "
    "jsonTextId INTEGER, jsonText TEXT, binaryData TEXT);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId "
    "INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT "
    "NULL, shortName INTEGER NOT NULL, mangledName INTEGER, gridX INTEGER, blockX INTEGER);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER "
    "NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);";

/// Async copies and memsets.
inline constexpr const char* kCopyTables =
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId "
    "INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, "
    "copyKind INTEGER NOT NULL);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId "
    "INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, "
    "bytes INTEGER NOT NULL);";

}  // namespace commprof::nsys_schema
