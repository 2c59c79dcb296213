// SPDX-License-Identifier: MIT
// What commprof reads from the launcher's environment before MPI_Init, under mpirun and under
// srun: srun sets SLURM_PROCID / SLURM_LOCALID (and, with --mpi=pmix, PMIX_RANK) and no OMPI_*
// variables until MPI_Init, so the Slurm names must be understood on their own.
#include "src/runtime/launcher_env.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace commprof {
namespace {

// Sets the launcher variables a test names and clears the others; restores all on destruction.
class LauncherEnv {
 public:
  explicit LauncherEnv(const std::map<std::string, std::string>& values) {
    for (const char* name : kNames) {
      if (const char* old = std::getenv(name)) saved_[name] = old;
      ::unsetenv(name);
    }
    for (const auto& [name, value] : values) ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~LauncherEnv() {
    for (const char* name : kNames) ::unsetenv(name);
    for (const auto& [name, value] : saved_) ::setenv(name.c_str(), value.c_str(), 1);
  }
  LauncherEnv(const LauncherEnv&) = delete;
  LauncherEnv& operator=(const LauncherEnv&) = delete;

 private:
  static constexpr const char* kNames[] = {"OMPI_COMM_WORLD_RANK",
                                           "OMPI_COMM_WORLD_LOCAL_RANK",
                                           "PMIX_RANK",
                                           "PMI_RANK",
                                           "MPI_LOCALRANKID",
                                           "SLURM_PROCID",
                                           "SLURM_LOCALID"};
  std::map<std::string, std::string> saved_;
};

TEST(LauncherEnv, SrunWithoutPmixGivesSlurmRankAndLocalId) {
  LauncherEnv env({{"SLURM_PROCID", "13"}, {"SLURM_LOCALID", "5"}});
  EXPECT_EQ(launcher_world_rank(), std::optional<int>(13));
  const auto local = launcher_local_rank();
  ASSERT_TRUE(local.has_value());
  EXPECT_EQ(local->value, 5);
  EXPECT_EQ(local->variable, "SLURM_LOCALID");
}

TEST(LauncherEnv, SrunWithPmixAgreesWithSlurm) {
  LauncherEnv env({{"PMIX_RANK", "9"}, {"SLURM_PROCID", "9"}, {"SLURM_LOCALID", "1"}});
  EXPECT_EQ(launcher_world_rank(), std::optional<int>(9));
  ASSERT_TRUE(launcher_local_rank().has_value());
  EXPECT_EQ(launcher_local_rank()->value, 1);
}

// mpirun inside a Slurm allocation: ranks inherit SLURM_PROCID / SLURM_LOCALID of the batch step
// or of the orted that started them, not their own, so Open MPI's own variables must win.
TEST(LauncherEnv, MpirunInsideAnAllocationPrefersOpenMpi) {
  LauncherEnv env({{"OMPI_COMM_WORLD_RANK", "3"},
                   {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
                   {"SLURM_PROCID", "0"},
                   {"SLURM_LOCALID", "0"}});
  EXPECT_EQ(launcher_world_rank(), std::optional<int>(3));
  ASSERT_TRUE(launcher_local_rank().has_value());
  EXPECT_EQ(launcher_local_rank()->value, 3);
  EXPECT_EQ(launcher_local_rank()->variable, "OMPI_COMM_WORLD_LOCAL_RANK");
}

TEST(LauncherEnv, NoLauncherOrMalformedValues) {
  {
    LauncherEnv env({});
    EXPECT_FALSE(launcher_world_rank().has_value());
    EXPECT_FALSE(launcher_local_rank().has_value());
  }
  LauncherEnv env({{"SLURM_PROCID", "x1"}, {"SLURM_LOCALID", "-1"}});
  EXPECT_FALSE(launcher_world_rank().has_value());
  EXPECT_FALSE(launcher_local_rank().has_value());
}

}  // namespace
}  // namespace commprof
