# `cmake --install build --prefix P`: the tool and its measurement worker,
# the library, its headers, the shipped data, a CMake package
# (find_package(kiln CONFIG)) and a pkg-config file (docs/library.md).
include(CMakePackageConfigHelpers)

set(KILN_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/kiln")

install(TARGETS kiln RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The measurement worker, where kiln::worker_executable() looks for it
# (include/kiln/measure/worker.h): a program of kiln's, not a user's.
install(TARGETS kiln-worker RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/kiln)
install(TARGETS kiln_library kiln_llvm EXPORT kilnTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/kiln DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES data/kiln-default.model data/dataset-rocketlake.jsonl data/dataset-znver4.jsonl
  DESTINATION ${CMAKE_INSTALL_DATADIR}/kiln)

install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${KILN_CMAKE_DIR})
configure_package_config_file(cmake/kilnConfig.cmake.in
  "${CMAKE_CURRENT_BINARY_DIR}/kilnConfig.cmake"
  INSTALL_DESTINATION ${KILN_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_DATADIR CMAKE_INSTALL_LIBEXECDIR)
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/kilnConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/kilnConfig.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/kilnConfigVersion.cmake"
              cmake/FindXGBoost.cmake
  DESTINATION ${KILN_CMAKE_DIR})

# pkg-config: `pkg-config --cflags --libs kiln`, with --static for a static
# libkiln (its dependencies are then in Libs.private).
# The .pc file finds the prefix from its own folder, so that an install
# with --prefix P (or a moved prefix) is right.
file(RELATIVE_PATH KILN_PC_UP "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
string(REGEX REPLACE "/$" "" KILN_PC_UP "${KILN_PC_UP}")
set(KILN_PC_LLVM_INCLUDE "${LLVM_INCLUDE_DIRS}")
string(REPLACE ";" " " KILN_PC_LLVM_DEFINITIONS "${KILN_LLVM_DEFINITIONS}")
set(KILN_PC_LLVM_LIB "")
set(KILN_PC_PRIVATE_LIBS "$<TARGET_LINKER_FILE:LLVM> $<TARGET_LINKER_FILE:XGBoost::XGBoost> \
$<TARGET_LINKER_FILE:onnx_proto> $<TARGET_LINKER_FILE:protobuf::libprotobuf> \
$<TARGET_LINKER_FILE:fmt::fmt> -lstdc++ -lm -lpthread -ldl")
if(KILN_SHARED)
  set(KILN_PC_PRIVATE_LIBS "")
endif()
configure_file(cmake/kiln.pc.in "${CMAKE_CURRENT_BINARY_DIR}/kiln.pc.in" @ONLY)
file(GENERATE OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/kiln.pc"
  INPUT "${CMAKE_CURRENT_BINARY_DIR}/kiln.pc.in")
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/kiln.pc" DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
