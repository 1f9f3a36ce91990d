# Installs kiln to a fresh prefix and builds and runs the programs of
# examples/ against the installed package, as a backend author would
# (docs/library.md):
#
#   cmake -DKILN_BUILD=<build dir> -DKILN_SOURCE=<source dir> -DWORK=<dir>
#         -DGENERATOR=<generator> -DCXX=<c++ compiler> -DCC=<c compiler>
#         -P RunInstallTest.cmake
cmake_minimum_required(VERSION 3.25)

foreach(var KILN_BUILD KILN_SOURCE WORK GENERATOR CXX CC)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "RunInstallTest.cmake: -D${var}=... is missing")
  endif()
endforeach()

function(run)
  cmake_parse_arguments(ARG "" "EXPECT;ENV" "COMMAND" ${ARGN})
  set(launcher)
  if(ARG_ENV)
    set(launcher ${CMAKE_COMMAND} -E env ${ARG_ENV})
  endif()
  execute_process(COMMAND ${launcher} ${ARG_COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  string(REPLACE ";" " " shown "${ARG_COMMAND}")
  message(STATUS "$ ${shown}\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${shown}")
  endif()
  if(ARG_EXPECT)
    string(FIND "${out}" "${ARG_EXPECT}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${shown}: the output lacks '${ARG_EXPECT}'")
    endif()
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK}")
set(prefix "${WORK}/prefix")
run(COMMAND ${CMAKE_COMMAND} --install "${KILN_BUILD}" --prefix "${prefix}")

# The installed tool finds its data under the prefix.
run(COMMAND "${prefix}/bin/kiln" tune "${KILN_SOURCE}/ops/matmul.kop" --set M=32 --set N=32
            --set K=32 --mode offline --trials 4 --log "${WORK}/offline.jsonl"
    EXPECT "best")

# A C++ backend through find_package(kiln CONFIG).
run(COMMAND ${CMAKE_COMMAND} -S "${KILN_SOURCE}/examples/backend" -B "${WORK}/backend"
            -G "${GENERATOR}" -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release
            "-DCMAKE_PREFIX_PATH=${prefix}")
run(COMMAND ${CMAKE_COMMAND} --build "${WORK}/backend")
run(COMMAND "${WORK}/backend/toy-backend" --log "${WORK}/toy.jsonl" --tune 8
    EXPECT "max error")
run(COMMAND "${WORK}/backend/toy-backend" --log "${WORK}/toy.jsonl" EXPECT "(exact CPU)")

# A C program through pkg-config.
run(COMMAND pkg-config --cflags --libs --static kiln ENV "PKG_CONFIG_PATH=${prefix}/lib/pkgconfig")
execute_process(COMMAND ${CMAKE_COMMAND} -E env "PKG_CONFIG_PATH=${prefix}/lib/pkgconfig"
                        pkg-config --cflags --libs --static kiln
                OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE)
separate_arguments(flags UNIX_COMMAND "${flags}")
run(COMMAND ${CC} -std=c11 -Wall -Wextra -Werror "${KILN_SOURCE}/examples/c-api/main.c" ${flags}
            -o "${WORK}/kiln-c-example")
run(COMMAND "${WORK}/kiln-c-example" "${WORK}/toy.jsonl" EXPECT "max error")

# Kernels exported by the installed tool, linked into a C program with only
# the generated header and archive: two matmul shapes and a conv, tuned
# briefly (the installed kiln-worker measures them).
set(ops "${KILN_SOURCE}/examples/c-export/ops")
foreach(op matmul_64 matmul_48x80x36 conv2d_16x14x14_32)
  run(COMMAND "${prefix}/bin/kiln" tune "${ops}/${op}.kop" --trials 12 --log "${WORK}/export.jsonl")
endforeach()
run(COMMAND "${prefix}/bin/kiln" export "${WORK}/export.jsonl" --ops "${ops}" -o "${WORK}/export"
            --name kernels EXPECT "exact")
run(COMMAND ${CC} -std=c11 -Wall -Wextra -Werror "${KILN_SOURCE}/examples/c-export/main.c"
            "-I${WORK}/export" "${WORK}/export/libkernels.a" -lpthread -lm
            -o "${WORK}/c-export")
run(COMMAND "${WORK}/c-export" EXPECT "all kernels match")
