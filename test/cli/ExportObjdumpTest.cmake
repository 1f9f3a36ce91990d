# Runs `kiln export` and checks what it wrote with llvm-objdump and
# FileCheck, as test/dump does for `kiln dump`:
#
#   cmake -DKILN=<kiln> -DOBJDUMP=<llvm-objdump> -DFILECHECK=<FileCheck>
#         -DCHECKS=<check file> -DOUT=<export folder> -DARCHIVE=<libNAME.a>
#         -DARGS=<kiln export arguments, ;-separated> -P ExportObjdumpTest.cmake
#
# The export's table and the archive's file headers and symbols
# (`llvm-objdump --file-headers --syms`) are checked, in that order, against
# the CHECK lines of CHECKS.
cmake_minimum_required(VERSION 3.25)

foreach(v KILN OBJDUMP FILECHECK CHECKS OUT ARCHIVE ARGS)
  if(NOT ${v})
    message(FATAL_ERROR "ExportObjdumpTest.cmake: -D${v}=... is missing")
  endif()
endforeach()

file(REMOVE_RECURSE "${OUT}")
execute_process(COMMAND "${KILN}" export ${ARGS} -o "${OUT}"
                RESULT_VARIABLE status OUTPUT_VARIABLE table ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "kiln export exited with ${status}:\n${table}${err}")
endif()
execute_process(COMMAND "${OBJDUMP}" --file-headers --syms "${OUT}/${ARCHIVE}"
                RESULT_VARIABLE status OUTPUT_VARIABLE dump ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "llvm-objdump exited with ${status}:\n${err}")
endif()
file(WRITE "${OUT}.out" "${table}${dump}")
execute_process(COMMAND "${FILECHECK}" "${CHECKS}" --input-file "${OUT}.out"
                RESULT_VARIABLE status OUTPUT_VARIABLE check_out ERROR_VARIABLE check_err)
if(NOT status EQUAL 0)
  message(NOTICE "${check_out}${check_err}")
  message(FATAL_ERROR "the export does not match ${CHECKS} (FileCheck above)")
endif()
message(STATUS "ok: ${OUT} matches ${CHECKS}")
