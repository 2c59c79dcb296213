// SPDX-License-Identifier: MIT
// A minimal read-only SQLite reader for nsys exports: opening with clear errors (missing file,
// not a database, damaged), bounded memory, prepared statements stepped row by row. Every
// failure throws Error naming the file.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <vector>

namespace commprof {

class Db {
 public:
  explicit Db(const std::string& path);
  ~Db() { sqlite3_close(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  [[noreturn]] void fail(const std::string& what) const;
  void exec(const char* sql);
  bool has_table(const std::string& name);
  bool has_column(const std::string& table, const std::string& column);
  /// Fails naming the first of `cols` that `table` lacks.
  void require_columns(const std::string& table, const std::vector<std::string>& cols);
  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

class Stmt {
 public:
  Stmt(Db& db, const std::string& sql);
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  void bind(int i, const std::string& s) {
    sqlite3_bind_text(stmt_, i, s.c_str(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
  }
  /// Next row; false at the end. Throws on a read error (corrupt file).
  bool step();
  bool null(int c) const { return sqlite3_column_type(stmt_, c) == SQLITE_NULL; }
  std::int64_t i64(int c) const { return sqlite3_column_int64(stmt_, c); }
  std::string text(int c) const {
    const unsigned char* t = sqlite3_column_text(stmt_, c);
    return t ? reinterpret_cast<const char*>(t) : "";
  }

 private:
  Db& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace commprof
