// Numbers and strings read from JSON documents kiln did not necessarily
// write (logs, cost model headers), checked. nlohmann's get<T>() converts a float or an
// out-of-range integer to T with a plain cast, which for 1e300 read as an
// int is undefined behaviour; these refuse any value T cannot hold.
#ifndef KILN_SUPPORT_JSON_NUMBER_H
#define KILN_SUPPORT_JSON_NUMBER_H

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace kiln {

/// `v` as T: an integer in T's range for an integral T, a finite number in
/// T's range for a floating-point T. Throws std::out_of_range naming `what`.
template <typename T> T json_number(const nlohmann::json& v, const std::string& what) {
  if constexpr (std::is_integral_v<T>) {
    using Limits = std::numeric_limits<T>;
    if (v.is_number_unsigned()) {
      const std::uint64_t u = v.get<std::uint64_t>();
      if (u <= static_cast<std::uint64_t>(Limits::max()))
        return static_cast<T>(u);
    } else if (v.is_number_integer()) {
      const std::int64_t i = v.get<std::int64_t>();
      if (i >= 0 ? static_cast<std::uint64_t>(i) <= static_cast<std::uint64_t>(Limits::max())
                 : Limits::is_signed && i >= static_cast<std::int64_t>(Limits::min()))
        return static_cast<T>(i);
    }
    throw std::out_of_range("\"" + what + "\" must be an integer from " +
                            std::to_string(Limits::min()) + " to " + std::to_string(Limits::max()));
  } else {
    static_assert(std::is_floating_point_v<T>);
    if (v.is_number()) {
      const double d = v.get<double>();
      if (std::isfinite(d) && std::fabs(d) <= static_cast<double>(std::numeric_limits<T>::max()))
        return static_cast<T>(d);
    }
    throw std::out_of_range("\"" + what + "\" must be a finite number");
  }
}

/// The number under `key` of object `j`, or `fallback` when there is none.
template <typename T> T json_number_or(const nlohmann::json& j, const char* key, T fallback) {
  auto it = j.find(key);
  return it == j.end() ? fallback : json_number<T>(*it, key);
}

/// The string under `key` of object `j`, or `fallback` when there is none
/// (or `j` is no object). Throws std::out_of_range when it is not a string.
inline std::string json_string_or(const nlohmann::json& j, const char* key, std::string fallback) {
  if (!j.is_object())
    return fallback;
  auto it = j.find(key);
  if (it == j.end())
    return fallback;
  if (!it->is_string())
    throw std::out_of_range(std::string("\"") + key + "\" must be a string");
  return it->get<std::string>();
}

/// Whether `j` is an object whose `key` is the string `value` (false for
/// any other type, where nlohmann's value() would throw).
inline bool json_string_equals(const nlohmann::json& j, const char* key, std::string_view value) {
  if (!j.is_object())
    return false;
  auto it = j.find(key);
  return it != j.end() && it->is_string() && it->get_ref<const std::string&>() == value;
}

} // namespace kiln

#endif
