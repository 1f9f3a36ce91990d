# Runs one golden dump test (test/dump/*.kop), the way LLVM's lit runs a
# test with FileCheck:
#
#   cmake -DKILN=<kiln tool> -DFILECHECK=<FileCheck> -DTEST_FILE=<file.kop>
#         -DOUT_DIR=<dir> -P RunDumpTest.cmake
#
# The test file is an op file that carries its own commands and checks in
# comments:
#   # RUN: kiln <args> | FileCheck %s [<FileCheck args>]
#       one or more; %s is the test file, %S its folder. Each RUN line runs
#       kiln, writes its standard output to OUT_DIR/<test>.<n>.out, and
#       checks it with FileCheck against the test file itself;
#   # CHECK: ..., # CHECK-NEXT: ..., # CHECK-LABEL: ..., # CHECK-NOT: ...
#       the expected output (or another prefix given by --check-prefix).
# FileCheck ignores the RUN lines (RUN is one of its default comment
# prefixes). The test passes when every kiln command succeeds and every
# FileCheck run passes.
cmake_minimum_required(VERSION 3.25)

if(NOT KILN OR NOT FILECHECK OR NOT TEST_FILE OR NOT OUT_DIR)
  message(FATAL_ERROR "usage: cmake -DKILN=<kiln> -DFILECHECK=<FileCheck> "
                      "-DTEST_FILE=<file.kop> -DOUT_DIR=<dir> -P RunDumpTest.cmake")
endif()

get_filename_component(test_dir "${TEST_FILE}" DIRECTORY)
get_filename_component(test_name "${TEST_FILE}" NAME_WE)

# Only the RUN lines matter here, so read just those (a check line may hold
# characters that CMake lists treat specially).
file(STRINGS "${TEST_FILE}" run_lines REGEX "^# RUN: ")
if(NOT run_lines)
  message(FATAL_ERROR "${TEST_FILE}: no '# RUN: kiln ... | FileCheck %s' line; say what to run")
endif()

# Details go out unformatted (FATAL_ERROR would re-wrap FileCheck's input
# dump).
function(fail reason details)
  message(NOTICE "${details}")
  message(FATAL_ERROR "${reason}")
endfunction()

# The words of one side of a RUN line, with %s and %S substituted and the
# program name replaced by its path.
function(command_of text program path out)
  separate_arguments(words UNIX_COMMAND "${text}")
  list(POP_FRONT words first)
  if(NOT first STREQUAL program)
    fail("RUN line ${index} must read 'kiln ... | FileCheck ...'"
         "${TEST_FILE}: RUN line ${index}: expected '${program}', found '${first}'")
  endif()
  set(result "${path}")
  foreach(word IN LISTS words)
    string(REPLACE "%s" "${TEST_FILE}" word "${word}")
    string(REPLACE "%S" "${test_dir}" word "${word}")
    list(APPEND result "${word}")
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

set(index 0)
foreach(line IN LISTS run_lines)
  math(EXPR index "${index} + 1")
  string(REGEX REPLACE "^# RUN: " "" run "${line}")
  string(FIND "${run}" " | " bar)
  if(bar EQUAL -1)
    fail("RUN line ${index} must read 'kiln ... | FileCheck ...'"
         "${TEST_FILE}: RUN line ${index} has no ' | ': ${run}")
  endif()
  string(SUBSTRING "${run}" 0 ${bar} left)
  math(EXPR right_start "${bar} + 3")
  string(SUBSTRING "${run}" ${right_start} -1 right)
  command_of("${left}" kiln "${KILN}" kiln_command)
  command_of("${right}" FileCheck "${FILECHECK}" check_command)

  string(REPLACE ";" " " shown_kiln "${kiln_command}")
  execute_process(
    COMMAND ${kiln_command}
    RESULT_VARIABLE status
    OUTPUT_VARIABLE out
    ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    fail("RUN line ${index}: kiln exited with ${status}"
         "${TEST_FILE}: RUN line ${index}: ${run}\n${shown_kiln}\n--- stderr:\n${err}")
  endif()

  set(dump "${OUT_DIR}/${test_name}.${index}.out")
  file(WRITE "${dump}" "${out}")
  list(APPEND check_command --input-file "${dump}")
  string(REPLACE ";" " " shown_check "${check_command}")
  execute_process(
    COMMAND ${check_command}
    RESULT_VARIABLE status
    OUTPUT_VARIABLE check_out
    ERROR_VARIABLE check_err)
  if(NOT status EQUAL 0)
    fail("RUN line ${index}: the output does not match the checks (FileCheck above)"
         "${TEST_FILE}: RUN line ${index}: ${run}\n${shown_check}\n${check_out}${check_err}")
  endif()
endforeach()
message(STATUS "ok: ${index} RUN line(s) passed")
