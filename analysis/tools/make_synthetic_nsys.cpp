// SPDX-License-Identifier: MIT
// Writes a synthetic Nsight Systems SQLite export (the tables and columns import-nsys reads, as
// nsys 2025.3 names them) for the importer's tests and its benchmark in docs/BENCHMARKS.md.
//
//   commprof_make_synthetic_nsys OUT.sqlite RANK STEPS KERNELS_PER_STEP [commprof|foreign]
//
// RANK: the launcher's variables nsys records (OMPI_COMM_WORLD_RANK, ...); `none`: a process
//   started without a launcher, whose export records no rank (its data is rank 0's).
// commprof: commprof's NVTX domain, "step N" ranges (step 0 warm-up) and one op range per
//   kernel (category COMP), two COMM ranges per step whose NCCL kernel runs on its own stream
//   while compute continues, a MEM range with a DtoD memcpy before each.
// foreign: no commprof NVTX; steps are "ProfilerStep#N" ranges of another domain.
// Every kernel lasts 10 us; the COMM kernels 40 us, overlapping the next 4 compute kernels.
#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "analysis/tools/nsys_export_schema.hpp"

namespace {

sqlite3* g_db = nullptr;

void exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(g_db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::fprintf(stderr, "make_synthetic_nsys: %s: %s\n", err ? err : "?", sql.c_str());
    std::exit(1);
  }
}

sqlite3_stmt* prepare(const char* sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(g_db, sql, -1, &s, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "make_synthetic_nsys: %s\n", sqlite3_errmsg(g_db));
    std::exit(1);
  }
  return s;
}

void run(sqlite3_stmt* s) {
  if (sqlite3_step(s) != SQLITE_DONE) {
    std::fprintf(stderr, "make_synthetic_nsys: %s\n", sqlite3_errmsg(g_db));
    std::exit(1);
  }
  sqlite3_reset(s);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr,
                 "usage: %s OUT.sqlite RANK|none STEPS KERNELS_PER_STEP [commprof|foreign]\n",
                 argv[0]);
    return 2;
  }
  const std::string out = argv[1];
  const bool launched = std::string(argv[2]) != "none";
  const int rank = launched ? std::atoi(argv[2]) : 0;
  const long steps = std::atol(argv[3]);
  const long per_step = std::atol(argv[4]);
  const bool foreign = argc > 5 && std::string(argv[5]) == "foreign";
  std::remove(out.c_str());
  if (sqlite3_open(out.c_str(), &g_db) != SQLITE_OK) return 1;
  exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN");
  exec(std::string(commprof::nsys_schema::kCoreTables) + commprof::nsys_schema::kCopyTables);
  exec(
      "INSERT INTO StringIds VALUES (1, 'nvjet_sm90_tst_64x8_64x16_1x2_h_bz_NNT'), "
      "(2, 'ncclDevKernel_AllReduce_Sum_bf16_RING_LL'), (3, 'cuLaunchKernelEx'), "
      "(4, 'cudaMemcpyAsync_v3020')");
  const std::string launcher =
      launched ? "OMPI_COMM_WORLD_RANK=" + std::to_string(rank) +
                     ";OMPI_COMM_WORLD_SIZE=2;OMPI_COMM_WORLD_LOCAL_RANK=" + std::to_string(rank)
               : std::string("HOME=/root");
  exec(
      "INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (1, 'Local', 'Hostname', 619, 'synth'), "
      "(1, 'Local', 'DeviceEnvironment', 610, '" +
      launcher + "')");
  exec("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1795319332700000000, '', '')");
  exec("INSERT INTO TARGET_INFO_GPU VALUES (1, 0, 'Synthetic GPU', '0000:00:00.0')");
  const std::int64_t pid = (std::int64_t{1000 + rank} << 24) | (std::int64_t{1} << 56);
  const std::int64_t tid = pid + 7;
  if (!foreign) {
    exec(
        "INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (1, 75, "
        "'commprof', " +
        std::to_string(tid) + ", 2)");
    exec(
        "INSERT INTO NVTX_EVENTS (start, eventType, category, text, globalTid, domainId) VALUES "
        "(2, 33, 1, 'COMP', " +
        std::to_string(tid) + ", 2), (3, 33, 2, 'COMM', " + std::to_string(tid) +
        ", 2), (4, 33, 3, 'MEM', " + std::to_string(tid) + ", 2)");
  } else {
    exec(
        "INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (1, 75, "
        "'torch', " +
        std::to_string(tid) + ", 5)");
  }
  sqlite3_stmt* nvtx = prepare(
      "INSERT INTO NVTX_EVENTS (start, end, eventType, category, text, globalTid, domainId, "
      "uint64Value) VALUES (?, ?, 59, ?, ?, ?, ?, ?)");
  sqlite3_stmt* kern = prepare(
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 1, 0, ?, ?, ?, ?, ?, ?, 1, 1)");
  sqlite3_stmt* copy =
      prepare("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, 0, 1, 0, ?, ?, ?, ?, 8)");
  sqlite3_stmt* rt =
      prepare("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, ?, 0, NULL)");
  auto range = [&](std::int64_t s, std::int64_t e, int cat, const std::string& text,
                   std::int64_t bytes) {
    sqlite3_bind_int64(nvtx, 1, s);
    sqlite3_bind_int64(nvtx, 2, e);
    if (cat > 0) {
      sqlite3_bind_int(nvtx, 3, cat);
    } else {
      sqlite3_bind_null(nvtx, 3);
    }
    sqlite3_bind_text(nvtx, 4, text.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(nvtx, 5, tid);
    sqlite3_bind_int(nvtx, 6, foreign ? 5 : 2);
    sqlite3_bind_int64(nvtx, 7, bytes);
    run(nvtx);
  };
  std::int64_t corr = 1;
  auto launch = [&](std::int64_t t, std::int64_t name) {
    sqlite3_bind_int64(rt, 1, t);
    sqlite3_bind_int64(rt, 2, t + 2000);
    sqlite3_bind_int64(rt, 3, tid);
    sqlite3_bind_int64(rt, 4, corr);
    sqlite3_bind_int64(rt, 5, name);
    run(rt);
    return corr++;
  };
  auto kernel = [&](std::int64_t s, std::int64_t e, int stream, std::int64_t c, int name) {
    sqlite3_bind_int64(kern, 1, s);
    sqlite3_bind_int64(kern, 2, e);
    sqlite3_bind_int(kern, 3, stream);
    sqlite3_bind_int64(kern, 4, c);
    sqlite3_bind_int64(kern, 5, pid);
    sqlite3_bind_int(kern, 6, name);
    sqlite3_bind_int(kern, 7, name);
    sqlite3_bind_int(kern, 8, name);
    run(kern);
  };
  std::int64_t t = 1000000;  // CPU clock; the GPU runs 5 us behind the launches
  for (long s = 0; s < steps; ++s) {
    const std::int64_t step_start = t;
    std::int64_t gpu = t + 5000;
    std::int64_t comm_gpu = 0;
    for (long k = 0; k < per_step; ++k) {
      const bool comm_here = k == per_step / 2 || k == per_step - 1;
      if (comm_here) {
        // MEM: copy the bucket in, then the allreduce on the COMM stream.
        if (!foreign) range(t, t + 3000, 3, "dp.bucket.copy_in", 1048576);
        const std::int64_t c = launch(t + 500, 4);
        sqlite3_bind_int64(copy, 1, gpu);
        sqlite3_bind_int64(copy, 2, gpu + 2000);
        sqlite3_bind_int(copy, 3, 16);
        sqlite3_bind_int64(copy, 4, c);
        sqlite3_bind_int64(copy, 5, pid);
        sqlite3_bind_int64(copy, 6, 1048576);
        run(copy);
        t += 3000;
        if (!foreign) range(t, t + 3000, 2, "dp.bucket.allreduce", 1048576);
        const std::int64_t cc = launch(t + 500, 3);
        comm_gpu = std::max(gpu + 2000, t + 5000);
        kernel(comm_gpu, comm_gpu + 40000, 15, cc, 2);
        t += 3000;
      }
      if (!foreign) range(t, t + 3000, 1, "l0.gemm" + std::to_string(k), 65536);
      const std::int64_t c = launch(t + 500, 3);
      gpu = std::max(gpu, t + 5000);
      kernel(gpu, gpu + 10000, 14, c, 1);
      gpu += 10000;
      t += 3000;
    }
    const std::int64_t step_end = std::max(t, std::max(gpu, comm_gpu + 40000)) + 1000;
    if (foreign) {
      range(step_start, step_end, 0, "ProfilerStep#" + std::to_string(s), 0);
    } else {
      range(step_start, step_end, 0, "step " + std::to_string(s) + (s == 0 ? " (warm-up)" : ""), 0);
    }
    t = step_end + 1000;
  }
  sqlite3_finalize(nvtx);
  sqlite3_finalize(kern);
  sqlite3_finalize(copy);
  sqlite3_finalize(rt);
  exec("COMMIT");
  sqlite3_close(g_db);
  return 0;
}
