// SPDX-License-Identifier: MIT
#include "analysis/nsys/sqlite_reader.hpp"

#include <filesystem>

#include "src/core/errors.hpp"

namespace commprof {

Db::Db(const std::string& path) : path_(path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail("no such file");
  if (!std::filesystem::is_regular_file(path, ec)) fail("not a regular file");
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "cannot open";
    sqlite3_close(db_);
    db_ = nullptr;
    fail("cannot open as SQLite: " + msg);
  }
  // SQLite reads the header lazily: this is where "file is not a database" shows.
  char* err = nullptr;
  if (sqlite3_exec(db_, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, &err) !=
      SQLITE_OK) {
    const std::string msg = err ? err : "unreadable";
    const bool notadb = sqlite3_errcode(db_) == SQLITE_NOTADB;
    sqlite3_free(err);
    sqlite3_close(db_);
    db_ = nullptr;
    fail((notadb ? "not an SQLite export (" : "damaged SQLite export (") + msg + ")");
  }
  // Bounded memory: page cache 64 MiB; sorts and automatic indexes spill to temp files.
  exec("PRAGMA cache_size = -65536");
  exec("PRAGMA temp_store = FILE");
}

void Db::fail(const std::string& what) const { throw Error(path_ + ": " + what); }

void Db::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string msg = err ? err : "?";
    sqlite3_free(err);
    fail(std::string("SQL failed (") + msg + "): " + sql);
  }
}

bool Db::has_table(const std::string& name) {
  Stmt s(*this, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?");
  s.bind(1, name);
  return s.step();
}

bool Db::has_column(const std::string& table, const std::string& column) {
  Stmt s(*this, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?");
  s.bind(1, table);
  s.bind(2, column);
  return s.step();
}

void Db::require_columns(const std::string& table, const std::vector<std::string>& cols) {
  for (const std::string& c : cols) {
    if (!has_column(table, c)) fail("table " + table + " has no column '" + c + "'");
  }
}

Stmt::Stmt(Db& db, const std::string& sql) : db_(db) {
  if (sqlite3_prepare_v2(db.handle(), sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) {
    db.fail(std::string("query failed (") + sqlite3_errmsg(db.handle()) + "): " + sql);
  }
}

bool Stmt::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.fail(std::string("read failed: ") + sqlite3_errmsg(db_.handle()));
}

}  // namespace commprof
