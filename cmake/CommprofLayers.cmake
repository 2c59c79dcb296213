# SPDX-License-Identifier: MIT
# The layers of commprof as build targets (docs/ARCHITECTURE.md). A layer is a folder: the
# CMakeLists.txt of that folder declares it with commprof_add_layer() and links the layers below
# it, so the allowed arrows are the target links and nothing else, and a file's layer is the
# folder it lies in.
#
#   commprof_add_layer(<target> <sources...>)
#     A library (static by default; shared with COMMPROF_SHARED_LAYERS=ON) seeing the repository
#     root and the generated headers, built with commprof_warnings. One layer per folder: a
#     second one in the same folder is a configuration error.
#   commprof_add_tool(<target> [LIBRARY] <sources...>)
#     An executable (or, with LIBRARY, a static library) above every layer: data generators for
#     tests and benchmarks. Its folder holds no layer, and no layer may include from it.
#   commprof_write_layer_manifest(<file>)
#     Writes, at generate time, one line per layer: "layer <target> <folder> <linked targets>",
#     and one per tool folder: "tool <target> <folder>". The include test reads it: the file's
#     folder gives its layer, the links give the arrows (tests/src/include_layers_test.cpp).
#
# COMMPROF_SHARED_LAYERS=ON builds every layer as a shared library linked with
# -Wl,--no-undefined: a layer that calls into one it does not link (an arrow running back up,
# or sideways) fails to link. The tsan preset builds this way, so CI keeps the arrows honest.
include_guard(GLOBAL)

option(COMMPROF_SHARED_LAYERS
       "Build each layer as a shared library linked with --no-undefined (checks the arrows)" OFF)
# Unity builds: each layer's sources compiled in batches of eight, one translation unit each, so
# the headers they share (the standard library, nlohmann-json, MPI) are parsed once per batch:
# half the compile time of the product on CI's two cores (the presets turn it on). A source with
# compile options of its own stays alone (SKIP_UNITY_BUILD_INCLUSION: -O3 or AVX2 must not spread
# to its batch). Anonymous namespaces of one batch are one: helpers of the same name in two
# files of a layer collide, which the unity build reports as it compiles.
option(COMMPROF_UNITY_BUILD "Compile each layer's sources in batches (faster full builds)" OFF)
if(COMMPROF_SHARED_LAYERS)
  set(COMMPROF_LAYER_TYPE SHARED)
else()
  set(COMMPROF_LAYER_TYPE STATIC)
endif()

# The current folder, relative to the repository root ("analysis/report").
function(_commprof_folder out)
  file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  set(${out} ${folder} PARENT_SCOPE)
endfunction()

function(_commprof_claim_folder target folder)
  string(MAKE_C_IDENTIFIER "${folder}" key)
  get_property(owner GLOBAL PROPERTY COMMPROF_FOLDER_OWNER_${key})
  if(owner)
    message(FATAL_ERROR "${target}: folder ${folder} already holds ${owner}; a layer (or a "
                        "tool folder) is a folder of its own")
  endif()
  set_property(GLOBAL PROPERTY COMMPROF_FOLDER_OWNER_${key} ${target})
endfunction()

function(commprof_add_layer target)
  _commprof_folder(folder)
  _commprof_claim_folder(${target} ${folder})
  add_library(${target} ${COMMPROF_LAYER_TYPE} ${ARGN})
  if(COMMPROF_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR}
                                              ${PROJECT_BINARY_DIR}/generated)
  target_link_libraries(${target} PRIVATE commprof_warnings)
  if(COMMPROF_SHARED_LAYERS)
    target_link_options(${target} PRIVATE -Wl,--no-undefined)
  endif()
  set_property(GLOBAL APPEND PROPERTY COMMPROF_LAYERS ${target})
  set_property(GLOBAL PROPERTY COMMPROF_LAYER_FOLDER_${target} ${folder})
endfunction()

function(commprof_add_tool target)
  _commprof_folder(folder)
  get_property(tools GLOBAL PROPERTY COMMPROF_TOOL_FOLDERS)
  if(NOT folder IN_LIST tools)
    _commprof_claim_folder(${target} ${folder})
    set_property(GLOBAL APPEND PROPERTY COMMPROF_TOOL_FOLDERS ${folder})
    set_property(GLOBAL APPEND PROPERTY COMMPROF_TOOLS ${target})
    set_property(GLOBAL PROPERTY COMMPROF_TOOL_FOLDER_${target} ${folder})
  endif()
  if(ARGV1 STREQUAL "LIBRARY")
    list(REMOVE_AT ARGN 0)
    add_library(${target} STATIC ${ARGN})
    target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
  else()
    add_executable(${target} ${ARGN})
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR})
  endif()
  target_link_libraries(${target} PRIVATE commprof_warnings)
endfunction()

function(commprof_write_layer_manifest file)
  get_property(layers GLOBAL PROPERTY COMMPROF_LAYERS)
  set(content "# layer <target> <folder> <linked targets>; tool <target> <folder>\n")
  foreach(target ${layers})
    get_property(folder GLOBAL PROPERTY COMMPROF_LAYER_FOLDER_${target})
    string(APPEND content
           "layer ${target} ${folder} $<JOIN:$<TARGET_PROPERTY:${target},LINK_LIBRARIES>, >\n")
  endforeach()
  get_property(tools GLOBAL PROPERTY COMMPROF_TOOLS)
  foreach(target ${tools})
    get_property(folder GLOBAL PROPERTY COMMPROF_TOOL_FOLDER_${target})
    string(APPEND content "tool ${target} ${folder}\n")
  endforeach()
  file(GENERATE OUTPUT ${file} CONTENT "${content}")
endfunction()
