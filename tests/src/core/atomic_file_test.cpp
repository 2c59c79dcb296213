// SPDX-License-Identifier: MIT
// Result files are whole or untouched: what a failed write leaves behind, and what it says.
// (Faults that need a real limit or a full disk are tested end to end: tests/reliability/.)
#include "src/core/atomic_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "src/core/errors.hpp"

namespace commprof {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class AtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "commprof-atomic-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string read(const std::string& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), {}));
  }
  static std::string error_of(const std::string& p,
                              const std::function<void(std::ostream&)>& write) {
    try {
      write_file_atomically(p, write);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
  fs::path dir_;
};

TEST_F(AtomicFile, WritesTheWholeFileAndReplacesTheEarlierOne) {
  write_file_atomically(path("r.json"), [](std::ostream& os) { os << "first"; });
  const std::string big(3 << 20, 'x');  // larger than the buffer: written in chunks
  write_file_atomically(path("r.json"), [&](std::ostream& os) { os << big; });
  EXPECT_EQ(read(path("r.json")), big);
  EXPECT_EQ(entries(), 1u);  // no temporary file left
}

TEST_F(AtomicFile, AFailingWriterKeepsTheEarlierFileAndNoTemporaryFile) {
  write_file_atomically(path("r.json"), [](std::ostream& os) { os << "earlier"; });
  EXPECT_THROW(write_file_atomically(path("r.json"),
                                     [](std::ostream& os) {
                                       os << "half";
                                       throw std::runtime_error("writer failed");
                                     }),
               std::runtime_error);
  EXPECT_EQ(read(path("r.json")), "earlier");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicFile, APathThroughARegularFileIsNamedWithTheReason) {
  write_file_atomically(path("file"), [](std::ostream& os) { os << "x"; });
  EXPECT_THAT(error_of(path("file") + "/r.json", [](std::ostream& os) { os << "x"; }),
              HasSubstr("cannot write '" + path("file") + "/r.json': Not a directory"));
  EXPECT_THAT(error_of(dir_.string(), [](std::ostream& os) { os << "x"; }),
              HasSubstr("cannot write '" + dir_.string() + "': Is a directory"));
}

TEST_F(AtomicFile, DevicesAreWrittenInPlaceNeverReplaced) {
  write_file_atomically("/dev/null", [](std::ostream& os) { os << "discarded"; });
  // /dev/full: every write fails with ENOSPC, and the device must still be one afterwards (a
  // rename over it would, as root, swap it for a regular file).
  EXPECT_EQ(error_of("/dev/full", [](std::ostream& os) { os << std::string(1 << 17, 'x'); }),
            "cannot write '/dev/full': No space left on device");
  struct stat st {};
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(AtomicFile, AnOutputDirectoryMustBeWritable) {
  ensure_writable_directory(path("a/b"));
  EXPECT_TRUE(fs::is_directory(path("a/b")));
  EXPECT_TRUE(fs::is_empty(path("a/b")));  // the probe file is gone
  write_file_atomically(path("file"), [](std::ostream& os) { os << "x"; });
  try {
    ensure_writable_directory(path("file") + "/out");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot create output directory '" + path("file") +
                                    "/out': Not a directory"));
  }
}

}  // namespace
}  // namespace commprof
