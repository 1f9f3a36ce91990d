# Runs one op-language error test (test/error/*.kop):
#
#   cmake -DKILN=<kiln tool> -DTEST_FILE=<file.kop> -P RunErrorTest.cmake
#
# The test file carries its own expectations as comment directives:
#   # EXPECT: <text>   required in stderr (one or more; matched as plain text)
#   # ARGS: <args>     extra command-line arguments, e.g. --set M=0
#   # INPUT: <path>    run kiln on this path (relative to the test file)
#                      instead of the test file itself
# The test passes when `kiln dump <file> --stage dag <ARGS>` exits with a
# non-zero status (not a crash) and stderr contains every EXPECT text.
cmake_minimum_required(VERSION 3.25)

if(NOT KILN OR NOT TEST_FILE)
  message(FATAL_ERROR "usage: cmake -DKILN=<kiln> -DTEST_FILE=<file.kop> -P RunErrorTest.cmake")
endif()

file(READ "${TEST_FILE}" content)
# CMake lists split at ';' and treat '[' ']' specially; messages contain all
# three, so protect them while the text is handled as a list.
string(REPLACE ";" "<semicolon>" content "${content}")
string(REPLACE "[" "<open>" content "${content}")
string(REPLACE "]" "<close>" content "${content}")
string(REPLACE "\n" ";" lines "${content}")

set(expects)
set(args)
get_filename_component(test_dir "${TEST_FILE}" DIRECTORY)
set(input "${TEST_FILE}")
foreach(line IN LISTS lines)
  if(line MATCHES "^# EXPECT: (.*)$")
    list(APPEND expects "${CMAKE_MATCH_1}")
  elseif(line MATCHES "^# ARGS: (.*)$")
    set(raw "${CMAKE_MATCH_1}")
    string(REPLACE "<semicolon>" "\\;" raw "${raw}")
    string(REPLACE "<open>" "[" raw "${raw}")
    string(REPLACE "<close>" "]" raw "${raw}")
    separate_arguments(more UNIX_COMMAND "${raw}")
    list(APPEND args ${more})
  elseif(line MATCHES "^# INPUT: (.*)$")
    set(input "${test_dir}/${CMAKE_MATCH_1}")
  endif()
endforeach()

if(NOT expects)
  message(FATAL_ERROR "${TEST_FILE}: no '# EXPECT: <text>' directive; say what the error must be")
endif()

execute_process(
  COMMAND "${KILN}" dump "${input}" --stage dag ${args}
  RESULT_VARIABLE status
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)

set(command "kiln dump ${input} --stage dag ${args}")
# Details go out unformatted (FATAL_ERROR would re-wrap the caret display).
function(fail reason details)
  message(NOTICE "${command}\n${reason}\n${details}")
  message(FATAL_ERROR "${reason}")
endfunction()

if(status EQUAL 0)
  fail("succeeded, but it must fail" "--- stdout:\n${out}--- stderr:\n${err}")
endif()
if(NOT status MATCHES "^[0-9]+$")
  # A signal (an internal error aborts): a user error must never crash.
  fail("crashed (${status})" "--- stderr:\n${err}")
endif()

set(missing)
foreach(expect IN LISTS expects)
  string(REPLACE "<semicolon>" ";" expect "${expect}")
  string(REPLACE "<open>" "[" expect "${expect}")
  string(REPLACE "<close>" "]" expect "${expect}")
  string(FIND "${err}" "${expect}" at)
  if(at EQUAL -1)
    string(APPEND missing "  ${expect}\n")
  endif()
endforeach()
if(missing)
  fail("exited with ${status}, but stderr lacks an expected text"
       "--- expected:\n${missing}--- stderr:\n${err}")
endif()
message(STATUS "ok: exited with ${status}; stderr has every EXPECT text")
