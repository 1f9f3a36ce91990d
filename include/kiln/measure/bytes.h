// Plain values and strings as bytes and back: what libkiln and its
// measurement worker (kiln-worker, worker.h) send each other.
#ifndef KILN_MEASURE_BYTES_H
#define KILN_MEASURE_BYTES_H

#include "kiln/support/error.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace kiln::measure {

class ByteWriter {
public:
  template <typename T> void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void put_string(std::string_view s) {
    put<std::uint64_t>(s.size());
    bytes_.append(s);
  }
  void put_doubles(const std::vector<double>& v) {
    put<std::uint64_t>(v.size());
    bytes_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
  }
  std::string take() && { return std::move(bytes_); }

private:
  std::string bytes_;
};

/// Reads what a ByteWriter wrote. A short or damaged message is an
/// assertion: both ends are kiln's code of one version (the worker refuses
/// a library of another version before it reads anything else).
class ByteReader {
public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}
  template <typename T> T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, take(sizeof value).data(), sizeof value);
    return value;
  }
  std::string get_string() { return std::string(take(get<std::uint64_t>())); }
  std::vector<double> get_doubles() {
    std::uint64_t n = get<std::uint64_t>();
    KILN_ASSERT(n <= bytes_.size() / sizeof(double), "short worker message");
    std::vector<double> v(n);
    std::memcpy(v.data(), take(n * sizeof(double)).data(), n * sizeof(double));
    return v;
  }
  bool at_end() const { return bytes_.empty(); }

private:
  std::string_view take(std::size_t n) {
    KILN_ASSERT(n <= bytes_.size(), "short worker message");
    std::string_view out = bytes_.substr(0, n);
    bytes_.remove_prefix(n);
    return out;
  }
  std::string_view bytes_;
};

} // namespace kiln::measure

#endif
