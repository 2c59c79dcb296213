# SPDX-License-Identifier: MIT
# Test registration helpers for commprof (see tests/CMakeLists.txt).
#
#   commprof_add_unit_test(NAME <target> SOURCES <files...> [LIBRARIES <libs...>] [LABELS ...])
#     A gtest executable linked with gtest_main and commprof_lib; every TEST becomes a CTest test
#     labelled `unit`, or the one label LABELS gives.
#
#   commprof_add_mpi_test(NAME <test> NPROCS <n> COMMAND <exe-or-target> [args...]
#                         [WRAPPER <cmd...>] [LABELS ...] [TIMEOUT <s>]
#                         [PROPERTIES <prop> <value> ...])
#     Runs COMMAND under ${MPIEXEC_EXECUTABLE} with n ranks, labelled `mpi`. With Open MPI it adds
#     --oversubscribe (4 ranks on a 2-core CI machine) and allows running as root (containers).
#     A COMMAND naming a target is replaced by the target's file. WRAPPER, if given, runs the
#     whole launcher line (e.g. tests/tools/check_run.sh with its expectations and `--`).
#
#   commprof_add_launched_test(NAME <test> NPROCS <n> COMMAND <args...>)
#     A test whose script starts the n-rank job itself (to signal or watch it): the word LAUNCHER
#     in COMMAND becomes the launcher prefix. Without a launcher a test of several ranks is left
#     out (registered disabled) under COMMPROF_ALLOW_NO_LAUNCHER, else configuring stops.
#
#   commprof_add_mpi_gtest(NAME <target> SOURCES <files...> NPROCS <n...> [TEST <name>]
#                          [LABELS ...] [LIBRARIES ...])
#     A gtest binary whose main starts MPI (tests/support/mpi_test_main.cpp), run under the
#     launcher once per rank count as test <name>_np<n> (TEST defaults to NAME). Where every test
#     skipped it exits 77, which CTest reports as skipped.
#
#   commprof_add_cli_test(<name> <check_run.sh arguments...>)
#     The program's command line without a launcher (an MPI singleton), checked by
#     tests/tools/check_run.sh; labelled `cli`.
#
#   commprof_test_needs(<labels> <targets...>)
#     Tests with these labels run these executables: the tsan preset, which runs only some
#     labels, builds what they need through the target commprof_tsan_tests.
#
#   commprof_scaled(<out_var> <seconds>)
#     <seconds> x COMMPROF_TEST_TIME_SCALE: every bound a test puts on time (--timeout, a
#     script's wait) goes through it.
#
#   commprof_finish_tests()
#     Called once in each directory that adds tests: at the end of that directory (deferred, so
#     tests added after the call count too) it scales their CTest TIMEOUTs and, in sanitizer
#     builds, fails any test whose output holds a sanitizer report. A sanitizer build in which
#     some test lacks that check (a directory that never called it) fails to configure.
include_guard(GLOBAL)
include(GoogleTest)

set(COMMPROF_TEST_TIMEOUT 120 CACHE STRING "Default timeout (s) of one commprof MPI test")
option(COMMPROF_ALLOW_NO_LAUNCHER
       "Configure the tests without an MPI launcher, leaving out every multi-rank test" OFF)
# Sanitized code runs 2-5x slower (the sanitizer presets set 3 or 4). What a timing-bound test
# asserts stays the same (the job ends within --timeout + a margin, the error names the stuck
# collective); only the seconds in it are multiplied, CTest's TIMEOUT included.
set(COMMPROF_TEST_TIME_SCALE 1 CACHE STRING "Multiplier of every time bound in the tests")
if(NOT COMMPROF_TEST_TIME_SCALE MATCHES "^[1-9][0-9]*$")
  message(FATAL_ERROR "COMMPROF_TEST_TIME_SCALE must be a positive integer, not "
                      "'${COMMPROF_TEST_TIME_SCALE}'")
endif()
# Open MPI refuses to run as root unless both variables are set; harmless for other MPIs. The
# fault-injection scripts read the scale from the environment.
set(COMMPROF_TEST_MPI_ENV "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
                          "COMMPROF_TEST_TIME_SCALE=${COMMPROF_TEST_TIME_SCALE}")
# Sanitizer findings fail the test that triggers them instead of scrolling by in its log: each
# sanitizer stops the process at its first report (UBSan is also built with
# -fno-sanitize-recover), and commprof_finish_tests() fails a test whose output holds one even
# where the exit code alone would not tell (a test that expects exit 1).
set(COMMPROF_TEST_SANITIZER_ENV "")
if(COMMPROF_SANITIZE MATCHES "undefined")
  list(APPEND COMMPROF_TEST_SANITIZER_ENV "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1")
endif()
if(COMMPROF_SANITIZE MATCHES "thread")
  # The suppressions name Open MPI's libraries only (why: in the file).
  list(APPEND COMMPROF_TEST_SANITIZER_ENV
       "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=${PROJECT_SOURCE_DIR}/tests/sanitizers/tsan_openmpi.supp")
endif()
list(APPEND COMMPROF_TEST_MPI_ENV ${COMMPROF_TEST_SANITIZER_ENV})
# LeakSanitizer stays on: a process that started MPI turns it off itself (__lsan_is_turned_off in
# src/program/main.cpp and tests/support/mpi_test_main.cpp), where Open MPI's unloaded components
# keep memory no suppression can name; the commands that run without MPI, and the test tools,
# are checked.
set(COMMPROF_TEST_SANITIZER_REPORT
    "ERROR: AddressSanitizer|ERROR: LeakSanitizer|WARNING: ThreadSanitizer|: runtime error: |SUMMARY: [A-Za-z]+Sanitizer")

# The labels `ctest --preset tsan` runs (keep CMakePresets.json's tsan filter in step), and the
# target that builds every executable their tests run. Only tests that start threads of ours:
# ThreadSanitizer finds nothing in single-threaded code, so `unit` is left out and its tests
# that do start threads (the NCCL plugin's flush thread) carry the label `threads` as well, and
# the workload runs whose thread paths none of the others take carry `thread_paths`.
set(COMMPROF_TSAN_LABELS threads backend runtime bench reliability thread_paths)
if(NOT TARGET commprof_tsan_tests)
  add_custom_target(commprof_tsan_tests)
endif()
function(commprof_test_needs labels)
  foreach(label IN LISTS labels)
    if(label IN_LIST COMMPROF_TSAN_LABELS)
      add_dependencies(commprof_tsan_tests ${ARGN})
      return()
    endif()
  endforeach()
endfunction()

# Test code compiles at -O1 with line tables only (-g1) in RelWithDebInfo builds, while the code
# under test keeps the preset's level: the test sources are mostly gtest, gmock and nlohmann
# templates, and this halves their compile time on CI's two cores (a 350-line test: 22.7 s at
# -O2 -g, 11.6 s at -O1 -g1). The last -O and -g of a GCC or Clang command line win.
# Under AddressSanitizer test code builds at -O0 (a third less compile time again; ASan's usual
# level), the code under test at the preset's -Og. Not under ThreadSanitizer, nor in the host
# build: the tests' own reference computations (the backend conformance suite's attention and
# GEMMs in double) took 61.6 s instead of 12.4 s under TSan at -O0, and the checkers slowed the
# host suite more than -O0 saved in its build.
if(COMMPROF_SANITIZE MATCHES "address")
  set(COMMPROF_TEST_OPT -O0)
else()
  set(COMMPROF_TEST_OPT -O1)
endif()
# Test binaries are unity builds too where the layers are (COMMPROF_UNITY_BUILD): a test source
# is mostly gtest, gmock and nlohmann, which a batch of eight parses once (eight small unit tests:
# 24.6 s of CPU file by file, 8.3 s as one batch).
# Under ASan + UBSan the test code keeps ASan and leaves UBSan out: UBSan's checks of gtest's
# expanded macros were a quarter of a test batch's compile time (32.0 s against 23.6 s, an
# analysis test batch at -O0), and test sources were half the asan build. The code under test
# keeps both; the commprof program that the CLI, MPI and workload tests run is all of it.
if(COMMPROF_SANITIZE MATCHES "address" AND COMMPROF_SANITIZE MATCHES "undefined")
  set(COMMPROF_TEST_SANITIZE_OPT -fno-sanitize=undefined)
endif()
function(commprof_test_build_flags target)
  target_compile_options(${target} PRIVATE
    "$<$<AND:$<CONFIG:RelWithDebInfo>,$<COMPILE_LANGUAGE:CXX>>:${COMMPROF_TEST_OPT};-g1>"
    ${COMMPROF_TEST_SANITIZE_OPT})
  if(COMMPROF_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()
endfunction()

function(commprof_scaled out_var seconds)
  math(EXPR scaled "${seconds} * ${COMMPROF_TEST_TIME_SCALE}")
  set(${out_var} ${scaled} PARENT_SCOPE)
endfunction()

function(commprof_finish_tests)
  # Deferred to the end of the calling directory: a test registered below the call (as 20 once
  # were) is finished like the others.
  get_property(deferred DIRECTORY PROPERTY COMMPROF_FINISH_DEFERRED)
  if(NOT deferred)
    set_property(DIRECTORY PROPERTY COMMPROF_FINISH_DEFERRED ON)
    cmake_language(DEFER CALL _commprof_finish_directory_tests)
  endif()
endfunction()

# Every test of `dir` and the directories below it, appended to `out_var`.
function(_commprof_tests_below dir out_var)
  get_property(tests DIRECTORY ${dir} PROPERTY TESTS)
  set(found ${${out_var}} ${tests})
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _commprof_tests_below(${sub} found)
  endforeach()
  set(${out_var} ${found} PARENT_SCOPE)
endfunction()

function(_commprof_finish_directory_tests)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tests)
    get_test_property(${t} TIMEOUT timeout)
    if(timeout)
      commprof_scaled(timeout ${timeout})
      set_tests_properties(${t} PROPERTIES TIMEOUT ${timeout})
    endif()
    if(COMMPROF_SANITIZE)
      # Added to the test's own patterns (a list), not in their place: a test that fails on
      # its own words ("PROBE FAILED") must still fail on them under a sanitizer.
      get_test_property(${t} FAIL_REGULAR_EXPRESSION own)
      set(patterns "${COMMPROF_TEST_SANITIZER_REPORT}")
      if(own)
        list(PREPEND patterns ${own})
      endif()
      set_tests_properties(${t} PROPERTIES FAIL_REGULAR_EXPRESSION "${patterns}")
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY COMMPROF_FINISHED_TESTS ${tests})
  # The tests' top directory finishes last (each subdirectory finished when it was added): in a
  # sanitizer build, every test below it must have been finished, whatever its directory did.
  if(COMMPROF_SANITIZE AND CMAKE_CURRENT_SOURCE_DIR STREQUAL COMMPROF_TESTS_DIR)
    set(unfinished "")
    _commprof_tests_below(${CMAKE_CURRENT_SOURCE_DIR} unfinished)
    get_property(finished GLOBAL PROPERTY COMMPROF_FINISHED_TESTS)
    if(finished)
      list(REMOVE_ITEM unfinished ${finished})
    endif()
    if(unfinished)
      string(REPLACE ";" " " unfinished "${unfinished}")
      message(FATAL_ERROR "commprof: tests that would pass a sanitizer report unnoticed (no "
                          "FAIL_REGULAR_EXPRESSION: call commprof_finish_tests() in their "
                          "directory): ${unfinished}")
    endif()
  endif()
endfunction()

# Which launcher is this? Asked once per build tree and cached.
if(MPIEXEC_EXECUTABLE AND NOT DEFINED CACHE{COMMPROF_MPIEXEC_IS_OPENMPI})
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version
                  OUTPUT_VARIABLE _commprof_mpiexec_version
                  ERROR_VARIABLE _commprof_mpiexec_version
                  TIMEOUT 30)
  if(_commprof_mpiexec_version MATCHES "Open MPI|OpenRTE")
    set(_commprof_is_ompi ON)
  else()
    set(_commprof_is_ompi OFF)
  endif()
  set(COMMPROF_MPIEXEC_IS_OPENMPI ${_commprof_is_ompi} CACHE BOOL
      "Whether ${MPIEXEC_EXECUTABLE} is Open MPI's launcher (adds --oversubscribe)")
  message(STATUS "commprof tests: launcher ${MPIEXEC_EXECUTABLE}, Open MPI ${_commprof_is_ompi}")
endif()

# The launcher prefix for n ranks, in `out_var`. Without a launcher only one rank can run (an MPI
# singleton, an empty prefix): a test of more ranks goes through commprof_add_launched_test, which
# leaves it out under COMMPROF_ALLOW_NO_LAUNCHER instead of running its job as one rank.
function(commprof_mpiexec_prefix out_var nprocs)
  if(NOT MPIEXEC_EXECUTABLE)
    if(nprocs GREATER 1)
      message(FATAL_ERROR "commprof_mpiexec_prefix: no MPI launcher for ${nprocs} ranks; register "
                          "the test with commprof_add_launched_test")
    endif()
    set(${out_var} "" PARENT_SCOPE)
    return()
  endif()
  set(prefix ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${nprocs} ${MPIEXEC_PREFLAGS})
  if(COMMPROF_MPIEXEC_IS_OPENMPI)
    list(APPEND prefix --oversubscribe)
  endif()
  set(${out_var} ${prefix} PARENT_SCOPE)
endfunction()

# What a test of `nprocs` > 1 ranks does without a launcher: a warning where
# COMMPROF_ALLOW_NO_LAUNCHER leaves such tests out, else configuring stops (a test that silently
# vanishes passes nothing).
function(_commprof_no_launcher name nprocs)
  if(COMMPROF_ALLOW_NO_LAUNCHER)
    message(WARNING "commprof: no MPI launcher found; ${name} (${nprocs} ranks) is left "
                    "out (COMMPROF_ALLOW_NO_LAUNCHER=ON)")
  else()
    message(FATAL_ERROR "commprof: no MPI launcher (mpiexec) found, so the ${nprocs}-rank test "
                        "${name} cannot run: install one (Debian: openmpi-bin), or configure "
                        "with -DCOMMPROF_ALLOW_NO_LAUNCHER=ON to leave the multi-rank tests out")
  endif()
endfunction()

# (Registered disabled rather than not at all: the properties set after it still apply, and
# ctest lists it as not run.)
function(commprof_add_launched_test)
  cmake_parse_arguments(ARG "" "NAME;NPROCS" "COMMAND" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_NPROCS OR NOT ARG_COMMAND OR NOT "LAUNCHER" IN_LIST ARG_COMMAND)
    message(FATAL_ERROR "commprof_add_launched_test: NAME, NPROCS and a COMMAND naming LAUNCHER "
                        "are required")
  endif()
  if(NOT MPIEXEC_EXECUTABLE AND ARG_NPROCS GREATER 1)
    _commprof_no_launcher(${ARG_NAME} ${ARG_NPROCS})
    add_test(NAME ${ARG_NAME} COMMAND ${CMAKE_COMMAND} -E false)
    set_tests_properties(${ARG_NAME} PROPERTIES DISABLED TRUE)
    return()
  endif()
  commprof_mpiexec_prefix(prefix ${ARG_NPROCS})
  set(command "")
  foreach(arg IN LISTS ARG_COMMAND)
    if(arg STREQUAL "LAUNCHER")
      list(APPEND command ${prefix})
    else()
      list(APPEND command "${arg}")
    endif()
  endforeach()
  add_test(NAME ${ARG_NAME} COMMAND ${command})
endfunction()

function(commprof_add_unit_test)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;LIBRARIES;LABELS" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_SOURCES)
    message(FATAL_ERROR "commprof_add_unit_test: NAME and SOURCES are required")
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE commprof_lib commprof_warnings GTest::gtest_main
                                            ${ARG_LIBRARIES})
  commprof_test_build_flags(${ARG_NAME})
  # PRE_TEST: tests are listed when ctest runs, so a build never fails because a freshly built
  # binary cannot start (e.g. a sanitizer runtime missing on the build host).
  # One label per binary: gtest_discover_tests (CMake 3.25) splits PROPERTIES once more, so a
  # list of labels would spill into the next property. `unit` unless LABELS names another (the
  # plugin's tests are `threads`, which the tsan preset runs).
  set(label unit)
  if(ARG_LABELS)
    list(LENGTH ARG_LABELS n)
    if(NOT n EQUAL 1)
      message(FATAL_ERROR "commprof_add_unit_test: one label per binary, not '${ARG_LABELS}'")
    endif()
    set(label ${ARG_LABELS})
  endif()
  commprof_test_needs("${label}" ${ARG_NAME})
  commprof_scaled(timeout 60)
  list(LENGTH COMMPROF_TEST_SANITIZER_ENV n)
  if(n GREATER 1)
    message(FATAL_ERROR "commprof_add_unit_test: one sanitizer variable, not '${COMMPROF_TEST_SANITIZER_ENV}'")
  endif()
  # Under a sanitizer each binary runs whole, as one test: a sanitized process takes about 0.4 s
  # to start, and over some 350 tests of a few milliseconds each that start was 130 of the asan
  # stage's 150 s of unit tests (2026-11-26). A failure still names its test in the output.
  if(COMMPROF_SANITIZE)
    # commprof_finish_tests scales the time bound, as for every test added here.
    add_test(NAME ${ARG_NAME} COMMAND ${ARG_NAME})
    set_tests_properties(${ARG_NAME} PROPERTIES LABELS ${label} TIMEOUT 300
                                                ENVIRONMENT "${COMMPROF_TEST_SANITIZER_ENV}")
    return()
  endif()
  gtest_discover_tests(${ARG_NAME}
    DISCOVERY_MODE PRE_TEST
    DISCOVERY_TIMEOUT ${timeout}
    PROPERTIES LABELS ${label} TIMEOUT ${timeout} ENVIRONMENT "${COMMPROF_TEST_SANITIZER_ENV}")
endfunction()

# WAITS: the job's ranks spend the test waiting out a --timeout (a planted hang), not computing:
# the test holds one of CTest's slots rather than one per rank, so another test runs beside it
# (a 4-rank hang test used 0.3 s of CPU in its 6 s, and held both cores of CI's two).
function(commprof_add_mpi_test)
  cmake_parse_arguments(ARG "WAITS" "NAME;NPROCS;TIMEOUT" "COMMAND;WRAPPER;LABELS;PROPERTIES"
                        ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_NPROCS OR NOT ARG_COMMAND)
    message(FATAL_ERROR "commprof_add_mpi_test: NAME, NPROCS and COMMAND are required")
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT ${COMMPROF_TEST_TIMEOUT})
  endif()
  list(POP_FRONT ARG_COMMAND exe)
  if(TARGET ${exe})
    commprof_test_needs("${ARG_LABELS}" ${exe})
    set(exe $<TARGET_FILE:${exe}>)
  endif()
  if(MPIEXEC_EXECUTABLE)
    commprof_mpiexec_prefix(prefix ${ARG_NPROCS})
  elseif(ARG_NPROCS EQUAL 1)
    set(prefix "")  # no launcher: a single rank runs as an MPI singleton
  else()
    _commprof_no_launcher(${ARG_NAME} ${ARG_NPROCS})
    return()
  endif()
  add_test(NAME ${ARG_NAME} COMMAND ${ARG_WRAPPER} ${prefix} ${exe} ${MPIEXEC_POSTFLAGS} ${ARG_COMMAND})
  set(labels mpi ${ARG_LABELS})
  set(slots ${ARG_NPROCS})
  if(ARG_WAITS)
    set(slots 1)
  endif()
  set_tests_properties(${ARG_NAME} PROPERTIES
    LABELS "${labels}"
    TIMEOUT ${ARG_TIMEOUT}
    PROCESSORS ${slots}
    ENVIRONMENT "${COMMPROF_TEST_MPI_ENV}"
    ${ARG_PROPERTIES})
endfunction()

function(commprof_add_mpi_gtest)
  cmake_parse_arguments(ARG "" "NAME;TEST" "SOURCES;NPROCS;LABELS;LIBRARIES" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_SOURCES OR NOT ARG_NPROCS)
    message(FATAL_ERROR "commprof_add_mpi_gtest: NAME, SOURCES and NPROCS are required")
  endif()
  if(NOT ARG_TEST)
    set(ARG_TEST ${ARG_NAME})
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES} ${COMMPROF_TESTS_DIR}/support/mpi_test_main.cpp)
  target_include_directories(${ARG_NAME} PRIVATE ${COMMPROF_TESTS_DIR})
  target_link_libraries(${ARG_NAME} PRIVATE commprof_lib commprof_warnings GTest::gtest
                                            ${ARG_LIBRARIES})
  commprof_test_build_flags(${ARG_NAME})
  foreach(np IN LISTS ARG_NPROCS)
    # Exit 77: every test skipped (tests/support/mpi_test_main.cpp), a skip and not a pass.
    commprof_add_mpi_test(NAME ${ARG_TEST}_np${np} NPROCS ${np} COMMAND ${ARG_NAME}
                          LABELS ${ARG_LABELS} PROPERTIES SKIP_RETURN_CODE 77)
  endforeach()
endfunction()

function(commprof_add_cli_test name)
  add_test(NAME ${name} COMMAND ${CHECK_RUN} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS cli TIMEOUT 60
                                          ENVIRONMENT "${COMMPROF_TEST_MPI_ENV}")
endfunction()
