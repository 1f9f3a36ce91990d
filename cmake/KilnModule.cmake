# kiln_module(NAME SOURCES ... DEPENDS ...)
#
# One static library per module of docs/design.md. DEPENDS lists the modules
# this one may use; CMake enforces the layering because a module sees only
# the headers of what it links.
function(kiln_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS" ${ARGN})
  add_library(kiln_${name} STATIC ${ARG_SOURCES})
  add_library(kiln::${name} ALIAS kiln_${name})
  target_include_directories(kiln_${name} PUBLIC
    $<BUILD_INTERFACE:${KILN_SOURCE_DIR}/include>)
  target_link_libraries(kiln_${name} PUBLIC ${ARG_DEPENDS} PRIVATE kiln_flags)
  set_target_properties(kiln_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
