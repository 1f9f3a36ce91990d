# Finds XGBoost's C API. Debian's libxgboost-dev ships a CMake config that
# references a binary from the separate `xgboost` package, so it cannot be
# used as is: look for the header and the library directly.
#
# Defines the imported target XGBoost::XGBoost.
find_path(XGBoost_INCLUDE_DIR xgboost/c_api.h)
find_library(XGBoost_LIBRARY NAMES xgboost)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(XGBoost REQUIRED_VARS XGBoost_LIBRARY XGBoost_INCLUDE_DIR)

if(XGBoost_FOUND AND NOT TARGET XGBoost::XGBoost)
  add_library(XGBoost::XGBoost SHARED IMPORTED)
  set_target_properties(XGBoost::XGBoost PROPERTIES
    IMPORTED_LOCATION "${XGBoost_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${XGBoost_INCLUDE_DIR}")
endif()
mark_as_advanced(XGBoost_INCLUDE_DIR XGBoost_LIBRARY)
