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

// The session's tables: strings, the environment nsys recorded (with the launcher's rank
// variables, or none), start time, GPU.
void write_session(bool launched, int rank) {
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
}

// The NVTX domain (commprof's with its three categories, or another framework's).
void write_domain(std::int64_t tid, bool foreign) {
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
}

// The rows of one process: its NVTX ranges, runtime launches, kernels and copies.
class Rows {
 public:
  Rows(std::int64_t pid, bool foreign) : pid_(pid), tid_(pid + 7), foreign_(foreign) {
    nvtx_ = prepare(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, category, text, globalTid, domainId, "
        "uint64Value) VALUES (?, ?, 59, ?, ?, ?, ?, ?)");
    kern_ = prepare(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 1, 0, ?, ?, ?, ?, ?, ?, 1, 1)");
    copy_ = prepare("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, 0, 1, 0, ?, ?, ?, ?, 8)");
    rt_ = prepare("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, ?, 0, NULL)");
  }
  ~Rows() {
    sqlite3_finalize(nvtx_);
    sqlite3_finalize(kern_);
    sqlite3_finalize(copy_);
    sqlite3_finalize(rt_);
  }
  Rows(const Rows&) = delete;
  Rows& operator=(const Rows&) = delete;

  bool foreign() const { return foreign_; }

  // An NVTX range; category 0: none.
  void range(std::int64_t s, std::int64_t e, int cat, const std::string& text, std::int64_t bytes) {
    sqlite3_bind_int64(nvtx_, 1, s);
    sqlite3_bind_int64(nvtx_, 2, e);
    if (cat > 0) {
      sqlite3_bind_int(nvtx_, 3, cat);
    } else {
      sqlite3_bind_null(nvtx_, 3);
    }
    sqlite3_bind_text(nvtx_, 4, text.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(nvtx_, 5, tid_);
    sqlite3_bind_int(nvtx_, 6, foreign_ ? 5 : 2);
    sqlite3_bind_int64(nvtx_, 7, bytes);
    run(nvtx_);
  }
  // A runtime call lasting 2 us; its correlation id.
  std::int64_t launch(std::int64_t t, std::int64_t name) {
    sqlite3_bind_int64(rt_, 1, t);
    sqlite3_bind_int64(rt_, 2, t + 2000);
    sqlite3_bind_int64(rt_, 3, tid_);
    sqlite3_bind_int64(rt_, 4, corr_);
    sqlite3_bind_int64(rt_, 5, name);
    run(rt_);
    return corr_++;
  }
  void kernel(std::int64_t s, std::int64_t e, int stream, std::int64_t c, int name) {
    sqlite3_bind_int64(kern_, 1, s);
    sqlite3_bind_int64(kern_, 2, e);
    sqlite3_bind_int(kern_, 3, stream);
    sqlite3_bind_int64(kern_, 4, c);
    sqlite3_bind_int64(kern_, 5, pid_);
    sqlite3_bind_int(kern_, 6, name);
    sqlite3_bind_int(kern_, 7, name);
    sqlite3_bind_int(kern_, 8, name);
    run(kern_);
  }
  // A device-to-device copy of `bytes` on stream 16.
  void copy(std::int64_t s, std::int64_t e, std::int64_t c, std::int64_t bytes) {
    sqlite3_bind_int64(copy_, 1, s);
    sqlite3_bind_int64(copy_, 2, e);
    sqlite3_bind_int(copy_, 3, 16);
    sqlite3_bind_int64(copy_, 4, c);
    sqlite3_bind_int64(copy_, 5, pid_);
    sqlite3_bind_int64(copy_, 6, bytes);
    run(copy_);
  }

 private:
  std::int64_t pid_, tid_;
  bool foreign_;
  std::int64_t corr_ = 1;
  sqlite3_stmt* nvtx_ = nullptr;
  sqlite3_stmt* kern_ = nullptr;
  sqlite3_stmt* copy_ = nullptr;
  sqlite3_stmt* rt_ = nullptr;
};

// One step from CPU time `t`: `per_step` compute kernels, and at two of them a MEM copy and an
// allreduce on the COMM stream. Returns the CPU time of the next step.
std::int64_t write_step(Rows& rows, long s, long per_step, std::int64_t t) {
  const bool foreign = rows.foreign();
  const std::int64_t step_start = t;
  std::int64_t gpu = t + 5000;
  std::int64_t comm_gpu = 0;
  for (long k = 0; k < per_step; ++k) {
    const bool comm_here = k == per_step / 2 || k == per_step - 1;
    if (comm_here) {
      // MEM: copy the bucket in, then the allreduce on the COMM stream.
      if (!foreign) rows.range(t, t + 3000, 3, "dp.bucket.copy_in", 1048576);
      const std::int64_t c = rows.launch(t + 500, 4);
      rows.copy(gpu, gpu + 2000, c, 1048576);
      t += 3000;
      if (!foreign) rows.range(t, t + 3000, 2, "dp.bucket.allreduce", 1048576);
      const std::int64_t cc = rows.launch(t + 500, 3);
      comm_gpu = std::max(gpu + 2000, t + 5000);
      rows.kernel(comm_gpu, comm_gpu + 40000, 15, cc, 2);
      t += 3000;
    }
    if (!foreign) rows.range(t, t + 3000, 1, "l0.gemm" + std::to_string(k), 65536);
    const std::int64_t c = rows.launch(t + 500, 3);
    gpu = std::max(gpu, t + 5000);
    rows.kernel(gpu, gpu + 10000, 14, c, 1);
    gpu += 10000;
    t += 3000;
  }
  const std::int64_t step_end = std::max(t, std::max(gpu, comm_gpu + 40000)) + 1000;
  if (foreign) {
    rows.range(step_start, step_end, 0, "ProfilerStep#" + std::to_string(s), 0);
  } else {
    rows.range(step_start, step_end, 0, "step " + std::to_string(s) + (s == 0 ? " (warm-up)" : ""),
               0);
  }
  return step_end + 1000;
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
  write_session(launched, rank);
  const std::int64_t pid = (std::int64_t{1000 + rank} << 24) | (std::int64_t{1} << 56);
  write_domain(pid + 7, foreign);
  {
    Rows rows(pid, foreign);
    std::int64_t t = 1000000;  // CPU clock; the GPU runs 5 us behind the launches
    for (long s = 0; s < steps; ++s) t = write_step(rows, s, per_step, t);
  }
  exec("COMMIT");
  sqlite3_close(g_db);
  return 0;
}
