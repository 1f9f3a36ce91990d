# Runs a fuzz target once on every file under INPUTS (inputs that once
# crashed kiln); passes when the folder is missing or empty.
#
#   cmake -DFUZZER=<target> -DINPUTS=<folder> -P RunFuzzRegressions.cmake
cmake_minimum_required(VERSION 3.25)
file(GLOB inputs "${INPUTS}/*")
if(NOT inputs)
  message(STATUS "no regression inputs in ${INPUTS}")
  return()
endif()
execute_process(COMMAND "${FUZZER}" ${inputs} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${FUZZER} failed (${rc}) on a regression input of ${INPUTS}")
endif()
