# SPDX-License-Identifier: MIT
# The layers of commprof as build targets (docs/ARCHITECTURE.md): each folder's CMakeLists.txt
# declares its layer with commprof_add_layer() and links the layers below it, so the allowed
# arrows are the target links and nothing else.
#
#   commprof_add_layer(<target> <sources...>)
#     A library (static by default; shared with COMMPROF_SHARED_LAYERS=ON) seeing the repository
#     root and the generated headers, built with commprof_warnings.
#
# COMMPROF_SHARED_LAYERS=ON builds every layer as a shared library linked with
# -Wl,--no-undefined: a layer that calls into one it does not link (an arrow running back up,
# or sideways) fails to link. The tsan preset builds this way, so CI keeps the arrows honest.
include_guard(GLOBAL)

option(COMMPROF_SHARED_LAYERS
       "Build each layer as a shared library linked with --no-undefined (checks the arrows)" OFF)
if(COMMPROF_SHARED_LAYERS)
  set(COMMPROF_LAYER_TYPE SHARED)
else()
  set(COMMPROF_LAYER_TYPE STATIC)
endif()

function(commprof_add_layer target)
  add_library(${target} ${COMMPROF_LAYER_TYPE} ${ARGN})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR}
                                              ${PROJECT_BINARY_DIR}/generated)
  target_link_libraries(${target} PRIVATE commprof_warnings)
  if(COMMPROF_SHARED_LAYERS)
    target_link_options(${target} PRIVATE -Wl,--no-undefined)
  endif()
endfunction()
